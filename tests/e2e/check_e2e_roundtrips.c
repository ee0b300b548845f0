/* check_e2e_roundtrips.c -- end-to-end suite: round trips are the cost of remoting,
 * and they are deterministic, so they are counted exactly. tests/cuda/roundtrips
 * queues 1,407 calls (device-to-device copies, frees of known allocations and live
 * streams' and events' destruction among them) between ten synchronous ones, and makes four
 * synchronisations the round trip before them already answered; the client's
 * counters (CUDAREM_STATS) must show eleven messages carrying the calls sent (the
 * last, at exit, with the last free). Built with
 * nvcc's static runtime it costs exactly the same: NVIDIA's runtime reads the
 * device's name and every attribute when it starts, which HELLO brought.
 * tests/cuda/holdout queues 3,000 copies, cuBLAS calls and event records between
 * two synchronisations, four times what the client's queue holds: the full queue
 * is posted (CRM_POST, never answered), so they cost no round trip either, and a
 * cuBLAS call failing inside a posted batch fails the next synchronisation. An
 * asynchronous copy too large to queue is posted on its own. tests/kernels/step
 * runs ten warm training-like steps, each of one round trip; tests/kernels/graphstep
 * runs them as a CUDA graph, and replays graphs of up to 1,000 kernels for free. */
#include "tests/e2e/e2e_harness.h"
#include "tests/unit/crm_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* The program's build directory per runtime, and what its session must cost. */
static const struct {
    const char *prog;
    unsigned long long round_trips, calls, synced_here, posts;
    int kernels; /* loads modules: their round trips (2 when the server's cache
                    lacks the image, else 1, and 1 per kernel) are not counted */
} runs[] = {
    /* 1,407 queued (200 of them device-to-device copies, 2 frees, a stream's and an
     * event's destruction) + 10 synchronous; the last free queued is sent at exit (a
     * round trip); 4 synchronisations answered here */
    {"cuda/roundtrips", 11, 1417, 4, 0, 0},
    {"cuda-static/roundtrips", 11, 1417, 4, 0, 0}, /* the same: device queries cost nothing */
    /* 3 mallocs, the handle's create, 2 readbacks and 4 stream synchronisations;
     * the 3 frees and the handle's, stream's and event's destruction queued (the
     * last sent at exit); 3,301 queued calls in 4 posts (16 MiB and 4.7 MiB of
     * captured copies), and a 4 MiB copy in a fifth */
    {"cuda/holdout", 11, 3322, 1, 5, 0},
    {"cuda-static/holdout", 11, 3322, 1, 5, 0},
    /* a warm step of copies, kernels, a GEMM, a device-to-device copy, an event
     * record and a free costs one round trip, its synchronisation: 14 mallocs, 11
     * stream synchronisations (setup and 10 steps), the handle's create, the
     * readback, and at exit the queued destructions and frees */
    {"kernels/step", 28, 129, 0, 0, 1},
    {"kernels-static/step", 28, 129, 0, 0, 1},
    /* the same step captured into a graph: each launch and its synchronisation one
     * round trip; graphs of 10, 100 and 1,000 kernels launched ten times each cost
     * one synchronisation apiece: 14 stream synchronisations, 5 mallocs, the
     * handle's create, 2 readbacks and the exit's flush */
    {"kernels/graphstep", 23, 93, 0, 0, 1},
    {"kernels-static/graphstep", 23, 93, 0, 0, 1},
};

/* The round trips of call `name` in CUDAREM_STATS's "round_trips_by_call". */
static unsigned long long by_call(const char *json, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, " %s=", name);
    const char *at = json ? strstr(json, key) : NULL;
    if (at == NULL) {
        snprintf(key, sizeof key, "\"%s=", name); /* the first of the list */
        at = json ? strstr(json, key) : NULL;
    }
    return at != NULL ? strtoull(at + strlen(key), NULL, 10) : 0;
}

START_TEST(test_queued_calls_cost_no_round_trips)
{
    char dir[64], err[512], prog[E2E_PATH_LEN], stats[E2E_PATH_LEN + 16], verdict[64];
    e2e_server srv;
    e2e_proc p;
    ck_assert(e2e_dir_make(dir, sizeof dir) == 0);
    ck_assert_msg(e2e_server_start(&srv, dir, 0, err, sizeof err) == 0, "server start: %s", err);
    e2e_build_path(runs[_i].prog, prog, sizeof prog);
    snprintf(stats, sizeof stats, "%s/stats.json", dir);
    setenv("CUDAREM_STATS", stats, 1);
    char *argv[] = {prog, NULL};
    e2e_proc_opts o = {srv.unix_addr, 1, 0};
    const char *name = strrchr(runs[_i].prog, '/') + 1;
    int ran = e2e_run(&p, dir, name, prog, argv, &o) == 0;
    unsetenv("CUDAREM_STATS");
    e2e_server_stop(&srv);
    char *out = e2e_read_file(p.out_path), *json = e2e_read_file(stats);
    unsigned long long trips = 0, calls = 0;
    int parsed = json && sscanf(json, "{\"round_trips\": %llu, \"calls\": %llu", &trips, &calls) == 2;
    const char *here = json ? strstr(json, "\"synced_here\": ") : NULL;
    long long synced = here ? atoll(here + strlen("\"synced_here\": ")) : -1;
    const char *posted = json ? strstr(json, "\"posts\": ") : NULL;
    long long posts = posted ? atoll(posted + strlen("\"posts\": ")) : -1;
    if (runs[_i].kernels) { /* first uses of modules and kernels: not the program's steps */
        unsigned long long first = by_call(json, "crm_module_load") + by_call(json, "crm_function_get");
        trips -= first;
        calls -= first;
    }
    e2e_describe(&p, verdict, sizeof verdict);
    char pass_line[64];
    snprintf(pass_line, sizeof pass_line, "PASS %s", name);
    int passed = ran && WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0 && strstr(out, pass_line);
    if (!passed || !parsed)
        e2e_dump(runs[_i].prog, out, 4000);
    free(out);
    free(json);
    e2e_dir_remove(dir);
    ck_assert_msg(passed, "%s: %s", runs[_i].prog, verdict);
    ck_assert_msg(parsed, "%s: no statistics written to CUDAREM_STATS", runs[_i].prog);
    ck_assert_msg(trips == runs[_i].round_trips, "%s: %llu round trips, expected %llu", runs[_i].prog, trips,
                  runs[_i].round_trips);
    ck_assert_msg(calls == runs[_i].calls, "%s: %llu calls, expected %llu", runs[_i].prog, calls, runs[_i].calls);
    ck_assert_msg(posts == (long long)runs[_i].posts, "%s: %lld posts, expected %llu", runs[_i].prog, posts,
                  runs[_i].posts);
    ck_assert_msg(synced == (long long)runs[_i].synced_here, "%s: %lld synchronisations answered by the client, expected %llu",
                  runs[_i].prog, synced, runs[_i].synced_here);
}
END_TEST

static Suite *crm_roundtrips_suite(void)
{
    Suite *s = suite_create("e2e_roundtrips");
    TCase *tc = tcase_create("queue");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_queued_calls_cost_no_round_trips, 0, (int)(sizeof runs / sizeof runs[0]));
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(crm_roundtrips_suite)
