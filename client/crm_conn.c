/* crm_conn.c -- connection to the server: lazy connect, HELLO, batched EXEC calls,
 * SIGPIPE-safe sends, and the mapping of transport failures to CUDA errors. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "client/crm_conn.h"
#include "client/crm_devices.h"
#include "client/crm_codec.h"
#include "client/crm_dataconn.h"
#include "client/crm_handles.h"
#include "client/crm_idle.h"
#include "client/crm_link.h"
#include "client/crm_queue.h"
#include "client/crm_rpc.h"
#include "client/crm_rtcount.h"
#include "common/crm_addr.h"
#include "common/crm_log.h"
#include "protocol/crm_bulk.h"
#include "protocol/crm_chan.h"
#include "protocol/crm_shm.h"
#include "protocol/crm_tls.h"
#include "protocol/crm_wire.h"

enum crm_conn_state { CRM_CONN_NONE, CRM_CONN_OPEN, CRM_CONN_UNREACHABLE, CRM_CONN_LOST };

static struct {
    pthread_mutex_t lock;      /* serialises every use of rpc */
    enum crm_conn_state state;
    pid_t pid;                 /* process that opened the connection */
    int fd;                    /* the socket, owned */
    crm_rpc rpc;               /* RPC calls over fd */
    int rpc_open;              /* rpc is set up */
    char addr[300];            /* server address as text, for messages */
    crm_addr server;           /* and parsed: the data channel connects there too */
    crm_session_info info;     /* from HELLO */
    int srv_device;            /* device currently selected on the server */
    struct timeval timeout;    /* per call; CUDAREM_TIMEOUT seconds */
    crm_queue queue;           /* asynchronous calls waiting for the next message */
    int deferred_api;          /* first queued call that failed, 0 = none */
    int deferred_status;       /* and the status it returned */
    crm_conn_stats stats;
    crm_rtcount by_call;  /* round trips by the call they waited for */
    crm_idle idle;        /* what the last message drained on the server */
} crm__conn = {.lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1};

/* Reads CUDAREM_SERVER (or the default) and CUDAREM_TIMEOUT. */
static int crm__config(crm_addr *addr, char *err, size_t errlen)
{
    const char *text = getenv("CUDAREM_SERVER");
    if (text == NULL || *text == '\0')
        text = CRM_DEFAULT_SERVER;
    snprintf(crm__conn.addr, sizeof crm__conn.addr, "%s", text);
    const char *t = getenv("CUDAREM_TIMEOUT");
    long secs = t ? strtol(t, NULL, 10) : 300;
    crm__conn.timeout.tv_sec = secs > 0 ? secs : 365L * 24 * 3600;
    return crm_addr_parse(text, addr, err, errlen);
}

static int crm__hello(char *err, size_t errlen)
{
    crm_hello_args args;
    crm_hello_res res;
    char shm_name[64];
    memset(&args, 0, sizeof args);
    args.capabilities = CRM_CAP_BATCH | CRM_CAP_BULK2D;
    crm_dataconn_offer_shm(crm__conn.fd, &args, shm_name);
    crm_dataconn_ask(&args);
    int rc = crm_link_hello(&crm__conn.rpc, &args, &res, err, errlen);
    if (shm_name[0] != '\0')
        crm_shm_unlink(shm_name); /* attached or refused: the name has served */
    if (rc != 0 || !(res.capabilities & CRM_CAP_SHM))
        crm_shm_detach();
    if (rc != 0)
        return -1;
    crm__conn.info.device_count = res.device_count;
    crm__conn.info.driver_version = res.driver_version;
    crm__conn.info.runtime_version = res.runtime_version;
    snprintf(crm__conn.info.backend, sizeof crm__conn.info.backend, "%s", res.backend);
    crm_devices_store(res.devices.devices_val, res.devices.devices_len);
    crm_dataconn_open(&crm__conn.server, &res, crm__conn.timeout, crm_link_tls_host(&crm__conn.server));
    xdr_free((xdrproc_t)xdr_crm_hello_res, (char *)&res);
    return 0;
}

static int crm__connect(char *err, size_t errlen)
{
    crm_addr *addr = &crm__conn.server;
    if (crm__config(addr, err, errlen) != 0)
        return -1;
    if (crm_link_open(addr, crm__conn.timeout, &crm__conn.fd, &crm__conn.rpc, err, errlen) != 0)
        return -1;
    crm__conn.rpc_open = 1;
    return crm__hello(err, errlen);
}

