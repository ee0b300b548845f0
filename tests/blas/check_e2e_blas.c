/* check_e2e_blas.c -- end-to-end suite of the cuBLAS and cuBLASLt remoting: the
 * nvcc-built cuBLAS programs (tests/blas/blas.cu, blas_l1/2/3.cu, blas_lu.cu,
 * blas_ex.cu, blas_batch.cu, blas_legacy.cu and blas_qr.cu, linked with -lcublas) and cuBLASLt program
 * (tests/blas/blaslt.cu, linked with -lcublasLt) run through the preloaded shim
 * against a real cudarem-server on the emulated device, over TCP and over a Unix
 * socket; their footprint modes check that the server refuses operands outside the
 * program's allocations and keeps serving; and the hidden runs hide the CUDA
 * libraries, so libcublas.so.13 can only come from build/lib (a link to the shim). Each test runs
 * the program built with the shared runtime (build/cuda/blas) and with nvcc's
 * default static runtime (build/cuda-static/blas: the runtime inside it reaches the
 * shim as the driver, and libcublas.so.13 is still the shim's).
 *
 * Each test starts its own server, requires exit 0 with "PASS <name>" within
 * E2E_RUN_TIMEOUT_MS, then stops the server with SIGTERM and requires exit 0.
 */
#include "tests/e2e/e2e_harness.h"
#include "tests/unit/crm_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

enum transport { VIA_TCP, VIA_UNIX };

/* The program's build directories, one per runtime; tests loop over them. */
static const char *const runtimes[] = {"cuda", "cuda-static"};
#define NRUNTIMES ((int)(sizeof runtimes / sizeof runtimes[0]))

/* Writes the path of program PROG built with runtimes[I] into BUF. */
static const char *prog_path(int i, const char *prog, char *buf, size_t len)
{
    char rel[64];
    snprintf(rel, sizeof rel, "%s/%s", runtimes[i], prog);
    return e2e_build_path(rel, buf, len);
}

static const char *blas_path(int i, char *buf, size_t len)
{
    return prog_path(i, "blas", buf, len);
}

/* Runs build/RUNTIME/PROGRAM [MODE] (RUNTIME: runtimes[RT]) expecting "PASS NAME";
 * HIDE hides the CUDA libraries and LDPATH (may be NULL) becomes LD_LIBRARY_PATH. */
static void run_prog(int rt, const char *program, const char *name, const char *mode, enum transport t, int hide,
                     const char *ldpath)
{
    char dir[64], err[512], prog[E2E_PATH_LEN], verdict[64], pass[64];
    e2e_server srv;
    e2e_proc p;
    prog_path(rt, program, prog, sizeof prog);
    ck_assert_msg(e2e_dir_make(dir, sizeof dir) == 0, "mkdtemp failed");
    if (e2e_server_start(&srv, dir, 0, err, sizeof err) != 0) {
        e2e_dir_remove(dir);
        ck_abort_msg("%s/%s: server start: %s", runtimes[rt], name, err);
    }
    char *argv[] = {prog, (char *)mode, NULL};
    e2e_proc_opts o = {t == VIA_TCP ? srv.tcp_addr : srv.unix_addr, 1, hide};
    e2e_client_library_path(ldpath);
    int spawned = e2e_run(&p, dir, name, prog, argv, &o) == 0;
    e2e_client_library_path(NULL);
    int srv_status = e2e_server_stop(&srv);
    char *out = e2e_read_file(p.out_path), *perr = e2e_read_file(p.err_path), *log = e2e_read_file(srv.log_path);
    snprintf(pass, sizeof pass, "PASS %s\n", name);
    e2e_describe(&p, verdict, sizeof verdict);
    int ok = spawned && !p.timed_out && WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0 && strstr(out, pass) != NULL;
    int srv_ok = srv_status >= 0 && WIFEXITED(srv_status) && WEXITSTATUS(srv_status) == 0;
    if (!ok || !srv_ok) {
        fprintf(stderr, "===== %s/%s: program %s, server status 0x%x\n", runtimes[rt], name, verdict,
                (unsigned)srv_status);
        e2e_dump("program stdout", out, 6000);
        e2e_dump("program stderr", perr, 3000);
        e2e_dump("server log", log, 3000);
    }
    free(out);
    free(perr);
    free(log);
    e2e_dir_remove(dir);
    ck_assert_msg(ok, "%s/%s: %s, expected exit 0 and %s", runtimes[rt], name, verdict, pass);
    ck_assert_msg(srv_ok, "%s/%s: server status 0x%x after SIGTERM, expected exit 0", runtimes[rt], name,
                  (unsigned)srv_status);
}

