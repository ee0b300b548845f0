/* check_e2e_limits.c -- end-to-end suite: an authenticated but hostile tenant
 * (mallory) floods the server with one kind of object at a time against small
 * --session-limits, while another user (alice) works.
 *
 * For each kind (streams, events, allocations, pinned host regions, cuBLAS handles,
 * modules, module bytes, kernels): the flood (tests/driver/flood.c) stops at the
 * limit with the out-of-memory error a GPU gives (pinned memory past the limit stays
 * the client's own, and the program goes on); cudarem-smi --json, run by an
 * administrator, shows the flooder holding exactly the limit and the refusals
 * counted, its table names the limit, and --objects shows the kind against it; the server logs the limit once; alice's program passes meanwhile. A
 * host-memory limit below what a session process needs refuses every creation. A
 * flood of new modules leaves the module cache within --cache-max.
 * How long alice's program took, and the server's processes and resident memory
 * while the flooder holds everything, are printed (not judged: speed is measured in
 * benchmarks/).
 */
#include "tests/e2e/e2e_harness.h"
#include "tests/unit/crm_check.h"

#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LIMITS "streams=16,events=16,handles=4,modules=8,module-bytes=256K,functions=32,allocations=32,pinned=8"

static char dir[64], users[E2E_PATH_LEN], mallory[160], alice[160], ops[160];
static e2e_server srv;

/* What a flood of each kind must end with under LIMITS. */
static const struct {
    const char *kind;
    int max;          /* objects the flood asks for */
    int created;      /* how many it gets */
    const char *then; /* and the error after them */
    long long held;   /* what the server shows it holding (-1: see the test) */
} floods[] = {
    {"streams", 100, 16, "CUDA_ERROR_OUT_OF_MEMORY", 16},
    {"events", 100, 16, "CUDA_ERROR_OUT_OF_MEMORY", 16},
    {"allocations", 100, 32, "CUDA_ERROR_OUT_OF_MEMORY", 32},
    {"pinned", 30, 30, "none", 8}, /* past 8, pinned memory stays private */
    {"handles", 20, 4, "CUBLAS_STATUS_ALLOC_FAILED", 4},
    {"modules", 30, 8, "CUDA_ERROR_OUT_OF_MEMORY", 8},
    {"module-bytes", 30, 3, "CUDA_ERROR_OUT_OF_MEMORY", -1}, /* 64 KiB and a little more each */
    {"functions", 60, 32, "CUDA_ERROR_OUT_OF_MEMORY", 32},
};

static void setup(void)
{
    ck_assert_msg(e2e_dir_make(dir, sizeof dir) == 0, "mkdtemp failed");
    snprintf(users, sizeof users, "%s/users", dir);
    ck_assert(e2e_add_user(dir, users, "mallory", 0, mallory, sizeof mallory) == 0);
    ck_assert(e2e_add_user(dir, users, "alice", 0, alice, sizeof alice) == 0);
    ck_assert(e2e_add_user(dir, users, "ops", 1, ops, sizeof ops) == 0);
}

static void teardown(void)
{
    e2e_server_kill(&srv);
    e2e_server_extra_args(NULL);
    e2e_client_library_path(NULL);
    unsetenv("CUDAREM_TOKEN");
    e2e_dir_remove(dir);
}

/* A server wanting tokens, with --session-limits limits and the extra arguments
 * (NULL-terminated, at most 4). */
static void start_server_with(const char *limits, char *const *extra)
{
    static char *args[12];
    static char spec[256];
    char err[512];
    int n = 0;
    snprintf(spec, sizeof spec, "%s", limits);
    args[n++] = "--auth-file", args[n++] = users, args[n++] = "--session-limits", args[n++] = spec;
    for (int i = 0; extra != NULL && extra[i] != NULL && n < 10; i++)
        args[n++] = extra[i];
    args[n] = NULL;
    e2e_server_extra_args(args);
    ck_assert_msg(e2e_server_start_logged(&srv, dir, 0, err, sizeof err) == 0, "server start: %s", err);
}

static void start_server(const char *limits)
{
    start_server_with(limits, NULL);
}

