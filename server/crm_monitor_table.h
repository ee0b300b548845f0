/* crm_monitor_table.h -- the layout of the table server/crm_monitor.c shares
 * between the daemon and its session processes; private to crm_monitor*.c. */
#ifndef CRM_MONITOR_TABLE_H
#define CRM_MONITOR_TABLE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include "server/crm_monitor.h"

#define CRM__BUCKETS 10
#define CRM__BUCKET_NS 100000000ull /* 100 ms */

typedef struct crm__user {
    char name[72];                                   /* "" = free; set under the lock */
    _Atomic int sessions;                            /* registered sessions */
    _Atomic int64_t used[CRM_MONITOR_DEVICES];       /* bytes its sessions hold */
} crm__user;

typedef struct crm__slot {
    _Atomic int server_pid;                          /* 0 = free */
    _Atomic int user;                                /* index in users[] + 1, 0 = none */
    _Atomic uint32_t client_pid;
    _Atomic uint64_t session_id;
    _Atomic int64_t used[CRM_MONITOR_DEVICES];       /* bytes held */
    _Atomic int touched[CRM_MONITOR_DEVICES];        /* allocated or ran work there */
    char peer[CRM_MONITOR_PEER_MAX];                 /* written once, before `described` */
    _Atomic int described;                           /* peer and start are set */
    _Atomic int64_t start_unix;                      /* when it was admitted */
    _Atomic uint64_t calls, bytes_in, bytes_out;     /* published after each batch */
    _Atomic uint64_t kernel_ns;                      /* device time its work took (emulated device) */
    _Atomic uint64_t held[CRM_LIMIT_KINDS];          /* what it holds of each limited kind */
} crm__slot;

typedef struct crm__device_desc {
    char name[CRM_MONITOR_NAME_MAX];                 /* written once, before `known` */
    _Atomic uint64_t total;                          /* memory, bytes */
    _Atomic int known;
} crm__device_desc;

typedef struct crm__device_busy {
    uint64_t epoch[CRM__BUCKETS];                    /* now_ns / BUCKET_NS of each bucket */
    uint64_t busy[2][CRM__BUCKETS];                  /* ns busy, per crm_monitor_busy */
} crm__device_busy;

typedef struct crm__table {
    pthread_mutex_t lock;                            /* guards devices[] and descriptions */
    crm__device_busy devices[CRM_MONITOR_DEVICES];
    crm__device_desc desc[CRM_MONITOR_DEVICES];      /* told by the first session to see each */
    int64_t start_unix;                              /* when the daemon started */
    char backend[16];                                /* "cuda" or "emu" */
    _Atomic uint64_t events[CRM_MONITOR_EVENTS];     /* counts of enum crm_monitor_event */
    _Atomic uint64_t call_buckets[CRM_MONITOR_CALL_BUCKETS + 1]; /* calls per duration bucket; last: longer */
    _Atomic uint64_t call_ns;                        /* their durations, summed */
    _Atomic int64_t refusal_second;                  /* the second refusals are being counted in */
    _Atomic int refusals_logged;                     /* refusals logged in it */
    _Atomic uint64_t refusals_quiet;                 /* refusals not logged since the last logged */
    _Atomic uint64_t limit_hits[CRM_LIMIT_KINDS];    /* creations refused by --session-limits */
    crm__slot slots[CRM_MONITOR_SESSIONS];
    crm__user users[CRM_MONITOR_USERS];
} crm__table;

/* The table (mapped at first use) and this session's slot, NULL when none. */
extern crm__table *crm__t;
extern crm__slot *crm__me;
crm__table *crm__table_get(void);
void crm__lock(void);
crm__user *crm__user_of(const crm__slot *s);

#endif