static void run_blas(int rt, const char *name, const char *mode, enum transport t, int hide, const char *ldpath)
{
    run_prog(rt, "blas", name, mode, t, hide, ldpath);
}

/* Runs program in mode (NULL: none) with no CUDA library on the client. */
static void run_hidden(int rt, const char *program, const char *name, const char *mode, enum transport t)
{
    char lib[E2E_PATH_LEN];
    run_prog(rt, program, name, mode, t, 1, e2e_build_path("lib", lib, sizeof lib));
}

START_TEST(test_blas_tcp)
{
    run_blas(_i, "blas", NULL, VIA_TCP, 0, NULL);
}
END_TEST

START_TEST(test_blas_unix)
{
    run_blas(_i, "blas", NULL, VIA_UNIX, 0, NULL);
}
END_TEST

START_TEST(test_blas_footprint)
{
    run_blas(_i, "blas_footprint", "footprint", VIA_TCP, 0, NULL);
}
END_TEST

/* Level 1 in all four precisions (tests/blas/blas_l1.cu: the generated rows of
 * protocol/cublas.api), and what the shim refuses there; once with no CUDA library
 * on the client, so that no call can fall through to NVIDIA's cuBLAS. */
START_TEST(test_blas_l1)
{
    run_prog(_i, "blas_l1", "blas_l1", NULL, VIA_TCP, 0, NULL);
}
END_TEST

START_TEST(test_blas_l1_footprint)
{
    run_prog(_i, "blas_l1", "blas_l1_footprint", "footprint", VIA_UNIX, 0, NULL);
}
END_TEST

START_TEST(test_blas_l1_hidden_cuda)
{
    run_hidden(_i, "blas_l1", "blas_l1", NULL, VIA_UNIX);
}
END_TEST

/* Levels 2 and 3 in all four precisions (tests/blas/blas_l2.cu, blas_l3.cu), with
 * no CUDA library on the client. */
START_TEST(test_blas_l2_hidden_cuda)
{
    run_hidden(_i, "blas_l2", "blas_l2", NULL, VIA_TCP);
}
END_TEST

START_TEST(test_blas_l3_hidden_cuda)
{
    run_hidden(_i, "blas_l3", "blas_l3", NULL, VIA_UNIX);
}
END_TEST

/* No CUDA library on the client: libcublas.so.13 resolves to build/lib's link. */
START_TEST(test_blas_hidden_cuda)
{
    char lib[E2E_PATH_LEN];
    run_blas(_i, "blas", NULL, VIA_UNIX, 1, e2e_build_path("lib", lib, sizeof lib));
}
END_TEST

/* cuBLASLt: descriptors, heuristics, matmuls with every epilogue, no round trips. */
START_TEST(test_blaslt_tcp)
{
    run_prog(_i, "blaslt", "blaslt", NULL, VIA_TCP, 0, NULL);
}
END_TEST

START_TEST(test_blaslt_unix)
{
    run_prog(_i, "blaslt", "blaslt", NULL, VIA_UNIX, 0, NULL);
}
END_TEST

/* No CUDA library on the client: libcublasLt.so.13 resolves to build/lib's link. */
START_TEST(test_blaslt_hidden_cuda)
{
    run_hidden(_i, "blaslt", "blaslt", NULL, VIA_UNIX);
}
END_TEST

/* Without build/lib the hidden run cannot even load: the hiding covers libcublas. */
START_TEST(test_blas_hidden_needs_lib)
{
    char dir[64], prog[E2E_PATH_LEN], verdict[64];
    e2e_proc p;
    blas_path(_i, prog, sizeof prog);
    ck_assert(e2e_dir_make(dir, sizeof dir) == 0);
    e2e_proc_opts o = {"unix:/nonexistent", 1, 1};
    char *argv[] = {prog, NULL};
    ck_assert(e2e_run(&p, dir, "bare", prog, argv, &o) == 0);
    char *perr = e2e_read_file(p.err_path);
    e2e_describe(&p, verdict, sizeof verdict);
    e2e_dir_remove(dir);
    int failed_load = WIFEXITED(p.status) && WEXITSTATUS(p.status) == 127 && strstr(perr, "libcublas") != NULL;
    if (!failed_load)
        e2e_dump("program stderr", perr, 2000);
    free(perr);
    ck_assert_msg(failed_load, "%s/blas: expected the loader to miss libcublas.so.13, got %s", runtimes[_i], verdict);
}
END_TEST

/* Levels 1, 2 and 3 again through the calls' _64 twins (the programs' `64` mode),
 * with no CUDA library on the client. */
