/* e2e_harness.h -- end-to-end test harness: a real cudarem-server on loopback and
 * CUDA programs run through the preloaded shim, each bounded in time.
 *
 * A test makes a scratch directory (e2e_dir_make), starts a server listening
 * on a free 127.0.0.1 TCP port and a Unix socket inside it (e2e_server_start),
 * spawns programs with LD_PRELOAD=<shim> and CUDAREM_SERVER=<address>
 * (e2e_spawn/e2e_wait, or e2e_run for both), and stops the server with
 * SIGTERM (e2e_server_stop). Children get SIGKILL if the test process dies, so
 * a failed assertion never leaves a server behind. Output of every child goes
 * to files in the scratch directory and is read back with e2e_read_file.
 *
 * Binary locations come from the build (-D flags in tests/tests.mk):
 * E2E_BUILD_DIR (absolute), E2E_SAN (1 in the ASan/UBSan flavour) and
 * E2E_ASAN_LIB (path of libasan.so, preloaded first in that flavour); E2E_TSAN
 * (1 in the ThreadSanitizer flavour) and E2E_TSAN_LIB (libtsan.so, preloaded
 * first there); E2E_SERVER_DIR, where cudarem-server is (the plain build's in the
 * ThreadSanitizer flavour, which instruments the client side only).
 * CUDAREM_TEST_ROOT, when set, names a copy of the source tree whose build/
 * replaces them all at run time (the GPU check runs the suites from a bundle
 * unpacked in another directory, tools/gpu-check.sh); CUDAREM_TEST_PYTHON
 * replaces the interpreter the build found.
 */
#ifndef E2E_HARNESS_H
#define E2E_HARNESS_H

#include <stddef.h>
#include <sys/types.h>

#define E2E_PATH_LEN 256
#define E2E_RUN_TIMEOUT_MS 60000 /* a program running longer than this has hung */

typedef struct e2e_server {
    pid_t pid;                      /* server process, 0 once reaped */
    int port;                       /* TCP port on 127.0.0.1 */
    char tcp_addr[64];              /* "tcp:127.0.0.1:PORT" for CUDAREM_SERVER */
    char unix_addr[E2E_PATH_LEN];   /* "unix:DIR/server.sock" */
    char log_path[E2E_PATH_LEN];    /* server stdout+stderr */
} e2e_server;

typedef struct e2e_proc_opts {
    const char *server;   /* CUDAREM_SERVER value; NULL leaves it unset */
    int preload;          /* 1: LD_PRELOAD the shim */
    int hide_cuda;        /* 1: run in a mount namespace without CUDA libraries */
} e2e_proc_opts;

typedef struct e2e_proc {
    pid_t pid;                      /* child, 0 once reaped */
    int status;                     /* waitpid status once reaped */
    int timed_out;                  /* 1 if e2e_wait had to kill it */
    char out_path[E2E_PATH_LEN];    /* captured stdout */
    char err_path[E2E_PATH_LEN];    /* captured stderr */
} e2e_proc;

/* The directories the build named, or under $CUDAREM_TEST_ROOT when set: the
 * build (e2e_build_dir), the server's (e2e_server_dir), the source tree
 * (e2e_source_dir); and the Python interpreter (e2e_python: $CUDAREM_TEST_PYTHON,
 * else the build's). */
const char *e2e_build_dir(void);
const char *e2e_server_dir(void);
const char *e2e_source_dir(void);
const char *e2e_python(void);

/* Writes the absolute path of built file REL (e.g. "cuda/copy") into BUF; returns BUF. */
const char *e2e_build_path(const char *rel, char *buf, size_t len);

/* Creates a fresh scratch directory under /tmp into DIR. Returns 0 or -1. */
int e2e_dir_make(char *dir, size_t len);

/* Removes DIR and everything in it (best effort). */
void e2e_dir_remove(const char *dir);

/* Returns a TCP port on 127.0.0.1 that was free a moment ago, or -1. */
int e2e_free_port(void);

/* Starts cudarem-server --device emu with NDEV emulated devices (0: default)
 * listening on TCP and a Unix socket in DIR, and waits (bounded) until both
 * accept connections. Returns 0, or -1 with a reason in ERR (the server, if
 * started, is killed). */
int e2e_server_start(e2e_server *s, const char *dir, int ndev, char *err, size_t errlen);

/* e2e_server_start, and on failure the tail of the server's log on stderr. */
int e2e_server_start_logged(e2e_server *s, const char *dir, int ndev, char *err, size_t errlen);

/* Extra arguments (NULL-terminated, at most 16; NULL: none) appended to the command
 * line of every server e2e_server_start starts from now on, e.g.
 * {"--emu-kernels", PATH, NULL}. The array must stay valid while it is in use. */
