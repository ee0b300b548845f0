/* check_e2e_programs.c -- end-to-end suite: every self-checking CUDA program passes
 * through the shim against a real cudarem-server (emulated device), over TCP,
 * over a Unix socket, and with the CUDA libraries hidden from the client; each
 * built twice, with the shared runtime (build/cuda: the shim takes the place of
 * libcudart.so.13) and with nvcc's default static runtime (build/cuda-static: the
 * runtime inside the program loads libcuda.so.1, which the preloaded shim is).
 *
 * Each test starts its own server, runs one program from tests/cuda (bounded
 * to E2E_RUN_TIMEOUT_MS: a hang fails), requires exit 0 with "PASS <name>",
 * then stops the server with SIGTERM and requires it to exit 0.
 */
#include "tests/e2e/e2e_harness.h"
#include "tests/unit/crm_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *const programs[] = {
    "device", "memory", "copy", "pinned", "stream", "event", "errors", "threads", "ptds",
};
#define NPROGRAMS ((int)(sizeof programs / sizeof programs[0]))

/* Build directories of the programs, one per runtime: loop tests over programs run
 * index i as programs[i % NPROGRAMS] from runtimes[i / NPROGRAMS]. */
static const char *const runtimes[] = {"cuda", "cuda-static"};
#define NRUNTIMES ((int)(sizeof runtimes / sizeof runtimes[0]))

enum transport { VIA_TCP, VIA_UNIX };

/* Runs ARGV (program PROG, reporting "PASS NAME") through the shim; TRANSPORT picks
 * the address, NDEV the emulated device count, HIDE the namespace without CUDA
 * libraries. LABEL names the run in messages. */
static void run_argv(const char *label, const char *name, const char *prog, char **argv, enum transport t,
                     int ndev, int hide)
{
    char dir[64], err[512], how[64], verdict[64];
    e2e_server srv;
    e2e_proc p;
    int spawned, srv_status;

    ck_assert_msg(e2e_dir_make(dir, sizeof dir) == 0, "mkdtemp failed");
    if (e2e_server_start(&srv, dir, ndev, err, sizeof err) != 0) {
        char *log = e2e_read_file(srv.log_path);
        e2e_dump("server log", log, 4000);
        free(log);
        e2e_dir_remove(dir);
        ck_abort_msg("%s: server start: %s", label, err);
    }
    e2e_proc_opts o = { t == VIA_TCP ? srv.tcp_addr : srv.unix_addr, 1, hide };
    spawned = e2e_run(&p, dir, name, prog, argv, &o) == 0;
    srv_status = e2e_server_stop(&srv);

    char *out = e2e_read_file(p.out_path), *perr = e2e_read_file(p.err_path);
    char *log = e2e_read_file(srv.log_path), pass[64];
    snprintf(pass, sizeof pass, "PASS %s\n", name);
    snprintf(how, sizeof how, "%s%s", t == VIA_TCP ? "tcp" : "unix", hide ? " hidden-cuda" : "");
    e2e_describe(&p, verdict, sizeof verdict);
    int ok = spawned && !p.timed_out && WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0 &&
             strstr(out, pass) != NULL;
    int srv_ok = srv_status >= 0 && WIFEXITED(srv_status) && WEXITSTATUS(srv_status) == 0;
    if (!ok || !srv_ok) {
        fprintf(stderr, "===== %s over %s: program %s, server %s\n", label, how, verdict,
                srv_status < 0 ? "did not stop on SIGTERM" : "stopped");
        e2e_dump("program stdout", out, 6000);
        e2e_dump("program stderr", perr, 3000);
        e2e_dump("server log", log, 3000);
    }
    free(perr);
    free(log);
    e2e_dir_remove(dir);
    if (!ok) {
        char first[200] = "";
        const char *f = strstr(out, "FAIL");
        if (f != NULL)
            snprintf(first, sizeof first, "; first: %.*s", (int)strcspn(f, "\n"), f);
        free(out);
        ck_abort_msg("%s over %s: %s, expected exit 0 and PASS%s", label, how, verdict, first);
    }
    free(out);
    ck_assert_msg(srv_ok, "%s over %s: server status 0x%x after SIGTERM, expected exit 0", label,
                  how, (unsigned)srv_status);
}

