/* check_e2e_driver.c -- end-to-end suite of the driver layer: drv_api (a program of
 * the driver API alone, DT_NEEDED libcuda.so.1) runs through the shim against a
 * real cudarem-server on loopback, over TCP and a Unix socket, with build/lib on
 * LD_LIBRARY_PATH (no NVIDIA driver here: that is where libcuda.so.1 is found),
 * and again in a mount namespace where every CUDA library is hidden. The emulated
 * device runs its vadd kernel from a cubin with the CPU kernels of the test
 * programs; it must print "PASS drv_api". And rt_fallback: runtime calls the shim
 * does not remote reach NVIDIA's runtime, which the toolkit installed here brings
 * (and answer cudaErrorNotSupported with CUDAREM_FALLBACK=off); and blas_fallback:
 * cuBLAS calls it does not remote reach NVIDIA's cuBLAS (a stand-in that checks
 * what it is handed) with a handle of its own. */
#include "tests/e2e/e2e_harness.h"
#include "tests/unit/crm_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

enum transport { VIA_TCP, VIA_UNIX };

static void run_drv_api(enum transport t, int hide)
{
    char dir[64], err[512], kernels[E2E_PATH_LEN], prog[E2E_PATH_LEN], cubin[E2E_PATH_LEN], ptx[E2E_PATH_LEN];
    char lib[E2E_PATH_LEN], verdict[64];
    e2e_server srv;
    e2e_proc p;
    ck_assert(e2e_dir_make(dir, sizeof dir) == 0);
    e2e_build_path("kernels/libktest_cpu_kernels.so", kernels, sizeof kernels);
    e2e_build_path("driver/drv_api", prog, sizeof prog);
    e2e_build_path("driver/vadd.cubin", cubin, sizeof cubin);
    e2e_build_path("driver/vadd.ptx", ptx, sizeof ptx);
    e2e_build_path("lib", lib, sizeof lib);
    char *extra[] = {"--emu-kernels", kernels, NULL};
    e2e_server_extra_args(extra);
    int rc = e2e_server_start(&srv, dir, 0, err, sizeof err);
    e2e_server_extra_args(NULL);
    ck_assert_msg(rc == 0, "server start: %s", err);
    char *argv[] = {prog, cubin, ptx, NULL};
    e2e_proc_opts o = {t == VIA_TCP ? srv.tcp_addr : srv.unix_addr, 1, hide};
    e2e_client_library_path(lib);
    int spawned = e2e_run(&p, dir, "drv_api", prog, argv, &o) == 0;
    e2e_client_library_path(NULL);
    char *out = e2e_read_file(p.out_path), *perr = e2e_read_file(p.err_path);
    int ok = spawned && !p.timed_out && WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0 &&
             strstr(out, "PASS drv_api\n") != NULL;
    int st = e2e_server_stop(&srv);
    char *log = e2e_read_file(srv.log_path);
    if (!ok) {
        e2e_describe(&p, verdict, sizeof verdict);
        fprintf(stderr, "===== drv_api: %s\n", verdict);
        e2e_dump("program stdout", out, 6000);
        e2e_dump("program stderr", perr, 3000);
        e2e_dump("server log", log, 4000);
    }
    free(out);
    free(perr);
    free(log);
    e2e_dir_remove(dir);
    ck_assert_msg(ok, "drv_api did not pass");
    ck_assert_msg(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "server did not stop cleanly");
}

/* Runs rt_fallback (with CUDAREM_FALLBACK=off when off) through the shim; returns
 * the nvidia_calls of its statistics. */
static long long run_fallback(int off)
{
    char dir[64], err[512], prog[E2E_PATH_LEN], stats[E2E_PATH_LEN], verdict[64];
    e2e_server srv;
    e2e_proc p;
    ck_assert(e2e_dir_make(dir, sizeof dir) == 0);
    e2e_build_path("driver/rt_fallback", prog, sizeof prog);
    snprintf(stats, sizeof stats, "%s/stats.json", dir);
    ck_assert_msg(e2e_server_start(&srv, dir, 0, err, sizeof err) == 0, "server start: %s", err);
    setenv("CUDAREM_STATS", stats, 1);
    if (off)
        setenv("CUDAREM_FALLBACK", "off", 1);
    char *argv[] = {prog, NULL};
    e2e_proc_opts o = {srv.unix_addr, 1, 0};
    int spawned = e2e_run(&p, dir, "rt_fallback", prog, argv, &o) == 0;
    unsetenv("CUDAREM_STATS");
    unsetenv("CUDAREM_FALLBACK");
    char *out = e2e_read_file(p.out_path), *perr = e2e_read_file(p.err_path), *json = e2e_read_file(stats);
    int ok = spawned && !p.timed_out && WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0 &&
             strstr(out, "PASS rt_fallback\n") != NULL;
    const char *n = strstr(json, "\"nvidia_calls\": ");
    long long calls = n ? atoll(n + strlen("\"nvidia_calls\": ")) : -1;
    e2e_server_stop(&srv);
    if (!ok) {
        e2e_describe(&p, verdict, sizeof verdict);
        fprintf(stderr, "===== rt_fallback: %s\n", verdict);
        e2e_dump("program stdout", out, 4000);
        e2e_dump("program stderr", perr, 3000);
    }
    free(out);
    free(perr);
    free(json);
    e2e_dir_remove(dir);
    ck_assert_msg(ok, "rt_fallback (fallback %s) did not pass", off ? "off" : "on");
    return calls;
}