static void crm__drop(void)
{
    crm_dataconn_close();
    if (crm__conn.rpc_open)
        crm_rpc_fini(&crm__conn.rpc);
    if (crm__conn.fd >= 0) {
        crm_tls_drop(crm__conn.fd);
        close(crm__conn.fd);
    }
    crm__conn.rpc_open = 0;
    crm__conn.fd = -1;
    crm_idle_forget(&crm__conn.idle);
}

/* Set in a forked child (pthread_atfork), so calls need not ask getpid. */
static volatile int crm__forked;
static pthread_once_t crm__atfork_once = PTHREAD_ONCE_INIT;

static void crm__on_fork_child(void)
{
    crm__forked = 1;
}

static void crm__watch_forks(void)
{
    pthread_atfork(NULL, NULL, crm__on_fork_child);
}

/* A forked child must not share the parent's session: it opens its own. */
static void crm__forget_parent(void)
{
    pthread_once(&crm__atfork_once, crm__watch_forks);
    if (!crm__forked)
        return;
    crm__forked = 0;
    if (crm__conn.state == CRM_CONN_NONE || crm__conn.pid == getpid())
        return;
    if (crm__conn.fd >= 0) {
        crm_tls_forget(crm__conn.fd);
        close(crm__conn.fd);
    }
    crm_dataconn_forget();
    if (crm__conn.rpc_open)
        crm_rpc_fini(&crm__conn.rpc); /* our copy of the parent's buffers */
    crm__conn.rpc_open = 0;
    crm__conn.fd = -1;
    crm__conn.state = CRM_CONN_NONE;
    crm_queue_clear(&crm__conn.queue); /* the parent's calls, not ours */
    crm__conn.deferred_api = 0;
    memset(&crm__conn.stats, 0, sizeof crm__conn.stats);
}

static cudaError_t crm__state_error(void)
{
    return crm__conn.state == CRM_CONN_LOST ? cudaErrorDevicesUnavailable : cudaErrorNoDevice;
}

/* Opens the session if needed; caller holds the lock. */
static cudaError_t crm__ensure_open(void)
{
    char err[512] = "";
    crm__forget_parent();
    if (crm__conn.state == CRM_CONN_OPEN)
        return cudaSuccess;
    if (crm__conn.state != CRM_CONN_NONE)
        return crm__state_error();
    crm__conn.pid = getpid();
    crm__conn.srv_device = 0;
    if (crm__connect(err, sizeof err) != 0) {
        crm_error("cannot use cudarem server %s: %s; CUDA calls will fail", crm__conn.addr, err);
        crm__drop();
        crm__conn.state = CRM_CONN_UNREACHABLE;
        return cudaErrorNoDevice;
    }
    crm__conn.state = CRM_CONN_OPEN;
    return cudaSuccess;
}

cudaError_t crm_conn_session(crm_session_info *info)
{
    pthread_mutex_lock(&crm__conn.lock);
    cudaError_t err = crm__ensure_open();
    if (err == cudaSuccess && info != NULL)
        *info = crm__conn.info;
    pthread_mutex_unlock(&crm__conn.lock);
    return err;
}

/* The caller's calls and their replies; queued calls travel in front of them. */
typedef struct crm__exchange {
    crm_call *calls;
    crm_reply *replies;
    unsigned n;
} crm__exchange;

/* Queue limits: past them the queue is sent on its own. */
#define CRM_QUEUE_MAX_BYTES (4u << 20)
#define CRM_QUEUE_MAX_CALLS 4096

static bool_t crm__xdr_calls(XDR *xdrs, crm__exchange *x)
{
    u_int total = crm__conn.queue.count + x->n;
    if (!xdr_u_int(xdrs, &total) || !crm_queue_put(xdrs, &crm__conn.queue))
        return FALSE;
    for (unsigned i = 0; i < x->n; i++)
        if (!xdr_crm_call(xdrs, &x->calls[i]))
            return FALSE;
    return TRUE;
}

/* Keeps the first failure of a queued call for the next synchronising call. */
static void crm__defer(int api, int status)
{
    crm_warn("queued %s failed with status %d; reported at the next synchronising call", crm_api_name(api),
             status);
    if (crm__conn.deferred_api != 0)
        return;
    crm__conn.deferred_api = api;
    crm__conn.deferred_status = status;
}

