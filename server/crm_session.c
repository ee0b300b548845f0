/* crm_session.c -- a session process: the loop over its connection's calls
 * (server/crm_srv_rpc.h), HELLO and EXEC, and the release of everything the client
 * owned when it leaves. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <rpc/rpc.h>
#include "common/crm_emu_window.h"
#include "common/crm_log.h"
#include "crm_api.h"
#include "crm_server_gen.h"
#include "protocol/crm_bulk.h"
#include "protocol/crm_chan_link.h"
#include "protocol/crm_shm.h"
#include "protocol/crm_shm_guard.h"
#include "protocol/crm_sockio.h"
#include "protocol/crm_tls.h"
#include "protocol/crm_wire.h"
#include "server/crm_auth_srv.h"
#include "server/crm_backend.h"
#include "server/crm_devout.h"
#include "server/crm_startup.h"
#include "server/crm_h_nvml.h"
#include "server/crm_monitor.h"
#include "server/crm_scrub.h"
#include "server/crm_session.h"
#include "server/crm_session_chan.h"
#include "server/crm_slot.h"
#include "server/crm_srv_rpc.h"
#include "server/crm_status.h"
#include "server/crm_xfer.h"

static crm_session crm__session;            /* the one session of this process */
static volatile sig_atomic_t crm__stopping; /* SIGTERM received */
static volatile sig_atomic_t crm__ended_by; /* the signal that ended the session, 0 if none */

/* SIGTERM: the daemon shuts down (or died); SIGUSR1: an administrator ended the
 * session (server/crm_status.h). */
static void crm__on_term(int sig)
{
    crm__ended_by = sig;
    crm__stopping = 1;
}

/* Why the session ends, for its client; NULL when the client left or broke it. */
static const char *crm__goodbye_reason(void)
{
    if (crm_shm_guard_faulted())
        return "the client shrank shared memory it had given the server (pinned host memory or the copy ring) "
               "while the server used it";
    if (crm__ended_by == SIGUSR1)
        return "an administrator ended it (cudarem-smi --end or the dashboard)";
    return crm__ended_by == SIGTERM ? "the server is shutting down" : NULL;
}

/* Describes the session's first devices in res; what cannot be read is left out
 * (the client then asks for it). */
static void crm__describe_devices(crm_session *s, crm_hello_res *res)
{
    int n = res->device_count < CRM_HELLO_DEVICES_MAX ? res->device_count : CRM_HELLO_DEVICES_MAX;
    crm_device_desc *d = n > 0 ? calloc((size_t)n, sizeof *d) : NULL;
    int got = 0;
    while (d != NULL && got < n && crm_srv_cudaGetDeviceProperties(s, got, &d[got].prop) == cudaSuccess) {
        if (crm_srv_crm_device_attrs(s, got, &d[got].attrs) != cudaSuccess) {
            free(d[got].prop.crm_prop_val);
            break;
        }
        got++;
    }
    crm_rt.cudaGetLastError();
    res->devices.devices_len = (u_int)got;
    res->devices.devices_val = d;
}

/* How busy each described device is, for a pooling client's CUDAREM_PICK. */
static void crm__describe_loads(crm_hello_res *res)
{
    crm_monitor_device d[CRM_MONITOR_DEVICES];
    int n = crm_monitor_devices(d, CRM_MONITOR_DEVICES);
    u_int count = res->devices.devices_len;
    res->loads.loads_val = count > 0 ? calloc(count, sizeof *res->loads.loads_val) : NULL;
    if (res->loads.loads_val == NULL)
        return;
    res->loads.loads_len = count;
    for (u_int i = 0; i < count && (int)i < n && i < CRM_MONITOR_DEVICES; i++)
        if (d[i].known)
            res->loads.loads_val[i] = (crm_device_load){d[i].used, d[i].total, d[i].sessions};
}

/* Places the session's device addresses in the slot a pooling client asked for
 * (common/crm_emu_window.h): the emulated device moves its window there (it reads
 * CUDAREM_EMU_SLOT at its first allocation); on a GPU, server/crm_slot.h maps the
 * session's memory there. When neither can, the capability stays off and the
 * client refuses allocations that overlap another server's. */
