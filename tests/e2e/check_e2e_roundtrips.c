/* check_e2e_roundtrips.c -- end-to-end suite: round trips are the cost of remoting,
 * and they are deterministic, so they are counted exactly. tests/cuda/roundtrips
 * queues 1,203 asynchronous calls between six synchronous ones; the client's
 * counters (CUDAREM_STATS) must show six messages carrying all the calls. */
#include "tests/e2e/e2e_harness.h"
#include "tests/unit/crm_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define CRM_EXPECTED_ROUND_TRIPS 6ull

START_TEST(test_queued_calls_cost_no_round_trips)
{
    char dir[64], err[512], prog[E2E_PATH_LEN], stats[E2E_PATH_LEN + 16], verdict[64];
    e2e_server srv;
    e2e_proc p;
    ck_assert(e2e_dir_make(dir, sizeof dir) == 0);
    ck_assert_msg(e2e_server_start(&srv, dir, 0, err, sizeof err) == 0, "server start: %s", err);
    e2e_build_path("cuda/roundtrips", prog, sizeof prog);
    snprintf(stats, sizeof stats, "%s/stats.json", dir);
    setenv("CUDAREM_STATS", stats, 1);
    char *argv[] = {prog, NULL};
    e2e_proc_opts o = {srv.unix_addr, 1, 0};
    int ran = e2e_run(&p, dir, "roundtrips", prog, argv, &o) == 0;
    unsetenv("CUDAREM_STATS");
    e2e_server_stop(&srv);
    char *out = e2e_read_file(p.out_path), *json = e2e_read_file(stats);
    unsigned long long trips = 0, calls = 0;
    int parsed = json && sscanf(json, "{\"round_trips\": %llu, \"calls\": %llu", &trips, &calls) == 2;
    e2e_describe(&p, verdict, sizeof verdict);
    int passed = ran && WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0 && strstr(out, "PASS roundtrips");
    if (!passed || !parsed)
        e2e_dump("roundtrips stdout", out, 4000);
    free(out);
    free(json);
    e2e_dir_remove(dir);
    ck_assert_msg(passed, "roundtrips program: %s", verdict);
    ck_assert_msg(parsed, "no statistics written to CUDAREM_STATS");
    ck_assert_uint_eq(trips, CRM_EXPECTED_ROUND_TRIPS);
    ck_assert_uint_eq(calls, 1209); /* 1,203 queued + 6 synchronous */
}
END_TEST

static Suite *crm_roundtrips_suite(void)
{
    Suite *s = suite_create("e2e_roundtrips");
    TCase *tc = tcase_create("queue");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_queued_calls_cost_no_round_trips);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(crm_roundtrips_suite)
