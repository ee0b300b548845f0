/* crm_conn.c -- connection to the server: lazy connect, HELLO, batched EXEC calls,
 * SIGPIPE-safe sends, and the mapping of transport failures to CUDA errors. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "client/crm_conn.h"
#include "client/crm_graph.h"
#include "common/crm_errors.h"
#include "client/crm_deferred.h"
#include "client/crm_devices.h"
#include "client/crm_codec.h"
#include "client/crm_dataconn.h"
#include "client/crm_handles.h"
#include "client/crm_idle.h"
#include "client/crm_link.h"
#include "client/crm_managed.h"
#include "client/crm_member.h"
#include "client/crm_pool.h"
#include "client/crm_ptrmap.h"
#include "crm_client_gen.h"
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

static struct {
    pthread_mutex_t lock;      /* serialises every use of the members */
    int opened;                /* 0 not yet, 1 open, -1 a server could not be used: */
    cudaError_t unusable;      /* then what every call answers (crm__ensure_open) */
    pid_t pid;                 /* process that opened the connections */
    struct timeval timeout;    /* per call; CUDAREM_TIMEOUT seconds */
    char text[1024];           /* CUDAREM_SERVER as given, for messages */
    crm_pool_spec spec;        /* the servers */
    crm_pool_map map;          /* CUDA device number -> server and its device */
    crm_member members[CRM_POOL_MAX_SERVERS];
    crm_member *cur;           /* the member of the message in progress */
    crm_session_info info;     /* from HELLO, over the pool */
    crm_deferred deferred;     /* failures of queued and posted calls, per thread */
    crm_conn_stats stats;
    crm_rtcount by_call;  /* round trips by the call they waited for */
} crm__conn = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Reads CUDAREM_SERVER (or the default) and CUDAREM_TIMEOUT. */
static __thread int crm__held; /* this thread holds crm__conn.lock */

static void crm__lock(void)
{
    pthread_mutex_lock(&crm__conn.lock);
    crm__held = 1;
}

static void crm__unlock(void)
{
    crm__held = 0;
    pthread_mutex_unlock(&crm__conn.lock);
}

int crm_conn_held_here(void)
{
    return crm__held;
}

static int crm__config(char *err, size_t errlen)
{
    const char *text = getenv("CUDAREM_SERVER");
    if (text == NULL || *text == '\0')
        text = CRM_DEFAULT_SERVER;
    snprintf(crm__conn.text, sizeof crm__conn.text, "%s", text);
    const char *t = getenv("CUDAREM_TIMEOUT");
    long secs = t ? strtol(t, NULL, 10) : 300;
    crm__conn.timeout.tv_sec = secs > 0 ? secs : 365L * 24 * 3600;
    char why[512];
    if (crm_pool_parse(text, &crm__conn.spec, why, sizeof why) == 0)
        return 0;
    snprintf(err, errlen, "cannot read CUDAREM_SERVER=%s: %s", text, why);
    return -1;
}

/* 1 once a pool of several servers is open: read without the lock. */
static atomic_int crm__pool_open;

static int crm__pooled(void)
{
    return crm__conn.spec.nservers > 1;
}

/* Connects to every server; a pool gives each its own address slot. */
static int crm__connect_all(char *err, size_t errlen)
{
    for (int i = 0; i < crm__conn.spec.nservers; i++) {
        crm_member *m = &crm__conn.members[i];
        char why[512] = "";
        unsigned slot = crm__pooled() ? (unsigned)i + 1 : 0; /* on the wire: the slot plus 1 */
        int rc = crm_member_open(m, crm__conn.spec.servers[i].addr, slot, i == 0, crm__conn.timeout, why, sizeof why);
        if (rc != 0) {
            snprintf(err, errlen, "cannot use cudarem server %s: %s", crm__conn.spec.servers[i].addr, why);
            return rc;
        }
        if (crm__pooled() && !(m->hello.capabilities & CRM_CAP_ADDR_SLOT))
            crm_warn("server %s places device memory where its driver chooses: an allocation that overlaps "
                     "another pooled server's fails with cudaErrorMemoryAllocation",
                     m->addr);
    }
    return 0;
}

