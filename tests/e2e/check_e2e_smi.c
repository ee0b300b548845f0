/* check_e2e_smi.c -- end-to-end suite: an operator's view of a server with
 * cudarem-smi. A server with an auth file that has an administrator (ops, added
 * with --add-user --admin) and a user (alice): while alice's program copies,
 * `cudarem-smi --json` run as ops lists her session with its user, peer, calls,
 * bytes and memory, and the emulated device with its name and memory; run as
 * alice it is refused, saying why; `--end` as ops ends her session, her program
 * fails with a CUDA error and a line saying an administrator ended it, busy or
 * idle between calls; the server logs who ended it and counts it; the text
 * view shows the same session; an unreachable server makes the exit status 1 and
 * its JSON entry an error; a Unix-socket peer admitted by uid and running as the
 * server's user is an administrator without a token. --metrics serves what a
 * Prometheus parser reads, with the figures of alice's session. --http serves a
 * page headless Chromium draws with her session, and ends it for ops only. */
#include "tests/e2e/e2e_harness.h"
#include "tests/unit/crm_check.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef E2E_PYENV
#define E2E_PYENV ""
#endif

static char dir[64], users[E2E_PATH_LEN], ops[160], alice[160], smi[E2E_PATH_LEN], metrics[64], http[64];
static int http_port;
static e2e_server srv;

static void add_user(const char *name, int admin, char *token, size_t len)
{
    ck_assert_msg(e2e_add_user(dir, users, name, admin, token, len) == 0, "--add-user %s failed", name);
}

static void setup(void)
{
    char err[512];
    ck_assert_msg(e2e_dir_make(dir, sizeof dir) == 0, "mkdtemp failed");
    snprintf(users, sizeof users, "%s/users", dir);
    e2e_build_path("cudarem-smi", smi, sizeof smi);
    add_user("ops", 1, ops, sizeof ops);
    add_user("alice", 0, alice, sizeof alice);
    unsetenv("CUDAREM_TOKEN");
    unsetenv("CUDAREM_TOKEN_FILE");
    static char uid[16];
    static char *args[] = {"--auth-file", users, "--allow-uid", uid, "--metrics", metrics, "--http", http, NULL};
    snprintf(uid, sizeof uid, "%u", (unsigned)getuid());
    snprintf(metrics, sizeof metrics, "tcp:127.0.0.1:%d", e2e_free_port());
    http_port = e2e_free_port();
    snprintf(http, sizeof http, "tcp:127.0.0.1:%d", http_port);
    e2e_server_extra_args(args);
    if (e2e_server_start_logged(&srv, dir, 0, err, sizeof err) != 0)
        ck_abort_msg("server start: %s", err);
}

static void teardown(void)
{
    e2e_server_kill(&srv);
    e2e_server_extra_args(NULL);
    unsetenv("CUDAREM_TOKEN");
    e2e_dir_remove(dir);
}

/* Runs cudarem-smi with args (after argv[0]) and token (NULL: none): its exit
 * status; its stdout and stderr in *out and *err (malloc'd). */
static int run_smi(const char *tag, const char *token, char **args, char **out, char **err)
{
    char *argv[12] = {smi};
    e2e_proc p;
    e2e_proc_opts o = {NULL, 0, 0};
    for (int i = 0; args[i] != NULL && i < 10; i++)
        argv[i + 1] = args[i];
    if (token != NULL)
        setenv("CUDAREM_TOKEN", token, 1);
    else
        unsetenv("CUDAREM_TOKEN");
    ck_assert_int_eq(e2e_run(&p, dir, tag, smi, argv, &o), 0);
    unsetenv("CUDAREM_TOKEN");
    *out = e2e_read_file(p.out_path);
    *err = e2e_read_file(p.err_path);
    ck_assert_msg(WIFEXITED(p.status), "%s: cudarem-smi did not exit by itself", tag);
    return WEXITSTATUS(p.status);
}

/* The value after "key": in the JSON text at, as a number (-1 when absent). */
static long long json_number(const char *at, const char *key)
{
    char quoted[64];
    snprintf(quoted, sizeof quoted, "\"%s\": ", key);
    const char *p = at ? strstr(at, quoted) : NULL;
    return p ? atoll(p + strlen(quoted)) : -1;
}

/* Starts alice's copyloop, idle pause_ms between its copies, and waits until it copies. */
static void start_alice(e2e_proc *p, int pause_ms)
{
    char prog[E2E_PATH_LEN], pause[16];
    e2e_build_path("cuda/copyloop", prog, sizeof prog);
    snprintf(pause, sizeof pause, "%d", pause_ms);
    char *argv[] = {prog, "0", pause, NULL};
    e2e_proc_opts o = {srv.tcp_addr, 1, 0};
    setenv("CUDAREM_TOKEN", alice, 1);
    ck_assert_int_eq(e2e_spawn(p, dir, "alice", prog, argv, &o), 0);
    unsetenv("CUDAREM_TOKEN");
    ck_assert_msg(e2e_wait_output(p, "started", 20000) == 0, "alice's copyloop did not start");
}

