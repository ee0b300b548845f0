/* check_e2e_load.c -- end-to-end suite: the server under load. 32 clients at once
 * (half over TCP, half over the Unix socket) run tests/load/loadmix for 60 s each:
 * copies of 1-64 MiB, memsets, cuBLAS GEMMs and kernel launches, every result
 * checked. No client may see an error or a wrong byte; afterwards no session
 * process is left and the device's free memory and the daemon's own memory are
 * back to what they were before. */
#include "tests/e2e/e2e_harness.h"
#include "tests/unit/crm_check.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define CLIENTS 32
#define SECONDS "60"
#define WAIT_MS 240000   /* the load's 60 s, start-up and an ASan build's slowness */

static char dir[64];
static e2e_server srv;

static void setup(void)
{
    char err[512];
    ck_assert_msg(e2e_dir_make(dir, sizeof dir) == 0, "mkdtemp failed");
    ck_assert_msg(e2e_server_start(&srv, dir, 0, err, sizeof err) == 0, "server start: %s", err);
}

static void teardown(void)
{
    e2e_server_kill(&srv);
    e2e_dir_remove(dir);
}

/* meminfo's free bytes; -1 on failure. */
static long long device_free(const char *tag)
{
    char path[E2E_PATH_LEN];
    unsigned long long fr = 0, tot = 0;
    e2e_proc p;
    e2e_build_path("cuda/meminfo", path, sizeof path);
    char *argv[] = {path, NULL};
    e2e_proc_opts o = {srv.tcp_addr, 1, 0};
    if (e2e_run(&p, dir, tag, path, argv, &o) != 0)
        return -1;
    char *out = e2e_read_file(p.out_path);
    int ok = WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0 && sscanf(out, "%llu %llu", &fr, &tot) == 2;
    free(out);
    return ok ? (long long)fr : -1;
}

/* The daemon's resident memory in KiB and its number of child processes. */
static void daemon_state(long *rss_kib, int *children)
{
    char path[64], *text, *at;
    snprintf(path, sizeof path, "/proc/%d/status", (int)srv.pid);
    text = e2e_read_file(path);
    at = strstr(text, "VmRSS:");
    *rss_kib = at ? strtol(at + 6, NULL, 10) : -1;
    free(text);
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)srv.pid, (int)srv.pid);
    text = e2e_read_file(path);
    *children = 0;
    for (char *p = text; *p; p++)
        *children += *p == ' ';
    free(text);
}

START_TEST(test_32_clients_for_60_seconds)
{
    static e2e_proc p[CLIENTS];
    char path[E2E_PATH_LEN], seed[CLIENTS][16], tag[32];
    long rss0, rss1;
    int kids0, kids1;
    long long free0 = device_free("meminfo0");
    ck_assert_msg(free0 > 0, "meminfo before the load failed");
    for (int waited = 0; waited < 10000; waited += 100) { /* meminfo's session ends after it */
        daemon_state(&rss0, &kids0);
        if (kids0 == 0)
            break;
        e2e_sleep_ms(100);
    }
    ck_assert_msg(kids0 == 0, "%d session processes before the load", kids0);
    e2e_build_path("load/loadmix", path, sizeof path);
    for (int i = 0; i < CLIENTS; i++) {
        snprintf(seed[i], sizeof seed[i], "%d", 1000 + i);
        snprintf(tag, sizeof tag, "client%02d", i);
        char *argv[] = {path, SECONDS, seed[i], NULL};
        e2e_proc_opts o = {i % 2 ? srv.unix_addr : srv.tcp_addr, 1, 0};
        ck_assert_int_eq(e2e_spawn(&p[i], dir, tag, path, argv, &o), 0);
    }
    long ops = 0;
    double p99_max = 0;
    int failed = 0;
    for (int i = 0; i < CLIENTS; i++) {
        long n = 0, errors = -1, wrong = -1;
        double p50 = 0, p99 = 0;
        e2e_wait(&p[i], WAIT_MS);
        char *out = e2e_read_file(p[i].out_path);
        const char *line = strstr(out, "ops ");
        int parsed = line && sscanf(line, "ops %ld errors %ld wrong %ld p50_us %lf p99_us %lf", &n, &errors, &wrong,
                                    &p50, &p99) == 5;
        int ok = parsed && !p[i].timed_out && WIFEXITED(p[i].status) && WEXITSTATUS(p[i].status) == 0;
        if (!ok) {
            char *err = e2e_read_file(p[i].err_path);
            fprintf(stderr, "client %d: %s%s\n", i, out, err);
            free(err);
            failed++;
        }
        ops += n;
        p99_max = p99 > p99_max ? p99 : p99_max;
        free(out);
    }
    printf("load: %d clients, %ld operations in " SECONDS " s, worst client's p99 %.0f ms\n", CLIENTS, ops,
           p99_max / 1000);
    ck_assert_msg(failed == 0, "%d of %d clients saw an error or a wrong byte", failed, CLIENTS);
    int settled = 0;
    for (int waited = 0; waited < 10000 && !settled; waited += 100) {
        daemon_state(&rss1, &kids1);
        settled = kids1 == kids0;
        if (!settled)
            e2e_sleep_ms(100);
    }
    ck_assert_msg(settled, "%d session processes left after the load", kids1);
    long long free1 = device_free("meminfo1");
    ck_assert_msg(free1 == free0, "device free memory %lld after the load, %lld before", free1, free0);
    daemon_state(&rss1, &kids1);
    ck_assert_msg(rss1 - rss0 < 2048, "the daemon's memory grew from %ld to %ld KiB", rss0, rss1);
    ck_assert_int_eq(e2e_server_stop(&srv) >= 0, 1);
}
END_TEST

static Suite *e2e_load_suite(void)
{
    Suite *s = suite_create("e2e_load");
    TCase *tc = tcase_create("load");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 400);
    tcase_add_test(tc, test_32_clients_for_60_seconds);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(e2e_load_suite)