/* Runs build/DIR/NAME (DIR: one of runtimes[]). */
static void run_program(const char *dir, const char *name, enum transport t, int ndev, int hide)
{
    char prog[E2E_PATH_LEN], rel[64];
    snprintf(rel, sizeof rel, "%s/%s", dir, name);
    e2e_build_path(rel, prog, sizeof prog);
    char *argv[] = { prog, NULL };
    run_argv(rel, name, prog, argv, t, ndev, hide);
}

/* Loop index I of a test over every program with every runtime. */
static void run_program_i(int i, enum transport t, int ndev, int hide)
{
    run_program(runtimes[i / NPROGRAMS], programs[i % NPROGRAMS], t, ndev, hide);
}

/* A Python program loading the runtime by name with ctypes reaches the shim. */
static void run_python(enum transport t, int hide)
{
    char script[E2E_PATH_LEN];
    snprintf(script, sizeof script, "%s/tests/python/runtime_ctypes.py", e2e_source_dir());
    char *argv[] = { (char *)e2e_python(), script, NULL };
    run_argv("runtime_ctypes", "runtime_ctypes", e2e_python(), argv, t, 0, hide);
}

START_TEST(test_python_ctypes_tcp)
{
    run_python(VIA_TCP, 0);
}
END_TEST

START_TEST(test_python_ctypes_hidden_cuda)
{
    run_python(VIA_UNIX, 1);
}
END_TEST

/* What the shim's statistics (CUDAREM_STATS) say about its bulk paths. */
typedef struct bulk_stats {
    long long channel; /* bytes on the data channel */
    long long ring;    /* of which through its shared-memory ring */
    long long pinned;  /* copied by the server straight to or from shared pinned memory */
} bulk_stats;

static long long stats_field(const char *json, const char *path, const char *key)
{
    char quoted[64];
    snprintf(quoted, sizeof quoted, "\"%s\": ", key);
    const char *at = json ? strstr(json, quoted) : NULL;
    ck_assert_msg(at != NULL, "no %s in the statistics of %s: %s", key, path, json ? json : "(none)");
    return atoll(at + strlen(quoted));
}

static bulk_stats read_bulk_stats(const char *path)
{
    char *json = e2e_read_file(path);
    bulk_stats b = {stats_field(json, path, "channel_bytes"), stats_field(json, path, "ring_bytes"),
                    stats_field(json, path, "pinned_bytes")};
    free(json);
    unlink(path);
    return b;
}

/* The copy program with each bulk path: in the RPC stream (CUDAREM_CHANNEL=off),
 * on the data channel's socket (CUDAREM_SHM=off), through the shared-memory ring
 * with pinned memory shared with the server (the default on one machine), and
 * through the ring alone (CUDAREM_SHARED_PINNED=off), over TCP and Unix. The bytes
 * must arrive the same, and the statistics must show the path really taken:
 * copy.cu moves 64 MiB each way from pageable memory, and 64 MiB into pinned memory. */
START_TEST(test_copy_bulk_paths)
{
    static const char *const channel[] = {"off", "on", "on", "on"}, *const shm[] = {"off", "off", "auto", "auto"};
    static const char *const shared[] = {"auto", "auto", "auto", "off"};
    char stats[64];
    int mode = _i % 4;
    snprintf(stats, sizeof stats, "/tmp/crm-stats-%d.json", (int)getpid());
    setenv("CUDAREM_STATS", stats, 1);
    setenv("CUDAREM_CHANNEL", channel[mode], 1);
    setenv("CUDAREM_SHM", shm[mode], 1);
    setenv("CUDAREM_SHARED_PINNED", shared[mode], 1);
    run_program("cuda", "copy", _i < 4 ? VIA_TCP : VIA_UNIX, 0, 0);
    unsetenv("CUDAREM_STATS");
    unsetenv("CUDAREM_CHANNEL");
    unsetenv("CUDAREM_SHM");
    unsetenv("CUDAREM_SHARED_PINNED");
    bulk_stats b = read_bulk_stats(stats);
    if (mode == 0)
        ck_assert_msg(b.channel == 0, "channel off, yet %lld bytes on it", b.channel);
    else
        ck_assert_msg(b.channel >= (128ll << 20), "only %lld bytes on the channel", b.channel);
    if (mode >= 2)
        ck_assert_msg(b.ring >= (128ll << 20), "only %lld bytes through the ring", b.ring);
    else
        ck_assert_msg(b.ring == 0, "ring off, yet %lld bytes through it", b.ring);
    if (mode == 2)
        ck_assert_msg(b.pinned >= (64ll << 20), "only %lld bytes through shared pinned memory", b.pinned);
    else
        ck_assert_msg(b.pinned == 0, "pinned memory not shared, yet %lld bytes through it", b.pinned);
}
END_TEST