/* Replies of queued calls: only their status matters. */
static bool_t crm__xdr_queued_replies(XDR *xdrs)
{
    const crm_queue *q = &crm__conn.queue;
    for (unsigned i = 0; i < q->count; i++) {
        crm_reply r;
        memset(&r, 0, sizeof r);
        bool_t ok = xdr_crm_reply(xdrs, &r) && (int)r.api == q->apis[i];
        int status = *(const int *)&r.crm_reply_u; /* every result starts with err */
        xdr_free((xdrproc_t)xdr_crm_reply, (char *)&r);
        if (!ok)
            return FALSE;
        if (status != 0)
            crm__defer(q->apis[i], status);
    }
    return TRUE;
}

/* What the device printed during the batch (kernel printf): written to this
 * process's standard output, where a local GPU's runtime writes it. */
static bool_t crm__xdr_device_output(XDR *xdrs)
{
    char *text = NULL;
    u_int len = 0;
    if (!xdr_bytes(xdrs, &text, &len, CRM_OUTPUT_MAX))
        return FALSE;
    if (len > 0) {
        fwrite(text, 1, len, stdout);
        fflush(stdout);
    }
    free(text);
    return TRUE;
}

/* Decodes the caller's replies in place, so preset bulk destinations receive the data. */
static bool_t crm__xdr_replies(XDR *xdrs, crm__exchange *x)
{
    u_int n;
    crm_posted_failure posted;
    if (xdrs->x_op != XDR_DECODE || !xdr_crm_posted_failure(xdrs, &posted))
        return FALSE;
    if (posted.api != 0) /* a posted call failed: it ran before these */
        crm__defer(posted.api, posted.status);
    if (!xdr_u_int(xdrs, &n) || n != crm__conn.queue.count + x->n || !crm__xdr_queued_replies(xdrs))
        return FALSE;
    for (u_int i = 0; i < x->n; i++) {
        if (!xdr_crm_reply(xdrs, &x->replies[i]) || x->replies[i].api != x->calls[i].api)
            return FALSE;
    }
    return crm__xdr_device_output(xdrs);
}

static uint64_t crm__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* What the bulk XDR moved during one message, for the compression policy. */
static void crm__observe_bulk(const crm_payload_stats *sent0, const crm_payload_stats *recv0, uint64_t t0)
{
    const crm_payload_stats *s = &crm_bulk_sent, *r = &crm_bulk_received;
    crm_payload_stats moved = {
        .raw_bytes = s->raw_bytes - sent0->raw_bytes + r->raw_bytes - recv0->raw_bytes,
        .wire_bytes = s->wire_bytes - sent0->wire_bytes + r->wire_bytes - recv0->wire_bytes,
        .compress_ns = s->compress_ns - sent0->compress_ns,
        .tried_raw = s->tried_raw - sent0->tried_raw + r->tried_raw - recv0->tried_raw,
        .tried_wire = s->tried_wire - sent0->tried_wire + r->tried_wire - recv0->tried_wire,
    };
    crm_codec_observe(&moved, crm__now_ns() - t0);
}

/* The server is gone (st says how): every later call fails. A data channel whose
 * socket timed out under a payload means the server stopped answering, whatever
 * the RPC stream made of the payload it lost. Lock held. */
static cudaError_t crm__lost(enum clnt_stat st)
{
    if (crm_chan_current != NULL && crm_chan_current->timed_out)
        st = RPC_TIMEDOUT;
    if (st == RPC_TIMEDOUT)
        crm_error("lost cudarem server %s: it did not answer within %ld s (CUDAREM_TIMEOUT); CUDA calls now "
                  "fail with cudaErrorDevicesUnavailable",
                  crm__conn.addr, (long)crm__conn.timeout.tv_sec);
    else
        crm_error("lost cudarem server %s: %s; CUDA calls now fail with cudaErrorDevicesUnavailable",
                  crm__conn.addr, clnt_sperrno(st));
    crm__drop();
    crm__conn.state = CRM_CONN_LOST;
    return cudaErrorDevicesUnavailable;
}

