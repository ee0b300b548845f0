/* check_e2e_stress.c -- end-to-end concurrency stress: tests/stress/stress (many
 * host threads, streams of every kind, both API layers, every kind of queued work,
 * every byte checked) through the shim against real cudarem-servers.
 *
 * Each run has a fixed seed, printed in its FAIL lines; CUDAREM_STRESS_SEED adds
 * to every seed, to explore other sequences with the same suite. The runs cover
 * both runtimes (shared, static), TCP and Unix sockets, each bulk path (the data
 * channel through the shared-memory ring and shared pinned memory, its socket, the
 * call stream alone, compression), one stream that every thread hammers, a build
 * with per-thread default streams (the _ptsz entry points), only the driver layer
 * on the legacy stream, a client without CUDA libraries, four sessions of one
 * server at once, and a pool of two servers (kernels, copies and hand-overs on
 * every device of both); and that a queued call's failure reaches the thread that
 * queued it and no other (errthreads).
 *
 * How many iterations: 18 runs of 16 threads x 40 iterations, 11,520 in all. With
 * the bug the suite was written for (cudaFree forgot its range after another
 * thread's cudaMalloc had been given the same address), 19 of 63 runs of 640
 * iterations failed, and every one of 5 passes of the suite failed.
 */
#include "tests/e2e/e2e_harness.h"
#include "tests/unit/crm_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define STRESS_TIMEOUT_MS 240000 /* the sanitizer flavours run several times slower */
#define STRESS_THREADS "16"
#define STRESS_ITERS "40"      /* 640 iterations a run */
#define STRESS_MAX_SESSIONS 4

static char dir[64];
static e2e_server srv;

static void setup(void)
{
    char err[512];
    ck_assert(e2e_dir_make(dir, sizeof dir) == 0);
    ck_assert_msg(e2e_server_start_logged(&srv, dir, 0, err, sizeof err) == 0, "server start: %s", err);
}

static void teardown(void)
{
    int status = e2e_server_stop(&srv);
    char *log = e2e_read_file(srv.log_path);
    int stopped = status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!stopped)
        e2e_dump("server log", log, 4000);
    free(log);
    e2e_dir_remove(dir);
    ck_assert_msg(stopped, "server status 0x%x after SIGTERM, expected exit 0", (unsigned)status);
}

/* One run of the program, as spawned. */
typedef struct stress_run {
    e2e_proc proc;
    char seed[24];
    char label[160];
} stress_run;

static unsigned long long seed_of(unsigned base)
{
    const char *extra = getenv("CUDAREM_STRESS_SEED");
    return base + (extra != NULL ? strtoull(extra, NULL, 0) : 0);
}

/* Spawns build/REL (a build of tests/stress/stress.cu) with the extra ARGS
 * (NULL-terminated, at most 8). */
static void spawn(stress_run *r, const char *rel, const char *addr, unsigned seed, const char *const *args,
                  int hide, const char *tag)
{
    char prog[E2E_PATH_LEN];
    char *argv[20] = {prog, "--seed", r->seed, "--threads", STRESS_THREADS, "--iters", STRESS_ITERS};
    int argc = 7;
    e2e_build_path(rel, prog, sizeof prog);
    snprintf(r->seed, sizeof r->seed, "%llu", seed_of(seed));
    snprintf(r->label, sizeof r->label, "%s seed %s over %s", rel, r->seed, addr);
    for (int i = 0; args != NULL && args[i] != NULL && argc < 18; i++) {
        argv[argc++] = (char *)args[i];
        strncat(r->label, i == 0 ? " with " : " ", sizeof r->label - strlen(r->label) - 1);
        strncat(r->label, args[i], sizeof r->label - strlen(r->label) - 1);
    }
    argv[argc] = NULL;
    e2e_proc_opts o = {addr, 1, hide};
    ck_assert_msg(e2e_spawn(&r->proc, dir, tag, prog, argv, &o) == 0, "%s: spawn failed", r->label);
}

