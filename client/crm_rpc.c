/* crm_rpc.c -- ONC RPC calls over a stream socket without signal games. */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include "client/crm_rpc.h"
#include "crm_api.h"
#include "protocol/crm_sockio.h"
#include "protocol/crm_wire.h"

static int crm__readit(void *handle, void *buf, int len)
{
    crm_rpc *r = handle;
    ssize_t got = crm_sock_read(r->fd, buf, (size_t)len, NULL);
    if (got > 0)
        return (int)got;
    r->timed_out = got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    return -1; /* end of stream, error or timeout */
}

static int crm__writeit(void *handle, void *buf, int len)
{
    crm_rpc *r = handle;
    if (crm_sock_write_all(r->fd, buf, (size_t)len, NULL) == 0)
        return len;
    r->timed_out = errno == EAGAIN || errno == EWOULDBLOCK; /* the server stopped reading */
    return -1;
}

int crm_rpc_init(crm_rpc *r, int fd, struct timeval timeout)
{
    memset(r, 0, sizeof *r);
    r->fd = fd;
    if (getrandom(&r->xid, sizeof r->xid, 0) != sizeof r->xid)
        r->xid = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout) != 0)
        return -1;
    xdrrec_create(&r->xdrs, CRM_RPC_BUFSZ, CRM_RPC_BUFSZ, r, crm__readit, crm__writeit);
    return r->xdrs.x_ops != NULL ? 0 : -1;
}

/* The status of an answered call, from its reply header. */
static enum clnt_stat crm__reply_status(const struct rpc_msg *m)
{
    if (m->rm_reply.rp_stat != MSG_ACCEPTED)
        return m->rm_reply.rp_rjct.rj_stat == RPC_MISMATCH ? RPC_VERSMISMATCH : RPC_AUTHERROR;
    switch (m->acpted_rply.ar_stat) {
    case SUCCESS:
        return RPC_SUCCESS;
    case PROG_UNAVAIL:
        return RPC_PROGUNAVAIL;
    case PROG_MISMATCH:
        return RPC_PROGVERSMISMATCH;
    case PROC_UNAVAIL:
        return RPC_PROCUNAVAIL;
    case GARBAGE_ARGS:
        return RPC_CANTDECODEARGS;
    default:
        return RPC_SYSTEMERROR;
    }
}

static enum clnt_stat crm__send_call(crm_rpc *r, uint32_t proc, xdrproc_t xargs, void *args)
{
    struct rpc_msg call;
    memset(&call, 0, sizeof call);
    if (++r->xid == CRM_GOODBYE_XID)
        ++r->xid;
    call.rm_xid = r->xid;
    call.rm_direction = CALL;
    call.rm_call.cb_rpcvers = RPC_MSG_VERSION;
    call.rm_call.cb_prog = CRM_PROG;
    call.rm_call.cb_vers = CRM_VERS;
    call.rm_call.cb_proc = proc;
    call.rm_call.cb_cred = _null_auth;
    call.rm_call.cb_verf = _null_auth;
    r->xdrs.x_op = XDR_ENCODE;
    r->timed_out = 0;
    if (!xdr_callmsg(&r->xdrs, &call) || !xargs(&r->xdrs, args)) /* a full buffer is sent as it fills */
        return r->timed_out ? RPC_TIMEDOUT : RPC_CANTENCODEARGS;
    if (!xdrrec_endofrecord(&r->xdrs, TRUE))
        return r->timed_out ? RPC_TIMEDOUT : RPC_CANTSEND;
    return RPC_SUCCESS;
}

/* A reply's results: the caller's, or the reason of a goodbye (CRM_GOODBYE_XID). */
typedef struct crm__results {
    const struct rpc_msg *msg; /* its header, decoded before the results */
    crm_rpc *r;
    xdrproc_t xres;
    void *res;
} crm__results;

static bool_t crm__xdr_results(XDR *xdrs, crm__results *x)
{
    if (x->msg->rm_xid != CRM_GOODBYE_XID)
        return x->xres(xdrs, x->res);
    char *why = x->r->goodbye;
    return xdr_string(xdrs, &why, CRM_GOODBYE_MAX);
}

/* Reads the next reply into res, or a goodbye's reason into r->goodbye. */
static enum clnt_stat crm__read_reply(crm_rpc *r, xdrproc_t xres, void *res)
{
    struct rpc_msg reply;
    memset(&reply, 0, sizeof reply);
    crm__results x = {&reply, r, xres, res};
    reply.acpted_rply.ar_verf = _null_auth;
    reply.acpted_rply.ar_results.where = (caddr_t)&x;
    reply.acpted_rply.ar_results.proc = (xdrproc_t)crm__xdr_results;
    r->xdrs.x_op = XDR_DECODE;
    r->timed_out = 0;
    if (!xdrrec_skiprecord(&r->xdrs))
        return r->timed_out ? RPC_TIMEDOUT : RPC_CANTRECV;
    if (!xdr_replymsg(&r->xdrs, &reply))
        return r->timed_out ? RPC_TIMEDOUT : RPC_CANTDECODERES;
    if (reply.rm_xid == CRM_GOODBYE_XID)
        return RPC_CANTRECV; /* the session is over; r->goodbye says why */
    if (reply.rm_xid != r->xid)
        return RPC_CANTDECODERES; /* one call at a time: any other reply is out of step */
    return crm__reply_status(&reply);
}

enum clnt_stat crm_rpc_call(crm_rpc *r, uint32_t proc, xdrproc_t xargs, void *args, xdrproc_t xres, void *res)
{
    enum clnt_stat st = crm__send_call(r, proc, xargs, args);
    return st == RPC_SUCCESS ? crm__read_reply(r, xres, res) : st;
}

int crm_rpc_goodbye(crm_rpc *r)
{
    struct pollfd p = {.fd = r->fd, .events = POLLIN};
    if (r->goodbye[0] == '\0' && r->xdrs.x_ops != NULL && poll(&p, 1, CRM_GOODBYE_WAIT_MS) == 1 &&
        (p.revents & POLLIN))
        crm__read_reply(r, (xdrproc_t)(void (*)(void))xdr_void, NULL); /* a goodbye sent while we were not reading */
    return r->goodbye[0] != '\0';
}

enum clnt_stat crm_rpc_post(crm_rpc *r, uint32_t proc, xdrproc_t xargs, void *args)
{
    return crm__send_call(r, proc, xargs, args);
}

void crm_rpc_fini(crm_rpc *r)
{
    if (r->xdrs.x_ops != NULL)
        XDR_DESTROY(&r->xdrs);
    r->xdrs.x_ops = NULL;
}