/* The toolkit installed here brings NVIDIA's runtime: the calls go to it. */
START_TEST(test_runtime_fallback)
{
    long long calls = run_fallback(0);
    ck_assert_msg(calls >= 5, "NVIDIA's runtime answered %lld calls, expected at least 5", calls);
}
END_TEST

START_TEST(test_runtime_fallback_off)
{
    long long calls = run_fallback(1);
    ck_assert_msg(calls == 0, "NVIDIA's runtime answered %lld calls with the fallback off", calls);
}
END_TEST

/* cuBLAS and cuDNN calls the shim does not remote reach (stand-ins for) NVIDIA's
 * libraries with their own handles, the settings of the shim's, and every argument
 * intact; a cuDNN call taking the shim's own descriptor does not. */
START_TEST(test_blas_fallback)
{
    char dir[64], err[512], prog[E2E_PATH_LEN], fake[E2E_PATH_LEN], lib[E2E_PATH_LEN], report[E2E_PATH_LEN];
    char stats[E2E_PATH_LEN], dnn_report[E2E_PATH_LEN], verdict[64];
    e2e_server srv;
    e2e_proc p;
    ck_assert(e2e_dir_make(dir, sizeof dir) == 0);
    snprintf(dnn_report, sizeof dnn_report, "%s/fake-dnn.report", dir);
    e2e_build_path("driver/blas_fallback", prog, sizeof prog);
    e2e_build_path("driver/fake", fake, sizeof fake);
    e2e_build_path("lib", lib, sizeof lib);
    snprintf(report, sizeof report, "%s/fake.report", dir);
    snprintf(stats, sizeof stats, "%s/stats.json", dir);
    ck_assert_msg(e2e_server_start(&srv, dir, 0, err, sizeof err) == 0, "server start: %s", err);
    setenv("CUDAREM_NVIDIA_LIBS", fake, 1);
    setenv("CUDAREM_STATS", stats, 1);
    e2e_client_library_path(lib); /* the program's libcublas.so.13 and libcudart.so.13 are the shim */
    char *argv[] = {prog, report, dnn_report, NULL};
    e2e_proc_opts o = {srv.unix_addr, 1, 0};
    int spawned = e2e_run(&p, dir, "blas_fallback", prog, argv, &o) == 0;
    e2e_client_library_path(NULL);
    unsetenv("CUDAREM_NVIDIA_LIBS");
    unsetenv("CUDAREM_STATS");
    char *out = e2e_read_file(p.out_path), *perr = e2e_read_file(p.err_path), *json = e2e_read_file(stats);
    int ok = spawned && !p.timed_out && WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0 &&
             strstr(out, "PASS blas_fallback\n") != NULL;
    const char *n = strstr(json, "\"nvidia_calls\": ");
    long long calls = n ? atoll(n + strlen("\"nvidia_calls\": ")) : -1;
    e2e_server_stop(&srv);
    if (!ok) {
        e2e_describe(&p, verdict, sizeof verdict);
        fprintf(stderr, "===== blas_fallback: %s\n", verdict);
        e2e_dump("program stdout", out, 4000);
        e2e_dump("program stderr", perr, 3000);
    }
    free(out);
    free(perr);
    free(json);
    e2e_dir_remove(dir);
    ck_assert_msg(ok, "blas_fallback did not pass");
    ck_assert_msg(calls == 3, "NVIDIA's libraries answered %lld calls, expected 3 (cublasSrot_v2, cublasDrot, "
                  "cudnnBackendExecute)", calls);
}
END_TEST

START_TEST(test_drv_api_tcp) { run_drv_api(VIA_TCP, 0); }
END_TEST
START_TEST(test_drv_api_unix) { run_drv_api(VIA_UNIX, 0); }
END_TEST
START_TEST(test_drv_api_hidden_cuda) { run_drv_api(VIA_UNIX, 1); }
END_TEST

static Suite *driver_suite(void)
{
    Suite *s = suite_create("e2e_driver");
    TCase *tc = tcase_create("drv_api");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_drv_api_tcp);
    tcase_add_test(tc, test_drv_api_unix);
    tcase_add_test(tc, test_drv_api_hidden_cuda);
    tcase_add_test(tc, test_runtime_fallback);
    tcase_add_test(tc, test_runtime_fallback_off);
    tcase_add_test(tc, test_blas_fallback);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(driver_suite)
