/* check_e2e_auth.c -- end-to-end suite: who may open a session, and what a user
 * may take of the server (--quota). A server with an
 * auth file admits clients that prove a token (over TCP and a Unix socket, with the
 * data channel bound to the exchange) and refuses a missing, wrong or unknown one
 * with a message the client prints; a peer that keeps failing is refused for a
 * while; --allow-uid admits Unix-socket peers by uid; SIGHUP reloads the file; a
 * client with a token refuses a server that cannot prove it knows the user; a
 * server with no way to admit anyone does not start. A user's memory quota is the
 * device's memory as its sessions see it, across all of them, and allocations past
 * it fail as on a full GPU; a session quota refuses the next session until one
 * ends; with --scrub every byte a session allocated is zeroed before it is freed. */
#include "tests/e2e/e2e_harness.h"
#include "tests/unit/crm_check.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64], users[E2E_PATH_LEN], alice[160], dir_lib[E2E_PATH_LEN];
static e2e_server srv;

/* --add-user name into the users file: the token it printed, in token. */
static void add_user(const char *name, char *token, size_t len)
{
    ck_assert_msg(e2e_add_user(dir, users, name, 0, token, len) == 0, "--add-user %s failed", name);
}

static void start_server(char *const *args)
{
    char err[512];
    e2e_server_extra_args(args);
    if (e2e_server_start_logged(&srv, dir, 0, err, sizeof err) != 0)
        ck_abort_msg("server start: %s", err);
}

static void setup(void)
{
    ck_assert_msg(e2e_dir_make(dir, sizeof dir) == 0, "mkdtemp failed");
    snprintf(users, sizeof users, "%s/users", dir);
    add_user("alice", alice, sizeof alice);
    unsetenv("CUDAREM_TOKEN");
    unsetenv("CUDAREM_TOKEN_FILE");
}

static void teardown(void)
{
    e2e_server_kill(&srv);
    e2e_server_extra_args(NULL);
    e2e_dir_remove(dir);
}

/* A client that must be refused with a message containing want. */
static void expect_refused(const char *addr, const char *tag, const char *want)
{
    char *err;
    int rc = e2e_client_status(dir, "meminfo", addr, tag, &err);
    if (rc == 0 || strstr(err, want) == NULL)
        e2e_dump(tag, err, 2000);
    ck_assert_msg(rc > 0, "%s: exit %d, expected a failure exit", tag, rc);
    ck_assert_msg(strstr(err, want) != NULL, "%s: stderr lacks '%s'", tag, want);
    free(err);
}

static void expect_admitted(const char *prog, const char *addr, const char *tag)
{
    char *err;
    int rc = e2e_client_status(dir, prog, addr, tag, &err);
    if (rc != 0 || strstr(err, "data channel") != NULL)
        e2e_dump(tag, err, 2000);
    ck_assert_msg(rc == 0, "%s: exit %d", tag, rc);
    ck_assert_msg(strstr(err, "data channel") == NULL, "%s: the data channel did not open", tag);
    free(err);
}

/* 1 once the server log has needle (waits up to ms). */
static int log_has(const char *needle, int ms)
{
    return e2e_wait_log_lines(srv.log_path, needle, 1, ms) >= 1;
}

/* The right token over TCP (CUDAREM_TOKEN) and a Unix socket (CUDAREM_TOKEN_FILE):
 * copy's large transfers go over the data channel, whose token both ends derived. */
START_TEST(test_token_admits)
{
    start_server((char *[]){"--auth-file", users, NULL});
    if (_i == 0) {
        setenv("CUDAREM_TOKEN", alice, 1);
        expect_admitted("copy", srv.tcp_addr, "copy-tcp");
    } else {
        char path[E2E_PATH_LEN];
        snprintf(path, sizeof path, "%s/alice.token", dir);
        FILE *f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fprintf(f, "%s\n", alice);
        fclose(f);
        chmod(path, 0600);
        setenv("CUDAREM_TOKEN_FILE", path, 1);
        expect_admitted("copy", srv.unix_addr, "copy-unix");
        chmod(path, 0644); /* a token others can read is not used */
        expect_refused(srv.unix_addr, "loose-file", "chmod 600");
    }
    ck_assert(log_has("as user alice", 2000));
}
END_TEST

/* No token, a wrong secret and an unknown user: refused, each with its reason,
 * and the server logs the peer. */
