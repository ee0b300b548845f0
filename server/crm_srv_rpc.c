/* crm_srv_rpc.c -- reading calls and sending replies on a session's connection. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include "crm_api.h"
#include "protocol/crm_sockio.h"
#include "protocol/crm_wire.h"
#include "server/crm_srv_rpc.h"

#define CRM_WAKE_MS 500 /* an idle read wakes this often to notice SIGTERM */

/* Reads and writes wake every CRM_WAKE_MS to notice SIGTERM, and give up then
 * (crm_session_run gives the socket layer the session's stop flag). */
static const crm_sockio_policy crm__policy = {.retry_timeouts = 1};

/* A read that gave up because the session stops leaves the stream alive: the
 * client is still there, and the goodbye that tells it why must still go out
 * (a stop signal most often lands while the session waits for the next call). */
static int crm__readit(void *handle, void *buf, int len)
{
    crm_srv_rpc *r = handle;
    ssize_t got = crm_sock_read(r->fd, buf, (size_t)len, &crm__policy);
    if (got > 0)
        return (int)got;
    if (got == 0 || !*r->stopping)
        r->dead = 1;
    return -1;
}

static int crm__writeit(void *handle, void *buf, int len)
{
    crm_srv_rpc *r = handle;
    if (crm_sock_write_all(r->fd, buf, (size_t)len, &crm__policy) == 0)
        return len;
    r->dead = 1;
    return -1;
}

int crm_srv_rpc_init(crm_srv_rpc *r, int fd, volatile sig_atomic_t *stopping)
{
    struct timeval wake = {0, CRM_WAKE_MS * 1000};
    memset(r, 0, sizeof *r);
    r->fd = fd;
    r->stopping = stopping;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wake, sizeof wake) != 0)
        return -1;
    xdrrec_create(&r->xdrs, CRM_RPC_BUFSZ, CRM_RPC_BUFSZ, r, crm__readit, crm__writeit);
    return r->xdrs.x_ops != NULL ? 0 : -1;
}

/* Sends a reply whose header says `stat`, with results when it is SUCCESS. */
static bool_t crm__send_reply(crm_srv_rpc *r, struct rpc_msg *reply)
{
    reply->rm_xid = r->xid;
    reply->rm_direction = REPLY;
    r->xdrs.x_op = XDR_ENCODE;
    bool_t ok = xdr_replymsg(&r->xdrs, reply) && xdrrec_endofrecord(&r->xdrs, TRUE);
    r->xdrs.x_op = XDR_DECODE;
    if (!ok)
        r->dead = 1;
    return ok;
}

static void crm__refuse_call(crm_srv_rpc *r, const struct rpc_msg *call)
{
    struct rpc_msg reply;
    memset(&reply, 0, sizeof reply);
    if (call->rm_call.cb_rpcvers != RPC_MSG_VERSION) {
        reply.rm_reply.rp_stat = MSG_DENIED;
        reply.rjcted_rply.rj_stat = RPC_MISMATCH;
        reply.rjcted_rply.rj_vers.low = reply.rjcted_rply.rj_vers.high = RPC_MSG_VERSION;
    } else {
        reply.rm_reply.rp_stat = MSG_ACCEPTED;
        reply.acpted_rply.ar_verf = _null_auth;
        reply.acpted_rply.ar_stat = call->rm_call.cb_prog != CRM_PROG ? PROG_UNAVAIL : PROG_MISMATCH;
        reply.acpted_rply.ar_vers.low = reply.acpted_rply.ar_vers.high = CRM_VERS;
    }
    crm__send_reply(r, &reply);
}

int crm_srv_rpc_next(crm_srv_rpc *r, uint32_t *proc)
{
    while (!r->dead && !*r->stopping) {
        struct rpc_msg call;
        char cred[MAX_AUTH_BYTES], verf[MAX_AUTH_BYTES];
        memset(&call, 0, sizeof call);
        call.rm_call.cb_cred.oa_base = cred;
        call.rm_call.cb_verf.oa_base = verf;
        r->xdrs.x_op = XDR_DECODE;
        if (!xdrrec_skiprecord(&r->xdrs) || !xdr_callmsg(&r->xdrs, &call) || call.rm_direction != CALL) {
            if (!*r->stopping)
                r->dead = 1; /* end of stream, or bytes that are not a call: this session is over */
            break;
        }
        r->xid = call.rm_xid;
        if (call.rm_call.cb_rpcvers == RPC_MSG_VERSION && call.rm_call.cb_prog == CRM_PROG &&
            call.rm_call.cb_vers == CRM_VERS) {
            *proc = call.rm_call.cb_proc;
            return 1;
        }
        crm__refuse_call(r, &call);
    }
    return 0;
}

bool_t crm_srv_rpc_getargs(crm_srv_rpc *r, xdrproc_t xargs, void *args)
{
    r->xdrs.x_op = XDR_DECODE;
    return xargs(&r->xdrs, args);
}

bool_t crm_srv_rpc_reply(crm_srv_rpc *r, xdrproc_t xres, void *res)
{
    struct rpc_msg reply;
    memset(&reply, 0, sizeof reply);
    reply.rm_reply.rp_stat = MSG_ACCEPTED;
    reply.acpted_rply.ar_verf = _null_auth;
    reply.acpted_rply.ar_stat = SUCCESS;
    reply.acpted_rply.ar_results.where = res;
    reply.acpted_rply.ar_results.proc = xres;
    return crm__send_reply(r, &reply);
}

void crm_srv_rpc_error(crm_srv_rpc *r, enum accept_stat why)
{
    struct rpc_msg reply;
    memset(&reply, 0, sizeof reply);
    reply.rm_reply.rp_stat = MSG_ACCEPTED;
    reply.acpted_rply.ar_verf = _null_auth;
    reply.acpted_rply.ar_stat = why;
    crm__send_reply(r, &reply);
}

void crm_srv_rpc_goodbye(crm_srv_rpc *r, const char *why)
{
    struct rpc_msg reply;
    char *text = (char *)why;
    memset(&reply, 0, sizeof reply);
    reply.rm_reply.rp_stat = MSG_ACCEPTED;
    reply.acpted_rply.ar_verf = _null_auth;
    reply.acpted_rply.ar_stat = SUCCESS;
    reply.acpted_rply.ar_results.where = (caddr_t)&text;
    reply.acpted_rply.ar_results.proc = (xdrproc_t)xdr_wrapstring;
    if (r->dead || strlen(why) > CRM_GOODBYE_MAX)
        return;
    r->xid = CRM_GOODBYE_XID;
    crm__send_reply(r, &reply);
}

void crm_srv_rpc_fini(crm_srv_rpc *r)
{
    if (r->xdrs.x_ops != NULL)
        XDR_DESTROY(&r->xdrs);
    r->xdrs.x_ops = NULL;
}
