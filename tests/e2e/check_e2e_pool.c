/* check_e2e_pool.c -- end-to-end suite: two cudarem-servers on loopback as one pool
 * (client/crm_pool.h). Server A has two emulated devices of 2 GiB on TCP, server B
 * one of 1 GiB on a Unix socket, so a device's total memory says which server a
 * device number reached. tests/cuda/pool (shared and static runtime) allocates,
 * copies and synchronises on every device and between every pair of them; the
 * order follows the list, a server's GPU list after '@', CUDA_VISIBLE_DEVICES and
 * CUDAREM_PICK=least-loaded; a server that cannot be used fails the program with a
 * message naming it; losing one server mid-program fails only the calls on its
 * devices; eight threads on devices of both servers at once run right;
 * cudarem-smi given the pool's list shows the program's session on each server;
 * PyTorch and CuPy see the pool, copy between its servers and
 * compute on every device (tests/python/torch_pool.py, cupy_pool.py). The program
 * and the frameworks run again with the servers placing memory the way a GPU
 * server does (CUDAREM_SLOT_VMM=1). */
#include "tests/e2e/e2e_harness.h"
#include "tests/unit/crm_check.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define POOL_TIMEOUT_MS 300000 /* torch's import and first calls, under ASan too */

static char dir_a[64], dir_b[64];
static e2e_server srv_a, srv_b;
static char pool[2 * E2E_PATH_LEN + 8]; /* "A,B" */

/* Starts a server with ndev emulated devices of mem each; aborts on failure. */
static void start(e2e_server *s, char *dir, size_t len, int ndev, const char *mem)
{
    char err[512];
    ck_assert(e2e_dir_make(dir, len) == 0);
    setenv("CUDAREM_EMU_MEM", mem, 1);
    int rc = e2e_server_start_logged(s, dir, ndev, err, sizeof err);
    unsetenv("CUDAREM_EMU_MEM");
    ck_assert_msg(rc == 0, "server start: %s", err);
}

static void setup(void)
{
    start(&srv_a, dir_a, sizeof dir_a, 2, "2G");
    start(&srv_b, dir_b, sizeof dir_b, 1, "1G");
    snprintf(pool, sizeof pool, "%s,%s", srv_a.tcp_addr, srv_b.unix_addr);
}

/* The servers place pooled sessions' memory as on a GPU (server/crm_slot.h):
 * virtual memory mapped into reservations at the slot's addresses. */
static void setup_slot_vmm(void)
{
    setenv("CUDAREM_SLOT_VMM", "1", 1);
    setup();
    unsetenv("CUDAREM_SLOT_VMM");
    setenv("CRM_POOL_SLOT_VMM", "1", 1); /* what the checks expect */
}

static void teardown(void)
{
    unsetenv("CRM_POOL_SLOT_VMM");
    e2e_server_stop(&srv_a);
    e2e_server_stop(&srv_b);
    e2e_dir_remove(dir_a);
    e2e_dir_remove(dir_b);
}

/* Runs build/PROG over servers with POOL_MEM_MIB=mib; 1 when it printed PASS and
 * exited 0, else dumps its output. Its standard error goes to *err when not NULL. */
static int run_pool(const char *prog, const char *servers, const char *mib, char **err)
{
    char path[E2E_PATH_LEN], verdict[64];
    e2e_proc p;
    e2e_build_path(prog, path, sizeof path);
    setenv("POOL_MEM_MIB", mib, 1);
    char *argv[] = {path, NULL};
    e2e_proc_opts o = {servers, 1, 0};
    int ran = e2e_run(&p, dir_a, "pool", path, argv, &o) == 0;
    unsetenv("POOL_MEM_MIB");
    char *out = e2e_read_file(p.out_path), *perr = e2e_read_file(p.err_path);
    int passed = ran && WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0 && strstr(out, "PASS pool") != NULL;
    if (!passed) {
        fprintf(stderr, "===== %s over %s (POOL_MEM_MIB=%s): %s\n", prog, servers, mib,
                e2e_describe(&p, verdict, sizeof verdict));
        e2e_dump("stdout", out, 4000);
        e2e_dump("stderr", perr, 2000);
    }
    free(out);
    if (err != NULL)
        *err = perr;
    else
        free(perr);
    return passed;
}

static const char *const runtimes[] = {"cuda/pool", "cuda-static/pool"};

/* Every device of both servers, in the listed order; each server saw the session;
 * with CUDAREM_SLOT_VMM=1 each mapped it in its own address slot. */