START_TEST(test_bad_credentials_refused)
{
    char wrong[200];
    start_server((char *[]){"--auth-file", users, NULL});
    expect_refused(srv.tcp_addr, "none", "admits only clients with a token: set CUDAREM_TOKEN");
    snprintf(wrong, sizeof wrong, "%s", alice);
    wrong[strlen(wrong) - 1] = wrong[strlen(wrong) - 1] == '0' ? '1' : '0'; /* one digit off */
    setenv("CUDAREM_TOKEN", wrong, 1);
    expect_refused(srv.tcp_addr, "wrong", "authentication failed for user 'alice'");
    setenv("CUDAREM_TOKEN", "mallory:0123456789", 1);
    expect_refused(srv.unix_addr, "unknown", "authentication failed for user 'mallory'");
    ck_assert(log_has("refused 127.0.0.1", 2000));
    ck_assert(log_has("authentication failed for user 'mallory'", 2000));
}
END_TEST

/* Five failures from one peer: the sixth attempt is refused even with the right
 * token; another peer (the Unix socket's uid) is not affected. */
START_TEST(test_failures_are_rate_limited)
{
    char tag[32];
    start_server((char *[]){"--auth-file", users, NULL});
    setenv("CUDAREM_TOKEN", "alice:not-the-token", 1);
    for (int i = 0; i < 5; i++) {
        snprintf(tag, sizeof tag, "fail%d", i);
        expect_refused(srv.tcp_addr, tag, "authentication failed");
    }
    ck_assert(log_has("127.0.0.1 failed to authenticate 5 times", 3000));
    setenv("CUDAREM_TOKEN", alice, 1);
    expect_refused(srv.tcp_addr, "limited", "too many failed authentications from 127.0.0.1");
    expect_admitted("meminfo", srv.unix_addr, "other-peer");
}
END_TEST

/* --allow-uid: this uid is admitted on the Unix socket without a token, not over TCP. */
START_TEST(test_allow_uid)
{
    char uid[16];
    snprintf(uid, sizeof uid, "%d", (int)getuid());
    start_server((char *[]){"--allow-uid", uid, NULL});
    expect_admitted("meminfo", srv.unix_addr, "uid-unix");
    expect_refused(srv.tcp_addr, "uid-tcp", "admits only clients with a token");
}
END_TEST

/* A user added while the server runs is admitted after SIGHUP, not before. */
START_TEST(test_sighup_reloads)
{
    char bob[160];
    start_server((char *[]){"--auth-file", users, NULL});
    add_user("bob", bob, sizeof bob);
    setenv("CUDAREM_TOKEN", bob, 1);
    expect_refused(srv.tcp_addr, "bob-before", "authentication failed for user 'bob'");
    ck_assert_int_eq(kill(srv.pid, SIGHUP), 0);
    ck_assert(log_has("SIGHUP: admitting the 2 user(s)", 5000));
    expect_admitted("meminfo", srv.unix_addr, "bob-after");
}
END_TEST

/* A client with a token does not use a server that cannot prove it knows the user
 * (here one started with --insecure and no auth file). */
START_TEST(test_client_requires_server_proof)
{
    start_server(NULL); /* the harness adds --insecure */
    setenv("CUDAREM_TOKEN", alice, 1);
    expect_refused(srv.tcp_addr, "no-proof", "did not prove it knows user 'alice'");
    unsetenv("CUDAREM_TOKEN");
    expect_admitted("meminfo", srv.tcp_addr, "insecure-no-token");
}
END_TEST

/* Without --auth-file, --allow-uid or --insecure the server does not start. */
START_TEST(test_server_needs_a_way_to_admit)
{
    char server[E2E_PATH_LEN], listen[E2E_PATH_LEN + 8];
    e2e_proc p;
    e2e_build_path("cudarem-server", server, sizeof server);
    snprintf(listen, sizeof listen, "unix:%s/nobody.sock", dir);
    char *argv[] = {server, "--device", "emu", "--listen", listen, NULL};
    e2e_proc_opts o = {NULL, 0, 0};
    ck_assert_int_eq(e2e_run(&p, dir, "no-admission", server, argv, &o), 0);
    char *err = e2e_read_file(p.err_path);
    ck_assert_msg(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 2, "expected exit 2");
    ck_assert_msg(strstr(err, "nobody could open a session") != NULL, "stderr: %s", err);
    free(err);
}
END_TEST