static void crm__address_slot(const crm_hello_args *args, crm_hello_res *res)
{
    if (args->address_slot == 0 || args->address_slot > CRM_EMU_SLOTS)
        return;
    unsigned slot = args->address_slot - 1;
    const char *vmm = getenv("CUDAREM_SLOT_VMM");
    if (crm_backend_kind() == CRM_BACKEND_EMU) {
        char text[16];
        snprintf(text, sizeof text, "%u", slot);
        if (setenv("CUDAREM_EMU_SLOT", text, 1) != 0)
            return;
        res->capabilities |= CRM_CAP_ADDR_SLOT;
        if (vmm == NULL || strcmp(vmm, "1") != 0)
            return;
    }
    if (crm_slot_open(slot) == 0)
        res->capabilities |= CRM_CAP_ADDR_SLOT;
}

static void crm__free_devices(crm_hello_res *res)
{
    free(res->loads.loads_val);
    for (u_int i = 0; i < res->devices.devices_len; i++) {
        free(res->devices.devices_val[i].prop.crm_prop_val);
        free(res->devices.devices_val[i].attrs.crm_bytes_val);
    }
    free(res->devices.devices_val);
}

/* Registers the admitted session in the shared table (NVML lists it under the
 * client's pid) within its user's session limit. 0, or -1 with why set. */
static int crm__join(crm_session *s, const crm_hello_args *args, char *why, size_t whylen)
{
    s->quota = crm_quota_of(s->user);
    int rc = crm_monitor_session_start(s->id, args->pid, s->user, s->quota.sessions);
    if (rc == -2)
        snprintf(why, whylen, "server full (--max-sessions reached)");
    else if (rc != 0)
        snprintf(why, whylen, "user %s already has %d session(s) open, the most its --quota allows", s->user,
                 s->quota.sessions);
    return rc;
}

/* Tells the shared table how HELLO went, and what the session's devices are. */
static void crm__count_hello(crm_session *s, const crm_hello_res *res)
{
    if (res->status != 0) {
        crm_monitor_note(CRM_EVENT_REFUSED);
        if (s->auth_failed)
            crm_monitor_note(CRM_EVENT_AUTH_FAILED);
        return;
    }
    if (s->observer)
        return;
    crm_monitor_note(CRM_EVENT_ADMITTED);
    crm_monitor_session_describe(s->peer);
    for (int i = 0; i < res->device_count && i < CRM_MONITOR_DEVICES; i++) {
        struct cudaDeviceProp prop; /* the backend's own: the whole device, not a --quota slice */
        if (crm_rt.cudaGetDeviceProperties(&prop, i) == cudaSuccess)
            crm_monitor_device_describe(i, prop.name, prop.totalGlobalMem);
    }
    crm_rt.cudaGetLastError();
}