/* Ends session id as ops: alice's program fails with a CUDA error and says that
 * an administrator ended her session (the server's goodbye, which the shim prints). */
static void end_as_ops(e2e_proc *prog, long long id)
{
    char ids[32], *out, *err;
    snprintf(ids, sizeof ids, "%lld", id);
    int rc = run_smi("smi-end", ops, (char *[]){"-s", srv.tcp_addr, "--end", ids, NULL}, &out, &err);
    ck_assert_msg(rc == 0, "--end: %s", err);
    free(out);
    free(err);
    ck_assert_int_eq(e2e_wait(prog, 20000), 0);
    ck_assert_msg(WIFEXITED(prog->status) && WEXITSTATUS(prog->status) == 3, "alice's program did not fail");
    char *told = e2e_read_file(prog->err_path);
    int said = strstr(told, "ended this session: an administrator ended it") != NULL;
    if (!said)
        e2e_dump("alice's stderr", told, 2000);
    free(told);
    ck_assert_msg(said, "alice's program was not told an administrator ended her session");
}

START_TEST(test_admin_sees_and_ends_a_session)
{
    e2e_proc prog;
    char *out, *err;
    start_alice(&prog, 0);
    e2e_sleep_ms(300); /* a few batches, so the counters are published */
    int rc = run_smi("smi-json", ops, (char *[]){"--server", srv.tcp_addr, "--json", NULL}, &out, &err);
    if (rc != 0)
        e2e_dump("smi stderr", err, 2000);
    ck_assert_int_eq(rc, 0);
    const char *sess = strstr(out, "\"sessions\": [{");
    ck_assert_msg(sess != NULL, "no session listed: %s", out);
    ck_assert_msg(strstr(sess, "\"user\": \"alice\"") != NULL, "alice not listed: %s", out);
    ck_assert_msg(strstr(out, "cudarem emulated device") != NULL, "device not named: %s", out);
    ck_assert_int_ge(json_number(strstr(out, "\"devices\": [{"), "memory_total"), 1 << 20);
    ck_assert_int_ge(json_number(sess, "memory_used"), 1 << 20); /* copyloop holds 1 MiB */
    ck_assert_int_gt(json_number(sess, "calls"), 0);
    ck_assert_int_gt(json_number(sess, "bytes_in"), 0);
    ck_assert_int_gt(json_number(sess, "bytes_out"), 0);
    ck_assert_int_ge(json_number(out, "sessions_admitted"), 1);
    long long id = json_number(sess, "id");
    ck_assert_int_gt(id, 0);
    free(out);
    free(err);

    rc = run_smi("smi-text", ops, (char *[]){"-s", srv.tcp_addr, NULL}, &out, &err);
    ck_assert_int_eq(rc, 0);
    ck_assert_msg(strstr(out, "alice") != NULL && strstr(out, "backend emu") != NULL, "text view: %s", out);
    free(out);
    free(err);

    end_as_ops(&prog, id);
    char *log = e2e_read_file(srv.log_path);
    ck_assert_msg(strstr(log, "ended by administrator ops") != NULL, "no log line");
    free(log);
    rc = run_smi("smi-after", ops, (char *[]){"-s", srv.tcp_addr, "--json", NULL}, &out, &err);
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(json_number(out, "sessions_ended_by_admin"), 1);
    ck_assert_msg(strstr(out, "\"user\": \"alice\"") == NULL, "alice still listed: %s", out);
    free(out);
    free(err);
}
END_TEST

/* An idle program is told too: its session waits for the next call when the
 * administrator's signal comes, and the read that gives up must leave the
 * stream open for the goodbye (before, such a program only saw a lost server). */
START_TEST(test_admin_ends_an_idle_session)
{
    e2e_proc prog;
    char *out, *err;
    start_alice(&prog, 300);
    int rc = run_smi("smi-idle", ops, (char *[]){"-s", srv.tcp_addr, "--json", NULL}, &out, &err);
    ck_assert_int_eq(rc, 0);
    long long id = json_number(strstr(out, "\"sessions\": [{"), "id");
    free(out);
    free(err);
    ck_assert_int_gt(id, 0);
    end_as_ops(&prog, id);
}
END_TEST