/* meminfo's "FREE TOTAL" over addr; -1 when it failed. */
static int mem_info(const char *addr, const char *tag, unsigned long long *fr, unsigned long long *tot)
{
    char path[E2E_PATH_LEN];
    e2e_proc p;
    e2e_build_path("cuda/meminfo", path, sizeof path);
    char *argv[] = {path, NULL};
    e2e_proc_opts o = {addr, 1, 0};
    ck_assert_int_eq(e2e_run(&p, dir, tag, path, argv, &o), 0);
    char *out = e2e_read_file(p.out_path);
    int ok = WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0 && sscanf(out, "%llu %llu", fr, tot) == 2;
    free(out);
    return ok ? 0 : -1;
}

/* hog BYTES over addr: its process once it printed "allocated", or exits with its
 * first line in line (then p->pid is 0). */
static void hog(e2e_proc *p, const char *addr, const char *tag, unsigned long long bytes, char *line, size_t len)
{
    char path[E2E_PATH_LEN], size[32];
    e2e_build_path("cuda/hog", path, sizeof path);
    snprintf(size, sizeof size, "%llu", bytes);
    char *argv[] = {path, size, NULL};
    e2e_proc_opts o = {addr, 1, 0};
    ck_assert_int_eq(e2e_spawn(p, dir, tag, path, argv, &o), 0);
    int held = e2e_wait_output(p, "allocated", 30000) == 0;
    if (!held)
        e2e_wait(p, 30000);
    char *out = e2e_read_file(p->out_path);
    snprintf(line, len, "%.*s", (int)strcspn(out, "\n"), out);
    free(out);
}

static void hog_stop(e2e_proc *p)
{
    if (p->pid > 0) {
        kill(p->pid, SIGKILL);
        e2e_wait(p, 10000);
    }
}

#define MIB (1ull << 20)

/* --quota '*:mem=64M': the device has 64 MiB for the user; more fails with
 * cudaErrorMemoryAllocation, also when two sessions of the user add up past it;
 * the memory of an ended session is the user's again. */
START_TEST(test_memory_quota_is_the_device)
{
    unsigned long long fr, tot;
    char line[128];
    e2e_proc a, b;
    start_server((char *[]){"--quota", "*:mem=64M", NULL}); /* TCP clients are 'anonymous' */
    ck_assert_int_eq(mem_info(srv.tcp_addr, "slice", &fr, &tot), 0);
    ck_assert_uint_eq(tot, 64 * MIB);
    ck_assert_uint_le(fr, 64 * MIB);
    hog(&a, srv.tcp_addr, "too-big", 65 * MIB, line, sizeof line);
    ck_assert_msg(strcmp(line, "error cudaErrorMemoryAllocation") == 0, "65 MiB of 64: %s", line);
    hog(&a, srv.tcp_addr, "first", 40 * MIB, line, sizeof line);
    ck_assert_msg(strcmp(line, "allocated") == 0, "40 MiB of 64: %s", line);
    ck_assert_int_eq(mem_info(srv.tcp_addr, "while-held", &fr, &tot), 0);
    ck_assert_uint_le(fr, 24 * MIB);
    hog(&b, srv.tcp_addr, "second", 40 * MIB, line, sizeof line);
    hog_stop(&b);
    ck_assert_msg(strcmp(line, "error cudaErrorMemoryAllocation") == 0, "40 + 40 MiB of 64: %s", line);
    hog_stop(&a);
    int freed = 0;
    for (int i = 0; i < 100 && !freed; i++) { /* the session ends after its client */
        freed = mem_info(srv.tcp_addr, "after", &fr, &tot) == 0 && fr >= 40 * MIB;
        if (!freed)
            e2e_sleep_ms(100);
    }
    ck_assert_msg(freed, "the ended session's memory did not come back: free %llu", fr);
    hog(&b, srv.tcp_addr, "again", 40 * MIB, line, sizeof line);
    hog_stop(&b);
    ck_assert_msg(strcmp(line, "allocated") == 0, "40 MiB after the first ended: %s", line);
}
END_TEST

/* --quota '*:sessions=1': a second session of the user is refused while the first
 * lasts, and admitted after. */
START_TEST(test_session_quota)
{
    unsigned long long fr, tot;
    char line[128];
    e2e_proc a;
    start_server((char *[]){"--quota", "*:sessions=1", NULL});
    hog(&a, srv.tcp_addr, "holder", 1 * MIB, line, sizeof line);
    ck_assert_msg(strcmp(line, "allocated") == 0, "%s", line);
    expect_refused(srv.tcp_addr, "second-session", "already has 1 session(s) open");
    hog_stop(&a);
    int admitted = 0;
    for (int i = 0; i < 100 && !admitted; i++) {
        admitted = mem_info(srv.tcp_addr, "after-holder", &fr, &tot) == 0;
        if (!admitted)
            e2e_sleep_ms(100);
    }
    ck_assert_msg(admitted, "no session admitted after the first ended");
}
END_TEST

