/* e2e_harness.c -- starts cudarem-server on loopback and runs CUDA programs through
 * the shim with bounded waits; owns every child process the e2e suites create.
 *
 * See e2e_harness.h for the model. Children are made with fork+exec; each one
 * asks for SIGKILL when the test process dies (PR_SET_PDEATHSIG). The server
 * runs in its own process group, because it serves each session in a child
 * process: "killing the server" means killing that whole group. The "hidden
 * CUDA" mode runs a client in a private mount namespace where the CUDA library
 * directories are covered by an empty directory and every libcuda and libcudart
 * file the loader could find is covered by an empty file.
 */
#include "tests/e2e/e2e_harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef E2E_BUILD_DIR
#error "E2E_BUILD_DIR must be defined (absolute build directory)"
#endif
#ifndef E2E_SAN
#define E2E_SAN 0
#endif
#ifndef E2E_ASAN_LIB
#define E2E_ASAN_LIB "libasan.so"
#endif
#ifndef E2E_TSAN
#define E2E_TSAN 0
#endif
#ifndef E2E_TSAN_LIB
#define E2E_TSAN_LIB "libtsan.so"
#endif
#ifndef E2E_SERVER_DIR
#define E2E_SERVER_DIR E2E_BUILD_DIR
#endif

#define E2E_SERVER_START_MS 10000
#define E2E_SERVER_STOP_MS 15000

static int e2e__server_exited(e2e_server *s, int timeout_ms);

/* Directories covered by an empty directory in hidden mode (the brief's list). */
static const char *const e2e__hidden_dirs[] = {
    "/usr/local/cuda/lib64",
    "/usr/local/cuda/targets/x86_64-linux/lib",
};

/* Directories scanned for libcuda* files to cover one by one in hidden mode:
 * the loader's default and ld.so.conf paths on this kind of system. */
static const char *const e2e__scan_dirs[] = {
    "/usr/local/lib", "/usr/local/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib",
    "/usr/local/cuda/lib64/stubs", "/usr/lib/wsl/lib",
};

/* $CUDAREM_TEST_ROOT with SUFFIX appended, or BUILT when it is unset. */
static const char *e2e__rooted(const char *built, const char *suffix, char *buf, size_t len)
{
    const char *root = getenv("CUDAREM_TEST_ROOT");
    if (root == NULL || root[0] == '\0')
        return built;
    snprintf(buf, len, "%s%s", root, suffix);
    return buf;
}

const char *e2e_build_dir(void)
{
    static char dir[E2E_PATH_LEN];
    return e2e__rooted(E2E_BUILD_DIR, "/build", dir, sizeof dir);
}

const char *e2e_server_dir(void)
{
    static char dir[E2E_PATH_LEN];
    return e2e__rooted(E2E_SERVER_DIR, "/build", dir, sizeof dir);
}

const char *e2e_source_dir(void)
{
    static char dir[E2E_PATH_LEN];
    return e2e__rooted(E2E_SOURCE_DIR, "", dir, sizeof dir);
}

const char *e2e_python(void)
{
    const char *py = getenv("CUDAREM_TEST_PYTHON");
    return py != NULL && py[0] != '\0' ? py : E2E_PYTHON;
}

const char *e2e_build_path(const char *rel, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s", e2e_build_dir(), rel);
    return buf;
}

void e2e_sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
        ;
}

static long long e2e__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int e2e_dir_make(char *dir, size_t len)
{
    if (len < 32)
        return -1;
    snprintf(dir, len, "/tmp/crm-e2e-XXXXXX");
    return mkdtemp(dir) != NULL ? 0 : -1;
}

static int e2e__rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

