/* crm_pool.h -- several servers used as one pool of CUDA devices: CUDAREM_SERVER as
 * a list, which server and server device each CUDA device number names, and their
 * order (CUDAREM_PICK, then CUDA_VISIBLE_DEVICES over the pooled list). Pure logic:
 * client/crm_conn.c feeds it what each server's HELLO said.
 *
 * CUDAREM_SERVER=ENTRY[,ENTRY...], ENTRY = ADDRESS[@GPU[+GPU...]]: "gpu1:7470,gpu2:7470"
 * pools every device of both servers; "gpu1:7470@1+0,unix:/run/cudarem.sock" takes
 * device 1 then device 0 of the first, then all of the second. Devices are numbered
 * in that order, as rCUDA numbers RCUDA_DEVICE_0, _1, ... */
#ifndef CRM_POOL_H
#define CRM_POOL_H

#include <stddef.h>
#include <stdint.h>

#define CRM_POOL_MAX_SERVERS 16 /* also the emulated device's address slots */
#define CRM_POOL_MAX_DEVICES 64
#define CRM_POOL_ADDR_MAX 300

typedef struct crm_pool_server {
    char addr[CRM_POOL_ADDR_MAX]; /* as common/crm_addr.h reads it */
    int ngpus;                    /* devices listed after '@'; 0: all the server offers */
    int gpus[CRM_POOL_MAX_DEVICES];
} crm_pool_server;

typedef struct crm_pool_spec {
    int nservers;
    crm_pool_server servers[CRM_POOL_MAX_SERVERS];
} crm_pool_spec;

/* Parses a CUDAREM_SERVER value. 0, or -1 with the reason in err. */
int crm_pool_parse(const char *text, crm_pool_spec *out, char *err, size_t errlen);

/* One pooled device: where it is, and how busy its server said it was. */
typedef struct crm_pool_device {
    int server;            /* index into the spec's servers */
    int local;             /* the device number on that server */
    uint64_t memory_used;  /* bytes held by every session there, at HELLO */
    uint64_t memory_total;
    int sessions;          /* sessions that used it */
} crm_pool_device;

typedef struct crm_pool_map {
    int count;
    crm_pool_device dev[CRM_POOL_MAX_DEVICES];
} crm_pool_map;

/* Lists the devices of spec's servers in order, offered[s] being how many server s
 * gives the session (its listed GPUs must be below that). Loads are left zero.
 * 0, or -1 with the reason in err. */
int crm_pool_build(const crm_pool_spec *spec, const int *offered, crm_pool_map *out, char *err, size_t errlen);

/* Applies CUDAREM_PICK: NULL, "" or "order" keeps the listed order; "least-loaded"
 * orders devices by the share of memory in use, then by sessions, keeping the
 * listed order among equals. 0, or -1 for an unknown policy. */
int crm_pool_pick(crm_pool_map *m, const char *policy);

/* Applies CUDA_VISIBLE_DEVICES over the pooled list, as CUDA does over a host's
 * GPUs: a comma-separated list of indices, stopping at the first that is not a
 * valid, unrepeated index. NULL leaves the map alone. */
void crm_pool_visible(crm_pool_map *m, const char *visible);

#endif
