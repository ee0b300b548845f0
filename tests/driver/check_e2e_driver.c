/* check_e2e_driver.c -- end-to-end suite of the driver layer and of what the shim
 * hands to NVIDIA's libraries, each program run through the shim against a real
 * cudarem-server on loopback (emulated device, with the CPU kernels of the test
 * programs):
 *  - drv_api, a program of the driver API alone (DT_NEEDED libcuda.so.1, found in
 *    build/lib: there is no NVIDIA driver here), over TCP, a Unix socket, and in a
 *    mount namespace where every CUDA library is hidden;
 *  - drv_vmm: the driver's virtual memory management (reserve, create, map, access)
 *    as torch's expandable segments use it, over TCP and a Unix socket;
 *  - rt_fallback: runtime calls the shim does not remote reach NVIDIA's runtime,
 *    which the toolkit installed here brings (and answer cudaErrorNotSupported with
 *    CUDAREM_FALLBACK=off);
 *  - blas_fallback: cuBLAS and cuDNN calls the shim does not remote reach stand-ins
 *    for NVIDIA's libraries (tests/driver/fake_*.c) with handles of their own;
 *  - mixed: runtime and driver calls on the same objects, with each runtime.
 * Each must print "PASS <name>"; the calls NVIDIA's libraries answered are read
 * from the client's statistics. */
#include "tests/e2e/e2e_harness.h"
#include "tests/unit/crm_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

enum transport { VIA_TCP, VIA_UNIX };

typedef struct drv_run {
    const char *name;          /* the program under build/driver */
    const char *pass;          /* its PASS line's name, NULL: the program's name */
    char *args[3];             /* its arguments after the program */
    enum transport via;
    int hide;                  /* in a namespace without CUDA libraries */
    const char *fallback;      /* CUDAREM_FALLBACK, or NULL */
    const char *nvidia_libs;   /* CUDAREM_NVIDIA_LIBS, or NULL */
} drv_run;

/* Runs r through the shim and requires its PASS line; returns the calls NVIDIA's
 * libraries answered (the client's nvidia_calls statistic). */
static long long run(const drv_run *r, const char *dir)
{
    char err[512], kernels[E2E_PATH_LEN], prog[E2E_PATH_LEN], lib[E2E_PATH_LEN], stats[E2E_PATH_LEN];
    char rel[64], pass[96], verdict[64];
    e2e_server srv;
    e2e_proc p;
    snprintf(rel, sizeof rel, "driver/%s", r->name);
    snprintf(pass, sizeof pass, "PASS %s\n", r->pass != NULL ? r->pass : r->name);
    snprintf(stats, sizeof stats, "%s/stats.json", dir);
    e2e_build_path(rel, prog, sizeof prog);
    e2e_build_path("kernels/libktest_cpu_kernels.so", kernels, sizeof kernels);
    e2e_build_path("lib", lib, sizeof lib);
    char *extra[] = {"--emu-kernels", kernels, NULL};
    e2e_server_extra_args(extra);
    int rc = e2e_server_start(&srv, dir, 0, err, sizeof err);
    e2e_server_extra_args(NULL);
    ck_assert_msg(rc == 0, "server start: %s", err);
    setenv("CUDAREM_STATS", stats, 1);
    if (r->fallback != NULL)
        setenv("CUDAREM_FALLBACK", r->fallback, 1);
    if (r->nvidia_libs != NULL)
        setenv("CUDAREM_NVIDIA_LIBS", r->nvidia_libs, 1);
    e2e_client_library_path(lib); /* libcuda.so.1, libcublas.so.13, ... are the shim */
    char *argv[] = {prog, r->args[0], r->args[1], r->args[2], NULL};
    e2e_proc_opts o = {r->via == VIA_TCP ? srv.tcp_addr : srv.unix_addr, 1, r->hide};
    int spawned = e2e_run(&p, dir, r->name, prog, argv, &o) == 0;
    e2e_client_library_path(NULL);
    unsetenv("CUDAREM_STATS");
    unsetenv("CUDAREM_FALLBACK");
    unsetenv("CUDAREM_NVIDIA_LIBS");
    char *out = e2e_read_file(p.out_path), *perr = e2e_read_file(p.err_path), *json = e2e_read_file(stats);
    int ok = spawned && !p.timed_out && WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0 && strstr(out, pass);
    const char *n = strstr(json, "\"nvidia_calls\": ");
    long long calls = n ? atoll(n + strlen("\"nvidia_calls\": ")) : -1;
    int st = e2e_server_stop(&srv);
    char *log = e2e_read_file(srv.log_path);
    if (!ok) {
        e2e_describe(&p, verdict, sizeof verdict);
        fprintf(stderr, "===== %s: %s\n", r->name, verdict);
        e2e_dump("program stdout", out, 6000);
        e2e_dump("program stderr", perr, 3000);
        e2e_dump("server log", log, 4000);
    }
    free(out);
    free(perr);
    free(json);
    free(log);
    ck_assert_msg(ok, "%s did not pass", r->name);
    ck_assert_msg(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "server did not stop cleanly");
    return calls;
}