START_TEST(test_a_user_is_refused)
{
    e2e_proc prog;
    char *out, *err;
    start_alice(&prog, 0);
    int rc = run_smi("smi-alice", alice, (char *[]){"-s", srv.tcp_addr, NULL}, &out, &err);
    ck_assert_int_eq(rc, 1);
    ck_assert_msg(strstr(err, "only an administrator") != NULL, "stderr: %s", err);
    free(out);
    free(err);
    rc = run_smi("smi-alice-end", alice, (char *[]){"-s", srv.tcp_addr, "--end", "1", NULL}, &out, &err);
    ck_assert_int_eq(rc, 1);
    ck_assert_msg(strstr(err, "only an administrator") != NULL, "stderr: %s", err);
    free(out);
    free(err);
    rc = run_smi("smi-none", NULL, (char *[]){"-s", srv.tcp_addr, NULL}, &out, &err);
    ck_assert_int_eq(rc, 1); /* no token over TCP: not admitted at all */
    free(out);
    free(err);
    ck_assert_int_eq(kill(prog.pid, SIGKILL), 0);
    e2e_wait(&prog, 10000);
}
END_TEST

START_TEST(test_unix_peer_and_unreachable_server)
{
    char *out, *err, both[2 * E2E_PATH_LEN + 64];
    snprintf(both, sizeof both, "%s,unix:%s/nobody-listens.sock", srv.unix_addr, dir);
    /* a Unix socket, no token: this test runs as the server's own user */
    int rc = run_smi("smi-unix", NULL, (char *[]){"-s", both, "--json", NULL}, &out, &err);
    ck_assert_int_eq(rc, 1);
    ck_assert_msg(strstr(out, "\"backend\": \"emu\"") != NULL, "first server not shown: %s", out);
    ck_assert_msg(strstr(out, "nobody-listens.sock\", \"error\": ") != NULL, "no error entry: %s", out);
    free(out);
    free(err);
    rc = run_smi("smi-usage", NULL, (char *[]){"--loop", "0", NULL}, &out, &err);
    ck_assert_int_eq(rc, 2);
    ck_assert_msg(strstr(err, "Usage: cudarem-smi") != NULL, "no usage text: %s", err);
    free(out);
    free(err);
}
END_TEST

/* --metrics: the Prometheus text, read by prometheus_client's own parser
 * (tests/python/metrics_check.py) while alice's program copies. */
START_TEST(test_metrics_parse)
{
    e2e_proc prog, p;
    char python[E2E_PATH_LEN], script[E2E_PATH_LEN], url[96];
    const char *env = getenv("CUDAREM_PYENV");
    snprintf(python, sizeof python, "%s/bin/python", env && *env ? env : E2E_PYENV);
    snprintf(script, sizeof script, "%s/tests/python/metrics_check.py", e2e_source_dir());
    snprintf(url, sizeof url, "http://%s/metrics", metrics + 4);
    ck_assert_msg(access(python, X_OK) == 0, "no Python environment at %s (run tools/python-env.sh)", python);
    start_alice(&prog, 0);
    e2e_sleep_ms(300);
    char *argv[] = {python, script, url, "alice", NULL};
    e2e_proc_opts o = {NULL, 0, 0};
    ck_assert_int_eq(e2e_run(&p, dir, "metrics", python, argv, &o), 0);
    char *out = e2e_read_file(p.out_path), *err = e2e_read_file(p.err_path);
    if (strstr(out, "PASS metrics_check") == NULL)
        e2e_dump("metrics_check", err, 4000);
    ck_assert_msg(strstr(out, "PASS metrics_check") != NULL, "metrics_check failed");
    free(out);
    free(err);
    char *log = e2e_read_file(srv.log_path);
    ck_assert_msg(strstr(log, "metrics for Prometheus at http://127.0.0.1:") != NULL, "no start line");
    free(log);
    ck_assert_int_eq(kill(prog.pid, SIGKILL), 0);
    e2e_wait(&prog, 10000);
}
END_TEST

/* One HTTP request to the dashboard: its status code, the body in out. */
static int http_request(const char *method, const char *path, const char *token, const char *body, char *out,
                        size_t outlen)
{
    char req[1024];
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)http_port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_msg(fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0, "cannot reach the dashboard");
    int n = snprintf(req, sizeof req, "%s %s HTTP/1.1\r\nHost: x\r\n%s%s%sContent-Length: %zu\r\n\r\n%s", method, path,
                     token ? "Authorization: Bearer " : "", token ? token : "", token ? "\r\n" : "",
                     strlen(body), body);
    ck_assert_int_eq(write(fd, req, (size_t)n), n);
    size_t got = 0;
    ssize_t r;
    while (got + 1 < outlen && (r = read(fd, out + got, outlen - 1 - got)) > 0)
        got += (size_t)r;
    out[got] = '\0';
    close(fd);
    int code = 0;
    sscanf(out, "HTTP/1.1 %d", &code);
    return code;
}