void e2e_dir_remove(const char *dir)
{
    if (dir != NULL && dir[0] != '\0')
        nftw(dir, e2e__rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int e2e_free_port(void)
{
    struct sockaddr_in a;
    socklen_t alen = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;
    if (fd < 0)
        return -1;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &alen) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}

/* 1 if something accepts TCP connections on 127.0.0.1:PORT. */
static int e2e__tcp_accepts(int port)
{
    struct sockaddr_in a;
    int fd = socket(AF_INET, SOCK_STREAM, 0), ok;
    if (fd < 0)
        return 0;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((unsigned short)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ok = connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
    close(fd);
    return ok;
}

/* 1 if something accepts connections on Unix socket PATH. */
static int e2e__unix_accepts(const char *path)
{
    struct sockaddr_un a;
    size_t len = strlen(path);
    int fd, ok;
    if (len >= sizeof a.sun_path)
        return 0;
    fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0)
        return 0;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    memcpy(a.sun_path, path, len + 1);
    ok = connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
    close(fd);
    return ok;
}

/* In a fresh child: die with the parent, stdin from /dev/null, stdout and
 * stderr to the given files. Returns 0 or -1 (errno set). */
static int e2e__child_setup(pid_t parent, const char *out, const char *err)
{
    int in, o, e;
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
        return -1;
    in = open("/dev/null", O_RDONLY);
    o = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    e = err == out ? o : open(err, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    if (in < 0 || o < 0 || e < 0)
        return -1;
    if (dup2(in, 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
        return -1;
    return 0;
}

/* Covers TARGET with SRC by a bind mount; a missing TARGET is fine. */
static int e2e__cover(const char *src, const char *target)
{
    struct stat st;
    if (stat(target, &st) != 0)
        return 0;
    if (mount(src, target, NULL, MS_BIND, NULL) != 0) {
        fprintf(stderr, "e2e: bind %s over %s: %s\n", src, target, strerror(errno));
        return -1;
    }
    return 0;
}

/* 1 for file names the loader would use for the CUDA runtime or driver. */
static int e2e__is_cuda_lib(const char *name)
{
    return strncmp(name, "libcudart.so", 12) == 0 || strncmp(name, "libcuda.so", 10) == 0;
}

/* In the child: private mount namespace without CUDA libraries. SCRATCH is a
 * directory where an empty directory and an empty file can be created.
 * Returns 0, or -1 after printing why to stderr. */
static int e2e__hide_cuda(const char *scratch)
{
    char empty_dir[E2E_PATH_LEN + 16], empty_file[E2E_PATH_LEN + 16];
    size_t i;
    if (unshare(CLONE_NEWNS) != 0) {
        fprintf(stderr, "e2e: unshare(CLONE_NEWNS): %s\n", strerror(errno));
        return -1;
    }
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
        fprintf(stderr, "e2e: make / private: %s\n", strerror(errno));
        return -1;
    }
    snprintf(empty_dir, sizeof empty_dir, "%s/empty.d", scratch);
    snprintf(empty_file, sizeof empty_file, "%s/empty.so", scratch);
    mkdir(empty_dir, 0755);
    int fd = open(empty_file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        fprintf(stderr, "e2e: create %s: %s\n", empty_file, strerror(errno));
        return -1;
    }
    close(fd);
    for (i = 0; i < sizeof e2e__scan_dirs / sizeof e2e__scan_dirs[0]; i++) {
        DIR *d = opendir(e2e__scan_dirs[i]);
        struct dirent *de;
        if (d == NULL)
            continue;
        while ((de = readdir(d)) != NULL) {
            char path[E2E_PATH_LEN * 2];
            if (!e2e__is_cuda_lib(de->d_name))
                continue;
            snprintf(path, sizeof path, "%s/%s", e2e__scan_dirs[i], de->d_name);
            if (e2e__cover(empty_file, path) != 0) {
                closedir(d);
                return -1;
            }
        }
        closedir(d);
    }
    for (i = 0; i < sizeof e2e__hidden_dirs / sizeof e2e__hidden_dirs[0]; i++)
        if (e2e__cover(empty_dir, e2e__hidden_dirs[i]) != 0)
            return -1;
    return 0;
}

static const char *e2e__library_path; /* LD_LIBRARY_PATH of spawned programs */

void e2e_client_library_path(const char *path)
{
    e2e__library_path = path;
}

/* In the child: sets the environment for a client run. */
static void e2e__client_env(const e2e_proc_opts *o)
{
    char shim[E2E_PATH_LEN], preload[2 * E2E_PATH_LEN + 2];
    if (o->server != NULL)
        setenv("CUDAREM_SERVER", o->server, 1);
    if (e2e__library_path != NULL) {
        /* ahead of the caller's, which may hold the libraries the shim needs
         * (the GPU check's private prefix) */
        const char *old = getenv("LD_LIBRARY_PATH");
        char path[8192];
        snprintf(path, sizeof path, "%s%s%s", e2e__library_path, old && *old ? ":" : "", old ? old : "");
        setenv("LD_LIBRARY_PATH", path, 1);
    }
    if (!o->preload)
        return;
    e2e_build_path("libcudarem.so", shim, sizeof shim);
    if (E2E_SAN) {
        /* ASan must come first; the nvcc program itself is not instrumented
         * and its runtime's allocations look like leaks. */
        snprintf(preload, sizeof preload, "%s %s", E2E_ASAN_LIB, shim);
        setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
    } else if (E2E_TSAN) {
        /* So must TSan; a race it reports makes the program exit 66. */
        snprintf(preload, sizeof preload, "%s %s", E2E_TSAN_LIB, shim);
        setenv("TSAN_OPTIONS", "exitcode=66 second_deadlock_stack=1", 0);
    } else {
        snprintf(preload, sizeof preload, "%s", shim);
    }
    setenv("LD_PRELOAD", preload, 1);
}

int e2e_spawn(e2e_proc *p, const char *dir, const char *tag, const char *prog,
              char *const argv[], const e2e_proc_opts *o)
{
    pid_t parent = getpid(), pid;
    memset(p, 0, sizeof *p);
    snprintf(p->out_path, sizeof p->out_path, "%s/%s.out", dir, tag);
    snprintf(p->err_path, sizeof p->err_path, "%s/%s.err", dir, tag);
    fflush(NULL);
    pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        if (e2e__child_setup(parent, p->out_path, p->err_path) != 0)
            _exit(126);
        if (o->hide_cuda && e2e__hide_cuda(dir) != 0)
            _exit(125);
        e2e__client_env(o);
        execv(prog, argv);
        fprintf(stderr, "e2e: exec %s: %s\n", prog, strerror(errno));
        _exit(127);
    }
    p->pid = pid;
    return 0;
}

int e2e_wait(e2e_proc *p, int timeout_ms)
{
    long long deadline = e2e__now_ms() + timeout_ms;
    if (p->pid == 0)
        return p->timed_out ? -1 : 0;
    for (;;) {
        pid_t r = waitpid(p->pid, &p->status, WNOHANG);
        if (r == p->pid || (r < 0 && errno != EINTR)) {
            p->pid = 0;
            return 0;
        }
        if (e2e__now_ms() >= deadline)
            break;
        e2e_sleep_ms(10);
    }
    kill(p->pid, SIGKILL);
    while (waitpid(p->pid, &p->status, 0) < 0 && errno == EINTR)
        ;
    p->pid = 0;
    p->timed_out = 1;
    return -1;
}

int e2e_wait_output(e2e_proc *p, const char *needle, int timeout_ms)
{
    long long deadline = e2e__now_ms() + timeout_ms;
    for (;;) {
        char *out = e2e_read_file(p->out_path);
        int seen = strstr(out, needle) != NULL;
        free(out);
        if (seen)
            return 0;
        if (p->pid == 0 || e2e__now_ms() >= deadline)
            return -1;
        if (waitpid(p->pid, &p->status, WNOHANG) == p->pid)
            p->pid = 0; /* one more read above catches its last words */
        else
            e2e_sleep_ms(20);
    }
}

int e2e_run(e2e_proc *p, const char *dir, const char *tag, const char *prog,
            char *const argv[], const e2e_proc_opts *o)
{
    if (e2e_spawn(p, dir, tag, prog, argv, o) != 0)
        return -1;
    e2e_wait(p, E2E_RUN_TIMEOUT_MS);
    return 0;
}

int e2e_client_status(const char *dir, const char *prog, const char *addr, const char *tag, char **err)
{
    char path[E2E_PATH_LEN], rel[64];
    e2e_proc p;
    snprintf(rel, sizeof rel, "cuda/%s", prog);
    e2e_build_path(rel, path, sizeof path);
    char *argv[] = {path, NULL};
    e2e_proc_opts o = {addr, 1, 0};
    *err = NULL;
    if (e2e_run(&p, dir, tag, path, argv, &o) != 0)
        return -1;
    *err = e2e_read_file(p.err_path);
    return !p.timed_out && WIFEXITED(p.status) ? WEXITSTATUS(p.status) : -1;
}

static char *const *e2e__extra_args;

void e2e_server_extra_args(char *const *args)
{
    e2e__extra_args = args;
}

int e2e_server_start(e2e_server *s, const char *dir, int ndev, char *err, size_t errlen)
{
    char bin[E2E_PATH_LEN], sock[sizeof(((struct sockaddr_un *)0)->sun_path)];
    char tcp_listen[64], unix_listen[E2E_PATH_LEN + 8];
    pid_t parent = getpid(), pid;
    long long deadline;
    memset(s, 0, sizeof *s);
    snprintf(bin, sizeof bin, "%s/cudarem-server", e2e_server_dir());
    if (access(bin, X_OK) != 0) {
        snprintf(err, errlen, "server binary %s missing: %s", bin, strerror(errno));
        return -1;
    }
    s->port = e2e_free_port();
    if (s->port < 0) {
        snprintf(err, errlen, "no free TCP port");
        return -1;
    }
    if ((size_t)snprintf(sock, sizeof sock, "%s/server.sock", dir) >= sizeof sock) {
        snprintf(err, errlen, "scratch directory path too long for a Unix socket");
        return -1;
    }
    snprintf(s->tcp_addr, sizeof s->tcp_addr, "tcp:127.0.0.1:%d", s->port);
    snprintf(s->unix_addr, sizeof s->unix_addr, "unix:%s", sock);
    snprintf(s->log_path, sizeof s->log_path, "%s/server.log", dir);
    snprintf(tcp_listen, sizeof tcp_listen, "%s", s->tcp_addr);
    snprintf(unix_listen, sizeof unix_listen, "%s", s->unix_addr);
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        /* CUDAREM_TEST_DEVICE=cuda runs the same suites against a real GPU (make gpu-check). */
        const char *device = getenv("CUDAREM_TEST_DEVICE");
        char *argv[32] = { bin, "--listen", tcp_listen, "--listen", unix_listen,
                           "--device", (char *)(device && *device ? device : "emu"), "--log-level", "info", NULL };
        char nd[16];
        int n = 9, admits = 0;
        for (int i = 0; e2e__extra_args != NULL && e2e__extra_args[i] != NULL && n < 30; i++) {
            admits |= strcmp(e2e__extra_args[i], "--auth-file") == 0 || strcmp(e2e__extra_args[i], "--allow-uid") == 0;
            argv[n++] = e2e__extra_args[i];
        }
        if (!admits) /* loopback and a private socket: suites that test admission say how */
            argv[n++] = "--insecure";
        if (e2e__child_setup(parent, s->log_path, s->log_path) != 0)
            _exit(126);
        /* Own process group: the server and its session processes die together. */
        setpgid(0, 0);
        if (ndev > 0) {
            snprintf(nd, sizeof nd, "%d", ndev);
            setenv("CUDAREM_EMU_DEVICES", nd, 1);
        }
        unsetenv("LD_PRELOAD");
        execv(bin, argv);
        fprintf(stderr, "e2e: exec %s: %s\n", bin, strerror(errno));
        _exit(127);
    }
    s->pid = pid;
    setpgid(pid, pid); /* also here, so a kill right after fork finds the group */
    deadline = e2e__now_ms() + E2E_SERVER_START_MS;
    while (!(e2e__tcp_accepts(s->port) && e2e__unix_accepts(sock))) {
        if (!e2e_server_alive(s)) {
            e2e_server_kill(s);
            snprintf(err, errlen, "server exited during startup (see %s)", s->log_path);
            return -1;
        }
        if (e2e__now_ms() >= deadline) {
            e2e_server_kill(s);
            snprintf(err, errlen, "server not accepting on %s and %s within %d ms",
                     s->tcp_addr, s->unix_addr, E2E_SERVER_START_MS);
            return -1;
        }
        e2e_sleep_ms(20);
    }
    return 0;
}

int e2e_server_alive(e2e_server *s)
{
    return s->pid != 0 && e2e__server_exited(s, 0) != 0;
}

/* Waits up to TIMEOUT_MS for the server to exit without reaping it, so its
 * pid (and process group id) stays reserved. Returns 0 once it exited. */
static int e2e__server_exited(e2e_server *s, int timeout_ms)
{
    long long deadline = e2e__now_ms() + timeout_ms;
    for (;;) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        if (waitid(P_PID, (id_t)s->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid != 0)
            return 0;
        if (e2e__now_ms() >= deadline)
            return -1;
        e2e_sleep_ms(10);
    }
}

/* SIGKILLs whatever is left of the server's process group, then reaps the
 * server. Only called while the (possibly exited) server is still unreaped. */
static int e2e__server_reap(e2e_server *s)
{
    int st = 0;
    kill(-s->pid, SIGKILL);
    while (waitpid(s->pid, &st, 0) < 0 && errno == EINTR)
        ;
    s->pid = 0;
    return st;
}

int e2e_server_stop(e2e_server *s)
{
    if (s->pid == 0)
        return -1;
    kill(s->pid, SIGTERM);
    int exited = e2e__server_exited(s, E2E_SERVER_STOP_MS) == 0;
    int st = e2e__server_reap(s);
    return exited ? st : -1;
}

void e2e_server_kill_daemon(e2e_server *s)
{
    if (s->pid != 0)
        kill(s->pid, SIGKILL);
}

void e2e_server_kill(e2e_server *s)
{
    if (s->pid != 0)
        e2e__server_reap(s);
}

char *e2e_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0;
    if (f != NULL) {
        for (;;) {
            if (cap - len < 4096) {
                cap = cap ? cap * 2 : 8192;
                char *nb = realloc(buf, cap);
                if (nb == NULL)
                    break;
                buf = nb;
            }
            size_t n = fread(buf + len, 1, cap - len - 1, f);
            if (n == 0)
                break;
            len += n;
        }
        fclose(f);
    }
    if (buf == NULL)
        return strdup("");
    buf[len] = '\0';
    return buf;
}