static void crm__hello(crm_srv_rpc *x, crm_session *s)
{
    crm_hello_args args;
    crm_hello_res res;
    char chan_path[CRM_CHAN_PATH_MAX] = "", why[256];
    memset(&args, 0, sizeof args);
    memset(&res, 0, sizeof res);
    res.chan_path = chan_path;
    if (!crm_srv_rpc_getargs(x, (xdrproc_t)xdr_crm_hello_args, &args)) {
        xdr_free((xdrproc_t)xdr_crm_hello_args, (char *)&args);
        crm_srv_rpc_error(x, GARBAGE_ARGS);
        return;
    }
    res.proto_version = CRM_PROTO_VERSION;
    res.capabilities = CRM_CAP_BATCH | CRM_CAP_BULK2D;
    res.session_id = s->id;
    res.backend = (char *)crm_backend_name(crm_backend_kind());
    res.message = "";
    if (s->refuse != NULL) {
        res.status = s->refuse_status;
        res.message = (char *)s->refuse;
    } else if (args.proto_version != CRM_PROTO_VERSION) {
        res.status = CRM_REFUSED;
        res.message = "protocol version mismatch";
    } else if (args.prop_size != sizeof(struct cudaDeviceProp)) {
        res.status = CRM_REFUSED;
        res.message = "cudaDeviceProp size differs: client and server use different CUDA headers";
    } else if (!crm_auth_srv_admit(s, &args, &res, why, sizeof why)) {
        res.status = CRM_REFUSED;
        res.message = why;
        s->auth_failed = 1;
        crm__stopping = 1; /* answer, then end: the daemon counts the failure */
    } else if (args.capabilities & CRM_CAP_OBSERVE) {
        s->observer = 1; /* no devices, no calls: STATUS and END (server/crm_status.h) */
        res.capabilities |= CRM_CAP_OBSERVE;
    } else if (crm__join(s, &args, why, sizeof why) != 0) {
        res.status = CRM_REFUSED_BUSY; /* the user's --quota of sessions, or --max-sessions */
        res.message = why;
    } else {
        crm_rt.cudaGetDeviceCount(&res.device_count);
        crm_rt.cudaDriverGetVersion(&res.driver_version);
        crm_rt.cudaRuntimeGetVersion(&res.runtime_version);
        crm_rt.cudaGetLastError(); /* a count of 0 must not leave a sticky error */
        crm__describe_devices(s, &res);
        crm__describe_loads(&res);
        crm__address_slot(&args, &res);
        s->hello_done = 1;
        if (args.shm_name && args.shm_name[0] && crm_shm_data == NULL &&
            crm_shm_attach(args.shm_name, args.shm_size, (const unsigned char *)args.shm_cookie) == 0)
            res.capabilities |= CRM_CAP_SHM; /* same machine: bulk data skips the socket */
        if ((args.capabilities & CRM_CAP_CHANNEL) &&
            crm_session_chan_offer(chan_path, (unsigned char *)res.chan_token, crm_tls_on(s->fd)) == 0) {
            unsigned char derived[CRM_CHAN_TOKEN];
            res.capabilities |= CRM_CAP_CHANNEL;
            if (crm_auth_srv_chan_token(derived) == 0) { /* bound to the proof: not sent */
                crm_session_chan_set_token(derived);
                memset(res.chan_token, 0, sizeof res.chan_token);
            }
        }
    }
    size_t n = strlen(s->peer);
    snprintf(s->peer + n, sizeof s->peer - n, " (%s pid %u)", args.host ? args.host : "?", args.pid);
    crm__count_hello(s, &res);
    uint64_t quiet;
    if (res.status != 0) {
        if (crm_monitor_refusal_log(&quiet)) { /* at most 10 a second */
            crm_warn("session %llu: refused %s: %s (client protocol %u, server %d)", (unsigned long long)s->id,
                     s->peer, res.message, args.proto_version, CRM_PROTO_VERSION);
            if (quiet > 0)
                crm_warn("... after %llu refusals not logged (at most %d a second are)",
                         (unsigned long long)quiet, CRM_MONITOR_REFUSALS_LOGGED);
        }
    } else
        crm_info("session %llu: admitted %s as %s %s", (unsigned long long)s->id, s->peer,
                 s->observer ? "observer" : "user", s->user);
    if (res.status == 0)
        crm_startup_child_admitted(); /* no longer a startup: no deadline, the daemon told */
    crm_srv_rpc_reply(x, (xdrproc_t)xdr_crm_hello_res, &res);
    if ((res.capabilities & CRM_CAP_CHANNEL) && crm_tls_on(s->fd))
        crm_session_chan_open_now(); /* the client waits in its TLS handshake */
    crm__free_devices(&res);
    xdr_free((xdrproc_t)xdr_crm_hello_args, (char *)&args);
}

/* A batch being executed as it is decoded, and the replies it produced. */
typedef struct crm__exec {
    crm_session *s;
    crm_exec_res res;
} crm__exec;

/* Decodes one call at a time and runs it at once, so bulk data lands in order and
 * a large batch never sits whole in memory. */
static bool_t crm__xdr_exec(XDR *xdrs, crm__exec *ex)
{
    u_int n;
    if (xdrs->x_op != XDR_DECODE)
        return TRUE;
    if (!xdr_u_int(xdrs, &n) || n > CRM_MAX_BATCH)
        return FALSE;
    ex->res.replies.crm_replies_val = calloc(n ? n : 1, sizeof(crm_reply));
    if (ex->res.replies.crm_replies_val == NULL)
        return FALSE;
    ex->s->batch_len = n;
    for (u_int i = 0; i < n; i++) {
        crm_call call;
        memset(&call, 0, sizeof call);
        ex->s->batch_index = i;
        if (!xdr_crm_call(xdrs, &call)) {
            xdr_free((xdrproc_t)xdr_crm_call, (char *)&call);
            return FALSE;
        }
        crm_nvml_dispatch(ex->s, &call, &ex->res.replies.crm_replies_val[i]);
        ex->res.replies.crm_replies_len = i + 1;
        ex->s->calls++;
        xdr_free((xdrproc_t)xdr_crm_call, (char *)&call);
    }
    return TRUE;
}

