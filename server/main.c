/* main.c -- cudarem-server: listens, forks one session process per client, reaps
 * them (counting failed authentications per peer), reloads the auth file on
 * SIGHUP, and shuts down cleanly on SIGTERM (sessions first, then the sockets). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "common/crm_log.h"
#include "protocol/crm_chan_link.h"
#include "protocol/crm_tls.h"
#include "server/crm_admit.h"
#include "server/crm_auth_srv.h"
#include "server/crm_backend.h"
#include "server/crm_config.h"
#include "server/crm_dashboard.h"
#include "server/crm_http.h"
#include "server/crm_metrics.h"
#include "server/crm_monitor.h"
#include "server/crm_options.h"
#include "server/crm_scrub.h"
#include "server/crm_h_graph.h"
#include "server/crm_session.h"
#include "server/crm_startup.h"

#define CRM_MAX_CHILDREN 4096
#define CRM_ROUTE_WAIT_MS 5000 /* for a new connection's first bytes */

typedef struct crm__child {
    pid_t pid;
    char peer[CRM_ADMIT_KEY_MAX]; /* who connected, as crm_admit counts failures */
    int startup;           /* not yet admitted (server/crm_startup.h) */
    int evicted;           /* told to end, to make room for a newcomer */
    int hello_fd;          /* hears of its HELLO while a startup, else -1 */
    uint64_t started_ms;   /* accepted at (crm_startup_now_ms) */
    int trusted;           /* its source was admitted before (server/crm_startup.h) */
} crm__child;

static volatile sig_atomic_t crm__stop, crm__reload;
static crm__child crm__children[CRM_MAX_CHILDREN];
static crm_startup_trust crm__trust; /* sources admitted before */
static int crm__nchildren;
static uint64_t crm__next_session = 1;

static void crm__on_signal(int sig)
{
    if (sig == SIGHUP)
        crm__reload = 1;
    else
        crm__stop = 1;
}