/* Waits for the run; its verdict: exit 0 with PASS, else the FAIL lines shown. */
static int finish(stress_run *r)
{
    char how[64];
    e2e_wait(&r->proc, STRESS_TIMEOUT_MS);
    char *out = e2e_read_file(r->proc.out_path), *err = e2e_read_file(r->proc.err_path);
    int ok = !r->proc.timed_out && WIFEXITED(r->proc.status) && WEXITSTATUS(r->proc.status) == 0 &&
             strstr(out, "PASS stress\n") != NULL;
    const char *summary = strstr(out, "stress: ");
    summary = summary != NULL ? strstr(summary + 1, "stress: ") : NULL;
    fprintf(stderr, "%s: %.*s\n", r->label, summary ? (int)strcspn(summary, "\n") : 12,
            summary ? summary : "no summary");
    if (!ok) {
        fprintf(stderr, "===== %s: %s\n", r->label, e2e_describe(&r->proc, how, sizeof how));
        e2e_dump("program stdout", out, 12000);
        e2e_dump("program stderr", err, 3000);
    }
    free(out);
    free(err);
    return ok;
}

static void run(const char *rel, const char *addr, unsigned seed, const char *const *args, int hide)
{
    stress_run r;
    spawn(&r, rel, addr, seed, args, hide, "stress");
    ck_assert_msg(finish(&r), "%s: wrong bytes or errors (FAIL lines above), expected PASS stress", r.label);
}

/* Sets NAME=VALUE for the programs spawned while the test runs (a forked test). */
static void with_env(const char *name, const char *value)
{
    setenv(name, value, 1);
}

START_TEST(test_shared_runtime_unix)
{
    run("stress/stress", srv.unix_addr, 1001, NULL, 0);
}
END_TEST

START_TEST(test_static_runtime_tcp)
{
    run("stress-static/stress", srv.tcp_addr, 1002, NULL, 0);
}
END_TEST

START_TEST(test_static_runtime_unix)
{
    run("stress-static/stress", srv.unix_addr, 1003, NULL, 0);
}
END_TEST

/* The data channel's socket instead of the shared-memory ring and pinned sharing. */
START_TEST(test_channel_socket)
{
    with_env("CUDAREM_SHM", "off");
    run("stress/stress", srv.unix_addr, 1004, NULL, 0);
}
END_TEST

/* Every byte in the call stream: no data channel at all. */
START_TEST(test_call_stream_only)
{
    with_env("CUDAREM_CHANNEL", "off");
    run("stress-static/stress", srv.tcp_addr, 1005, NULL, 0);
}
END_TEST

/* The ring for every copy (no shared pinned memory), compressed where it pays. */
START_TEST(test_ring_compressed)
{
    with_env("CUDAREM_SHARED_PINNED", "off");
    with_env("CUDAREM_COMPRESS", "on");
    run("stress/stress", srv.unix_addr, 1006, NULL, 0);
}
END_TEST

/* Sixteen threads hammering one stream. */
START_TEST(test_one_stream)
{
    static const char *const args[] = {"--one-stream", NULL};
    run("stress/stress", srv.tcp_addr, 1007, args, 0);
    run("stress-static/stress", srv.unix_addr, 1008, args, 0);
}
END_TEST

/* Built with --default-stream per-thread: stream 0 is each thread's own stream,
 * reached through the *_ptsz and *_ptds entry points. */
START_TEST(test_per_thread_default_stream_build)
{
    static const char *const args[] = {"--layer", "runtime", "--streams", "legacy", NULL};
    run("stress/stress-ptds", srv.unix_addr, 1011, NULL, 0);
    stress_run r;
    spawn(&r, "stress/stress-ptds", srv.tcp_addr, 1012, args, 0, "ptds");
    ck_assert_msg(finish(&r), "%s: wrong bytes or errors (FAIL lines above)", r.label);
}
END_TEST

/* The driver layer alone, every thread on the legacy default stream. */
START_TEST(test_driver_legacy_stream)
{
    static const char *const args[] = {"--layer", "driver", "--streams", "legacy", NULL};
    run("stress/stress", srv.unix_addr, 1009, args, 0);
}
END_TEST

/* A client with no CUDA library installed: the shim is the runtime and libraries. */
START_TEST(test_without_cuda_libraries)
{
    static char lib[E2E_PATH_LEN];
    e2e_client_library_path(e2e_build_path("lib", lib, sizeof lib));
    run("stress/stress", srv.unix_addr, 1010, NULL, 1);
}
END_TEST

