/* crm_options.c -- parsing and help text of cudarem-server's command line. */
#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/crm_log.h"
#include <cuda_runtime_api.h>
#include "crm_api.h"
#include "protocol/crm_wire.h"
#include "server/crm_options.h"
#include "server/crm_limits.h"
#include "server/crm_quota.h"

#define CRM_VERSION_TEXT "cudarem-server 0.1.0 (protocol %d, CUDA runtime API %d)\n"

static void crm__usage(FILE *out)
{
    fprintf(out,
            "Usage: cudarem-server [OPTION]...\n"
            "Serve CUDA runtime calls of cudarem clients (LD_PRELOAD=libcudarem.so) on this host.\n"
            "Each client connection is a session in its own process with its own CUDA context.\n"
            "\n"
            "  --config FILE        read options from FILE first: one per line, 'listen =\n"
            "                       unix:/run/cudarem.sock' or 'insecure' (a long option\n"
            "                       without its dashes); '#' starts a comment. Options on\n"
            "                       the command line come after the file's\n"
            "  --listen ADDR        listen on ADDR: tcp:HOST:PORT, HOST:PORT or unix:PATH;\n"
            "                       repeatable (default: tcp:0.0.0.0:%d)\n"
            "  --device KIND        cuda: the real GPU; emu: the CPU-emulated device;\n"
            "                       auto (default): the GPU when one is usable, else emu\n"
            "  --gpu N              serve GPU N only (sets CUDA_VISIBLE_DEVICES)\n"
            "  --max-sessions N     refuse sessions beyond N admitted at once (default 64)\n"
            "  --login-grace SECONDS\n"
            "                       end a connection that has not finished its handshake\n"
            "                       (TLS, token, HELLO) within SECONDS (default 10; 0: never)\n"
            "  --max-startups N     connections not yet admitted at once (default 128): a\n"
            "                       newcomer beyond takes the place of the oldest pending for\n"
            "                       over 2 s, else it is closed at once\n"
            "  --max-startups-per-peer N\n"
            "                       the same for one source: an IP address, or a uid on a\n"
            "                       Unix socket (default 64)\n"
            "  --log-level LEVEL    error, warn, info (default) or debug\n"
            "  --cache-dir DIR      keep the device code modules clients ship, once they\n"
            "                       loaded, in DIR/USER, so that USER's later sessions send\n"
            "                       only their SHA-256 (default:\n"
            "                       $XDG_CACHE_HOME/cudarem/modules or ~/.cache/cudarem/modules;\n"
            "                       'off' disables the cache)\n"
            "  --cache-max SIZE     each user's cached modules beyond SIZE (K, M, G, T) are\n"
            "                       removed, least recently used first (default 1G)\n"
            "  --emu-kernels PATH   load CPU implementations of kernels for the emulated\n"
            "                       device from the shared library PATH (see\n"
            "                       server/emu/cudarem_emu_kernel.h); repeatable. Other\n"
            "                       kernels run from their PTX on the PTX engine\n"
            "  --auth-file FILE     admit clients that prove a token of FILE (lines\n"
            "                       USER:cudarem-sha256:...; see --add-user); reloaded on\n"
            "                       SIGHUP. Clients set CUDAREM_TOKEN or CUDAREM_TOKEN_FILE\n"
            "  --add-user USER      make a token for USER, add its verifier to the\n"
            "                       --auth-file FILE, print the token and exit\n"
            "  --admin              with --add-user: the user is an administrator, who\n"
            "                       may list and end every session (cudarem-smi). Root\n"
            "                       and the server's own user on a Unix socket are too\n"
            "  --allow-uid USER     admit Unix-socket clients running as USER (a name or\n"
            "                       a uid) without a token; repeatable\n"
            "  --insecure           admit every client that reaches a listening address;\n"
            "                       warns at start unless every address is a Unix socket\n"
            "                       or loopback\n"
            "  --metrics ADDR       serve Prometheus metrics at http://ADDR/metrics (ADDR as\n"
            "                       for --listen): devices in the names of NVIDIA's DCGM\n"
            "                       exporter, sessions with their users, counts, a histogram\n"
            "                       of call times. Anyone who reaches ADDR sees user names:\n"
            "                       give a loopback or an internal address\n"
            "  --http ADDR          serve the dashboard at http://ADDR/: devices and sessions,\n"
            "                       live, and ending a session with an administrator's token\n"
            "                       (which the page sends as it is: serve it on loopback, or\n"
            "                       behind a proxy that adds TLS)\n"
            "  --scrub              zero the device memory a session frees (and all it\n"
            "                       holds when it ends) before any other can receive it\n"
            "  --tls-cert FILE      serve TLS with this certificate chain (PEM); TCP\n"
            "                       clients must then use it (CUDAREM_TLS=on); Unix-socket\n"
            "                       clients may\n"
            "  --tls-key FILE       the certificate's private key (PEM)\n"
            "  --quota USER:mem=SIZE,sessions=N\n"
            "                       what USER ('*': every user without a line of its\n"
            "                       own) may take: SIZE of each device's memory (K, M, G,\n"
            "                       T), which cudaMemGetInfo, NVML and the device\n"
            "                       properties report as the device's, and N sessions at\n"
            "                       once; repeatable. Users are token users, Unix-socket\n"
            "                       users by uid name, 'anonymous' under --insecure\n"
            "  --session-limits KIND=N[,KIND=N...]\n"
            "                       what one session may hold besides device memory;\n"
            "                       a creation past a limit fails as out of memory (0: no\n"
            "                       limit). KIND and default: streams=1024, events=65536,\n"
            "                       handles=256 (cuBLAS, cuBLASLt, cuDNN), modules=4096,\n"
            "                       module-bytes=4G, functions=262144, allocations=1048576,\n"
            "                       pinned=4096 (host regions), host-memory=16G (the\n"
            "                       session process's private resident memory)\n"
            "  --graph-capture      on a GPU, make each CUDA graph program a client\n"
            "                       instantiates one CUDA graph, launched at once (a\n"
            "                       program a capture refuses is replayed call by call,\n"
            "                       as without it). Not yet measured on a GPU: off by\n"
            "                       default\n"
            "  --emu-kernel-timeout SECONDS\n"
            "                       stop a kernel the PTX engine has run for longer with\n"
            "                       cudaErrorLaunchTimeout, and a cuBLAS batch the emulated\n"
            "                       device has run for longer with\n"
            "                       CUBLAS_STATUS_EXECUTION_FAILED (default 600)\n"
            "  --help               show this help and exit\n"
            "  --version            show the version and exit\n"
            "\n"
            "Environment: CUDAREM_EMU_MEM (emulated device memory, e.g. 8G),\n"
            "CUDAREM_EMU_DEVICES (number of emulated devices), CUDAREM_EMU_THREADS (threads\n"
            "the PTX engine runs a grid's blocks on; default one per core), CUDAREM_EMU_LIB\n"
            "(path of libcudarem-emu.so; default: next to this binary, else in\n"
            "../lib/cudarem beside it).\n"
            "Each session's large copies use a second connection to the same address (its\n"
            "data channel), or shared memory when the client runs on this machine: one\n"
            "published port or socket is enough.\n"
            "A server needs --auth-file, --allow-uid or --insecure to admit anyone; failed\n"
            "authentications are logged with the peer, and a peer that fails 5 times within\n"
            "60 s is refused until that minute ends.\n",
            CRM_DEFAULT_PORT);
}