static void crm__signals(void)
{
    struct sigaction sa = {.sa_handler = crm__on_signal}; /* no SA_RESTART: poll wakes */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

static enum crm_backend_kind crm__choose_backend(const crm_options *o, int *ok)
{
    char why[256] = "";
    *ok = 1;
    if (o->device == CRM_DEVICE_EMU)
        return CRM_BACKEND_EMU;
    if (o->gpu >= 0) {
        char n[16];
        snprintf(n, sizeof n, "%d", o->gpu);
        setenv("CUDA_VISIBLE_DEVICES", n, 1);
    }
    if (crm_backend_probe_cuda(0, why, sizeof why))
        return CRM_BACKEND_CUDA;
    if (o->device == CRM_DEVICE_CUDA) {
        crm_error("--device cuda: no usable GPU: %s", why);
        *ok = 0;
    } else {
        crm_info("no usable GPU (%s): serving the CPU-emulated device", why);
    }
    return CRM_BACKEND_EMU;
}

static int crm__open_listeners(const crm_options *o, struct pollfd *fds)
{
    for (int i = 0; i < o->nlisten; i++) {
        char err[256], text[320];
        crm_addr_format(&o->listen[i], text, sizeof text);
        fds[i].fd = crm_addr_listen(&o->listen[i], err, sizeof err);
        fds[i].events = POLLIN;
        if (fds[i].fd < 0) {
            crm_error("cannot listen on %s: %s", text, err);
            return -1;
        }
        crm_info("listening on %s", text);
    }
    return 0;
}

/* Startups whose HELLO was answered since last asked are startups no more. */
static void crm__collect_hellos(void)
{
    char byte;
    for (int i = 0; i < crm__nchildren; i++) {
        crm__child *c = &crm__children[i];
        if (c->hello_fd >= 0 && read(c->hello_fd, &byte, 1) == 1) {
            c->startup = 0;
            crm_startup_trust_add(&crm__trust, c->peer, crm_startup_now_ms());
            close(c->hello_fd);
            c->hello_fd = -1;
        }
    }
}

/* Says, at most once a second, how many connections the startup limits turned
 * away or ended, so that a flood cannot fill the log. */
static void crm__note_limited(const char *what, const char *peer)
{
    static time_t last;
    static unsigned quiet;
    time_t now = time(NULL);
    if (now == last) {
        quiet++;
        return;
    }
    crm_warn("%s %s (startup limits: --max-startups, --max-startups-per-peer, --login-grace)", what, peer);
    if (quiet > 0)
        crm_warn("... and %u more connections closed or ended by the startup limits in the second before", quiet);
    last = now;
    quiet = 0;
}

/* Whether a newcomer from peer gets a process: it may first end the oldest idle
 * startup (server/crm_startup.h). 0: go on; -1: closed at once. */
static int crm__make_room(const char *peer, int trusted, const crm_options *o)
{
    static crm_startup pending[CRM_MAX_CHILDREN];
    static int which[CRM_MAX_CHILDREN];
    int n = 0, victim = -1;
    for (int i = 0; i < crm__nchildren; i++)
        if (crm__children[i].startup && !crm__children[i].evicted) {
            pending[n] = (crm_startup){crm__children[i].peer, crm__children[i].started_ms, crm__children[i].trusted};
            which[n++] = i;
        }
    enum crm_startup_verdict v =
        crm_startup_decide(pending, n, peer, trusted, crm_startup_now_ms(), o->max_startups, o->max_startups_per_peer,
                           &victim);
    if (v == CRM_STARTUP_REFUSE) {
        crm__note_limited("closed a new connection from", peer);
        return -1;
    }
    if (v == CRM_STARTUP_EVICT) {
        crm__child *c = &crm__children[which[victim]];
        c->evicted = 1;
        kill(c->pid, SIGUSR2); /* ends it only while it is still a startup */
        crm__note_limited("ended an idle connection from", c->peer);
    }
    return 0;
}

/* With --tls-cert: a connection that opens with a TLS handshake gets TLS; a plain
 * one over TCP is refused (its HELLO answered with why), over a Unix socket served.
 * NULL, or the refusal. */
static const char *crm__start_tls(int fd, const crm_peer *who, const char *peer)
{
    char err[256];
    if (crm_tls_is_hello(fd, CRM_ROUTE_WAIT_MS)) {
        if (crm_tls_accept(fd, CRM_ROUTE_WAIT_MS, err, sizeof err) == 0)
            return NULL;
        crm_warn("refused %s: %s", peer, err);
        exit(1);
    }
    if (who->is_unix)
        return NULL;
    return "this server takes TCP clients over TLS only: set CUDAREM_TLS=on (and CUDAREM_TLS_CA to the CA "
           "that signed its certificate)";
}

/* Process of a new connection: passes a data channel on to its session, or loads
 * the backend, serves the client, exits. */
static void crm__session_child(int fd, struct pollfd *listeners, int nlisten, enum crm_backend_kind kind,
                               const char *refuse, int refuse_status, uint64_t id, pid_t daemon)
{
    char peer[128], err[256];
    /* A session never outlives its daemon: it is stopped like on SIGTERM. */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != daemon)
        exit(0);
    for (int i = 0; i < nlisten; i++)
        close(listeners[i].fd);
    signal(SIGINT, SIG_IGN); /* a terminal ^C reaches the parent, which stops us */
    if (crm_chan_is_channel(fd, CRM_ROUTE_WAIT_MS)) /* a session's data channel, not a session */
        exit(crm_chan_route(fd, CRM_ROUTE_WAIT_MS) == 0 ? 0 : 1);
    crm_peer who;
    crm_addr_peer(fd, &who);
    crm_addr_peer_format(&who, peer, sizeof peer);
    if (refuse == NULL && crm_tls_server_ready())
        refuse = crm__start_tls(fd, &who, peer);
    if (refuse == NULL && crm_backend_load(kind, err, sizeof err) != 0) {
        crm_error("session %llu: %s", (unsigned long long)id, err);
        refuse = "the server cannot load its CUDA backend";
    }
    if (refuse != NULL && refuse_status == 0)
        refuse_status = CRM_REFUSED; /* TLS or the backend: this server has no device to give */
    exit(crm_session_run(id, fd, peer, refuse, refuse_status));
}

