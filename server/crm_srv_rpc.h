/* crm_srv_rpc.h -- the server's side of a session's ONC RPC connection, in place
 * of libtirpc's svc_vc: the same record-marked messages (libtirpc's xdrrec and
 * rpc_msg XDR), read with a blocking recv and answered with one send, so a call
 * costs the session two system calls, as a raw socket echo does. Every call is
 * checked before dispatch: RPC version, program and version mismatches are
 * answered as RPC says, and a message that does not decode ends the session. */
#ifndef CRM_SRV_RPC_H
#define CRM_SRV_RPC_H

#include <signal.h>
#include <stdint.h>
#include <rpc/rpc.h>

typedef struct crm_srv_rpc {
    int fd;                            /* the connection, not owned */
    XDR xdrs;                          /* record stream over fd */
    volatile sig_atomic_t *stopping;   /* set by SIGTERM: reads give up */
    uint32_t xid;                      /* of the call being served */
    int dead;                          /* the client left or the stream broke */
} crm_srv_rpc;

/* Serves calls on fd until the client leaves or *stopping is set. 0 or -1. */
int crm_srv_rpc_init(crm_srv_rpc *r, int fd, volatile sig_atomic_t *stopping);
/* Waits for the next call of CRM_PROG/CRM_VERS and stores its procedure in *proc:
 * 1, or 0 when the session is over. */
int crm_srv_rpc_next(crm_srv_rpc *r, uint32_t *proc);
/* Decodes the call's arguments. */
bool_t crm_srv_rpc_getargs(crm_srv_rpc *r, xdrproc_t xargs, void *args);
/* Answers the call with its results. FALSE when they could not be sent. */
bool_t crm_srv_rpc_reply(crm_srv_rpc *r, xdrproc_t xres, void *res);
/* Answers the call with an RPC error: GARBAGE_ARGS, SYSTEM_ERR or PROC_UNAVAIL. */
void crm_srv_rpc_error(crm_srv_rpc *r, enum accept_stat why);
/* Tells the client the session ends, and why (protocol/crm_wire.h's goodbye), unless
 * the stream is dead already. */
void crm_srv_rpc_goodbye(crm_srv_rpc *r, const char *why);
void crm_srv_rpc_fini(crm_srv_rpc *r);

#endif