static void crm__exec_batch(crm_srv_rpc *x, crm_session *s)
{
    crm__exec ex = {.s = s};
    if (!s->hello_done) {
        crm_warn("session %llu: call before HELLO from %s", (unsigned long long)s->id, s->peer);
        crm_srv_rpc_error(x, SYSTEM_ERR);
        return;
    }
    if (!crm_srv_rpc_getargs(x, (xdrproc_t)crm__xdr_exec, &ex)) {
        crm_srv_rpc_error(x, GARBAGE_ARGS);
    } else {
        ex.res.posted = s->posted; /* the posted calls ran before this batch */
        memset(&s->posted, 0, sizeof s->posted);
        ex.res.device_output.device_output_len =
            (u_int)crm_devout_take(&ex.res.device_output.device_output_val, CRM_OUTPUT_MAX);
        crm_monitor_session_counts(s->calls, s->bytes_in + s->bytes_pinned_in, s->bytes_out + s->bytes_pinned_out);
        crm_session_publish_held(s);
        if (!crm_srv_rpc_reply(x, (xdrproc_t)xdr_crm_exec_res, &ex.res))
            crm_session_chan_discard();
        else if (crm_session_chan_after_reply() != 0)
            crm__stopping = 1; /* the client cannot get its data: end the session */
    }
    xdr_free((xdrproc_t)xdr_crm_exec_res, (char *)&ex.res);
}

/* Keeps the first failure of a posted batch's calls for the next reply. */
static void crm__note_posted(crm_session *s, const crm_replies *replies)
{
    for (u_int i = 0; i < replies->crm_replies_len && s->posted.api == 0; i++) {
        const crm_reply *r = &replies->crm_replies_val[i];
        int status = *(const int *)&r->crm_reply_u; /* every result starts with err */
        if (status != 0) {
            s->posted.api = (int)r->api;
            s->posted.status = status;
        }
    }
}

/* A posted batch: run like an EXEC batch and never answered. Its replies are
 * dropped once their first failure is noted; one that does not decode ends the
 * session, as the client can no longer know what ran. */
static void crm__post_batch(crm_srv_rpc *x, crm_session *s)
{
    crm__exec ex = {.s = s};
    if (!s->hello_done) {
        crm_warn("session %llu: posted calls before HELLO from %s", (unsigned long long)s->id, s->peer);
        crm__stopping = 1;
        return;
    }
    if (!crm_srv_rpc_getargs(x, (xdrproc_t)crm__xdr_exec, &ex)) {
        crm_warn("session %llu: a posted batch from %s does not decode", (unsigned long long)s->id, s->peer);
        crm__stopping = 1;
    }
    crm__note_posted(s, &ex.res.replies);
    crm_session_chan_discard(); /* nobody asked for the payloads of its replies */
    xdr_free((xdrproc_t)xdr_crm_exec_res, (char *)&ex.res);
}

static void crm__dispatch(crm_srv_rpc *x, uint32_t proc)
{
    switch (proc) {
    case CRM_NULL:
        crm_srv_rpc_reply(x, (xdrproc_t)(void (*)(void))xdr_void, NULL);
        break;
    case CRM_HELLO:
        crm__hello(x, &crm__session);
        break;
    case CRM_EXEC:
        crm__exec_batch(x, &crm__session);
        break;
    case CRM_AUTH:
        crm_auth_srv_begin(x, &crm__session, crm__session.refuse);
        break;
    case CRM_POST:
        crm__post_batch(x, &crm__session);
        break;
    case CRM_STATUS:
        crm_status_serve(x, &crm__session);
        break;
    case CRM_END:
        crm_status_end(x, &crm__session);
        break;
    default:
        crm_srv_rpc_error(x, PROC_UNAVAIL);
    }
}

static void crm__log_end(crm_session *s)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double secs = (double)(now.tv_sec - s->start.tv_sec) + (double)(now.tv_nsec - s->start.tv_nsec) / 1e9;
    char scrub[96] = "";
    if (crm_scrub_on)
        snprintf(scrub, sizeof scrub, ", %llu of %llu bytes allocated zeroed when freed",
                 (unsigned long long)s->scrubbed, (unsigned long long)s->allocated);
    crm_log(s->hello_done ? CRM_LOG_INFO : CRM_LOG_DEBUG, /* strangers' connections at debug only */
            "session %llu end: peer %s, %.3f s, %llu calls, %llu bytes in, %llu bytes out%s, "
            "%llu in and %llu out through shared pinned memory",
            (unsigned long long)s->id, s->peer, secs, (unsigned long long)s->calls,
            (unsigned long long)s->bytes_in, (unsigned long long)s->bytes_out, scrub,
            (unsigned long long)s->bytes_pinned_in, (unsigned long long)s->bytes_pinned_out);
}