static int crm__int_arg(const char *name, const char *text, int min, int *out)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || v < min || v > 1000000) {
        fprintf(stderr, "cudarem-server: bad %s '%s'\n", name, text);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int crm__add_listen(crm_options *o, const char *text)
{
    char err[256];
    if (o->nlisten == CRM_MAX_LISTEN) {
        fprintf(stderr, "cudarem-server: at most %d --listen addresses\n", CRM_MAX_LISTEN);
        return -1;
    }
    if (crm_addr_parse(text, &o->listen[o->nlisten], err, sizeof err) != 0) {
        fprintf(stderr, "cudarem-server: --listen %s: %s\n", text, err);
        return -1;
    }
    o->nlisten++;
    return 0;
}

static int crm__device_arg(crm_options *o, const char *text)
{
    if (strcmp(text, "cuda") == 0)
        o->device = CRM_DEVICE_CUDA;
    else if (strcmp(text, "emu") == 0)
        o->device = CRM_DEVICE_EMU;
    else if (strcmp(text, "auto") == 0)
        o->device = CRM_DEVICE_AUTO;
    else {
        fprintf(stderr, "cudarem-server: --device must be cuda, emu or auto\n");
        return -1;
    }
    return 0;
}

/* --emu-kernels: PATH joins CUDAREM_EMU_KERNELS (':'-separated), which the session
 * processes inherit and the emulated device reads. */
static int crm__emu_kernels_arg(const char *path)
{
    const char *old = getenv("CUDAREM_EMU_KERNELS");
    char *abs = realpath(path, NULL), *v;
    if (abs == NULL || strchr(abs, ':') != NULL) {
        fprintf(stderr, "cudarem-server: --emu-kernels %s: %s\n", path,
                abs ? "the path must not contain ':'" : "no such file");
        free(abs);
        return -1;
    }
    int rc = asprintf(&v, "%s%s%s", old && *old ? old : "", old && *old ? ":" : "", abs);
    free(abs);
    if (rc < 0)
        return -1;
    setenv("CUDAREM_EMU_KERNELS", v, 1);
    free(v);
    return 0;
}

/* --emu-kernel-timeout: CUDAREM_EMU_KERNEL_TIMEOUT, which the PTX engine and the
 * emulated cuBLAS's batch loops read. */
static int crm__timeout_arg(const char *text)
{
    char *end;
    double v = strtod(text, &end);
    if (*text == '\0' || *end != '\0' || !(v > 0) || v > 1e7) {
        fprintf(stderr, "cudarem-server: bad --emu-kernel-timeout '%s' (seconds, > 0)\n", text);
        return -1;
    }
    return setenv("CUDAREM_EMU_KERNEL_TIMEOUT", text, 1) == 0 ? 0 : -1;
}

/* --allow-uid: a user name or a numeric uid. */
/* --metrics or --http ADDR into *a. 0 or -1. */
static int crm__site_arg(const char *option, const char *text, crm_addr *a, int *on)
{
    char err[256];
    if (crm_addr_parse(text, a, err, sizeof err) != 0) {
        fprintf(stderr, "cudarem-server: %s %s: %s\n", option, text, err);
        return -1;
    }
    *on = 1;
    return 0;
}

static int crm__allow_uid_arg(crm_options *o, const char *text)
{
    struct passwd *pw = getpwnam(text);
    char *end;
    unsigned long uid = pw ? (unsigned long)pw->pw_uid : strtoul(text, &end, 10);
    if (pw == NULL && (*text == '\0' || *end != '\0' || uid > 0x7fffffffUL)) {
        fprintf(stderr, "cudarem-server: --allow-uid %s: no such user\n", text);
        return -1;
    }
    if (o->auth.nallow == CRM_AUTH_MAX_UIDS) {
        fprintf(stderr, "cudarem-server: at most %d --allow-uid\n", CRM_AUTH_MAX_UIDS);
        return -1;
    }
    o->auth.allow_uid[o->auth.nallow++] = (uid_t)uid;
    return 0;
}

/* --cache-max SIZE, passed on to the sessions (server/crm_kcache.h). */
static int crm__cache_max_arg(const char *arg)
{
    uint64_t bytes;
    char text[32];
    if (crm_quota_size(arg, &bytes) != 0) {
        fprintf(stderr, "cudarem-server: --cache-max takes a size such as 512M or 2G\n");
        return -1;
    }
    snprintf(text, sizeof text, "%llu", (unsigned long long)bytes);
    return setenv("CUDAREM_CACHE_MAX", text, 1) == 0 ? 0 : -1;
}

static int crm__quota_arg(const char *spec)
{
    char err[200];
    if (crm_quota_add(spec, err, sizeof err) == 0)
        return 0;
    fprintf(stderr, "cudarem-server: --quota %s: %s\n", spec, err);
    return -1;
}

static int crm__session_limits_arg(const char *spec)
{
    char err[300];
    if (crm_limits_parse(spec, &crm_session_limits, err, sizeof err) == 0)
        return 0;
    fprintf(stderr, "cudarem-server: --session-limits %s: %s\n", spec, err);
    return -1;
}

static int crm__one(crm_options *o, int opt, const char *arg)
{
    switch (opt) {
    case 'l': return crm__add_listen(o, arg);
    case 'd': return crm__device_arg(o, arg);
    case 'g': return crm__int_arg("--gpu", arg, 0, &o->gpu);
    case 'm': return crm__int_arg("--max-sessions", arg, 1, &o->max_sessions);
    case 'G': return crm__int_arg("--login-grace", arg, 0, &o->login_grace);
    case 'P': return crm__int_arg("--max-startups", arg, 1, &o->max_startups);
    case 'p': return crm__int_arg("--max-startups-per-peer", arg, 1, &o->max_startups_per_peer);
    case 'L':
        if ((o->log_level = crm_log_parse_level(arg)) < 0) {
            fprintf(stderr, "cudarem-server: --log-level must be error, warn, info or debug\n");
            return -1;
        }
        return 0;
    case 'C': return setenv("CUDAREM_CACHE_DIR", arg, 1) == 0 ? 0 : -1; /* read by server/crm_kcache.c */
    case 'X': return crm__cache_max_arg(arg);
    case 'K': return crm__emu_kernels_arg(arg);
    case 'T': return crm__timeout_arg(arg);
    case 'A': o->auth.auth_file = arg; return 0;
    case 'U': o->add_user = arg; return 0;
    case 'a': o->add_admin = 1; return 0;
    case 'M': return crm__site_arg("--metrics", arg, &o->metrics, &o->metrics_on);
    case 'H': return crm__site_arg("--http", arg, &o->http, &o->http_on);
    case 'F': return 0; /* read before: server/crm_config.h */
    case 'u': return crm__allow_uid_arg(o, arg);
    case 'I': o->auth.insecure = 1; return 0;
    case 'Q': return crm__quota_arg(arg);
    case 'W': return crm__session_limits_arg(arg);
    case 'c': o->tls_cert = arg; return 0;
    case 'S': o->scrub = 1; return 0;
    case 'R': o->graph_capture = 1; return 0;
    case 'k': o->tls_key = arg; return 0;
    case 'h': crm__usage(stdout); return 1;
    case 'V': printf(CRM_VERSION_TEXT, CRM_PROTO_VERSION, CUDART_VERSION); return 1;
    default: crm__usage(stderr); return -1;
    }
}

int crm_options_parse(int argc, char **argv, crm_options *o)
{
    static const struct option longs[] = {
        {"listen", required_argument, NULL, 'l'},       {"device", required_argument, NULL, 'd'},
        {"gpu", required_argument, NULL, 'g'},          {"max-sessions", required_argument, NULL, 'm'},
        {"log-level", required_argument, NULL, 'L'},    {"help", no_argument, NULL, 'h'},
        {"cache-dir", required_argument, NULL, 'C'},    {"emu-kernels", required_argument, NULL, 'K'},
        {"version", no_argument, NULL, 'V'},            {"emu-kernel-timeout", required_argument, NULL, 'T'},
        {"auth-file", required_argument, NULL, 'A'},    {"add-user", required_argument, NULL, 'U'},
        {"allow-uid", required_argument, NULL, 'u'},    {"insecure", no_argument, NULL, 'I'},
        {"quota", required_argument, NULL, 'Q'},        {"tls-cert", required_argument, NULL, 'c'},
        {"tls-key", required_argument, NULL, 'k'},      {"scrub", no_argument, NULL, 'S'},
        {"admin", no_argument, NULL, 'a'},             {"metrics", required_argument, NULL, 'M'},
        {"http", required_argument, NULL, 'H'},         {"config", required_argument, NULL, 'F'},
        {"login-grace", required_argument, NULL, 'G'},  {"max-startups", required_argument, NULL, 'P'},
        {"max-startups-per-peer", required_argument, NULL, 'p'}, {"cache-max", required_argument, NULL, 'X'},
        {"session-limits", required_argument, NULL, 'W'}, {"graph-capture", no_argument, NULL, 'R'},
        {NULL, 0, NULL, 0},
    };
    int opt, rc;
    memset(o, 0, sizeof *o);
    o->gpu = -1;
    o->max_sessions = 64;
    o->login_grace = 10;
    o->max_startups = 128;
    o->max_startups_per_peer = 64;
    o->log_level = CRM_LOG_INFO;
    crm_session_limits = crm_limits_default(); /* the sessions inherit them */
    while ((opt = getopt_long(argc, argv, "", longs, NULL)) != -1)
        if ((rc = crm__one(o, opt, optarg)) != 0)
            return rc;
    if (optind < argc) {
        fprintf(stderr, "cudarem-server: unexpected argument '%s'\n", argv[optind]);
        return -1;
    }
    if (o->add_user != NULL && o->auth.auth_file == NULL) {
        fprintf(stderr, "cudarem-server: --add-user needs --auth-file FILE to add the user to\n");
        return -1;
    }
    if (o->add_admin && o->add_user == NULL) {
        fprintf(stderr, "cudarem-server: --admin goes with --add-user USER\n");
        return -1;
    }
    if ((o->tls_cert == NULL) != (o->tls_key == NULL)) {
        fprintf(stderr, "cudarem-server: --tls-cert and --tls-key go together\n");
        return -1;
    }
    if (o->add_user == NULL && !o->auth.insecure && o->auth.auth_file == NULL && o->auth.nallow == 0) {
        fprintf(stderr, "cudarem-server: nobody could open a session: give --auth-file FILE (tokens; see\n"
                        "--add-user), --allow-uid USER (Unix-socket clients) or --insecure (anyone)\n");
        return -1;
    }
    if (o->nlisten == 0) {
        char dflt[32];
        snprintf(dflt, sizeof dflt, "tcp:0.0.0.0:%d", CRM_DEFAULT_PORT);
        return crm__add_listen(o, dflt);
    }
    return 0;
}

static int crm__loopback(const char *host)
{
    return strcmp(host, "localhost") == 0 || strncmp(host, "127.", 4) == 0 || strcmp(host, "::1") == 0;
}

int crm_options_local_only(const crm_options *o)
{
    for (int i = 0; i < o->nlisten; i++)
        if (o->listen[i].kind == CRM_ADDR_TCP && !crm__loopback(o->listen[i].host))
            return 0;
    return 1;
}
