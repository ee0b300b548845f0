/* check_e2e_nvml.c -- end-to-end suite of the shim's NVML: tests/nvml/nvml_query (an
 * NVML client linked with no NVIDIA library) and pynvml run through the shim
 * against a real cudarem-server on the emulated device. Their output is copied to
 * this suite's output, so a test log shows what NVML answered.
 *
 * Each test starts its own server; programs are bounded by E2E_RUN_TIMEOUT_MS.
 */
#include "tests/e2e/e2e_harness.h"
#include "tests/unit/crm_check.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef NVML_VENV_PYTHON
#define NVML_VENV_PYTHON E2E_PYTHON
#endif

static char dir[64];

/* 1 when the suites run against a real GPU (make gpu-check): device names and counts
 * are the GPU's, not the emulated device's. */
static int on_gpu(void)
{
    const char *d = getenv("CUDAREM_TEST_DEVICE");
    return d != NULL && strcmp(d, "cuda") == 0;
}
static e2e_server srv;

static void start_server(int ndev)
{
    char err[512];
    ck_assert_msg(e2e_dir_make(dir, sizeof dir) == 0, "mkdtemp failed");
    if (e2e_server_start(&srv, dir, ndev, err, sizeof err) != 0) {
        char *log = e2e_read_file(srv.log_path);
        e2e_dump("server log", log, 4000);
        free(log);
        ck_abort_msg("server start: %s", err);
    }
}

static void stop_server(void)
{
    int status = e2e_server_stop(&srv);
    ck_assert_msg(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "server status 0x%x after SIGTERM, expected exit 0", (unsigned)status);
    e2e_dir_remove(dir);
}

/* Runs ARGV through the shim at ADDR (HIDE: without CUDA libraries) and requires
 * exit 0 with "PASS NAME"; returns its stdout (malloc'd), printed under NAME. */
static char *run_passing(const char *name, char **argv, const char *addr, int hide)
{
    e2e_proc p;
    char verdict[64], pass[64];
    e2e_proc_opts o = {addr, 1, hide};
    ck_assert_msg(e2e_run(&p, dir, name, argv[0], argv, &o) == 0, "%s: spawn failed", name);
    char *out = e2e_read_file(p.out_path), *err = e2e_read_file(p.err_path);
    snprintf(pass, sizeof pass, "PASS %s\n", name);
    printf("----- %s%s:\n%s", name, hide ? " (CUDA libraries hidden)" : "", out);
    fflush(stdout);
    e2e_describe(&p, verdict, sizeof verdict);
    int ok = !p.timed_out && WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0 && strstr(out, pass) != NULL;
    if (!ok) {
        char *log = e2e_read_file(srv.log_path);
        e2e_dump("program stderr", err, 3000);
        e2e_dump("server log", log, 3000);
        free(log);
    }
    free(err);
    ck_assert_msg(ok, "%s: %s, expected exit 0 and PASS", name, verdict);
    return out;
}

static char *query_path(void)
{
    static char prog[E2E_PATH_LEN];
    return (char *)e2e_build_path("tests/nvml_query", prog, sizeof prog);
}

/* Every query and check of nvml_query, over TCP with two devices and over a Unix
 * socket with the CUDA libraries hidden from the client. */
START_TEST(test_nvml_query)
{
    int ndev = _i == 0 ? 2 : 1;
    char *argv[] = {query_path(), NULL};
    start_server(ndev);
    char *out = run_passing("nvml_query", argv, _i == 0 ? srv.tcp_addr : srv.unix_addr, _i == 1);
    char want[32];
    snprintf(want, sizeof want, "nvml: %d device(s)\n", ndev);
    if (!on_gpu()) {
        ck_assert_msg(strstr(out, want) != NULL, "expected \"%s\"", want);
        ck_assert_int_eq(e2e_count_lines_with(out, "\"cudarem emulated device (CPU)\""), ndev);
        ck_assert_int_eq(e2e_count_lines_with(out, "compute capability 9.0"), ndev);
    }
    free(out);
    stop_server();
}
END_TEST

/* The process list covers every session of the server: a second client holding
 * memory is listed under its own pid with at least what it holds. */
START_TEST(test_other_session_listed)
{
    e2e_proc holder;
    char *hold_argv[] = {query_path(), "hold", "96", NULL}, *argv[] = {query_path(), NULL}, needle[64];
    start_server(1);
    e2e_proc_opts o = {srv.tcp_addr, 1, 0};
    ck_assert(e2e_spawn(&holder, dir, "holder", hold_argv[0], hold_argv, &o) == 0);
    ck_assert_msg(e2e_wait_output(&holder, "holding", 30000) == 0, "the holder never allocated");
    char *out = run_passing("nvml_query", argv, srv.unix_addr, 0);
    snprintf(needle, sizeof needle, " pid %d used ", (int)holder.pid);
    const char *at = strstr(out, needle);
    ck_assert_msg(at != NULL, "holder pid %d not listed", (int)holder.pid);
    ck_assert_msg(strtoull(at + strlen(needle), NULL, 10) >= 96ull << 20, "holder listed with less than 96 MiB");
    free(out);
    kill(holder.pid, SIGKILL);
    e2e_wait(&holder, 10000);
    stop_server();
}
END_TEST

/* No server: nvmlInit fails as on a machine without a driver; NO_GPUS init works. */
START_TEST(test_unreachable_server)
{
    char *argv[] = {query_path(), "noserver", NULL}, addr[64];
    ck_assert_msg(e2e_dir_make(dir, sizeof dir) == 0, "mkdtemp failed");
    snprintf(addr, sizeof addr, "tcp:127.0.0.1:%d", e2e_free_port());
    free(run_passing("nvml_query", argv, addr, 0));
    e2e_dir_remove(dir);
}
END_TEST

/* NVIDIA's pynvml (PyPI nvidia-ml-py) loads libnvidia-ml.so.1 and gets the shim. */
START_TEST(test_pynvml)
{
    char script[E2E_PATH_LEN];
    snprintf(script, sizeof script, "%s/tests/nvml/pynvml_query.py", e2e_source_dir());
    char *argv[] = {NVML_VENV_PYTHON, script, NULL};
    start_server(1);
    char *out = run_passing("pynvml_query", argv, srv.tcp_addr, 0);
    ck_assert_msg(on_gpu() || strstr(out, "pynvml: device 0: cudarem emulated device (CPU) GPU-") != NULL,
                  "device name");
    ck_assert_int_eq(e2e_count_lines_with(out, "pynvml: device 0: memory total "), 1);
    free(out);
    stop_server();
}
END_TEST

static Suite *e2e_nvml_suite(void)
{
    Suite *s = suite_create("e2e_nvml");
    TCase *tc = tcase_create("nvml");
    tcase_set_timeout(tc, 150);
    tcase_add_loop_test(tc, test_nvml_query, 0, 2); /* 0: tcp, 2 devices; 1: unix, CUDA hidden */
    tcase_add_test(tc, test_other_session_listed);
    tcase_add_test(tc, test_unreachable_server);
    tcase_add_test(tc, test_pynvml);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(e2e_nvml_suite)