int e2e_count_lines_with(const char *text, const char *needle)
{
    int n = 0;
    const char *line = text;
    while (*line != '\0') {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char *copy = strndup(line, len);
        if (copy != NULL && strstr(copy, needle) != NULL)
            n++;
        free(copy);
        line += len + (end ? 1 : 0);
    }
    return n;
}

int e2e_wait_log_lines(const char *path, const char *needle, int want, int timeout_ms)
{
    for (int waited = 0;; waited += 50) {
        char *text = e2e_read_file(path);
        int n = e2e_count_lines_with(text, needle);
        free(text);
        if (n >= want || waited >= timeout_ms)
            return n;
        e2e_sleep_ms(50);
    }
}

const char *e2e_describe(const e2e_proc *p, char *buf, size_t len)
{
    if (p->timed_out)
        snprintf(buf, len, "timeout (killed after the limit)");
    else if (WIFEXITED(p->status))
        snprintf(buf, len, "exit %d", WEXITSTATUS(p->status));
    else if (WIFSIGNALED(p->status))
        snprintf(buf, len, "signal %d", WTERMSIG(p->status));
    else
        snprintf(buf, len, "status 0x%x", p->status);
    return buf;
}

void e2e_dump(const char *heading, const char *text, size_t max)
{
    size_t n = strlen(text);
    const char *from = n > max ? text + n - max : text;
    fprintf(stderr, "----- %s%s -----\n%s%s", heading, n > max ? " (tail)" : "", from,
            (n && text[n - 1] == '\n') ? "" : "\n");
}

