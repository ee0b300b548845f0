/* check_e2e_dnn.c -- end-to-end suite of the cuDNN remoting: tests/dnn/dnn_net.cu (an
 * nvcc program linked with -lcudnn) runs through the shim against a real
 * cudarem-server on the emulated device, over TCP with the CUDA libraries visible
 * and over a Unix socket with them hidden, and so do tests/dnn/dnn_legacy.cu and
 * dnn_bn_ex.cu, dnn_dropout.cu, dnn_st.cu, dnn_ctc.cu and dnn_norm.cu (libcudnn.so.9
 * then comes from build/lib, a link to the shim); and
 * descriptor work is shown to cost no round
 * trip by comparing the client's counters (CUDAREM_STATS) of two runs. Each test
 * runs the program built with the shared runtime (build/dnn) and with nvcc's
 * default static runtime (build/dnn-static).
 */
#include "tests/e2e/e2e_harness.h"
#include "tests/unit/crm_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* The program's build directories, one per runtime; tests loop over them. */
static const char *const runtimes[] = {"dnn", "dnn-static"};
#define NRUNTIMES ((int)(sizeof runtimes / sizeof runtimes[0]))

/* Runs build/RUNTIME/NAME (RUNTIME: runtimes[RT]) with ARGV over the chosen
 * transport; returns its stdout (malloc'd) and fills *trips from CUDAREM_STATS.
 * Fails the test unless it printed PASS. */
static char *run_prog(int rt, const char *name, char **args, int unix_socket, int hide, unsigned long long *trips)
{
    char dir[64], err[512], prog[E2E_PATH_LEN], stats[E2E_PATH_LEN + 16], lib[E2E_PATH_LEN], verdict[64], rel[64];
    char *argv[4] = {prog, args[0], args[1], NULL};
    e2e_server srv;
    e2e_proc p;
    ck_assert(e2e_dir_make(dir, sizeof dir) == 0);
    ck_assert_msg(e2e_server_start(&srv, dir, 0, err, sizeof err) == 0, "server start: %s", err);
    snprintf(rel, sizeof rel, "%s/%s", runtimes[rt], name);
    e2e_build_path(rel, prog, sizeof prog);
    e2e_build_path("lib", lib, sizeof lib);
    snprintf(stats, sizeof stats, "%s/stats.json", dir);
    /* Inherited by the client only: the server is already running. */
    setenv("CUDAREM_STATS", stats, 1);
    if (hide)
        setenv("LD_LIBRARY_PATH", lib, 1);
    e2e_proc_opts o = {unix_socket ? srv.unix_addr : srv.tcp_addr, 1, hide};
    int ran = e2e_run(&p, dir, name, prog, argv, &o) == 0;
    unsetenv("CUDAREM_STATS");
    unsetenv("LD_LIBRARY_PATH");
    int srv_status = e2e_server_stop(&srv);
    char *out = e2e_read_file(p.out_path), *perr = e2e_read_file(p.err_path), *json = e2e_read_file(stats);
    e2e_describe(&p, verdict, sizeof verdict);
    int passed = ran && !p.timed_out && WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0 && strstr(out, "PASS");
    int parsed = sscanf(json, "{\"round_trips\": %llu", trips) == 1;
    if (!passed || !parsed) {
        char *log = e2e_read_file(srv.log_path);
        e2e_dump("stdout", out, 6000);
        e2e_dump("stderr", perr, 3000);
        e2e_dump("server log", log, 3000);
        free(log);
    }
    free(perr);
    free(json);
    e2e_dir_remove(dir);
    ck_assert_msg(passed, "%s %s: %s", rel, args[0] ? args[0] : "", verdict);
    ck_assert_msg(parsed, "no statistics written to CUDAREM_STATS");
    ck_assert_msg(srv_status >= 0 && WIFEXITED(srv_status) && WEXITSTATUS(srv_status) == 0,
                  "server did not exit cleanly after the session");
    return out;
}

START_TEST(test_network_over_tcp)
{
    char *args[] = {"net", NULL};
    unsigned long long trips;
    free(run_prog(_i, "dnn_net", args, 0, 0, &trips));
}
END_TEST

START_TEST(test_network_with_cuda_hidden)
{
    char *args[] = {"net", NULL};
    unsigned long long trips;
    free(run_prog(_i, "dnn_net", args, 1, 1, &trips));
}
END_TEST

START_TEST(test_descriptors_cost_no_round_trip)
{
    char *base[] = {"base", NULL}, *desc[] = {"desc", "500"};
    unsigned long long t_base, t_desc;
    free(run_prog(_i, "dnn_net", base, 1, 0, &t_base));
    free(run_prog(_i, "dnn_net", desc, 1, 0, &t_desc));
    /* 500 rounds of 6 descriptors created, set, read and destroyed: not one message. */
    ck_assert_uint_eq(t_desc, t_base);
}
END_TEST

/* LRN, the fused convolution + bias + activation and reductions, with NVIDIA's
 * libraries hidden: every answer comes from the server. */
START_TEST(test_legacy_calls)
{
    char *args[] = {NULL, NULL};
    unsigned long long trips;
    free(run_prog(_i, "dnn_legacy", args, 1, 1, &trips));
}
END_TEST

/* Self-checking programs run with NVIDIA's libraries hidden from the client, each
 * with both runtimes (iteration _i: runtime _i % NRUNTIMES, program _i / NRUNTIMES):
 * batch normalisation's Ex forms as PyTorch calls them; dropout (the state seeded
 * on the device by Set and advanced by each forward pass, the mask kept for
 * backward); the spatial transformer (grid generator and sampler, both passes);
 * the CTC loss (labels from host memory, against a brute-force reference); the v8
 * normalization calls (against the batch-norm calls that compute the same). */
static const char *const crm__self_checking[] = {"dnn_bn_ex", "dnn_dropout", "dnn_st", "dnn_ctc", "dnn_norm"};
#define NSELF ((int)(sizeof crm__self_checking / sizeof crm__self_checking[0]))

START_TEST(test_self_checking)
{
    char *args[] = {NULL, NULL};
    unsigned long long trips;
    free(run_prog(_i % NRUNTIMES, crm__self_checking[_i / NRUNTIMES], args, 0, 1, &trips));
}
END_TEST

static Suite *crm_e2e_dnn_suite(void)
{
    Suite *s = suite_create("e2e_dnn");
    TCase *tc = tcase_create("dnn_net");
    tcase_set_timeout(tc, 180);
    tcase_add_loop_test(tc, test_network_over_tcp, 0, NRUNTIMES);
    tcase_add_loop_test(tc, test_network_with_cuda_hidden, 0, NRUNTIMES);
    tcase_add_loop_test(tc, test_descriptors_cost_no_round_trip, 0, NRUNTIMES);
    tcase_add_loop_test(tc, test_legacy_calls, 0, NRUNTIMES);
    tcase_add_loop_test(tc, test_self_checking, 0, NRUNTIMES * NSELF);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(crm_e2e_dnn_suite)