START_TEST(test_blas_levels_64_hidden_cuda)
{
    run_hidden(_i, "blas_l1", "blas_l1_64", "64", VIA_UNIX);
    run_hidden(_i, "blas_l2", "blas_l2_64", "64", VIA_TCP);
    run_hidden(_i, "blas_l3", "blas_l3_64", "64", VIA_UNIX);
}
END_TEST

/* The level-1 Ex calls in every data type they take (tests/blas/blas_ex.cu), and
 * through their _64 twins, with no CUDA library on the client. */
START_TEST(test_blas_ex_hidden_cuda)
{
    run_hidden(_i, "blas_ex", "blas_ex", NULL, VIA_TCP);
    run_hidden(_i, "blas_ex", "blas_ex_64", "64", VIA_UNIX);
}
END_TEST

/* Batched LU, solve and inverse, and batched QR and least squares, in all four
 * precisions (tests/blas/blas_lu.cu, blas_qr.cu), with
 * no CUDA library on the client; and the pointer arrays and items the shim refuses. */
START_TEST(test_blas_lu_hidden_cuda)
{
    run_hidden(_i, "blas_lu", "blas_lu", NULL, VIA_TCP);
    run_hidden(_i, "blas_qr", "blas_qr", NULL, VIA_UNIX);
}
END_TEST

START_TEST(test_blas_lu_footprint)
{
    run_prog(_i, "blas_lu", "blas_lu_footprint", "footprint", VIA_UNIX, 0, NULL);
}
END_TEST

/* Batched gemv and the strided batches of gemv and complex gemm
 * (tests/blas/blas_batch.cu), directly and through their _64 twins with no CUDA
 * library on the client, and the strided operands and pointer arrays the shim refuses. */
START_TEST(test_blas_batch_hidden_cuda)
{
    run_hidden(_i, "blas_batch", "blas_batch", NULL, VIA_UNIX);
    run_hidden(_i, "blas_batch", "blas_batch_64", "64", VIA_TCP);
}
END_TEST

START_TEST(test_blas_batch_footprint)
{
    run_prog(_i, "blas_batch", "blas_batch_footprint", "footprint", VIA_UNIX, 0, NULL);
}
END_TEST

/* The legacy API of cublas.h (tests/blas/blas_legacy.cu), with no CUDA library on
 * the client: every legacy call must be the shim's. */
START_TEST(test_blas_legacy_hidden_cuda)
{
    run_hidden(_i, "blas_legacy", "blas_legacy", NULL, VIA_TCP);
}
END_TEST

static Suite *e2e_blas_suite(void)
{
    Suite *s = suite_create("e2e_blas");
    TCase *t = tcase_create("blas");
    tcase_set_timeout(t, 180);
    tcase_add_loop_test(t, test_blas_tcp, 0, NRUNTIMES);
    tcase_add_loop_test(t, test_blas_unix, 0, NRUNTIMES);
    tcase_add_loop_test(t, test_blas_footprint, 0, NRUNTIMES);
    tcase_add_loop_test(t, test_blas_hidden_cuda, 0, NRUNTIMES);
    tcase_add_loop_test(t, test_blas_hidden_needs_lib, 0, NRUNTIMES);
    tcase_add_loop_test(t, test_blas_l1, 0, NRUNTIMES);
    tcase_add_loop_test(t, test_blas_l1_footprint, 0, NRUNTIMES);
    tcase_add_loop_test(t, test_blas_l1_hidden_cuda, 0, NRUNTIMES);
    tcase_add_loop_test(t, test_blas_l2_hidden_cuda, 0, NRUNTIMES);
    tcase_add_loop_test(t, test_blas_l3_hidden_cuda, 0, NRUNTIMES);
    tcase_add_loop_test(t, test_blas_levels_64_hidden_cuda, 0, NRUNTIMES);
    tcase_add_loop_test(t, test_blas_lu_hidden_cuda, 0, NRUNTIMES);
    tcase_add_loop_test(t, test_blas_ex_hidden_cuda, 0, NRUNTIMES);
    tcase_add_loop_test(t, test_blas_lu_footprint, 0, NRUNTIMES);
    tcase_add_loop_test(t, test_blas_batch_hidden_cuda, 0, NRUNTIMES);
    tcase_add_loop_test(t, test_blas_batch_footprint, 0, NRUNTIMES);
    tcase_add_loop_test(t, test_blas_legacy_hidden_cuda, 0, NRUNTIMES);
    tcase_add_loop_test(t, test_blaslt_tcp, 0, NRUNTIMES);
    tcase_add_loop_test(t, test_blaslt_unix, 0, NRUNTIMES);
    tcase_add_loop_test(t, test_blaslt_hidden_cuda, 0, NRUNTIMES);
    suite_add_tcase(s, t);
    return s;
}

CRM_CHECK_MAIN(e2e_blas_suite)