/* What every server told: one backend, its versions, and each device's load. */
static int crm__check_backends(char *err, size_t errlen)
{
    const crm_hello_res *first = &crm__conn.members[0].hello;
    for (int i = 1; i < crm__conn.spec.nservers; i++)
        if (strcmp(crm__conn.members[i].hello.backend, first->backend) != 0) {
            snprintf(err, errlen, "a pool's servers must share one backend: %s runs %s, %s runs %s",
                     crm__conn.members[0].addr, first->backend, crm__conn.members[i].addr,
                     crm__conn.members[i].hello.backend);
            return -1;
        }
    crm__conn.info.driver_version = first->driver_version;
    crm__conn.info.runtime_version = first->runtime_version;
    snprintf(crm__conn.info.backend, sizeof crm__conn.info.backend, "%s", first->backend);
    return 0;
}

static void crm__fill_loads(void)
{
    for (int g = 0; g < crm__conn.map.count; g++) {
        crm_pool_device *d = &crm__conn.map.dev[g];
        const crm_hello_res *h = &crm__conn.members[d->server].hello;
        if ((u_int)d->local < h->loads.loads_len) {
            const crm_device_load *l = &h->loads.loads_val[d->local];
            *d = (crm_pool_device){d->server, d->local, l->memory_used, l->memory_total, l->sessions};
        }
    }
}

/* Numbers the pooled devices and keeps what HELLO said of each, in that order. */
static int crm__build_pool(char *err, size_t errlen)
{
    int offered[CRM_POOL_MAX_SERVERS];
    for (int i = 0; i < crm__conn.spec.nservers; i++)
        offered[i] = crm__conn.members[i].hello.device_count;
    char why[512];
    if (crm__check_backends(why, sizeof why) != 0 ||
        crm_pool_build(&crm__conn.spec, offered, &crm__conn.map, why, sizeof why) != 0) {
        snprintf(err, errlen, "cannot pool the servers of CUDAREM_SERVER=%s: %s", crm__conn.text, why);
        return -1;
    }
    crm__fill_loads();
    const char *pick = getenv("CUDAREM_PICK");
    if (crm_pool_pick(&crm__conn.map, pick) != 0)
        crm_warn("CUDAREM_PICK=%s is not a policy (order, least-loaded): devices keep the listed order", pick);
    crm_pool_visible(&crm__conn.map, getenv("CUDA_VISIBLE_DEVICES"));
    crm_device_desc descs[CRM_POOL_MAX_DEVICES];
    unsigned described = 0;
    for (int g = 0; g < crm__conn.map.count; g++, described++) {
        const crm_hello_res *h = &crm__conn.members[crm__conn.map.dev[g].server].hello;
        if ((u_int)crm__conn.map.dev[g].local >= h->devices.devices_len)
            break; /* the rest are asked for when used */
        descs[g] = h->devices.devices_val[crm__conn.map.dev[g].local];
    }
    crm_devices_store(descs, described);
    crm__conn.info.device_count = crm__conn.map.count;
    return 0;
}