/* Several sessions of one server at once, over both transports and runtimes. */
START_TEST(test_many_sessions)
{
    static const char *const dirs[] = {"stress/stress", "stress-static/stress"};
    stress_run r[STRESS_MAX_SESSIONS];
    for (int i = 0; i < STRESS_MAX_SESSIONS; i++) {
        char tag[16];
        snprintf(tag, sizeof tag, "session%d", i);
        spawn(&r[i], dirs[i % 2], i < 2 ? srv.unix_addr : srv.tcp_addr, 1100 + i, NULL, 0, tag);
    }
    int ok = 1;
    for (int i = 0; i < STRESS_MAX_SESSIONS; i++)
        ok &= finish(&r[i]);
    ck_assert_msg(ok, "a session of %d at once had wrong bytes or errors (FAIL lines above)", STRESS_MAX_SESSIONS);
}
END_TEST

/* A pool: server A with two devices over TCP, server B with one over a Unix
 * socket, as devices 0-2; thread i works on device i % 3, so kernels, copies,
 * frees and hand-overs run on every server and between them. */
START_TEST(test_pool_of_servers)
{
    static const char *const dirs[] = {"stress/stress", "stress-static/stress"};
    char dir_b[64], err[512], pool[2 * E2E_PATH_LEN + 8];
    static const char *const args[] = {"--devices", "3", NULL};
    e2e_server a, b;
    ck_assert(e2e_dir_make(dir_b, sizeof dir_b) == 0);
    ck_assert_msg(e2e_server_start_logged(&a, dir_b, 2, err, sizeof err) == 0, "server A: %s", err);
    char dir_c[64];
    ck_assert(e2e_dir_make(dir_c, sizeof dir_c) == 0);
    ck_assert_msg(e2e_server_start_logged(&b, dir_c, 1, err, sizeof err) == 0, "server B: %s", err);
    snprintf(pool, sizeof pool, "%s,%s", a.tcp_addr, b.unix_addr);
    int ok = 1;
    for (int i = 0; i < 2; i++) {
        stress_run r;
        spawn(&r, dirs[i], pool, 1200 + i, args, 0, dirs[i] == dirs[0] ? "pool" : "pool-static");
        ok &= finish(&r);
    }
    e2e_server_stop(&a);
    e2e_server_stop(&b);
    e2e_dir_remove(dir_b);
    e2e_dir_remove(dir_c);
    ck_assert_msg(ok, "over a pool of two servers: wrong bytes or errors (FAIL lines above)");
}
END_TEST

/* A queued call's failure goes to the thread that queued it, never to another
 * (tests/stress/errthreads.cu), with both runtimes. */
START_TEST(test_errors_reach_their_thread)
{
    static const char *const rels[] = {"stress/errthreads", "stress-static/errthreads"};
    char prog[E2E_PATH_LEN], how[64];
    e2e_proc p;
    e2e_build_path(rels[_i], prog, sizeof prog);
    char *argv[] = {prog, NULL};
    e2e_proc_opts o = {srv.unix_addr, 1, 0};
    ck_assert(e2e_run(&p, dir, "errthreads", prog, argv, &o) == 0);
    char *out = e2e_read_file(p.out_path);
    int ok = !p.timed_out && WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0 && strstr(out, "PASS errthreads\n");
    if (!ok)
        e2e_dump("program stdout", out, 4000);
    free(out);
    ck_assert_msg(ok, "%s: %s, expected PASS errthreads: a failure reached another thread, or none",
                  rels[_i], e2e_describe(&p, how, sizeof how));
}
END_TEST

Suite *stress_suite(void)
{
    Suite *s = suite_create("e2e_stress");
    TCase *tc = tcase_create("stress");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 2 * STRESS_TIMEOUT_MS / 1000 + 60);
    tcase_add_test(tc, test_shared_runtime_unix);
    tcase_add_test(tc, test_static_runtime_tcp);
    tcase_add_test(tc, test_static_runtime_unix);
    tcase_add_test(tc, test_channel_socket);
    tcase_add_test(tc, test_call_stream_only);
    tcase_add_test(tc, test_ring_compressed);
    tcase_add_test(tc, test_one_stream);
    tcase_add_test(tc, test_driver_legacy_stream);
    tcase_add_test(tc, test_per_thread_default_stream_build);
    tcase_add_test(tc, test_without_cuda_libraries);
    tcase_add_test(tc, test_many_sessions);
    tcase_add_test(tc, test_pool_of_servers);
    tcase_add_loop_test(tc, test_errors_reach_their_thread, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(stress_suite)