int e2e_add_user(const char *dir, const char *users, const char *name, int admin, char *token, size_t len)
{
    char server[E2E_PATH_LEN], tag[64], fmt[32];
    e2e_proc p;
    snprintf(server, sizeof server, "%s/cudarem-server", e2e_server_dir());
    char *argv[] = {server, "--auth-file", (char *)users, "--add-user", (char *)name, admin ? "--admin" : NULL, NULL};
    e2e_proc_opts o = {NULL, 0, 0};
    snprintf(tag, sizeof tag, "add-%s", name);
    if (len < 2 || e2e_run(&p, dir, tag, server, argv, &o) != 0)
        return -1;
    if (!WIFEXITED(p.status) || WEXITSTATUS(p.status) != 0)
        return -1;
    char *out = e2e_read_file(p.out_path);
    snprintf(fmt, sizeof fmt, "%%%zus", len - 1);
    int ok = sscanf(out, fmt, token) == 1 && strncmp(token, name, strlen(name)) == 0 && token[strlen(name)] == ':';
    free(out);
    return ok ? 0 : -1;
}

int e2e_server_start_logged(e2e_server *s, const char *dir, int ndev, char *err, size_t errlen)
{
    if (e2e_server_start(s, dir, ndev, err, errlen) == 0)
        return 0;
    char *log = e2e_read_file(s->log_path);
    e2e_dump("server log", log, 4000);
    free(log);
    return -1;
}

