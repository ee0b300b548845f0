/* check_e2e_kernels.c -- end-to-end suite of kernel launches: the nvcc-built
 * programs of tests/kernels run through the shim against a real cudarem-server on
 * loopback (emulated device, CPU kernels from libktest_cpu_kernels.so given with
 * --emu-kernels, module cache in the scratch directory). Each must exit 0 with
 * "PASS <name>"; some also leave a known line in the server log. The cache test
 * runs a program twice and requires the second session to ship no fatbinary. */
#include "tests/e2e/e2e_harness.h"
#include "tests/unit/crm_check.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

typedef struct kserver {
    char dir[64];
    char cache_arg[128];
    char kernels[E2E_PATH_LEN];
    char *extra[5];
    e2e_server srv;
} kserver;

static void kserver_start(kserver *k)
{
    char err[512];
    ck_assert_msg(e2e_dir_make(k->dir, sizeof k->dir) == 0, "mkdtemp failed");
    snprintf(k->cache_arg, sizeof k->cache_arg, "%s/cache", k->dir);
    e2e_build_path("kernels/libktest_cpu_kernels.so", k->kernels, sizeof k->kernels);
    k->extra[0] = "--emu-kernels";
    k->extra[1] = k->kernels;
    k->extra[2] = "--cache-dir";
    k->extra[3] = k->cache_arg;
    k->extra[4] = NULL;
    e2e_server_extra_args(k->extra);
    int rc = e2e_server_start(&k->srv, k->dir, 0, err, sizeof err);
    e2e_server_extra_args(NULL);
    if (rc != 0) {
        char *log = e2e_read_file(k->srv.log_path);
        e2e_dump("server log", log, 4000);
        free(log);
        e2e_dir_remove(k->dir);
        ck_abort_msg("server start: %s", err);
    }
}

/* Runs build/kernels/PROG (with ARG1 when not NULL) and requires "PASS name". */
static void krun(kserver *k, const char *prog, const char *name, const char *arg1, const char *tag)
{
    char path[E2E_PATH_LEN], pass[96], verdict[64];
    e2e_proc p;
    char *argv[] = {path, (char *)arg1, NULL};
    snprintf(pass, sizeof pass, "PASS %s\n", name);
    e2e_build_path(prog, path, sizeof path);
    e2e_proc_opts o = {k->srv.tcp_addr, 1, 0};
    int spawned = e2e_run(&p, k->dir, tag, path, argv, &o) == 0;
    char *out = e2e_read_file(p.out_path), *perr = e2e_read_file(p.err_path);
    int ok = spawned && !p.timed_out && WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0 && strstr(out, pass);
    if (!ok) {
        char *log = e2e_read_file(k->srv.log_path);
        e2e_describe(&p, verdict, sizeof verdict);
        fprintf(stderr, "===== %s: %s\n", prog, verdict);
        e2e_dump("program stdout", out, 6000);
        e2e_dump("program stderr", perr, 3000);
        e2e_dump("server log", log, 4000);
        free(log);
    }
    free(out);
    free(perr);
    ck_assert_msg(ok, "%s did not pass", prog);
}

/* Stops the server (it must exit 0) and returns its log (caller frees). */
static char *kserver_stop(kserver *k)
{
    int st = e2e_server_stop(&k->srv);
    char *log = e2e_read_file(k->srv.log_path);
    if (!(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0))
        e2e_dump("server log", log, 4000);
    ck_assert_msg(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "server did not stop cleanly");
    return log;
}

static void kserver_done(kserver *k, char *log)
{
    free(log);
    e2e_dir_remove(k->dir);
}

static void run_one(const char *prog, const char *name)
{
    kserver k;
    char rel[64];
    snprintf(rel, sizeof rel, "kernels/%s", prog);
    kserver_start(&k);
    krun(&k, rel, name, NULL, prog);
    kserver_done(&k, kserver_stop(&k));
}