static void crm__accept(struct pollfd *l, struct pollfd *all, int nlisten, enum crm_backend_kind kind,
                        const crm_options *o)
{
    int fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0)
        return;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    char peer[CRM_ADMIT_KEY_MAX];
    crm_admit_peer_key(fd, peer, sizeof peer);
    int hello[2];
    crm__collect_hellos(); /* who was admitted since: trusted from now on */
    int trusted = crm_startup_trusted(&crm__trust, peer, crm_startup_now_ms());
    if (crm__nchildren == CRM_MAX_CHILDREN || crm__make_room(peer, trusted, o) != 0 ||
        pipe2(hello, O_CLOEXEC | O_NONBLOCK) != 0) {
        close(fd);
        return;
    }
    /* A lock-out after failed authentications: refused at HELLO, try later. Whether
     * the server is full is decided there too, among admitted sessions only. */
    const char *refuse = crm_admit_refusal(peer, time(NULL));
    int status = refuse != NULL ? CRM_REFUSED_BUSY : 0;
    uint64_t id = crm__next_session++;
    pid_t daemon = getpid(), pid = fork();
    if (pid == 0) {
        close(hello[0]);
        for (int i = 0; i < crm__nchildren; i++) /* the other startups' pipes are the daemon's */
            if (crm__children[i].hello_fd >= 0)
                close(crm__children[i].hello_fd);
        crm_startup_child_begin(hello[1], o->login_grace);
        crm__session_child(fd, all, nlisten, kind, refuse, status, id, daemon);
    }
    close(fd);
    close(hello[1]);
    if (pid > 0) {
        crm__child *c = &crm__children[crm__nchildren++];
        *c = (crm__child){.pid = pid, .startup = 1, .hello_fd = hello[0], .started_ms = crm_startup_now_ms(),
                          .trusted = trusted};
        snprintf(c->peer, CRM_ADMIT_KEY_MAX, "%s", peer);
    } else {
        close(hello[0]);
        crm_error("cannot fork a session: %s", strerror(errno));
    }
}

static void crm__reap(void)
{
    pid_t pid;
    int status;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        crm_monitor_forget(pid); /* a session that died without leaving the table */
        for (int i = 0; i < crm__nchildren; i++)
            if (crm__children[i].pid == pid) {
                if (WIFEXITED(status) && WEXITSTATUS(status) == CRM_EXIT_AUTH_FAILED)
                    crm_admit_failed(crm__children[i].peer, time(NULL));
                if (WIFEXITED(status) && WEXITSTATUS(status) == CRM_EXIT_GRACE)
                    crm__note_limited("ended a connection that did not finish its handshake in time, from",
                                      crm__children[i].peer);
                char byte;
                if (crm__children[i].hello_fd >= 0 && read(crm__children[i].hello_fd, &byte, 1) == 1)
                    crm_startup_trust_add(&crm__trust, crm__children[i].peer, crm_startup_now_ms()); /* admitted */
                if (crm__children[i].hello_fd >= 0)
                    close(crm__children[i].hello_fd);
                crm__children[i] = crm__children[--crm__nchildren];
                break;
            }
        if (WIFSIGNALED(status))
            crm_warn("session process %d died of signal %d", (int)pid, WTERMSIG(status));
    }
}

