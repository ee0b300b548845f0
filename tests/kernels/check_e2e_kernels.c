/* check_e2e_kernels.c -- end-to-end suite of kernel launches: the nvcc-built
 * programs of tests/kernels run through the shim against a real cudarem-server on
 * loopback (emulated device, module cache in the scratch directory), their kernels
 * run by the CPU implementations of libktest_cpu_kernels.so (--emu-kernels) or by
 * the PTX engine from the modules' PTX (no --emu-kernels). Each must exit 0 with
 * "PASS <name>"; some also leave a known line in the server log. Every program runs
 * in each variant: built with the shared runtime (build/kernels) and with nvcc's
 * default static runtime (build/kernels-static), over TCP and over a Unix socket,
 * with CPU kernels, and over a Unix socket on the PTX engine.
 * The cache test runs a program twice and requires the second session to ship no
 * fatbinary. Some programs also run in process on the emulated device
 * (LD_PRELOAD=libcudarem-emu.so), the local baseline `make bench` compares with. */
#include "tests/e2e/e2e_harness.h"
#include "tests/unit/crm_check.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

enum transport { VIA_TCP, VIA_UNIX };

/* A build of the programs and the address the client uses. */
typedef struct kvariant {
    const char *dir;         /* build directory: one per runtime */
    enum transport t;
    int engine;              /* 1: no --emu-kernels, every kernel on the PTX engine */
} kvariant;

static const kvariant variants[] = {
    {"kernels", VIA_TCP, 0},
    {"kernels", VIA_UNIX, 0},
    {"kernels-static", VIA_TCP, 0},
    {"kernels-static", VIA_UNIX, 0},
    {"kernels", VIA_UNIX, 1},
    {"kernels-static", VIA_UNIX, 1},
};
#define NVARIANTS ((int)(sizeof variants / sizeof variants[0]))

typedef struct kserver {
    char dir[64];
    char cache_arg[128];
    char kernels[E2E_PATH_LEN];
    char *extra[5];
    const kvariant *v;       /* programs and transport of krun */
    e2e_server srv;
} kserver;