/* A token user's own line applies to it; a user without one has the whole device. */
START_TEST(test_quota_per_token_user)
{
    unsigned long long fr, tot, whole;
    char bob[160];
    add_user("bob", bob, sizeof bob);
    start_server((char *[]){"--auth-file", users, "--quota", "alice:mem=32M", NULL});
    setenv("CUDAREM_TOKEN", alice, 1);
    ck_assert_int_eq(mem_info(srv.tcp_addr, "alice", &fr, &tot), 0);
    ck_assert_uint_eq(tot, 32 * MIB);
    setenv("CUDAREM_TOKEN", bob, 1);
    ck_assert_int_eq(mem_info(srv.tcp_addr, "bob", &fr, &whole), 0);
    ck_assert_uint_gt(whole, 32 * MIB);
}
END_TEST

/* --scrub: every byte a session allocated, by cudaMalloc, cudaMallocPitch or as a
 * physical allocation it mapped, is zeroed before it is freed, whether the program
 * frees it or its session ends holding it (the server's count says so). */
START_TEST(test_scrub_zeroes_what_was_allocated)
{
    char *err, path[E2E_PATH_LEN];
    e2e_proc p;
    start_server((char *[]){"--scrub", NULL});
    ck_assert_int_eq(e2e_client_status(dir, "memory", srv.tcp_addr, "scrub-memory", &err), 0);
    free(err);
    e2e_build_path("driver/drv_vmm", path, sizeof path); /* maps physical memory (cuMemMap) */
    char *argv[] = {path, NULL};
    e2e_proc_opts o = {srv.unix_addr, 1, 0};
    e2e_build_path("lib", dir_lib, sizeof dir_lib);
    e2e_client_library_path(dir_lib);
    ck_assert_int_eq(e2e_run(&p, dir, "scrub-vmm", path, argv, &o), 0);
    e2e_client_library_path(NULL);
    ck_assert_msg(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0, "drv_vmm failed");
    e2e_proc hold;
    char line[128];
    hog(&hold, srv.tcp_addr, "scrub-hog", 8 * MIB, line, sizeof line); /* ends holding its memory */
    hog_stop(&hold);
    int holders = 0; /* sessions that allocated, whose ends were logged */
    for (int waited = 0; waited < 5000 && holders < 3; waited += 100) {
        char *log = e2e_read_file(srv.log_path);
        holders = 0;
        for (char *at = strstr(log, "end: peer"); at; at = strstr(at + 1, "end: peer")) {
            unsigned long long zeroed = 0, allocated = 0;
            const char *n = strstr(at, " bytes out, ");
            ck_assert_msg(n && sscanf(n, " bytes out, %llu of %llu", &zeroed, &allocated) == 2, "no count: %.200s",
                          at);
            ck_assert_msg(zeroed == allocated, "a session zeroed %llu of its %llu bytes", zeroed, allocated);
            holders += allocated > 0;
        }
        free(log);
        if (holders < 3)
            e2e_sleep_ms(100);
    }
    ck_assert_msg(holders >= 3, "%d sessions that allocated ended, expected memory, drv_vmm and hog", holders);
}
END_TEST

static Suite *e2e_auth_suite(void)
{
    Suite *s = suite_create("e2e_auth");
    TCase *tc = tcase_create("auth");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_token_admits, 0, 2); /* 0 tcp, 1 unix */
    tcase_add_test(tc, test_bad_credentials_refused);
    tcase_add_test(tc, test_failures_are_rate_limited);
    tcase_add_test(tc, test_allow_uid);
    tcase_add_test(tc, test_sighup_reloads);
    tcase_add_test(tc, test_client_requires_server_proof);
    tcase_add_test(tc, test_server_needs_a_way_to_admit);
    suite_add_tcase(s, tc);
    TCase *tq = tcase_create("quota");
    tcase_add_checked_fixture(tq, setup, teardown);
    tcase_set_timeout(tq, 120);
    tcase_add_test(tq, test_memory_quota_is_the_device);
    tcase_add_test(tq, test_session_quota);
    tcase_add_test(tq, test_quota_per_token_user);
    tcase_add_test(tq, test_scrub_zeroes_what_was_allocated);
    suite_add_tcase(s, tq);
    return s;
}

CRM_CHECK_MAIN(e2e_auth_suite)