/* Stops every session (SIGTERM, then SIGKILL after 10 s) and waits for them. */
static void crm__stop_sessions(void)
{
    for (int i = 0; i < crm__nchildren; i++)
        kill(crm__children[i].pid, SIGTERM);
    for (int tries = 0; crm__nchildren > 0 && tries < 200; tries++) {
        crm__reap();
        if (crm__nchildren > 0)
            usleep(50000);
    }
    for (int i = 0; i < crm__nchildren; i++)
        kill(crm__children[i].pid, SIGKILL);
    while (crm__nchildren > 0 && waitpid(-1, NULL, 0) > 0)
        crm__reap();
}

static void crm__close_listeners(const crm_options *o, struct pollfd *fds)
{
    for (int i = 0; i < o->nlisten; i++) {
        close(fds[i].fd);
        if (o->listen[i].kind == CRM_ADDR_UNIX)
            unlink(o->listen[i].path);
    }
}

/* Loads the auth file and says at start who will be admitted. 0 or -1. */
static int crm__admission(const crm_options *o)
{
    char err[512];
    if (crm_auth_srv_load(&o->auth, err, sizeof err) != 0) {
        crm_error("%s", err);
        return -1;
    }
    if (o->auth.auth_file)
        crm_info("admitting the %d user(s) of %s by token", crm_auth_srv_users(), o->auth.auth_file);
    for (int i = 0; i < o->auth.nallow; i++)
        crm_info("admitting Unix-socket clients of uid %d", (int)o->auth.allow_uid[i]);
    if (o->auth.insecure && !crm_options_local_only(o))
        crm_warn("--insecure on an address other hosts can reach: anyone who connects gets a GPU session");
    if (o->tls_cert != NULL) {
        if (crm_tls_server_setup(o->tls_cert, o->tls_key, err, sizeof err) != 0) {
            crm_error("--tls-cert/--tls-key: %s", err);
            return -1;
        }
        crm_info("TCP clients must use TLS (certificate %s)", o->tls_cert);
    } else if (!crm_options_local_only(o)) {
        crm_info("no TLS (--tls-cert): calls and data cross the network in clear");
    }
    return 0;
}

static void crm__reload_auth(const crm_options *o)
{
    char err[512];
    if (o->auth.auth_file == NULL)
        return;
    if (crm_auth_srv_load(&o->auth, err, sizeof err) != 0)
        crm_error("SIGHUP: %s; keeping the %d user(s) loaded before", err, crm_auth_srv_users());
    else
        crm_info("SIGHUP: admitting the %d user(s) of %s", crm_auth_srv_users(), o->auth.auth_file);
}

/* The HTTP process's SIGHUP: the same auth file, for the dashboard's tokens. */
static void crm__reload_auth_of(void *arg)
{
    const crm_options *o = arg;
    char err[512];
    if (o->auth.auth_file != NULL && crm_auth_srv_load(&o->auth, err, sizeof err) != 0)
        crm_error("dashboard, SIGHUP: %s; keeping the users loaded before", err);
}

static void crm__log_site(const crm_addr *a, const char *path)
{
    if (a->kind == CRM_ADDR_TCP)
        crm_info("%s at http://%s:%d%s", strcmp(path, "/") ? "metrics for Prometheus" : "dashboard", a->host,
                 a->port, path);
    else
        crm_info("%s at %s on the Unix socket %s", strcmp(path, "/") ? "metrics for Prometheus" : "dashboard",
                 path, a->path);
}

/* --metrics and --http: the process that serves them; its pid, -1 when neither
 * was asked for, 0 when it could not start (logged). */