static void crm__drop_all(void)
{
    for (int i = 0; i < crm__conn.spec.nservers; i++)
        crm_member_drop(&crm__conn.members[i]);
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

/* A forked child must not share the parent's sessions: it opens its own. */
static void crm__forget_parent(void)
{
    pthread_once(&crm__atfork_once, crm__watch_forks);
    if (!crm__forked)
        return;
    crm__forked = 0;
    if (crm__conn.opened == 0 || crm__conn.pid == getpid())
        return;
    for (int i = 0; i < crm__conn.spec.nservers; i++)
        crm_member_forget(&crm__conn.members[i]);
    crm_chan_current = NULL;
    crm__conn.opened = 0;
    atomic_store(&crm__pool_open, 0);
    crm_deferred_clear(&crm__conn.deferred);
    memset(&crm__conn.stats, 0, sizeof crm__conn.stats);
}

/* Opens the sessions if needed; caller holds the lock. A server that cannot be
 * used (unreachable, refused, TLS or authentication failed, another protocol) is
 * a machine with a current driver and no usable device, whatever the program's
 * runtime: cudaErrorNoDevice; one that refused because it, or the user's quota,
 * is full, or the peer must wait: cudaErrorDevicesUnavailable. The log line says
 * why. */
static cudaError_t crm__ensure_open(void)
{
    char err[2048] = "";
    crm__forget_parent();
    if (crm__conn.opened != 0)
        return crm__conn.opened > 0 ? cudaSuccess : crm__conn.unusable;
    crm__conn.pid = getpid();
    int rc = crm__config(err, sizeof err);
    if (rc == 0)
        rc = crm__connect_all(err, sizeof err);
    if (rc == 0)
        rc = crm__build_pool(err, sizeof err);
    if (rc != 0) {
        crm__conn.unusable = rc == CRM_LINK_BUSY ? cudaErrorDevicesUnavailable : cudaErrorNoDevice;
        crm_error("%s; CUDA calls will fail (%s)", err, crm_error_name(crm__conn.unusable));
        crm__drop_all();
        crm__conn.opened = -1;
        return crm__conn.unusable;
    }
    for (int i = 0; i < crm__conn.spec.nservers; i++)
        crm_member_release_hello(&crm__conn.members[i]);
    crm__conn.opened = 1;
    atomic_store(&crm__pool_open, crm__pooled());
    return cudaSuccess;
}

cudaError_t crm_conn_session(crm_session_info *info)
{
    crm__lock();
    cudaError_t err = crm__ensure_open();
    if (err == cudaSuccess && info != NULL)
        *info = crm__conn.info;
    crm__unlock();
    return err;
}

int crm_conn_driver_version(void)
{
    crm_session_info info;
    return crm_conn_session(&info) == cudaSuccess ? info.driver_version : CUDART_VERSION;
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
    u_int total = crm__conn.cur->queue.count + x->n;
    if (!xdr_u_int(xdrs, &total) || !crm_queue_put(xdrs, &crm__conn.cur->queue))
        return FALSE;
    for (unsigned i = 0; i < x->n; i++)
        if (!xdr_crm_call(xdrs, &x->calls[i]))
            return FALSE;
    return TRUE;
}

/* Keeps the failure of a call queued or posted by thread `owner` for that thread's
 * next synchronising call (the first failure of each thread). */
static void crm__defer(int api, int status, uint64_t owner)
{
    crm_warn("queued %s failed with status %d; reported at the next synchronising call", crm_api_name(api),
             status);
    crm_deferred_note(&crm__conn.deferred, owner, api, status);
}

/* A posted call failed: it was one of the threads' that posted since the server
 * last answered, and each of them is told. */
static void crm__defer_posted(const crm_posted_failure *posted)
{
    crm_owner_set *set = &crm__conn.cur->posted;
    for (unsigned i = 0; i < set->count; i++)
        crm__defer(posted->api, posted->status, set->owners[i]);
    if (set->overflow || set->count == 0)
        crm__defer(posted->api, posted->status, 0);
}

/* Replies of queued calls: only their status matters. */
static bool_t crm__xdr_queued_replies(XDR *xdrs)
{
    const crm_queue *q = &crm__conn.cur->queue;
    for (unsigned i = 0; i < q->count; i++) {
        crm_reply r;
        memset(&r, 0, sizeof r);
        bool_t ok = xdr_crm_reply(xdrs, &r) && (int)r.api == q->apis[i];
        int status = *(const int *)&r.crm_reply_u; /* every result starts with err */
        xdr_free((xdrproc_t)xdr_crm_reply, (char *)&r);
        if (!ok)
            return FALSE;
        if (status != 0)
            crm__defer(q->apis[i], status, q->owners[i]);
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
        crm__defer_posted(&posted);
    crm_owner_set_clear(&crm__conn.cur->posted);
    if (!xdr_u_int(xdrs, &n) || n != crm__conn.cur->queue.count + x->n || !crm__xdr_queued_replies(xdrs))
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
    crm_member *m = crm__conn.cur;
    if (m->chan_open && m->chan.timed_out)
        st = RPC_TIMEDOUT;
    if (st != RPC_TIMEDOUT && crm_rpc_goodbye(&m->rpc))
        crm_error("cudarem server %s ended this session: %s; CUDA calls now fail with cudaErrorDevicesUnavailable",
                  m->addr, m->rpc.goodbye);
    else if (st == RPC_TIMEDOUT)
        crm_error("lost cudarem server %s: it did not answer within %ld s (CUDAREM_TIMEOUT); CUDA calls now "
                  "fail with cudaErrorDevicesUnavailable",
                  m->addr, (long)crm__conn.timeout.tv_sec);
    else
        crm_error("lost cudarem server %s: %s; CUDA calls now fail with cudaErrorDevicesUnavailable", m->addr,
                  clnt_sperrno(st));
    crm_member_drop(m);
    m->state = CRM_MEMBER_LOST;
    return cudaErrorDevicesUnavailable;
}

static cudaError_t crm__send(crm_call *calls, crm_reply *replies, unsigned n)
{
    crm__exchange x = {calls, replies, n};
    for (unsigned i = 0; i < n; i++)
        crm_idle_note(&crm__conn.cur->idle, &calls[i]);
    crm_idle_sent(&crm__conn.cur->idle);
    crm_payload_stats sent0 = crm_bulk_sent, recv0 = crm_bulk_received;
    uint64_t t0 = crm__now_ns();
    enum clnt_stat st = crm_rpc_call(&crm__conn.cur->rpc, CRM_EXEC, (xdrproc_t)crm__xdr_calls, &x,
                                     (xdrproc_t)crm__xdr_replies, &x);
    if (crm_dataconn_settle(st != RPC_SUCCESS) != 0 && st == RPC_SUCCESS)
        st = RPC_CANTSEND; /* the data channel broke under a payload */
    crm__observe_bulk(&sent0, &recv0, t0);
    crm__conn.stats.round_trips++;
    crm_rtcount_add(&crm__conn.by_call, n > 0 ? calls[n - 1].api : 0);
    crm__conn.stats.calls += n + crm__conn.cur->queue.count;
    crm_queue_clear(&crm__conn.cur->queue);
    crm_idle_after(&crm__conn.cur->idle, st == RPC_SUCCESS && n > 0 ? &calls[n - 1] : NULL,
                   st == RPC_SUCCESS && n > 0 ? &replies[n - 1] : NULL);
    return st == RPC_SUCCESS ? cudaSuccess : crm__lost(st);
}

/* Sends the queue, then calls[0..n), in a message that is not answered
 * (CRM_POST): they cost no round trip, and a failure among them comes back with
 * the next reply. Returns once their bulk data has left. Lock held. */
static cudaError_t crm__post(crm_call *calls, unsigned n)
{
    crm__exchange x = {calls, NULL, n};
    crm_owner_set *posted = &crm__conn.cur->posted;
    for (unsigned i = 0; i < n; i++)
        crm_idle_note(&crm__conn.cur->idle, &calls[i]);
    crm_idle_sent(&crm__conn.cur->idle);
    for (unsigned i = 0; i < crm__conn.cur->queue.count; i++)
        crm_owner_set_add(posted, crm__conn.cur->queue.owners[i]);
    if (n > 0)
        crm_owner_set_add(posted, crm_thread_serial());
    crm_payload_stats sent0 = crm_bulk_sent, recv0 = crm_bulk_received;
    uint64_t t0 = crm__now_ns();
    crm_chan *chan = crm_chan_current;
    if (chan != NULL) /* the message first, then its payloads, from this thread */
        crm_chan_hold(chan, 1);
    enum clnt_stat st = crm_rpc_post(&crm__conn.cur->rpc, CRM_POST, (xdrproc_t)crm__xdr_calls, &x);
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
    crm__conn.stats.calls += crm__conn.cur->queue.count + n;
    crm_queue_clear(&crm__conn.cur->queue);
    return st == RPC_SUCCESS ? cudaSuccess : crm__lost(st);
}

/* The device a call is about: the calling thread's, unless the call names an
 * address or object of a device on another server of the pool (a copy from
 * device 1 while device 0 is current, a stream of device 2). Lock held. */
static int crm__target_device(const crm_call *call)
{
    int dev = crm_thread_device();
    uint64_t key;
    int owner = -1;
    if (!crm__pooled() || call == NULL)
        return dev;
    int kind = crm_call_route(call, &key);
    crm_range r;
    if (kind == CRM_ROUTE_DEVPTR && crm_ptrmap_classify(key, &r) == CRM_MEM_DEVICE)
        owner = r.device;
    else if (kind == CRM_ROUTE_OBJECT)
        owner = crm_handles_device(key);
    const crm_pool_map *map = &crm__conn.map;
    if (owner < 0 || owner >= map->count)
        return dev;
    return dev < 0 || dev >= map->count || map->dev[owner].server != map->dev[dev].server ? owner : dev;
}

/* Makes the member of the call's device current (its channel too) and queues the
 * selection of that device on its server, ahead of the calls, when the server has
 * another one selected. Lock held. */
static cudaError_t crm__select(const crm_call *call)
{
    int dev = crm__target_device(call);
    if (crm__conn.map.count == 0)
        return cudaErrorNoDevice;
    if (dev < 0 || dev >= crm__conn.map.count)
        return cudaErrorInvalidDevice;
    crm_member *m = &crm__conn.members[crm__conn.map.dev[dev].server];
    if (m->state != CRM_MEMBER_OPEN)
        return cudaErrorDevicesUnavailable;
    crm__conn.cur = m;
    crm_chan_current = m->chan_open ? &m->chan : NULL;
    int local = crm__conn.map.dev[dev].local;
    if (local == m->srv_device)
        return cudaSuccess;
    crm_call sel = {.api = CRM_API_cudaSetDevice};
    sel.crm_call_u.cudaSetDevice.device = local;
    if (crm_queue_push(&m->queue, &sel, crm_thread_serial()) != 0)
        return cudaErrorMemoryAllocation;
    crm_idle_note(&m->idle, &sel); /* a legacy stream id now names another device's */
    m->srv_device = local;
    return cudaSuccess;
}

/* Opens the sessions if needed and selects the call's server and device; lock held. */
static cudaError_t crm__prepare(const crm_call *call)
{
    cudaError_t err = crm__ensure_open();
    return err == cudaSuccess ? crm__select(call) : err;
}

/* 1 when a lone synchronisation or query is already answered by what earlier round
 * trips proved (client/crm_idle.h): replies[0] holds its success. Lock held. */
static int crm__answered_here(crm_call *calls, crm_reply *replies, unsigned n)
{
    if (n != 1 || !crm_idle_answers(&crm__conn.cur->idle, &calls[0], &replies[0]))
        return 0;
    crm__conn.stats.calls_answered_here++;
    return 1;
}

cudaError_t crm_conn_exec(crm_call *calls, crm_reply *replies, unsigned n)
{
    crm_managed_before(calls, n);
    crm__lock();
    cudaError_t err = crm__prepare(n > 0 ? &calls[0] : NULL);
    if (err == cudaSuccess && !crm__answered_here(calls, replies, n))
        err = crm__send(calls, replies, n);
    crm__unlock();
    crm_managed_after(calls, n);
    return err;
}

cudaError_t crm_conn_async(crm_call *call)
{
    crm_managed_before(call, 1);
    crm__lock();
    cudaError_t err = crm__prepare(call);
    size_t before = err == cudaSuccess ? crm__conn.cur->queue.len : 0;
    if (err == cudaSuccess && crm_queue_push(&crm__conn.cur->queue, call, crm_thread_serial()) != 0)
        err = cudaErrorMemoryAllocation;
    if (err == cudaSuccess)
        crm__conn.stats.queued_bytes += crm__conn.cur->queue.len - before;
    if (err == cudaSuccess)
        crm_idle_note(&crm__conn.cur->idle, call);
    if (err == cudaSuccess &&
        (crm__conn.cur->queue.len > CRM_QUEUE_MAX_BYTES || crm__conn.cur->queue.count >= CRM_QUEUE_MAX_CALLS))
        err = crm__post(NULL, 0);
    crm__unlock();
    crm_managed_after(call, 1);
    return err;
}

cudaError_t crm_conn_async_on(crm_call *call, uint64_t stream)
{
    cudaError_t err;
    if (crm_capture_any() && crm_capture_call(stream, call, &err))
        return err;
    return crm_conn_async(call);
}

cudaError_t crm_conn_post(crm_call *call)
{
    crm_managed_before(call, 1);
    crm__lock();
    cudaError_t err = crm__prepare(call);
    if (err == cudaSuccess)
        err = crm__post(call, 1);
    crm__unlock();
    crm_managed_after(call, 1);
    return err;
}

int crm_conn_copy_level(uint64_t bytes, int *queued)
{
    int route = crm_conn_bulk_route();
    int channel = route != CRM_ROUTE_INLINE ? bytes > CRM_COPY_INLINE_MAX : bytes > CRM_QUEUED_COPY_MAX;
    *queued = !channel;
    int big = bytes >= CRM_CODEC_MIN_BYTES;
    int level = crm_codec_choose(bytes, big && route == CRM_ROUTE_RING, big && channel && route == CRM_ROUTE_SOCKET);
    return channel ? level | CRM_LEVEL_CHANNEL : level;
}

cudaError_t crm_conn_flush(void)
{
    cudaError_t err = cudaSuccess;
    crm__lock();
    crm__forget_parent();
    for (int i = 0; crm__conn.opened > 0 && i < crm__conn.spec.nservers; i++) {
        crm_member *m = &crm__conn.members[i];
        if (m->state != CRM_MEMBER_OPEN || m->queue.count == 0)
            continue;
        crm__conn.cur = m;
        crm_chan_current = m->chan_open ? &m->chan : NULL;
        cudaError_t e = crm__send(NULL, NULL, 0);
        if (err == cudaSuccess)
            err = e;
    }
    crm__unlock();
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

void crm_conn_keep_failure(int api, int status)
{
    crm__lock();
    crm_deferred_note(&crm__conn.deferred, 0, api, status);
    crm__unlock();
}

cudaError_t crm_conn_take_deferred(void)
{
    cudaError_t err = cudaSuccess;
    int api, status;
    uint64_t me = crm_thread_serial();
    crm__lock();
    if (crm_deferred_take(&crm__conn.deferred, me, &api, &status))
        err = crm__deferred_as_cuda(api, status);
    crm__unlock();
    return err;
}

cudaError_t crm_conn_sync_status(cudaError_t own)
{
    if (own == cudaErrorNotReady) /* a query's answer: the failure waits for the next */
        return own;
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
    crm__lock();
    crm_chan *c = NULL;
    int dev = crm_thread_device();
    if (crm__conn.opened > 0 && dev >= 0 && dev < crm__conn.map.count) {
        crm_member *m = &crm__conn.members[crm__conn.map.dev[dev].server];
        c = m->state == CRM_MEMBER_OPEN && m->chan_open ? &m->chan : NULL;
    }
    int route = c == NULL ? CRM_ROUTE_INLINE : c->ring != NULL ? CRM_ROUTE_RING : CRM_ROUTE_SOCKET;
    crm__unlock();
    return route;
}

void crm_conn_count_bulk(uint64_t h2d, uint64_t d2h)
{
    crm__lock();
    crm__conn.stats.bytes_h2d += h2d;
    crm__conn.stats.bytes_d2h += d2h;
    crm__unlock();
}

void crm_conn_count_pinned(uint64_t bytes)
{
    crm__lock();
    crm__conn.stats.pinned_bytes += bytes;
    crm__unlock();
}

size_t crm_conn_round_trips_by_call(char *buf, size_t len)
{
    crm__lock();
    size_t need = crm_rtcount_format(&crm__conn.by_call, buf, len);
    crm__unlock();
    return need;
}

void crm_conn_get_stats(crm_conn_stats *out)
{
    crm__lock();
    *out = crm__conn.stats;
    for (int i = 0; crm__conn.opened > 0 && i < crm__conn.spec.nservers; i++) {
        const crm_member *m = &crm__conn.members[i];
        if (m->chan_open) {
            out->channel_bytes += m->chan.moved;
            out->ring_bytes += m->chan.ring_moved;
        }
    }
    crm__unlock();
}

int crm_conn_pooled(void)
{
    return atomic_load(&crm__pool_open);
}

int crm_conn_server_of(int dev)
{
    crm__lock();
    int server = crm__conn.opened > 0 && dev >= 0 && dev < crm__conn.map.count ? crm__conn.map.dev[dev].server : -1;
    crm__unlock();
    return server;
}

int crm_conn_thread_server(void)
{
    int dev = crm_thread_device(), server = -1;
    crm__lock();
    if (crm__ensure_open() == cudaSuccess)
        server = dev >= 0 && dev < crm__conn.map.count ? crm__conn.map.dev[dev].server : 0;
    crm__unlock();
    return server;
}

int crm_conn_server_device(int server)
{
    int dev = -1;
    crm__lock();
    for (int d = 0; crm__conn.opened > 0 && d < crm__conn.map.count && dev < 0; d++)
        if (crm__conn.map.dev[d].server == server)
            dev = d;
    crm__unlock();
    return dev;
}

int crm_conn_device_begin(int dev, int *local)
{
    crm__lock();
    *local = crm__conn.opened > 0 && dev >= 0 && dev < crm__conn.map.count ? crm__conn.map.dev[dev].local : dev;
    crm__unlock();
    int saved = crm_thread_device();
    crm_set_thread_device(dev);
    return saved;
}

void crm_conn_device_end(int saved)
{
    crm_set_thread_device(saved);
}