static cudaError_t crm__send(crm_call *calls, crm_reply *replies, unsigned n)
{
    crm__exchange x = {calls, replies, n};
    for (unsigned i = 0; i < n; i++)
        crm_idle_note(&crm__conn.idle, &calls[i]);
    crm_idle_sent(&crm__conn.idle);
    crm_payload_stats sent0 = crm_bulk_sent, recv0 = crm_bulk_received;
    uint64_t t0 = crm__now_ns();
    enum clnt_stat st = crm_rpc_call(&crm__conn.rpc, CRM_EXEC, (xdrproc_t)crm__xdr_calls, &x,
                                     (xdrproc_t)crm__xdr_replies, &x);
    if (crm_dataconn_settle(st != RPC_SUCCESS) != 0 && st == RPC_SUCCESS)
        st = RPC_CANTSEND; /* the data channel broke under a payload */
    crm__observe_bulk(&sent0, &recv0, t0);
    crm__conn.stats.round_trips++;
    crm_rtcount_add(&crm__conn.by_call, n > 0 ? calls[n - 1].api : 0);
    crm__conn.stats.calls += n + crm__conn.queue.count;
    crm_queue_clear(&crm__conn.queue);
    crm_idle_after(&crm__conn.idle, st == RPC_SUCCESS && n > 0 ? &calls[n - 1] : NULL,
                   st == RPC_SUCCESS && n > 0 ? &replies[n - 1] : NULL);
    return st == RPC_SUCCESS ? cudaSuccess : crm__lost(st);
}

/* Sends the queue, then calls[0..n), in a message that is not answered
 * (CRM_POST): they cost no round trip, and a failure among them comes back with
 * the next reply. Returns once their bulk data has left. Lock held. */
static cudaError_t crm__post(crm_call *calls, unsigned n)
{
    crm__exchange x = {calls, NULL, n};
    for (unsigned i = 0; i < n; i++)
        crm_idle_note(&crm__conn.idle, &calls[i]);
    crm_idle_sent(&crm__conn.idle);
    crm_payload_stats sent0 = crm_bulk_sent, recv0 = crm_bulk_received;
    uint64_t t0 = crm__now_ns();
    crm_chan *chan = crm_chan_current;
    if (chan != NULL) /* the message first, then its payloads, from this thread */
        crm_chan_hold(chan, 1);
    enum clnt_stat st = crm_rpc_post(&crm__conn.rpc, CRM_POST, (xdrproc_t)crm__xdr_calls, &x);
    if (chan != NULL) {
        if (st != RPC_SUCCESS)
            crm_chan_discard(chan); /* the message did not leave: nobody reads its payloads */
        else if (!crm_chan_run(chan))
            st = RPC_CANTSEND;
        crm_chan_hold(chan, 0);
    }
    if (crm_dataconn_settle(st != RPC_SUCCESS) != 0 && st == RPC_SUCCESS)
        st = RPC_CANTSEND;
    crm__observe_bulk(&sent0, &recv0, t0);
    crm__conn.stats.posts++;
    crm__conn.stats.calls += crm__conn.queue.count + n;
    crm_queue_clear(&crm__conn.queue);
    return st == RPC_SUCCESS ? cudaSuccess : crm__lost(st);
}

/* Queues the selection of the calling thread's device on the server, ahead of its
 * calls, when the server has another device selected. */
static cudaError_t crm__select_device(void)
{
    int device = crm_thread_device();
    if (device == crm__conn.srv_device)
        return cudaSuccess;
    crm_call call = {.api = CRM_API_cudaSetDevice};
    call.crm_call_u.cudaSetDevice.device = device;
    if (crm_queue_push(&crm__conn.queue, &call) != 0)
        return cudaErrorMemoryAllocation;
    crm_idle_note(&crm__conn.idle, &call); /* a legacy stream id now names another device's */
    crm__conn.srv_device = device;
    return cudaSuccess;
}

/* Opens the session if needed and queues the device selection; lock held. */
static cudaError_t crm__prepare(void)
{
    cudaError_t err = crm__ensure_open();
    return err == cudaSuccess ? crm__select_device() : err;
}

/* 1 when a lone synchronisation or query is already answered by what earlier round
 * trips proved (client/crm_idle.h): replies[0] holds its success. Lock held. */
static int crm__answered_here(crm_call *calls, crm_reply *replies, unsigned n)
{
    if (n != 1 || !crm_idle_answers(&crm__conn.idle, &calls[0], &replies[0]))
        return 0;
    crm__conn.stats.calls_answered_here++;
    return 1;
}

cudaError_t crm_conn_exec(crm_call *calls, crm_reply *replies, unsigned n)
{
    pthread_mutex_lock(&crm__conn.lock);
    cudaError_t err = crm__prepare();
    if (err == cudaSuccess && !crm__answered_here(calls, replies, n))
        err = crm__send(calls, replies, n);
    pthread_mutex_unlock(&crm__conn.lock);
    return err;
}

