/* crm_observe.h -- an observer's connection to one cudarem server (cudarem-smi):
 * HELLO as an observer (CRM_CAP_OBSERVE: no devices, no CUDA calls), then the
 * server's status (CRM_STATUS) or the end of one of its sessions (CRM_END), which
 * the server answers for an administrator only (server/crm_status.h). */
#ifndef CRM_OBSERVE_H
#define CRM_OBSERVE_H

#include <stddef.h>
#include <stdint.h>
#include "client/crm_rpc.h"
#include "crm_api.h"

typedef struct crm_observer {
    int fd;
    crm_rpc rpc;
} crm_observer;

/* Opens an observer session with the server at addr (the CUDAREM_SERVER syntax),
 * with the credentials clients use (CUDAREM_TOKEN, CUDAREM_TOKEN_FILE; CUDAREM_TLS,
 * CUDAREM_TLS_CA). 0, or -1 with err set. */
int crm_observe_open(const char *addr, crm_observer *o, char *err, size_t errlen);
/* The server's status into *res (free with xdr_free(xdr_crm_status_res)). 0, or -1
 * with err set (then nothing to free). */
int crm_observe_status(crm_observer *o, crm_status_res *res, char *err, size_t errlen);
/* Ends session id of the server. 0, or -1 with err set. */
int crm_observe_end(crm_observer *o, uint64_t id, char *err, size_t errlen);
void crm_observe_close(crm_observer *o);

#endif
