/* crm_rpc.h -- the client's side of an ONC RPC stream connection, in place of
 * libtirpc's clnt_vc: the same record-marked messages (libtirpc's xdrrec and
 * rpc_msg XDR), but sent with MSG_NOSIGNAL, so a dead server never raises SIGPIPE
 * and no signal mask has to change around each call, and the reply is awaited
 * in a blocking read bounded by SO_RCVTIMEO instead of poll then read. A
 * synchronous call costs one send and one read on this side. */
#ifndef CRM_RPC_H
#define CRM_RPC_H

#include <stdint.h>
#include <rpc/rpc.h>

typedef struct crm_rpc {
    int fd;                /* connected stream socket, not owned */
    XDR xdrs;              /* record stream over fd */
    uint32_t xid;          /* of the last call */
    int timed_out;         /* the last read or write hit the timeout */
    char goodbye[256];     /* why the server ended the session, "" until it says */
} crm_rpc;

/* Sets up calls over fd; each waits at most timeout for its reply. 0 or -1. */
int crm_rpc_init(crm_rpc *r, int fd, struct timeval timeout);
/* Calls procedure proc of CRM_PROG/CRM_VERS: encodes args with xargs, decodes
 * the reply into res with xres. RPC_SUCCESS, or why not (clnt_sperrno names it);
 * after a failure the stream is out of step and must be dropped. */
enum clnt_stat crm_rpc_call(crm_rpc *r, uint32_t proc, xdrproc_t xargs, void *args, xdrproc_t xres, void *res);
/* Sends a call of procedure proc that is never answered (CRM_POST) and returns
 * once it is written: RPC_SUCCESS, or why not (the stream must be dropped then). */
enum clnt_stat crm_rpc_post(crm_rpc *r, uint32_t proc, xdrproc_t xargs, void *args);
/* After a failed call: 1 when the server said why it ended the session (in the
 * reply awaited, or in a message on the socket), in r->goodbye. A session that
 * stops while it sends a payload breaks the data channel a moment before its
 * goodbye reaches the RPC socket, so this waits up to CRM_GOODBYE_WAIT_MS for one;
 * a server that died closes the socket, which ends the wait at once. */
#define CRM_GOODBYE_WAIT_MS 1000
int crm_rpc_goodbye(crm_rpc *r);
/* Frees the record stream's buffers. */
void crm_rpc_fini(crm_rpc *r);

#endif