/* Bytes in the regular files under path. */
static long long tree_bytes;
static int add_file(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)path, (void)ftw;
    if (type == FTW_F)
        tree_bytes += st->st_size;
    return 0;
}
static long long disk_bytes(const char *path)
{
    tree_bytes = 0;
    nftw(path, add_file, 16, FTW_PHYS);
    return tree_bytes;
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* mallory's flood of kind, holding what it made: its first output line. */
static char *flood_holding(e2e_proc *p, const char *kind, int max)
{
    char path[E2E_PATH_LEN], lib[E2E_PATH_LEN], maxs[16];
    e2e_build_path("driver/flood", path, sizeof path);
    e2e_build_path("lib", lib, sizeof lib);
    snprintf(maxs, sizeof maxs, "%d", max);
    char *argv[] = {path, (char *)kind, maxs, "hold", NULL};
    e2e_proc_opts o = {srv.tcp_addr, 1, 0};
    setenv("CUDAREM_TOKEN", mallory, 1);
    e2e_client_library_path(lib); /* libcuda.so.1 and libcublas.so.13 are the shim */
    ck_assert_int_eq(e2e_spawn(p, dir, kind, path, argv, &o), 0);
    e2e_client_library_path(NULL);
    unsetenv("CUDAREM_TOKEN");
    int held = e2e_wait_output(p, "holding", 60000) == 0;
    char *out = e2e_read_file(p->out_path);
    if (!held) {
        char *err = e2e_read_file(p->err_path), *log = e2e_read_file(srv.log_path);
        e2e_dump("flood stdout", out, 2000);
        e2e_dump("flood stderr", err, 2000);
        e2e_dump("server log", log, 4000);
        free(err);
        free(log);
    }
    ck_assert_msg(held, "the %s flood never held", kind);
    return out;
}

/* cudarem-smi with option (--json, --objects or NULL: none) as ops: its output
 * (malloc'd). */
static char *smi_as_ops(char *option)
{
    char path[E2E_PATH_LEN];
    e2e_proc p;
    e2e_build_path("cudarem-smi", path, sizeof path);
    char *argv[] = {path, "--server", srv.tcp_addr, option, NULL};
    e2e_proc_opts o = {NULL, 0, 0};
    setenv("CUDAREM_TOKEN", ops, 1);
    ck_assert_int_eq(e2e_run(&p, dir, "smi", path, argv, &o), 0);
    unsetenv("CUDAREM_TOKEN");
    ck_assert_msg(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0, "cudarem-smi failed");
    return e2e_read_file(p.out_path);
}

/* The number after "key": in the object named obj ("held", "limits", "limit_hits")
 * at or after at: -1 when absent. */
static long long json_kind(const char *at, const char *obj, const char *kind)
{
    char quoted[64];
    snprintf(quoted, sizeof quoted, "\"%s\": {", obj);
    const char *o = at ? strstr(at, quoted) : NULL;
    if (o == NULL)
        return -1;
    const char *close = strchr(o, '}');
    snprintf(quoted, sizeof quoted, "\"%s\": ", kind);
    const char *v = strstr(o, quoted);
    return v != NULL && v < close ? atoll(v + strlen(quoted)) : -1;
}

/* alice runs tests/cuda/copy, which must pass: how long it took, ms. */
static long long alice_copies(const char *attack)
{
    char *err;
    setenv("CUDAREM_TOKEN", alice, 1);
    long long t0 = now_ms();
    int rc = e2e_client_status(dir, "copy", srv.tcp_addr, "alice-copy", &err);
    long long took = now_ms() - t0;
    unsetenv("CUDAREM_TOKEN");
    if (rc != 0)
        e2e_dump("alice's stderr", err, 2000);
    free(err);
    ck_assert_msg(rc == 0, "%s: alice's copy failed (exit %d)", attack, rc);
    return took;
}

START_TEST(test_flood_stops_at_the_limit)
{
    const char *kind = floods[_i].kind;
    char want[128], attack[64];
    e2e_proc flood;
    start_server(LIMITS);
    char *out = flood_holding(&flood, kind, floods[_i].max);
    snprintf(want, sizeof want, "flood %s: %d created, then %s\n", kind, floods[_i].created, floods[_i].then);
    int as_wanted = strstr(out, want) != NULL;
    free(out);
    char *json = smi_as_ops("--json"), *text = smi_as_ops(NULL), *objects = smi_as_ops("--objects");
    char hit_line[128];
    snprintf(hit_line, sizeof hit_line, "creations refused by --session-limits since the start: %s ", kind);
    int text_says = strstr(text, hit_line) != NULL; /* a fresh server: the flood's kind alone */
    int objects_show = strstr(objects, " limit ") != NULL && strstr(objects, kind) != NULL &&
                       strstr(objects, "creations refused") == NULL;
    free(text);
    free(objects);
    const char *session = strstr(json, "\"user\": \"mallory\"");
    long long held = json_kind(session, "held", kind), hits = json_kind(json, "limit_hits", kind);
    long long limit = json_kind(json, "limits", kind);
    snprintf(attack, sizeof attack, "a flood of %s", kind);
    long long took = alice_copies(attack), rss;
    int procs = e2e_server_footprint(&srv, &rss);
    fprintf(stderr, "limits: %s: alice's copy passed in %lld ms; server: %d processes, %lld MiB resident\n", attack,
            took, procs, rss / 1024);
    char *log = e2e_read_file(srv.log_path), line[96];
    snprintf(line, sizeof line, "(mallory): reached its limit of");
    int logged = e2e_count_lines_with(log, line);
    free(log);
    kill(flood.pid, SIGKILL);
    e2e_wait(&flood, 5000);
    ck_assert_msg(as_wanted, "the flood did not end with: %s", want);
    if (floods[_i].held >= 0)
        ck_assert_msg(held == floods[_i].held, "smi shows %lld %s held, expected %lld\n%s", held, kind,
                      floods[_i].held, json);
    else
        ck_assert_msg(held > 3 * 65536 && held <= limit, "smi shows %lld %s held, limit %lld", held, kind, limit);
    ck_assert_msg(hits >= 1, "smi counts %lld refused %s", hits, kind);
    ck_assert_msg(text_says, "cudarem-smi's table does not name the limit that refused %s", kind);
    ck_assert_msg(objects_show, "cudarem-smi --objects does not show %s against its limit", kind);
    ck_assert_msg(logged == 1, "the server logged mallory's limit %d times, expected once", logged);
    free(json);
}
END_TEST

/* A host-memory limit below what a session process holds refuses every creation,
 * and says which limit. */
START_TEST(test_host_memory_limit)
{
    e2e_proc flood;
    start_server("host-memory=1M");
    char *out = flood_holding(&flood, "allocations", 5);
    int refused = strstr(out, "flood allocations: 0 created, then CUDA_ERROR_OUT_OF_MEMORY") != NULL;
    free(out);
    kill(flood.pid, SIGKILL);
    e2e_wait(&flood, 5000);
    char *log = e2e_read_file(srv.log_path);
    int said = strstr(log, "reached its limit of 1.0 MiB of host-memory (--session-limits host-memory=1048576)") != NULL;
    if (!refused || !said)
        e2e_dump("server log", log, 3000);
    free(log);
    ck_assert_msg(refused, "an allocation was made past the host-memory limit");
    ck_assert_msg(said, "the server did not log the host-memory limit");
}
END_TEST

/* A tenant shipping ever new modules (30 of 64 KiB) cannot fill the server's disk:
 * its module cache stays within --cache-max. */
START_TEST(test_module_cache_flood)
{
    char cache[E2E_PATH_LEN + 8];
    e2e_proc flood;
    snprintf(cache, sizeof cache, "%s/cache", dir);
    start_server_with("modules=0,module-bytes=0", (char *[]){"--cache-dir", cache, "--cache-max", "256K", NULL});
    char *out = flood_holding(&flood, "module-bytes", 30);
    int all = strstr(out, "flood module-bytes: 30 created, then none") != NULL;
    free(out);
    long long took = alice_copies("a module-cache flood"), rss, disk = disk_bytes(cache);
    int procs = e2e_server_footprint(&srv, &rss);
    fprintf(stderr, "limits: a module-cache flood (30 modules of 64 KiB): alice's copy passed in %lld ms; server: %d "
            "processes, %lld MiB resident, %lld KiB of cache on disk (--cache-max 256K)\n",
            took, procs, rss / 1024, disk / 1024);
    kill(flood.pid, SIGKILL);
    e2e_wait(&flood, 5000);
    ck_assert_msg(all, "the flood did not load its 30 modules");
    ck_assert_msg(disk > 0 && disk <= 256 * 1024, "the module cache holds %lld bytes, --cache-max 256K", disk);
}
END_TEST

/* The defaults let an ordinary program through, and the server says them in --help. */
START_TEST(test_defaults_admit_ordinary_work)
{
    start_server("streams=1024");
    alice_copies("no attack");
    char *json = smi_as_ops("--json");
    ck_assert_int_eq(json_kind(json, "limits", "events"), 65536);
    ck_assert_int_eq(json_kind(json, "limits", "host-memory"), 16ll << 30);
    free(json);
}
END_TEST

static Suite *e2e_limits_suite(void)
{
    Suite *s = suite_create("e2e_limits");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 240);
    tcase_add_loop_test(tc, test_flood_stops_at_the_limit, 0, (int)(sizeof floods / sizeof *floods));
    tcase_add_test(tc, test_host_memory_limit);
    tcase_add_test(tc, test_module_cache_flood);
    tcase_add_test(tc, test_defaults_admit_ordinary_work);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(e2e_limits_suite)