static pid_t crm__start_http(const crm_options *o, const struct pollfd *fds)
{
    char err[256];
    int listeners[CRM_MAX_LISTEN], n = 0;
    crm_http_site sites[2];
    if (o->metrics_on)
        sites[n++] = (crm_http_site){o->metrics, crm_metrics_handle};
    if (o->http_on)
        sites[n++] = (crm_http_site){o->http, crm_dashboard_handle};
    if (n == 0)
        return -1;
    for (int i = 0; i < o->nlisten; i++)
        listeners[i] = fds[i].fd;
    crm_http_reload reload = {crm__reload_auth_of, (void *)o};
    pid_t pid = crm_http_start(sites, n, listeners, o->nlisten, reload, err, sizeof err);
    if (pid < 0) {
        crm_error("--metrics/--http: %s", err);
        return 0;
    }
    for (int i = 0; i < n; i++)
        crm__log_site(&sites[i].addr, sites[i].handler == crm_metrics_handle ? "/metrics" : "/");
    return pid;
}

static void crm__stop_http(const crm_options *o, pid_t pid)
{
    if (pid <= 0)
        return;
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    if (o->metrics_on && o->metrics.kind == CRM_ADDR_UNIX)
        unlink(o->metrics.path);
    if (o->http_on && o->http.kind == CRM_ADDR_UNIX)
        unlink(o->http.path);
}

int main(int argc, char **argv)
{
    crm_options o;
    struct pollfd fds[CRM_MAX_LISTEN];
    static char **args; /* the options keep pointers into it for the whole run */
    char err[512];
    int nargs, ok;
    if (crm_config_expand(argc, argv, &nargs, &args, err, sizeof err) != 0) {
        fprintf(stderr, "cudarem-server: %s\n", err);
        return 2;
    }
    int rc = crm_options_parse(nargs, args, &o);
    if (rc != 0)
        return rc > 0 ? 0 : 2;
    if (o.add_user != NULL)
        return crm_auth_srv_add_user(o.auth.auth_file, o.add_user, o.add_admin);
    crm_log_init("cudarem-server", (enum crm_log_level)o.log_level);
    if (crm__admission(&o) != 0)
        return 1;
    crm_scrub_on = o.scrub; /* the sessions forked from now on inherit it */
    crm_graph_capture_on = o.graph_capture;
    crm__signals();
    enum crm_backend_kind kind = crm__choose_backend(&o, &ok);
    if (!ok)
        return 1;
    if (crm__open_listeners(&o, fds) != 0)
        return 1;
    if (kind == CRM_BACKEND_EMU) { /* sessions share one emulated device's memory */
        char pool[32];
        int fd = memfd_create("cudarem-emu-pool", MFD_CLOEXEC); /* gone with the last process */
        snprintf(pool, sizeof pool, "fd:%d", fd);
        if (fd >= 0)
            setenv("CUDAREM_EMU_POOL", pool, 1);
        else
            crm_warn("no shared memory for the emulated device's pool (%s): sessions will not see each "
                     "other's memory use", strerror(errno));
    }
    if (crm_monitor_init() != 0) /* before any fork: every session shares it */
        crm_warn("no shared session table: NVML lists each client's own session only");
    crm_monitor_set_backend(crm_backend_name(kind));
    crm_monitor_set_max_sessions(o.max_sessions); /* checked at HELLO, among admitted sessions */
    pid_t http = crm__start_http(&o, fds);
    if (http == 0) {
        crm__close_listeners(&o, fds);
        return 1;
    }
    crm_info("serving the %s device, at most %d sessions", crm_backend_name(kind), o.max_sessions);
    while (!crm__stop) {
        int n = poll(fds, (nfds_t)o.nlisten, 500);
        for (int i = 0; n > 0 && i < o.nlisten; i++)
            if (fds[i].revents & POLLIN)
                crm__accept(&fds[i], fds, o.nlisten, kind, &o);
        crm__reap();
        if (crm__reload) {
            crm__reload = 0;
            crm__reload_auth(&o);
            if (http > 0)
                kill(http, SIGHUP); /* the dashboard checks tokens too */
        }
    }
    crm_info("shutting down: stopping %d session(s)", crm__nchildren);
    crm__close_listeners(&o, fds);
    crm__stop_http(&o, http);
    crm__stop_sessions();
    return 0;
}