#define CRM__LINGER_MS 2000 /* how long a goodbye waits for its client to read it */

/* After a goodbye: ends our side of the stream and reads what the client still
 * sends until it closes (or CRM__LINGER_MS pass). Closing with its calls unread
 * would make TCP reset the connection, and a reset can discard the goodbye before
 * the client reads it. */
static void crm__linger(int fd)
{
    char sink[4096];
    struct pollfd pf = {.fd = fd, .events = POLLIN};
    shutdown(fd, SHUT_WR);
    for (int waited = 0; waited < CRM__LINGER_MS; waited += 100) {
        int ready = poll(&pf, 1, 100);
        if (ready < 0 && errno != EINTR)
            return;
        if (ready > 0 && read(fd, sink, sizeof sink) <= 0)
            return; /* the client closed: it has the goodbye */
    }
}

/* Serves calls until the client leaves or SIGTERM. */
static void crm__serve(int fd)
{
    crm_srv_rpc x;
    uint32_t proc;
    if (crm_srv_rpc_init(&x, fd, &crm__stopping) != 0) {
        crm_error("session %llu: cannot set up the RPC transport", (unsigned long long)crm__session.id);
        crm_tls_drop(fd);
        close(fd);
        return;
    }
    while (crm_srv_rpc_next(&x, &proc))
        crm__dispatch(&x, proc);
    int said = crm__goodbye_reason() != NULL && crm__session.hello_done;
    if (said)
        crm_srv_rpc_goodbye(&x, crm__goodbye_reason());
    crm_srv_rpc_fini(&x);
    crm_tls_drop(fd);
    if (said)
        crm__linger(fd);
    close(fd); /* the client sees the end at once, before the clean-up */
}

int crm_session_run(uint64_t id, int fd, const char *peer, const char *refuse, int refuse_status)
{
    crm_session *s = &crm__session;
    struct sigaction sa = {.sa_handler = crm__on_term};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    crm_shm_guard_install(&crm__stopping); /* a client's shrunk region ends its session, not the process */
    crm_sock_stop_on(&crm__stopping);      /* a stop that lands while a read polls ends that read */
    crm_shm_guard_reset();
    memset(s, 0, sizeof *s);
    crm__stopping = 0; /* one process may serve sessions one after another (tests/fuzz) */
    crm__ended_by = 0;
    crm_auth_srv_session_reset();
    crm_log_limit(CRM_SESSION_LOG_PER_SECOND, CRM_SESSION_LOG_BURST); /* a client cannot fill the log */
    s->id = id;
    s->fd = fd;
    s->refuse = refuse;
    s->refuse_status = refuse_status;
    snprintf(s->peer, sizeof s->peer, "%s", peer);
    clock_gettime(CLOCK_MONOTONIC, &s->start);
    crm_rangemap_init(&s->allocs);
    crm_idmap_init(&s->streams);
    crm_idmap_init(&s->events);
    crm_idmap_init(&s->handles);
    crm_idmap_init(&s->hostmem);
    crm_xfer_init(s);
    crm_devout_capture(crm_backend_kind() == CRM_BACKEND_EMU);
    if (refuse == NULL) /* info once admitted (HELLO): a stranger's connection must not fill the log */
        crm_debug("session %llu start: peer %s, backend %s", (unsigned long long)id, peer,
                  crm_backend_name(crm_backend_kind()));
    crm__serve(fd);
    if (crm_shm_guard_faulted())
        crm_warn("session %llu: peer %s shrank shared memory the server was using; session ended",
                 (unsigned long long)id, peer);
    crm_session_hostmem_release(s);
    crm_session_release(s, -1, 0);
    crm_monitor_session_end();
    crm_xfer_fini();
    crm_session_chan_close();
    crm_shm_detach();
    crm_log_flush_dropped();
    crm_log_limit(0, 0); /* the end line is always written */
    if (refuse == NULL)
        crm__log_end(s);
    return s->auth_failed ? CRM_EXIT_AUTH_FAILED : 0;
}