/* The pinned program with its memory shared with the server (shared and static
 * runtime) and private: the same bytes either way, and the shared path really taken. */
START_TEST(test_pinned_shared_and_private)
{
    char stats[64];
    snprintf(stats, sizeof stats, "/tmp/crm-stats-%d.json", (int)getpid());
    setenv("CUDAREM_STATS", stats, 1);
    setenv("CUDAREM_SHARED_PINNED", _i == 1 ? "off" : "auto", 1);
    run_program(_i == 2 ? "cuda-static" : "cuda", "pinned", VIA_UNIX, 0, 0);
    unsetenv("CUDAREM_STATS");
    unsetenv("CUDAREM_SHARED_PINNED");
    bulk_stats b = read_bulk_stats(stats);
    if (_i != 1)
        ck_assert_msg(b.pinned >= (16ll << 20), "only %lld bytes through shared pinned memory", b.pinned);
    else
        ck_assert_msg(b.pinned == 0, "sharing off, yet %lld bytes through shared pinned memory", b.pinned);
}
END_TEST

/* The GPU backend's double-buffered staging path, driven through the emulated
 * device (CUDAREM_SERVER_STAGING=1 reaches the server through its environment). */
START_TEST(test_copy_through_staging_path)
{
    setenv("CUDAREM_SERVER_STAGING", "1", 1);
    setenv("CUDAREM_COMPRESS", _i == 0 ? "off" : "on", 1);
    run_program("cuda", "copy", VIA_UNIX, 0, 0);
    unsetenv("CUDAREM_COMPRESS");
    unsetenv("CUDAREM_SERVER_STAGING");
}
END_TEST

/* Compression on, at level 7, and auto on the channel's socket (no ring), where the
 * sender decides chunk by chunk (protocol/crm_zlive.h). */
START_TEST(test_copy_compressed)
{
    static const char *const modes[] = {"on", "7", "auto"};
    setenv("CUDAREM_COMPRESS", modes[_i], 1);
    if (_i == 2)
        setenv("CUDAREM_SHM", "off", 1);
    run_program("cuda", "copy", VIA_TCP, 0, 0);
    unsetenv("CUDAREM_SHM");
    unsetenv("CUDAREM_COMPRESS");
}
END_TEST

/* Two emulated devices over TCP, so the multi-device paths are exercised. */
START_TEST(test_program_tcp)
{
    run_program_i(_i, VIA_TCP, 2, 0);
}
END_TEST

START_TEST(test_program_unix)
{
    run_program_i(_i, VIA_UNIX, 0, 0);
}
END_TEST

/* A static-runtime program needs no CUDA library at all: only the shim. */
START_TEST(test_program_hidden_cuda)
{
    run_program_i(_i, VIA_TCP, 0, 1);
}
END_TEST

/* Runs build/DIR/meminfo without the shim in the namespace without CUDA libraries;
 * fails the test if the namespace could not be built. Returns its stdout and sets
 * *ERR to its stderr (both malloc'd) and *P. */