START_TEST(test_pool_runs_on_both_servers)
{
    ck_assert_msg(run_pool(runtimes[_i], pool, "2048,2048,1024", NULL), "%s over the pool failed", runtimes[_i]);
    /* admitted sessions' ends (a connection never admitted, as the harness's
     * readiness probe, logs its end at debug only); a session logs its end after its
     * client has gone, so the count is awaited, then read once more for extras */
    int seen_a = e2e_wait_log_lines(srv_a.log_path, " end: peer", 1, 10000);
    int seen_b = e2e_wait_log_lines(srv_b.log_path, " end: peer", 1, 10000);
    char *log_a = e2e_read_file(srv_a.log_path), *log_b = e2e_read_file(srv_b.log_path);
    seen_a = e2e_count_lines_with(log_a, " end: peer");
    seen_b = e2e_count_lines_with(log_b, " end: peer");
    int mapped_a = e2e_count_lines_with(log_a, "mapped in address slot 0,");
    int mapped_b = e2e_count_lines_with(log_b, "mapped in address slot 1,");
    free(log_a);
    free(log_b);
    ck_assert_msg(seen_a == 1 && seen_b == 1, "each server ends one session (%d, %d)", seen_a, seen_b);
    int vmm = getenv("CRM_POOL_SLOT_VMM") != NULL;
    ck_assert_msg(mapped_a == vmm && mapped_b == vmm, "slots mapped as on a GPU: %d and %d, expected %d", mapped_a,
                  mapped_b, vmm);
}
END_TEST

/* The order: B's device then A's device 1 by '@'; CUDA_VISIBLE_DEVICES over the
 * pooled list, stopping at an index the pool does not have. */
START_TEST(test_pool_order_and_visible_devices)
{
    char listed[sizeof pool];
    snprintf(listed, sizeof listed, "%s,%s@1", srv_b.unix_addr, srv_a.tcp_addr);
    ck_assert(run_pool("cuda/pool", listed, "1024,2048", NULL));
    setenv("CUDA_VISIBLE_DEVICES", "2,0", 1);
    int reordered = run_pool("cuda/pool", pool, "1024,2048", NULL);
    setenv("CUDA_VISIBLE_DEVICES", "1,7,0", 1);
    int cut = run_pool("cuda/pool", pool, "2048", NULL);
    unsetenv("CUDA_VISIBLE_DEVICES");
    ck_assert_msg(reordered, "CUDA_VISIBLE_DEVICES=2,0");
    ck_assert_msg(cut, "CUDA_VISIBLE_DEVICES=1,7,0 keeps device 1 only");
}
END_TEST

/* A session holding memory on A's device 0: least-loaded puts it last, keeping the
 * listed order among the idle ones; without CUDAREM_PICK the list's order stays. */
START_TEST(test_pool_least_loaded)
{
    char path[E2E_PATH_LEN];
    e2e_proc hog;
    e2e_build_path("cuda/hog", path, sizeof path);
    char *argv[] = {path, "104857600", NULL};
    e2e_proc_opts o = {srv_a.unix_addr, 1, 0};
    ck_assert_int_eq(e2e_spawn(&hog, dir_a, "hog", path, argv, &o), 0);
    ck_assert_msg(e2e_wait_output(&hog, "allocated", 30000) == 0, "hog did not allocate");
    int listed = run_pool("cuda/pool", pool, "2048,2048,1024", NULL);
    setenv("CUDAREM_PICK", "least-loaded", 1);
    int picked = run_pool("cuda/pool", pool, "2048,1024,2048", NULL);
    unsetenv("CUDAREM_PICK");
    kill(hog.pid, SIGKILL);
    e2e_wait(&hog, 10000);
    ck_assert_msg(listed, "without CUDAREM_PICK the listed order");
    ck_assert_msg(picked, "CUDAREM_PICK=least-loaded puts the busy device last");
}
END_TEST

/* A pool entry that cannot be used fails every CUDA call, with a message naming
 * it: an address nobody listens on, a GPU the server lacks, a bad GPU list. */