cudaError_t crm_conn_async(crm_call *call)
{
    pthread_mutex_lock(&crm__conn.lock);
    cudaError_t err = crm__prepare();
    if (err == cudaSuccess && crm_queue_push(&crm__conn.queue, call) != 0)
        err = cudaErrorMemoryAllocation;
    if (err == cudaSuccess)
        crm_idle_note(&crm__conn.idle, call);
    if (err == cudaSuccess &&
        (crm__conn.queue.len > CRM_QUEUE_MAX_BYTES || crm__conn.queue.count >= CRM_QUEUE_MAX_CALLS))
        err = crm__post(NULL, 0);
    pthread_mutex_unlock(&crm__conn.lock);
    return err;
}

cudaError_t crm_conn_post(crm_call *call)
{
    pthread_mutex_lock(&crm__conn.lock);
    cudaError_t err = crm__prepare();
    if (err == cudaSuccess)
        err = crm__post(call, 1);
    pthread_mutex_unlock(&crm__conn.lock);
    return err;
}

cudaError_t crm_conn_flush(void)
{
    cudaError_t err = cudaSuccess;
    pthread_mutex_lock(&crm__conn.lock);
    crm__forget_parent();
    if (crm__conn.state == CRM_CONN_OPEN && crm__conn.queue.count > 0)
        err = crm__send(NULL, NULL, 0);
    pthread_mutex_unlock(&crm__conn.lock);
    return err;
}

/* A deferred failure as the CUDA runtime error a synchronising call returns: runtime
 * calls keep their code; a library call's status has no runtime equivalent. */
static cudaError_t crm__deferred_as_cuda(int api, int status)
{
    const char *name = crm_api_name(api);
    if (strncmp(name, "cuda", 4) == 0 || strncmp(name, "crm_", 4) == 0)
        return (cudaError_t)status;
    return cudaErrorUnknown;
}

cudaError_t crm_conn_take_deferred(void)
{
    cudaError_t err = cudaSuccess;
    pthread_mutex_lock(&crm__conn.lock);
    if (crm__conn.deferred_api != 0)
        err = crm__deferred_as_cuda(crm__conn.deferred_api, crm__conn.deferred_status);
    crm__conn.deferred_api = 0;
    pthread_mutex_unlock(&crm__conn.lock);
    return err;
}

cudaError_t crm_conn_sync_status(cudaError_t own)
{
    cudaError_t deferred = crm_conn_take_deferred();
    return own != cudaSuccess ? own : deferred;
}

cudaError_t crm_conn_call(crm_call *call, crm_reply *reply)
{
    cudaError_t err = crm_conn_exec(call, reply, 1);
    if (err != cudaSuccess)
        return err;
    /* Every result struct starts with its int err. */
    return (cudaError_t) * (const int *)&reply->crm_reply_u;
}

void crm_conn_reply_free(crm_reply *reply)
{
    xdr_free((xdrproc_t)xdr_crm_reply, (char *)reply);
}

int crm_conn_bulk_route(void)
{
    pthread_mutex_lock(&crm__conn.lock);
    crm_chan *c = crm__conn.state == CRM_CONN_OPEN ? crm_chan_current : NULL;
    int route = c == NULL ? CRM_ROUTE_INLINE : c->ring != NULL ? CRM_ROUTE_RING : CRM_ROUTE_SOCKET;
    pthread_mutex_unlock(&crm__conn.lock);
    return route;
}

void crm_conn_count_bulk(uint64_t h2d, uint64_t d2h)
{
    pthread_mutex_lock(&crm__conn.lock);
    crm__conn.stats.bytes_h2d += h2d;
    crm__conn.stats.bytes_d2h += d2h;
    pthread_mutex_unlock(&crm__conn.lock);
}

void crm_conn_count_pinned(uint64_t bytes)
{
    pthread_mutex_lock(&crm__conn.lock);
    crm__conn.stats.pinned_bytes += bytes;
    pthread_mutex_unlock(&crm__conn.lock);
}

size_t crm_conn_round_trips_by_call(char *buf, size_t len)
{
    pthread_mutex_lock(&crm__conn.lock);
    size_t need = crm_rtcount_format(&crm__conn.by_call, buf, len);
    pthread_mutex_unlock(&crm__conn.lock);
    return need;
}

void crm_conn_get_stats(crm_conn_stats *out)
{
    pthread_mutex_lock(&crm__conn.lock);
    *out = crm__conn.stats;
    if (crm_chan_current != NULL) {
        out->channel_bytes += crm_chan_current->moved;
        out->ring_bytes += crm_chan_current->ring_moved;
    }
    pthread_mutex_unlock(&crm__conn.lock);
}