/* Runs headless Chromium on the dashboard with args (the last is the URL). Its stdout. */
static char *chromium(const char *tag, char **args)
{
    static const char *const names[] = {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"};
    const char *browser = NULL;
    for (size_t i = 0; i < sizeof names / sizeof *names && browser == NULL; i++)
        if (access(names[i], X_OK) == 0)
            browser = names[i];
    ck_assert_msg(browser != NULL, "no Chromium: tools/install-deps.sh installs the Debian package chromium");
    char *argv[16] = {(char *)browser, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000"};
    int n = 5;
    for (int i = 0; args[i] != NULL && n < 15; i++)
        argv[n++] = args[i];
    e2e_proc p;
    e2e_proc_opts o = {NULL, 0, 0};
    ck_assert_int_eq(e2e_run(&p, dir, tag, browser, argv, &o), 0);
    ck_assert_msg(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0, "%s: chromium failed", tag);
    return e2e_read_file(p.out_path);
}

/* --http: the page, drawn by headless Chromium (a screenshot is kept in
 * build/tests/dashboard.png), lists alice's session; the end action is refused
 * without an administrator's token, and ends her session with the token of an
 * administrator added while the server ran (after SIGHUP). */
START_TEST(test_dashboard)
{
    e2e_proc prog;
    char url[96], shot[E2E_PATH_LEN], shot_arg[E2E_PATH_LEN + 16], out[65536], row[48];
    struct stat st;
    start_alice(&prog, 0);
    snprintf(url, sizeof url, "http://%s/", http + 4);
    e2e_build_path("tests/dashboard.png", shot, sizeof shot);
    unlink(shot);
    snprintf(shot_arg, sizeof shot_arg, "--screenshot=%s", shot);
    char *dom = chromium("chromium-dom", (char *[]){"--dump-dom", url, NULL});
    ck_assert_msg(strstr(dom, "session-") != NULL && strstr(dom, ">alice<") != NULL, "page: %.2000s", dom);
    ck_assert_msg(strstr(dom, "cudarem emulated device") != NULL, "no device on the page");
    const char *id_at = strstr(dom, "id=\"session-");
    long id = id_at ? strtol(id_at + strlen("id=\"session-"), NULL, 10) : 0;
    ck_assert_int_gt(id, 0);
    free(dom);
    free(chromium("chromium-shot", (char *[]){"--window-size=1200,700", shot_arg, url, NULL}));
    ck_assert_msg(stat(shot, &st) == 0 && st.st_size > 5000, "no screenshot at %s", shot);

    snprintf(row, sizeof row, "session=%ld", id);
    ck_assert_int_eq(http_request("POST", "/api/end", "ops:0000", row, out, sizeof out), 403);
    ck_assert_int_eq(http_request("POST", "/api/end", alice, row, out, sizeof out), 403);
    ck_assert_msg(strstr(out, "only an administrator") != NULL, "%s", out);
    ck_assert_int_eq(http_request("POST", "/api/end", ops, "session=x", out, sizeof out), 400);
    ck_assert_int_eq(http_request("GET", "/elsewhere", NULL, "", out, sizeof out), 404);
    /* an administrator added while the server runs counts after SIGHUP, on the page too */
    char ops2[160];
    add_user("ops2", 1, ops2, sizeof ops2);
    ck_assert_int_eq(http_request("POST", "/api/end", ops2, row, out, sizeof out), 403);
    ck_assert_int_eq(kill(srv.pid, SIGHUP), 0);
    int code = 0;
    for (int tries = 0; tries < 10 && code != 200; tries++) { /* the reload is asynchronous */
        e2e_sleep_ms(200);
        code = http_request("POST", "/api/end", ops2, row, out, sizeof out);
    }
    ck_assert_int_eq(code, 200);
    ck_assert_msg(strstr(out, "\"ok\": true") != NULL, "%s", out);
    ck_assert_int_eq(e2e_wait(&prog, 20000), 0);
    ck_assert_msg(WIFEXITED(prog.status) && WEXITSTATUS(prog.status) == 3, "alice's program did not fail");
    ck_assert_int_eq(http_request("GET", "/api/status", NULL, "", out, sizeof out), 200);
    ck_assert_msg(strstr(out, "\"sessions_ended_by_admin\": 1") != NULL, "%s", out);
}
END_TEST

static Suite *smi_suite(void)
{
    Suite *s = suite_create("e2e_smi");
    TCase *tc = tcase_create("smi");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_admin_sees_and_ends_a_session);
    tcase_add_test(tc, test_admin_ends_an_idle_session);
    tcase_add_test(tc, test_a_user_is_refused);
    tcase_add_test(tc, test_unix_peer_and_unreachable_server);
    tcase_add_test(tc, test_metrics_parse);
    tcase_add_test(tc, test_dashboard);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(smi_suite)