static char *run_bare_hidden(const char *dir_rel, e2e_proc *p, char **err)
{
    char dir[64], prog[E2E_PATH_LEN], rel[64];
    snprintf(rel, sizeof rel, "%s/meminfo", dir_rel);
    e2e_build_path(rel, prog, sizeof prog);
    ck_assert(e2e_dir_make(dir, sizeof dir) == 0);
    e2e_proc_opts o = { NULL, 0, 1 };
    char *argv[] = { prog, NULL };
    ck_assert(e2e_run(p, dir, "bare", prog, argv, &o) == 0);
    char *out = e2e_read_file(p->out_path);
    *err = e2e_read_file(p->err_path);
    e2e_dir_remove(dir);
    int setup_failed = WIFEXITED(p->status) && (WEXITSTATUS(p->status) == 125 ||
                                                WEXITSTATUS(p->status) == 126);
    if (setup_failed)
        e2e_dump("namespace setup", *err, 2000);
    ck_assert_msg(!setup_failed, "could not build the namespace without CUDA (unshare/mount): %s",
                  *err);
    return out;
}

/* The hiding itself works: without the shim the program cannot even load. */
START_TEST(test_hidden_cuda_really_hidden)
{
    char verdict[64], *perr;
    e2e_proc p;
    free(run_bare_hidden("cuda", &p, &perr));
    e2e_describe(&p, verdict, sizeof verdict);
    int loader_failed = WIFEXITED(p.status) && WEXITSTATUS(p.status) == 127 &&
                        strstr(perr, "libcudart") != NULL;
    if (!loader_failed)
        e2e_dump("bare program stderr", perr, 2000);
    free(perr);
    ck_assert_msg(loader_failed, "without the shim the program should fail to load libcudart in "
                  "the hidden namespace, got %s", verdict);
}
END_TEST

/* A static-runtime program loads without any CUDA library, and without the shim
 * its runtime finds no driver (libcuda.so.1 is hidden too). */
START_TEST(test_hidden_cuda_static_has_no_driver)
{
    char verdict[64], *perr;
    e2e_proc p;
    char *out = run_bare_hidden("cuda-static", &p, &perr);
    e2e_describe(&p, verdict, sizeof verdict);
    int no_driver = WIFEXITED(p.status) && WEXITSTATUS(p.status) == 2 &&
                    strstr(out, "error cudaGetDeviceCount cudaErrorInsufficientDriver") != NULL;
    if (!no_driver) {
        e2e_dump("bare program stdout", out, 2000);
        e2e_dump("bare program stderr", perr, 2000);
    }
    free(out);
    free(perr);
    ck_assert_msg(no_driver, "without the shim the static program should load and find no driver in "
                  "the hidden namespace (exit 2, cudaErrorInsufficientDriver), got %s", verdict);
}
END_TEST

static Suite *e2e_programs_suite(void)
{
    Suite *s = suite_create("e2e_programs");
    TCase *tcp = tcase_create("tcp"), *ux = tcase_create("unix"), *hid = tcase_create("hidden");
    tcase_set_timeout(tcp, 120);
    tcase_set_timeout(ux, 120);
    tcase_set_timeout(hid, 120);
    tcase_add_loop_test(tcp, test_program_tcp, 0, NPROGRAMS * NRUNTIMES);
    tcase_add_loop_test(ux, test_program_unix, 0, NPROGRAMS * NRUNTIMES);
    tcase_add_test(hid, test_hidden_cuda_really_hidden);
    tcase_add_test(hid, test_hidden_cuda_static_has_no_driver);
    tcase_add_loop_test(hid, test_program_hidden_cuda, 0, NPROGRAMS * NRUNTIMES);
    tcase_add_test(tcp, test_python_ctypes_tcp);
    tcase_add_loop_test(ux, test_copy_bulk_paths, 0, 8);
    tcase_add_loop_test(ux, test_pinned_shared_and_private, 0, 3);
    tcase_add_loop_test(tcp, test_copy_compressed, 0, 3);
    tcase_add_loop_test(ux, test_copy_through_staging_path, 0, 2);
    tcase_add_test(hid, test_python_ctypes_hidden_cuda);
    suite_add_tcase(s, tcp);
    suite_add_tcase(s, ux);
    suite_add_tcase(s, hid);
    return s;
}

CRM_CHECK_MAIN(e2e_programs_suite)