/* drv_api with the cubin and PTX of the vadd kernel. */
static void run_drv_api(enum transport t, int hide)
{
    char dir[64], cubin[E2E_PATH_LEN], ptx[E2E_PATH_LEN];
    ck_assert(e2e_dir_make(dir, sizeof dir) == 0);
    e2e_build_path("driver/vadd.cubin", cubin, sizeof cubin);
    e2e_build_path("driver/vadd.ptx", ptx, sizeof ptx);
    drv_run r = {"drv_api", NULL, {cubin, ptx, NULL}, t, hide, NULL, NULL};
    run(&r, dir);
    e2e_dir_remove(dir);
}

START_TEST(test_drv_api_tcp) { run_drv_api(VIA_TCP, 0); }
END_TEST
START_TEST(test_drv_api_unix) { run_drv_api(VIA_UNIX, 0); }
END_TEST
START_TEST(test_drv_api_hidden_cuda) { run_drv_api(VIA_UNIX, 1); }
END_TEST

START_TEST(test_drv_vmm)
{
    char dir[64];
    ck_assert(e2e_dir_make(dir, sizeof dir) == 0);
    drv_run r = {"drv_vmm", NULL, {NULL}, _i == 0 ? VIA_TCP : VIA_UNIX, 0, NULL, NULL};
    run(&r, dir);
    e2e_dir_remove(dir);
}
END_TEST

/* The toolkit installed here brings NVIDIA's runtime: the calls go to it. */
START_TEST(test_runtime_fallback)
{
    char dir[64];
    ck_assert(e2e_dir_make(dir, sizeof dir) == 0);
    drv_run r = {"rt_fallback", NULL, {NULL}, VIA_UNIX, 0, NULL, NULL};
    long long calls = run(&r, dir);
    e2e_dir_remove(dir);
    ck_assert_msg(calls >= 5, "NVIDIA's runtime answered %lld calls, expected at least 5", calls);
}
END_TEST

START_TEST(test_runtime_fallback_off)
{
    char dir[64];
    ck_assert(e2e_dir_make(dir, sizeof dir) == 0);
    drv_run r = {"rt_fallback", NULL, {NULL}, VIA_UNIX, 0, "off", NULL};
    long long calls = run(&r, dir);
    e2e_dir_remove(dir);
    ck_assert_msg(calls == 0, "NVIDIA's runtime answered %lld calls with the fallback off", calls);
}
END_TEST

/* cuBLAS and cuDNN calls the shim does not remote reach (stand-ins for) NVIDIA's
 * libraries with their own handles, the settings of the shim's, and every argument
 * intact; a cuDNN call taking the shim's own descriptor does not. */
START_TEST(test_blas_fallback)
{
    char dir[64], fake[E2E_PATH_LEN], blas_report[E2E_PATH_LEN], dnn_report[E2E_PATH_LEN];
    ck_assert(e2e_dir_make(dir, sizeof dir) == 0);
    e2e_build_path("driver/fake", fake, sizeof fake);
    snprintf(blas_report, sizeof blas_report, "%s/fake-blas.report", dir);
    snprintf(dnn_report, sizeof dnn_report, "%s/fake-dnn.report", dir);
    drv_run r = {"blas_fallback", NULL, {blas_report, dnn_report, NULL}, VIA_UNIX, 0, NULL, fake};
    long long calls = run(&r, dir);
    e2e_dir_remove(dir);
    ck_assert_msg(calls == 6, "NVIDIA's libraries answered %lld calls, expected 6 (cublasUint8gemmBias, cublasXtSetCpuRatio, "
                  "two cublasLtMatmulAlgoGetIds, cudnnBackendExecute, cudnnBackendSetAttribute)", calls);
}
END_TEST

/* Runtime and driver calls on the same objects, with the shared and the static
 * runtime (NVIDIA's, then, on the shim's driver), over TCP. */
START_TEST(test_mixed_layers)
{
    static const char *const progs[] = {"mixed", "mixed_static"};
    char dir[64];
    ck_assert(e2e_dir_make(dir, sizeof dir) == 0);
    drv_run r = {progs[_i], "mixed", {NULL}, VIA_TCP, 0, NULL, NULL};
    run(&r, dir);
    e2e_dir_remove(dir);
}
END_TEST

static Suite *driver_suite(void)
{
    Suite *s = suite_create("e2e_driver");
    TCase *tc = tcase_create("driver");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_drv_api_tcp);
    tcase_add_test(tc, test_drv_api_unix);
    tcase_add_test(tc, test_drv_api_hidden_cuda);
    tcase_add_loop_test(tc, test_drv_vmm, 0, 2);
    tcase_add_test(tc, test_runtime_fallback);
    tcase_add_test(tc, test_runtime_fallback_off);
    tcase_add_test(tc, test_blas_fallback);
    tcase_add_loop_test(tc, test_mixed_layers, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(driver_suite)