START_TEST(test_pool_bad_entries)
{
    static const struct {
        const char *suffix, *needle;
    } bad[] = {
        {",unix:/nonexistent/cudarem.sock", "cannot use cudarem server unix:/nonexistent/cudarem.sock"},
        {"@5", "has no GPU 5"},
        {"@0+x", "cannot read CUDAREM_SERVER"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char servers[sizeof pool + 64], *err = NULL;
        snprintf(servers, sizeof servers, "%s%s", srv_a.tcp_addr, bad[i].suffix);
        int passed = run_pool("cuda/pool", servers, "", &err);
        int named = err != NULL && strstr(err, "CUDA calls will fail") != NULL && strstr(err, bad[i].needle);
        if (!named)
            e2e_dump("stderr", err, 2000);
        free(err);
        ck_assert_msg(!passed, "%s: the program must fail", servers);
        ck_assert_msg(named, "%s: stderr names '%s'", servers, bad[i].needle);
    }
}
END_TEST

/* Eight threads at once, the odd ones on device 1 (server A's), the even ones on
 * device 0 (server B's): tests/cuda/threads over the pool "B,A". */
START_TEST(test_pool_threads)
{
    char servers[sizeof pool + 8], *err = NULL;
    snprintf(servers, sizeof servers, "%s,%s", srv_b.unix_addr, srv_a.tcp_addr);
    int rc = e2e_client_status(dir_a, "threads", servers, "threads", &err);
    if (rc != 0)
        e2e_dump("threads stderr", err, 3000);
    free(err);
    ck_assert_msg(rc == 0, "tests/cuda/threads over the pool B,A: status %d", rc);
}
END_TEST

/* Server B dies while a program holds memory on both: calls on B's device fail
 * with cudaErrorDevicesUnavailable and a line naming B; A still serves it. */
START_TEST(test_pool_losing_one_server)
{
    char path[E2E_PATH_LEN], flag[E2E_PATH_LEN + 16], verdict[64];
    e2e_proc p;
    snprintf(flag, sizeof flag, "%s/lost", dir_a);
    setenv("POOL_LOSE_LAST", flag, 1);
    setenv("POOL_MEM_MIB", "2048,2048,1024", 1);
    e2e_build_path("cuda/pool", path, sizeof path);
    char *argv[] = {path, NULL};
    e2e_proc_opts o = {pool, 1, 0};
    int spawned = e2e_spawn(&p, dir_a, "pool-lose", path, argv, &o) == 0;
    unsetenv("POOL_LOSE_LAST");
    unsetenv("POOL_MEM_MIB");
    ck_assert(spawned);
    int ready = e2e_wait_output(&p, "ready", 30000) == 0;
    e2e_server_kill(&srv_b);
    FILE *f = fopen(flag, "w");
    if (f != NULL)
        fclose(f);
    e2e_wait(&p, 60000);
    char *out = e2e_read_file(p.out_path), *err = e2e_read_file(p.err_path);
    int passed = ready && WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0 && strstr(out, "PASS pool") != NULL;
    int named = strstr(err, "lost cudarem server ") != NULL && strstr(err, srv_b.unix_addr) != NULL;
    if (!passed || !named) {
        e2e_dump("stdout", out, 3000);
        e2e_dump("stderr", err, 3000);
    }
    free(out);
    free(err);
    ck_assert_msg(passed, "the pool program after losing server B: %s", e2e_describe(&p, verdict, sizeof verdict));
    ck_assert_msg(named, "the lost server is named");
}
END_TEST

/* Occurrences of needle in text. */
static int count_of(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(text, needle); p != NULL; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* cudarem-smi over the pool, as CUDAREM_SERVER lists it ('@' included), while a
 * program holds a session on each server: both servers answer, each lists one. */
START_TEST(test_pool_smi)
{
    char path[E2E_PATH_LEN], smi[E2E_PATH_LEN], servers[sizeof pool + 8], verdict[64];
    e2e_proc prog, p;
    snprintf(servers, sizeof servers, "%s@1,%s", srv_a.unix_addr, srv_b.unix_addr);
    e2e_build_path("cuda/copyloop", path, sizeof path);
    char *argv[] = {path, NULL};
    e2e_proc_opts o = {servers, 1, 0};
    ck_assert_int_eq(e2e_spawn(&prog, dir_a, "copyloop", path, argv, &o), 0);
    int started = e2e_wait_output(&prog, "started", 20000) == 0;
    e2e_sleep_ms(300); /* a few batches, so each session's counters are published */
    e2e_build_path("cudarem-smi", smi, sizeof smi);
    char *smi_argv[] = {smi, "-s", servers, "--json", NULL};
    e2e_proc_opts none = {NULL, 0, 0};
    int ran = e2e_run(&p, dir_a, "smi", smi, smi_argv, &none) == 0;
    kill(prog.pid, SIGKILL);
    e2e_wait(&prog, 10000);
    char *out = e2e_read_file(p.out_path);
    int answered = ran && WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0;
    int listed = count_of(out, "\"backend\": \"emu\"") == 2 && count_of(out, "\"sessions\": [{\"id\"") == 2 &&
                 count_of(out, "\"index\": 1, \"name\": \"cudarem emulated device (CPU)\", \"memory_total\": "
                               "2147483648, \"memory_used\": 1048576") == 1; /* '@1': A's device 1 */
    if (!answered || !listed)
        e2e_dump("cudarem-smi", out, 4000);
    free(out);
    ck_assert_msg(started, "copyloop did not start over the pool");
    ck_assert_msg(answered, "cudarem-smi: %s", e2e_describe(&p, verdict, sizeof verdict));
    ck_assert_msg(listed, "both servers answer, each with the program's session");
}
END_TEST

static const char *pyenv_dir(void)
{
    const char *d = getenv("CUDAREM_PYENV");
    return d != NULL && d[0] != '\0' ? d : E2E_PYENV;
}

static const char *const frameworks[] = {"torch_pool", "cupy_pool"};

/* PyTorch and CuPy over the pool: tests/python/torch_pool.py, cupy_pool.py. */
START_TEST(test_pool_frameworks)
{
    char python[E2E_PATH_LEN], script[E2E_PATH_LEN], ldpath[2 * E2E_PATH_LEN + 64], verdict[64], pass[64];
    const char *name = frameworks[_i];
    struct stat st;
    e2e_proc p;
    snprintf(python, sizeof python, "%s/bin/python", pyenv_dir());
    ck_assert_msg(stat(python, &st) == 0, "no Python environment at %s (run tools/python-env.sh)", pyenv_dir());
    snprintf(script, sizeof script, "%s/tests/python/%s.py", e2e_source_dir(), name);
    snprintf(pass, sizeof pass, "PASS %s", name);
    e2e_client_library_path(e2e_framework_library_path(pyenv_dir(), ldpath, sizeof ldpath));
    setenv("POOL_MEM_MIB", "2048,2048,1024", 1);
    char *argv[] = {python, script, NULL};
    e2e_proc_opts o = {pool, 1, 0};
    int spawned = e2e_spawn(&p, dir_a, name, python, argv, &o) == 0;
    if (spawned)
        e2e_wait(&p, POOL_TIMEOUT_MS);
    unsetenv("POOL_MEM_MIB");
    e2e_client_library_path(NULL);
    char *out = e2e_read_file(p.out_path), *perr = e2e_read_file(p.err_path);
    int passed = spawned && !p.timed_out && WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0 &&
                 strstr(out, pass) != NULL;
    if (!passed) {
        e2e_dump("stdout", out, 6000);
        e2e_dump("stderr", perr, 3000);
    }
    free(out);
    free(perr);
    ck_assert_msg(passed, "%s.py over the pool: %s", name, e2e_describe(&p, verdict, sizeof verdict));
}
END_TEST

static Suite *crm_pool_suite(void)
{
    Suite *s = suite_create("e2e_pool");
    TCase *tc = tcase_create("pool");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, test_pool_runs_on_both_servers, 0, (int)(sizeof runtimes / sizeof runtimes[0]));
    tcase_add_test(tc, test_pool_order_and_visible_devices);
    tcase_add_test(tc, test_pool_least_loaded);
    tcase_add_test(tc, test_pool_bad_entries);
    tcase_add_test(tc, test_pool_smi);
    tcase_add_test(tc, test_pool_losing_one_server);
    tcase_add_test(tc, test_pool_threads);
    tcase_add_loop_test(tc, test_pool_frameworks, 0, (int)(sizeof frameworks / sizeof frameworks[0]));
    suite_add_tcase(s, tc);
    TCase *vmm = tcase_create("slot_vmm");
    tcase_add_checked_fixture(vmm, setup_slot_vmm, teardown);
    tcase_set_timeout(vmm, 600);
    tcase_add_loop_test(vmm, test_pool_runs_on_both_servers, 0, (int)(sizeof runtimes / sizeof runtimes[0]));
    tcase_add_loop_test(vmm, test_pool_frameworks, 0, (int)(sizeof frameworks / sizeof frameworks[0]));
    suite_add_tcase(s, vmm);
    return s;
}

CRM_CHECK_MAIN(crm_pool_suite)