const char *e2e_framework_library_path(const char *pyenv, char *buf, size_t len)
{
    char libdir[E2E_PATH_LEN], pattern[E2E_PATH_LEN + 64];
    glob_t wheels = {0};
    e2e_build_path("lib", libdir, sizeof libdir);
    snprintf(pattern, sizeof pattern, "%s/lib/python3*/site-packages/nvidia/cu13/lib", pyenv);
    if (E2E_SAN && glob(pattern, 0, NULL, &wheels) == 0 && wheels.gl_pathc > 0)
        snprintf(buf, len, "%s:%s", libdir, wheels.gl_pathv[0]);
    else
        snprintf(buf, len, "%s", libdir);
    globfree(&wheels);
    return buf;
}

int e2e_make_cert(const char *crt, const char *key)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout %s -out %s "
             "-subj /CN=localhost -addext subjectAltName=IP:127.0.0.1,DNS:localhost -days 2 >/dev/null 2>&1",
             key, crt);
    return system(cmd) == 0 ? 0 : -1;
}

int e2e_server_footprint(const e2e_server *srv, long long *rss_kib)
{
    DIR *d = opendir("/proc");
    int n = 0;
    *rss_kib = 0;
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) {
        char path[300], buf[1024];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = '\0';
        char *paren = strrchr(buf, ')');
        long ppid = 0, rss = 0;
        if (paren == NULL || sscanf(paren + 2, "%*c %ld", &ppid) != 1)
            continue;
        if (atol(e->d_name) != (long)srv->pid && ppid != (long)srv->pid)
            continue;
        /* field 24, rss in pages: after ')' come fields 3 .. */
        char *p = paren + 2;
        for (int field = 3; field < 24 && p != NULL; field++)
            p = (p = strchr(p, ' ')) ? p + 1 : NULL;
        if (p != NULL)
            rss = atol(p);
        *rss_kib += rss * (sysconf(_SC_PAGESIZE) / 1024);
        n++;
    }
    if (d != NULL)
        closedir(d);
    return n;
}