START_TEST(test_vadd) { run_one("vadd", "vadd"); }
END_TEST
START_TEST(test_saxpy) { run_one("saxpy", "saxpy"); }
END_TEST
START_TEST(test_scalars) { run_one("scalars", "scalars"); }
END_TEST
START_TEST(test_symbols) { run_one("symbols", "symbols"); }
END_TEST
START_TEST(test_multi_tu) { run_one("multi_tu", "multi_tu"); }
END_TEST
START_TEST(test_compressed) { run_one("vadd_compressed", "vadd_compressed"); }
END_TEST
START_TEST(test_loop) { run_one("loop", "loop"); }
END_TEST

START_TEST(test_dlopen)
{
    kserver k;
    char lib[E2E_PATH_LEN];
    e2e_build_path("kernels/libktest_shlib.so", lib, sizeof lib);
    kserver_start(&k);
    krun(&k, "kernels/dlopen", "dlopen", lib, "dlopen");
    kserver_done(&k, kserver_stop(&k));
}
END_TEST

/* The emulated device refuses a PTX-only module with a clear log line. */
START_TEST(test_ptx_only)
{
    kserver k;
    kserver_start(&k);
    krun(&k, "kernels/vadd_ptx", "vadd_ptx", NULL, "vadd_ptx");
    char *log = kserver_stop(&k);
    ck_assert_msg(strstr(log, "only PTX") != NULL, "no PTX-only line in the server log");
    kserver_done(&k, log);
}
END_TEST

/* Bad launches fail at the call; a kernel without a CPU implementation is named. */
START_TEST(test_badlaunch)
{
    kserver k;
    char line[128];
    kserver_start(&k);
    krun(&k, "kernels/badlaunch", "badlaunch", NULL, "badlaunch");
    char *log = kserver_stop(&k);
    snprintf(line, sizeof line, "kernel %s has no CPU implementation", "_Z11no_cpu_implPi");
    ck_assert_msg(e2e_count_lines_with(log, line) == 1, "missing or repeated line: %s", line);
    kserver_done(&k, log);
}
END_TEST

static unsigned long long stat_h2d(const char *path)
{
    char *s = e2e_read_file(path), *p = strstr(s, "\"bytes_h2d\": ");
    unsigned long long v = p ? strtoull(p + 13, NULL, 10) : 0;
    ck_assert_msg(p != NULL, "no statistics in %s", path);
    free(s);
    return v;
}

static int count_cached(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;)
        n += strstr(e->d_name, ".fatbin") != NULL;
    if (d != NULL)
        closedir(d);
    return n;
}

/* The second session with the same module sends only its digest. */
START_TEST(test_cache)
{
    kserver k;
    char s1[128], s2[128];
    kserver_start(&k);
    snprintf(s1, sizeof s1, "%s/stats1.json", k.dir);
    snprintf(s2, sizeof s2, "%s/stats2.json", k.dir);
    setenv("CUDAREM_STATS", s1, 1);
    krun(&k, "kernels/vadd", "vadd", NULL, "first");
    setenv("CUDAREM_STATS", s2, 1);
    krun(&k, "kernels/vadd", "vadd", NULL, "second");
    unsetenv("CUDAREM_STATS");
    int cached = count_cached(k.cache_arg);
    unsigned long long first = stat_h2d(s1), second = stat_h2d(s2);
    kserver_done(&k, kserver_stop(&k));
    ck_assert_msg(cached == 1, "%d images in the cache", cached);
    ck_assert_msg(first > second + 1000, "the second session shipped the module again (%llu vs %llu bytes)", first,
                  second);
}
END_TEST

static Suite *kernels_suite(void)
{
    Suite *s = suite_create("e2e_kernels");
    TCase *tc = tcase_create("programs");
    tcase_set_timeout(tc, 180);
    tcase_add_test(tc, test_vadd);
    tcase_add_test(tc, test_saxpy);
    tcase_add_test(tc, test_scalars);
    tcase_add_test(tc, test_symbols);
    tcase_add_test(tc, test_multi_tu);
    tcase_add_test(tc, test_dlopen);
    tcase_add_test(tc, test_compressed);
    tcase_add_test(tc, test_ptx_only);
    tcase_add_test(tc, test_badlaunch);
    tcase_add_test(tc, test_loop);
    tcase_add_test(tc, test_cache);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(kernels_suite)
