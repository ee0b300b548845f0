/* check_e2e_netns.c -- end-to-end suite: server and client on two hosts of their
 * own, network namespaces joined by a veth pair (needs root, as CI has). The link
 * cut under a copying client (the server's end taken down, so packets vanish with
 * no reset): the client gives up after CUDAREM_TIMEOUT saying the server did not
 * answer, with its error status; with the link back, the server serves a new
 * session. */
#include "tests/e2e/e2e_harness.h"
#include "tests/unit/crm_check.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define IP "/usr/sbin/ip"
#define SERVER_ADDR "10.232.0.1"
#define PORT "17480"

static char dir[64], ns_srv[32], ns_cli[32], dev_srv[16], log_path[E2E_PATH_LEN];
static pid_t server;

/* Runs an ip(8) command line; its exit status. */
static int ip(const char *fmt, ...)
{
    char cmd[512];
    va_list ap;
    va_start(ap, fmt);
    int n = snprintf(cmd, sizeof cmd, IP " ");
    vsnprintf(cmd + n, sizeof cmd - (size_t)n, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void teardown(void)
{
    if (server > 0) {
        kill(server, SIGKILL);
        waitpid(server, NULL, 0);
        server = 0;
    }
    ip("netns del %s 2>/dev/null", ns_srv);
    ip("netns del %s 2>/dev/null", ns_cli);
    e2e_dir_remove(dir);
}

#define N_ASSERT(cond, ...)                                                     \
    do {                                                                        \
        int n_ok_ = (cond);                                                     \
        if (!n_ok_)                                                             \
            teardown();                                                         \
        ck_assert_msg(n_ok_, __VA_ARGS__);                                      \
    } while (0)

/* Two namespaces, a veth pair between them, the server in the first. */
static void setup(void)
{
    int pid = (int)getpid();
    ck_assert_msg(e2e_dir_make(dir, sizeof dir) == 0, "mkdtemp failed");
    snprintf(ns_srv, sizeof ns_srv, "crmt-%d-srv", pid);
    snprintf(ns_cli, sizeof ns_cli, "crmt-%d-cli", pid);
    snprintf(dev_srv, sizeof dev_srv, "crt%da", pid % 1000000);
    N_ASSERT(geteuid() == 0, "this suite needs root to make network namespaces");
    N_ASSERT(ip("netns add %s", ns_srv) == 0 && ip("netns add %s", ns_cli) == 0,
             "cannot make network namespaces (ip netns add)");
    N_ASSERT(ip("link add %s netns %s type veth peer name crt%db netns %s", dev_srv, ns_srv, pid % 1000000,
                ns_cli) == 0 &&
                 ip("-n %s addr add " SERVER_ADDR "/24 dev %s", ns_srv, dev_srv) == 0 &&
                 ip("-n %s addr add 10.232.0.2/24 dev crt%db", ns_cli, pid % 1000000) == 0 &&
                 ip("-n %s link set %s up", ns_srv, dev_srv) == 0 &&
                 ip("-n %s link set crt%db up", ns_cli, pid % 1000000) == 0,
             "cannot join the namespaces with a veth pair");
    char server_bin[E2E_PATH_LEN];
    e2e_build_path("cudarem-server", server_bin, sizeof server_bin);
    snprintf(log_path, sizeof log_path, "%s/server.log", dir);
    fflush(NULL);
    server = fork();
    if (server == 0) {
        FILE *f = freopen(log_path, "w", stderr);
        (void)f;
        unsetenv("LD_PRELOAD");
        execl(IP, "ip", "netns", "exec", ns_srv, server_bin, "--device", "emu", "--insecure", "--listen",
              "tcp:" SERVER_ADDR ":" PORT, "--log-level", "info", (char *)NULL);
        _exit(127);
    }
    int up = e2e_wait_log_lines(log_path, "serving the", 1, 5000) >= 1;
    N_ASSERT(up, "the server did not start in its namespace");
}

/* Spawns build/REL through the shim in the client's namespace. */
static void spawn_in_client_ns(e2e_proc *p, const char *rel, const char *arg, const char *tag)
{
    char path[E2E_PATH_LEN];
    e2e_build_path(rel, path, sizeof path);
    char *argv[] = {"ip", "netns", "exec", ns_cli, path, (char *)arg, NULL};
    e2e_proc_opts o = {"tcp:" SERVER_ADDR ":" PORT, 1, 0};
    N_ASSERT(e2e_spawn(p, dir, tag, IP, argv, &o) == 0, "spawn %s", rel);
}

START_TEST(test_cut_link_times_out)
{
    e2e_proc p;
    setenv("CUDAREM_TIMEOUT", "2", 1);
    spawn_in_client_ns(&p, "cuda/copyloop", "0", "copyloop");
    unsetenv("CUDAREM_TIMEOUT");
    N_ASSERT(e2e_wait_output(&p, "started", 30000) == 0, "copyloop did not start across the veth pair");
    N_ASSERT(ip("-n %s link set %s down", ns_srv, dev_srv) == 0, "cannot cut the link");
    int in_time = e2e_wait(&p, 15000) == 0;
    char *err = e2e_read_file(p.err_path);
    int said = strstr(err, "did not answer within 2 s (CUDAREM_TIMEOUT)") != NULL;
    if (!said)
        e2e_dump("copyloop stderr", err, 2000);
    free(err);
    N_ASSERT(in_time, "copyloop still waiting 15 s after the link was cut");
    N_ASSERT(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 3, "copyloop: expected exit 3");
    N_ASSERT(said, "the client did not say the server stopped answering");
    N_ASSERT(ip("-n %s link set %s up", ns_srv, dev_srv) == 0, "cannot restore the link");
    spawn_in_client_ns(&p, "cuda/meminfo", NULL, "meminfo");
    e2e_wait(&p, E2E_RUN_TIMEOUT_MS);
    N_ASSERT(!p.timed_out && WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0,
             "no new session after the link came back");
    teardown();
}
END_TEST

static Suite *e2e_netns_suite(void)
{
    Suite *s = suite_create("e2e_netns");
    TCase *tc = tcase_create("netns");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_cut_link_times_out);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(e2e_netns_suite)