/* Starts a server; krun then runs programs of variant V. */
static void kserver_start(kserver *k, const kvariant *v)
{
    char err[512];
    ck_assert_msg(e2e_dir_make(k->dir, sizeof k->dir) == 0, "mkdtemp failed");
    k->v = v;
    snprintf(k->cache_arg, sizeof k->cache_arg, "%s/cache", k->dir);
    e2e_build_path("kernels/libktest_cpu_kernels.so", k->kernels, sizeof k->kernels);
    int i = 0;
    if (!v->engine) {
        k->extra[i++] = "--emu-kernels";
        k->extra[i++] = k->kernels;
    }
    k->extra[i++] = "--cache-dir";
    k->extra[i++] = k->cache_arg;
    k->extra[i] = NULL;
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

/* Runs PROG of the server's variant (with ARG1 when not NULL) and requires "PASS
 * name"; its standard output in *stdout_text when not NULL (caller frees). */
static void krun_out(kserver *k, const char *prog_name, const char *name, const char *arg1, const char *tag,
                     char **stdout_text)
{
    char path[E2E_PATH_LEN], prog[96], pass[96], verdict[64];
    e2e_proc p;
    char *argv[] = {path, (char *)arg1, NULL};
    snprintf(pass, sizeof pass, "PASS %s\n", name);
    snprintf(prog, sizeof prog, "%s/%s", k->v->dir, prog_name);
    e2e_build_path(prog, path, sizeof path);
    e2e_proc_opts o = {k->v->t == VIA_TCP ? k->srv.tcp_addr : k->srv.unix_addr, 1, 0};
    int spawned = e2e_run(&p, k->dir, tag, path, argv, &o) == 0;
    char *out = e2e_read_file(p.out_path), *perr = e2e_read_file(p.err_path);
    int ok = spawned && !p.timed_out && WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0 && strstr(out, pass);
    if (!ok) {
        char *log = e2e_read_file(k->srv.log_path);
        e2e_describe(&p, verdict, sizeof verdict);
        fprintf(stderr, "===== %s over %s: %s\n", prog, k->v->t == VIA_TCP ? "tcp" : "unix", verdict);
        e2e_dump("program stdout", out, 6000);
        e2e_dump("program stderr", perr, 3000);
        e2e_dump("server log", log, 4000);
        free(log);
    }
    if (stdout_text != NULL)
        *stdout_text = out;
    else
        free(out);
    free(perr);
    ck_assert_msg(ok, "%s over %s did not pass", prog, k->v->t == VIA_TCP ? "tcp" : "unix");
}

static void krun(kserver *k, const char *prog_name, const char *name, const char *arg1, const char *tag)
{
    krun_out(k, prog_name, name, arg1, tag, NULL);
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

/* Programs that only have to pass; loop tests over them run index i as
 * kprograms[i % NKPROGRAMS] in variants[i / NKPROGRAMS]. */
static const char *const kprograms[] = {"vadd", "saxpy", "scalars", "symbols", "multi_tu", "vadd_compressed",
                                        "loop", "graphs", "graphcond", "managed", "nvrtc"};
#define NKPROGRAMS ((int)(sizeof kprograms / sizeof kprograms[0]))

START_TEST(test_program)
{
    kserver k;
    const char *prog = kprograms[_i % NKPROGRAMS];
    kserver_start(&k, &variants[_i / NKPROGRAMS]);
    krun(&k, prog, prog, NULL, prog);
    kserver_done(&k, kserver_stop(&k));
}
END_TEST

/* Kernels of a dlopen'ed library built the same way (with the static runtime it
 * holds a runtime of its own, beside the program's). */
START_TEST(test_dlopen)
{
    kserver k;
    char lib[E2E_PATH_LEN], rel[64];
    snprintf(rel, sizeof rel, "%s/libktest_shlib.so", variants[_i].dir);
    e2e_build_path(rel, lib, sizeof lib);
    kserver_start(&k, &variants[_i]);
    krun(&k, "dlopen", "dlopen", lib, "dlopen");
    kserver_done(&k, kserver_stop(&k));
}
END_TEST

/* A PTX-only module runs: its kernel's CPU implementation, or the PTX engine. */
START_TEST(test_ptx_only)
{
    kserver k;
    kserver_start(&k, &variants[_i]);
    krun(&k, "vadd_ptx", "vadd_ptx", NULL, "vadd_ptx");
    char *log = kserver_stop(&k);
    ck_assert_msg(strstr(log, "cannot run") == NULL, "a kernel was refused: %s", strstr(log, "cannot run"));
    kserver_done(&k, log);
}
END_TEST

/* Bad launches fail at the call; a kernel the device has no code for is named,
 * once, and why. */
START_TEST(test_badlaunch)
{
    kserver k;
    char line[128];
    kserver_start(&k, &variants[_i]);
    krun(&k, "badlaunch", "badlaunch", NULL, "badlaunch");
    char *log = kserver_stop(&k);
    snprintf(line, sizeof line, "kernel %s has no CPU implementation", "_Z12uses_textureyPf");
    ck_assert_msg(e2e_count_lines_with(log, line) == 1, "missing or repeated line: %s", line);
    ck_assert_msg(strstr(log, "tex.1d") != NULL, "the log does not name the instruction");
    kserver_done(&k, log);
}
END_TEST

/* Kernel printf reaches the program's standard output between the host's lines
 * around the synchronisation; a failed assert prints the GPU's line and its
 * error is sticky until cudaDeviceReset (the program checks the errors). */
START_TEST(test_printf_and_assert)
{
    kserver k;
    char *out = NULL;
    kserver_start(&k, &variants[_i]);
    krun_out(&k, "kprintf", "kprintf", NULL, "kprintf", &out);
    const char *before = strstr(out, "host before\n"), *after = strstr(out, "host after\n");
    ck_assert_msg(before != NULL && after != NULL, "host lines missing: %s", out);
    for (int b = 0; b < 2; b++)
        for (int t = 0; t < 3; t++) {
            char line[96];
            snprintf(line, sizeof line, "kernel %d/3 of block %d says hello %.2f\n", t, b, 0.5 * t);
            const char *at = strstr(out, line);
            ck_assert_msg(at != NULL && at > before && at < after, "kernel line out of place: %s in %s", line, out);
        }
    ck_assert_msg(strstr(after, "block: [0,0,0], thread: [2,0,0] Assertion `x[threadIdx.x] >= 0` failed.") != NULL,
                  "no assert line: %s", out);
    /* a 4 KiB printf FIFO (cudaDeviceSetLimit) keeps the first lines of 200 */
    ck_assert_msg(strstr(out, "fifo line 0000 ") != NULL && strstr(out, "fifo line 0040 ") != NULL &&
                      strstr(out, "fifo line 0199 ") == NULL,
                  "the printf FIFO limit: %s", strstr(out, "fifo line") ? strstr(out, "fifo line") : out);
    free(out);
    kserver_done(&k, kserver_stop(&k));
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

/* The number after "key": in the statistics file at path. */
static unsigned long long stat_field(const char *path, const char *key)
{
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\": ", key);
    char *s = e2e_read_file(path), *p = strstr(s, pattern);
    unsigned long long v = p ? strtoull(p + strlen(pattern), NULL, 10) : 0;
    ck_assert_msg(p != NULL, "no %s in %s", key, path);
    free(s);
    return v;
}

/* What managed memory moves, counted: 1 MiB the host writes (one write fault per
 * 64 KiB block), a kernel (the dirty blocks leave in one push), the whole read back
 * in order (five fetches as the read-ahead doubles: 64, 128, 256, 512 KiB, then the
 * last block) and read again (nothing moves). Every byte crosses once each way. */
START_TEST(test_managed_counts)
{
    kserver k;
    char stats[128];
    kserver_start(&k, &variants[_i]);
    snprintf(stats, sizeof stats, "%s/managed.json", k.dir);
    setenv("CUDAREM_STATS", stats, 1);
    krun(&k, "managed", "managed", "counts", "managed_counts");
    unsetenv("CUDAREM_STATS");
    const unsigned long long mib = 1ull << 20;
    ck_assert_uint_eq(stat_field(stats, "managed_faults"), 16 + 5);
    ck_assert_uint_eq(stat_field(stats, "managed_fetches"), 5);
    ck_assert_uint_eq(stat_field(stats, "managed_fetched_bytes"), mib);
    ck_assert_uint_eq(stat_field(stats, "managed_pushes"), 1);
    ck_assert_uint_eq(stat_field(stats, "managed_pushed_bytes"), mib);
    kserver_done(&k, kserver_stop(&k));
}
END_TEST

/* Images under dir, in its users' directories (server/crm_kcache.h). */
static int count_cached(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) {
        char sub[2 * E2E_PATH_LEN];
        n += strstr(e->d_name, ".fatbin") != NULL;
        snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
        if (e->d_type == DT_DIR && e->d_name[0] != '.')
            n += count_cached(sub);
    }
    if (d != NULL)
        closedir(d);
    return n;
}

/* The second session with the same module sends only its digest. */
START_TEST(test_cache)
{
    kserver k;
    char s1[128], s2[128];
    kserver_start(&k, &variants[0]);
    snprintf(s1, sizeof s1, "%s/stats1.json", k.dir);
    snprintf(s2, sizeof s2, "%s/stats2.json", k.dir);
    setenv("CUDAREM_STATS", s1, 1);
    krun(&k, "vadd", "vadd", NULL, "first");
    setenv("CUDAREM_STATS", s2, 1);
    krun(&k, "vadd", "vadd", NULL, "second");
    unsetenv("CUDAREM_STATS");
    int cached = count_cached(k.cache_arg);
    unsigned long long first = stat_h2d(s1), second = stat_h2d(s2);
    kserver_done(&k, kserver_stop(&k));
    ck_assert_msg(cached == 1, "%d images in the cache", cached);
    ck_assert_msg(first > second + 1000, "the second session shipped the module again (%llu vs %llu bytes)", first,
                  second);
}
END_TEST

/* The emulated device in process (LD_PRELOAD=libcudarem-emu.so, no server): the
 * programs' <<<>>> launches and __device__ variables reach it through nvcc's
 * registration calls, and kernels run on their CPU implementations, or with none
 * given on the PTX engine (index i: program i / 2, engine when i is odd). Shared
 * runtime only: a static runtime keeps those calls inside the program. */
static const char *const inproc_programs[] = {"vadd",    "saxpy",    "scalars", "loop",
                                              "symbols", "multi_tu", "kprintf", "badlaunch"};
#define NINPROC ((int)(sizeof inproc_programs / sizeof inproc_programs[0]))

START_TEST(test_in_process)
{
    char dir[64], path[E2E_PATH_LEN], emu[E2E_PATH_LEN], cpu[E2E_PATH_LEN], preload[2 * E2E_PATH_LEN + 2];
    char rel[64], pass[64];
    const char *name = inproc_programs[_i / 2];
    int engine = _i % 2;
    e2e_proc p;
    e2e_proc_opts o = {NULL, 0, 0};
    char *argv[] = {path, NULL};
    ck_assert_msg(e2e_dir_make(dir, sizeof dir) == 0, "mkdtemp failed");
    e2e_build_path("libcudarem-emu.so", emu, sizeof emu);
    snprintf(preload, sizeof preload, "%s%s%s", E2E_SAN ? E2E_ASAN_LIB : "", E2E_SAN ? " " : "", emu);
    setenv("LD_PRELOAD", preload, 1);
    if (E2E_SAN)
        setenv("ASAN_OPTIONS", "detect_leaks=0", 1); /* the nvcc program is not instrumented */
    if (!engine)
        setenv("CUDAREM_EMU_KERNELS", e2e_build_path("kernels/libktest_cpu_kernels.so", cpu, sizeof cpu), 1);
    snprintf(rel, sizeof rel, "kernels/%s", name);
    e2e_build_path(rel, path, sizeof path);
    int spawned = e2e_run(&p, dir, name, path, argv, &o) == 0;
    unsetenv("LD_PRELOAD");
    unsetenv("CUDAREM_EMU_KERNELS");
    char *out = e2e_read_file(p.out_path), *err = e2e_read_file(p.err_path);
    snprintf(pass, sizeof pass, "PASS %s\n", name);
    int ok = spawned && !p.timed_out && WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0 && strstr(out, pass);
    if (!ok) {
        e2e_dump("program stdout", out, 4000);
        e2e_dump("program stderr", err, 3000);
    }
    free(out);
    free(err);
    e2e_dir_remove(dir);
    ck_assert_msg(ok, "%s in process (%s) did not pass", name, engine ? "PTX engine" : "CPU kernels");
}
END_TEST

static Suite *kernels_suite(void)
{
    Suite *s = suite_create("e2e_kernels");
    TCase *tc = tcase_create("programs");
    tcase_set_timeout(tc, 180);
    tcase_add_loop_test(tc, test_program, 0, NKPROGRAMS * NVARIANTS);
    tcase_add_loop_test(tc, test_dlopen, 0, NVARIANTS);
    tcase_add_loop_test(tc, test_ptx_only, 0, NVARIANTS);
    tcase_add_loop_test(tc, test_badlaunch, 0, NVARIANTS);
    tcase_add_loop_test(tc, test_printf_and_assert, 0, NVARIANTS);
    tcase_add_test(tc, test_cache);
    tcase_add_loop_test(tc, test_managed_counts, 0, 4); /* TCP and Unix, shared and static runtime */
    tcase_add_loop_test(tc, test_in_process, 0, NINPROC * 2);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(kernels_suite)