void e2e_server_extra_args(char *const *args);

/* Sends SIGTERM to the server and waits up to 15 s for it to exit; then kills
 * anything left in its process group (sessions) and reaps it. Returns the
 * server's waitpid status, or -1 if it did not exit in time. */
int e2e_server_stop(e2e_server *s);

/* SIGKILLs the server's whole process group (daemon and sessions) and reaps it. */
void e2e_server_kill(e2e_server *s);
/* SIGKILLs the daemon process alone, as an operator's `kill -9 PID` would; its
 * session processes must end by themselves. e2e_server_kill still reaps all. */
void e2e_server_kill_daemon(e2e_server *s);

/* 1 while the server process is running (never reaps it). */
int e2e_server_alive(e2e_server *s);

/* Spawns PROG with ARGV (NULL-terminated, argv[0] included) and options O; its
 * output goes to files in DIR named after TAG. Returns 0 or -1. */
int e2e_spawn(e2e_proc *p, const char *dir, const char *tag, const char *prog,
              char *const argv[], const e2e_proc_opts *o);

/* Writes a self-signed certificate for 127.0.0.1 and localhost to CRT and its key
 * to KEY with openssl(1). 0, or -1 when openssl failed. */
int e2e_make_cert(const char *crt, const char *key);

/* Directories put ahead of LD_LIBRARY_PATH for the programs spawned from now on
 * (NULL: the environment's as it is), e.g.
 * build/lib so that a hidden-CUDA run finds libcublas.so.13 as the shim. */
void e2e_client_library_path(const char *path);

/* LD_LIBRARY_PATH for Python framework scripts over the shim, written into BUF: the
 * shim's lib/ (its stand-ins for NVIDIA's library names), and in a sanitizer build
 * the NVIDIA wheels' library directory of the environment PYENV as well: libasan's
 * dlopen interceptor makes glibc search with libasan's RUNPATH instead of the
 * caller's, so libnvrtc would not find libnvrtc-builtins beside it. */
const char *e2e_framework_library_path(const char *pyenv, char *buf, size_t len);

/* Waits up to TIMEOUT_MS for P; on timeout SIGKILLs it and sets timed_out.
 * Returns 0 if it exited on its own, -1 on timeout. */
int e2e_wait(e2e_proc *p, int timeout_ms);

/* Waits up to TIMEOUT_MS until P's stdout contains NEEDLE. Returns 0 when seen,
 * -1 on timeout or if P exited without printing it. */
int e2e_wait_output(e2e_proc *p, const char *needle, int timeout_ms);

/* e2e_spawn + e2e_wait(E2E_RUN_TIMEOUT_MS). Returns 0 if it spawned. */
int e2e_run(e2e_proc *p, const char *dir, const char *tag, const char *prog,
            char *const argv[], const e2e_proc_opts *o);

/* Runs build/cuda/PROG through the shim against addr (e2e_run, output in DIR named
 * after TAG): its exit status, -1 when it could not run or did not exit by itself;
 * its standard error in *err (malloc'd). */
int e2e_client_status(const char *dir, const char *prog, const char *addr, const char *tag, char **err);

/* Runs cudarem-server --auth-file USERS --add-user NAME (with --admin when ADMIN),
 * output in DIR: 0 with the token it printed in TOKEN (LEN bytes), or -1. */
int e2e_add_user(const char *dir, const char *users, const char *name, int admin, char *token, size_t len);

/* Reads a whole file; returns a malloc'd NUL-terminated string ("" if absent). */
char *e2e_read_file(const char *path);

/* Number of lines of TEXT containing NEEDLE. */
int e2e_count_lines_with(const char *text, const char *needle);

/* Polls the file at PATH (a server log) up to TIMEOUT_MS until WANT of its lines
 * contain NEEDLE: a process that has just ended may not have written its last line
 * yet. Returns the number of such lines at the end. */
int e2e_wait_log_lines(const char *path, const char *needle, int want, int timeout_ms);

/* Describes a waitpid status and timeout for messages: "exit 3", "signal 9", "timeout". */
const char *e2e_describe(const e2e_proc *p, char *buf, size_t len);

/* Prints the tail of TEXT (at most MAX bytes) to stderr under a heading. */
void e2e_dump(const char *heading, const char *text, size_t max);

/* The server's processes now (the daemon and its children, zombies included) and, in
 * *rss_kib, their resident memory summed, KiB. */
int e2e_server_footprint(const e2e_server *srv, long long *rss_kib);

/* Sleeps MS milliseconds. */
void e2e_sleep_ms(int ms);

#endif
