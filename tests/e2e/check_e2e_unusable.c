/* check_e2e_unusable.c -- end-to-end suite: a server that cannot be used reads as
 * a machine with a current driver and no usable device, whatever the build.
 *
 * For each way a server fails -- unreachable (no socket), refused (nobody on the
 * port), full (--max-sessions), the user's --quota of sessions, TLS (a
 * certificate the client does not trust), authentication (no token for a server
 * that wants one), a peer locked out after failed authentications, another protocol (a fake server answering HELLO with another
 * version) -- tests/cuda/nodevice runs built with the shared and with the static
 * runtime, and must print the same lines: the driver version a current driver
 * gives, then cudaErrorNoDevice ("no CUDA-capable device is detected") from
 * cudaGetDeviceCount and cudaMalloc, or cudaErrorDevicesUnavailable when the
 * server or the quota is full or the peer must wait. Its stderr must hold the shim's line saying why.
 * With the framework environment ($CRM_FRAMEWORKS set, as make sets it),
 * tests/python/unusable.py checks NVML, CuPy, numba-cuda and torch the same way.
 */
#include "tests/e2e/e2e_harness.h"
#include "tests/unit/crm_check.h"

#include <cuda_runtime_api.h>
#include <rpc/rpc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include "crm_api.h"

#ifndef E2E_PYENV
#define E2E_PYENV ""
#endif

#define NO_DEVICE "cudaErrorNoDevice"
#define BUSY "cudaErrorDevicesUnavailable"

static char dir[64];
static e2e_server srv;
static e2e_proc holder; /* a session that keeps a full server full */
static pid_t fake;      /* the fake server of another protocol */

static void setup(void)
{
    ck_assert_msg(e2e_dir_make(dir, sizeof dir) == 0, "mkdtemp failed");
    memset(&srv, 0, sizeof srv);
    memset(&holder, 0, sizeof holder);
    fake = 0;
    unsetenv("CUDAREM_TLS");
    unsetenv("CUDAREM_TLS_CA");
    unsetenv("CUDAREM_TOKEN");
}

static void teardown(void)
{
    if (holder.pid > 0) {
        kill(holder.pid, SIGKILL);
        e2e_wait(&holder, 5000);
    }
    if (fake > 0) {
        kill(fake, SIGKILL);
        waitpid(fake, NULL, 0);
    }
    e2e_server_kill(&srv);
    e2e_server_extra_args(NULL);
    unsetenv("CUDAREM_TLS");
    unsetenv("CUDAREM_TLS_CA");
    unsetenv("CUDAREM_TOKEN");
    e2e_dir_remove(dir);
}

static void start_server(char *const *args)
{
    char err[512];
    e2e_server_extra_args(args);
    ck_assert_msg(e2e_server_start_logged(&srv, dir, 0, err, sizeof err) == 0, "server start: %s", err);
}

/* The lines tests/cuda/nodevice prints for CODE. */
static void expected_lines(const char *code, char *buf, size_t len)
{
    const char *text = strcmp(code, BUSY) == 0 ? "CUDA-capable device(s) is/are busy or unavailable"
                                               : "no CUDA-capable device is detected";
    snprintf(buf, len, "driver %d cudaSuccess\ncount %s: %s\nmalloc %s\nlast %s\n", CUDART_VERSION, code, text,
             code, code);
}

/* Runs PROG (relative to the build) against ADDR; asserts it printed WANT and
 * that its stderr holds the shim's line with WHY and the code. */
static void expect_program(const char *rel, const char *addr, const char *code, const char *why)
{
    char path[E2E_PATH_LEN], want[512], line[160], tag[64];
    e2e_proc p;
    e2e_build_path(rel, path, sizeof path);
    snprintf(tag, sizeof tag, "%s", strchr(rel, '/') ? rel : rel);
    for (char *c = tag; *c; c++)
        if (*c == '/')
            *c = '-';
    char *argv[] = {path, NULL};
    e2e_proc_opts o = {addr, 1, 0};
    ck_assert_msg(e2e_run(&p, dir, tag, path, argv, &o) == 0, "%s: cannot run", rel);
    char *out = e2e_read_file(p.out_path), *err = e2e_read_file(p.err_path);
    expected_lines(code, want, sizeof want);
    snprintf(line, sizeof line, "CUDA calls will fail (%s)", code);
    int ran = !p.timed_out && WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0;
    int said = strstr(err, "cannot use cudarem server") != NULL && strstr(err, why) != NULL &&
               strstr(err, line) != NULL;
    int same = strcmp(out, want) == 0;
    if (!ran || !said || !same) {
        e2e_dump("expected stdout", want, 1000);
        e2e_dump("stdout", out, 2000);
        e2e_dump("stderr", err, 2000);
    }
    free(out);
    free(err);
    ck_assert_msg(ran, "%s did not run to its end", rel);
    ck_assert_msg(same, "%s: the program saw other codes than %s (stdout above)", rel, code);
    ck_assert_msg(said, "%s: the shim's line did not say why ('%s') and '%s'", rel, why, line);
}

static const char *pyenv_dir(void)
{
    const char *d = getenv("CUDAREM_PYENV");
    return d != NULL && d[0] != '\0' ? d : E2E_PYENV;
}

/* tests/python/unusable.py CODE against ADDR, when the framework environment is in use. */
static void expect_frameworks(const char *addr, const char *code)
{
    const char *wanted = getenv("CRM_FRAMEWORKS");
    if (wanted == NULL || wanted[0] == '\0') {
        fprintf(stderr, "NOT RUN: the frameworks' view of an unusable server (CRM_FRAMEWORKS unset: "
                        "make sets it unless FRAMEWORK_TESTS=0)\n");
        return;
    }
    char python[E2E_PATH_LEN], script[E2E_PATH_LEN], ldpath[2 * E2E_PATH_LEN + 64], verdict[64];
    struct stat st;
    e2e_proc p;
    snprintf(python, sizeof python, "%s/bin/python", pyenv_dir());
    ck_assert_msg(stat(python, &st) == 0, "no Python environment at '%s' (run tools/python-env.sh)", pyenv_dir());
    snprintf(script, sizeof script, "%s/tests/python/unusable.py", e2e_source_dir());
    e2e_client_library_path(e2e_framework_library_path(pyenv_dir(), ldpath, sizeof ldpath));
    char *argv[] = {python, script, (char *)code, NULL};
    e2e_proc_opts o = {addr, 1, 0};
    int spawned = e2e_spawn(&p, dir, "unusable-py", python, argv, &o) == 0;
    if (spawned)
        e2e_wait(&p, E2E_SAN ? 600000 : 240000);
    e2e_client_library_path(NULL);
    char *out = e2e_read_file(p.out_path), *err = e2e_read_file(p.err_path);
    e2e_describe(&p, verdict, sizeof verdict);
    int ok = spawned && !p.timed_out && WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0 &&
             strstr(out, "PASS unusable") != NULL && strstr(err, "cannot use cudarem server") != NULL;
    if (!ok) {
        e2e_dump("unusable.py stdout", out, 6000);
        e2e_dump("unusable.py stderr", err, 3000);
    }
    free(out);
    free(err);
    ck_assert_msg(ok, "unusable.py %s: %s, expected PASS unusable and the shim's line", code, verdict);
}

/* Every build, and the frameworks, against ADDR. */
static void expect_unusable(const char *addr, const char *code, const char *why)
{
    expect_program("cuda/nodevice", addr, code, why);
    expect_program("cuda-static/nodevice", addr, code, why);
    expect_frameworks(addr, code);
}

/* Starts tests/cuda/hog through the shim against ADDR and waits until it holds its
 * session (--max-sessions counts admitted sessions: the harness's readiness probe,
 * never admitted, takes no place). */
static void hold_session(const char *addr)
{
    char path[E2E_PATH_LEN];
    e2e_build_path("cuda/hog", path, sizeof path);
    char *argv[] = {path, "4096", NULL};
    e2e_proc_opts o = {addr, 1, 0};
    ck_assert_msg(e2e_spawn(&holder, dir, "holder", path, argv, &o) == 0, "cannot start the holder");
    if (e2e_wait_output(&holder, "allocated", 30000) != 0) {
        char *out = e2e_read_file(holder.out_path), *err = e2e_read_file(holder.err_path);
        char *log = e2e_read_file(srv.log_path);
        e2e_dump("holder stdout", out, 2000);
        e2e_dump("holder stderr", err, 2000);
        e2e_dump("server log", log, 3000);
        free(out);
        free(err);
        free(log);
        ck_abort_msg("the holder never opened its session");
    }
}

START_TEST(test_unreachable)
{
    char addr[E2E_PATH_LEN + 16];
    snprintf(addr, sizeof addr, "unix:%s/nobody.sock", dir);
    expect_unusable(addr, NO_DEVICE, "No such file or directory");
}
END_TEST

START_TEST(test_refused)
{
    char addr[64];
    snprintf(addr, sizeof addr, "tcp:127.0.0.1:%d", e2e_free_port());
    expect_unusable(addr, NO_DEVICE, "refused");
}
END_TEST

START_TEST(test_full)
{
    start_server((char *[]){"--max-sessions", "1", NULL});
    hold_session(srv.unix_addr);
    expect_unusable(srv.unix_addr, BUSY, "server full");
}
END_TEST

START_TEST(test_quota)
{
    char users[E2E_PATH_LEN], token[256], quota[64];
    snprintf(users, sizeof users, "%s/users", dir);
    ck_assert_msg(e2e_add_user(dir, users, "alice", 0, token, sizeof token) == 0, "--add-user alice failed");
    snprintf(quota, sizeof quota, "alice:sessions=1");
    start_server((char *[]){"--auth-file", users, "--quota", quota, NULL});
    setenv("CUDAREM_TOKEN", token, 1);
    hold_session(srv.unix_addr);
    expect_unusable(srv.unix_addr, BUSY, "quota");
}
END_TEST

START_TEST(test_untrusted_certificate)
{
    char cert[E2E_PATH_LEN], key[E2E_PATH_LEN], other[E2E_PATH_LEN], other_key[E2E_PATH_LEN];
    snprintf(cert, sizeof cert, "%s/cert.pem", dir);
    snprintf(key, sizeof key, "%s/key.pem", dir);
    snprintf(other, sizeof other, "%s/other.pem", dir);
    snprintf(other_key, sizeof other_key, "%s/other-key.pem", dir);
    ck_assert_msg(e2e_make_cert(cert, key) == 0 && e2e_make_cert(other, other_key) == 0,
                  "openssl(1) could not make a certificate");
    start_server((char *[]){"--tls-cert", cert, "--tls-key", key, NULL});
    setenv("CUDAREM_TLS", "on", 1);
    setenv("CUDAREM_TLS_CA", other, 1); /* not the certificate's signer */
    expect_unusable(srv.tcp_addr, NO_DEVICE, "certificate");
}
END_TEST

START_TEST(test_no_token)
{
    char users[E2E_PATH_LEN], token[256];
    snprintf(users, sizeof users, "%s/users", dir);
    ck_assert_msg(e2e_add_user(dir, users, "alice", 0, token, sizeof token) == 0, "--add-user alice failed");
    start_server((char *[]){"--auth-file", users, NULL});
    expect_unusable(srv.unix_addr, NO_DEVICE, "refused");
}
END_TEST

/* Five failed authentications lock the peer out for a minute: even the right token
 * is refused then, for now. */
START_TEST(test_locked_out)
{
    char users[E2E_PATH_LEN], token[256], wrong[300], *err;
    snprintf(users, sizeof users, "%s/users", dir);
    ck_assert_msg(e2e_add_user(dir, users, "alice", 0, token, sizeof token) == 0, "--add-user alice failed");
    start_server((char *[]){"--auth-file", users, NULL});
    snprintf(wrong, sizeof wrong, "%.*sx", (int)strlen(token) - 1, token);
    setenv("CUDAREM_TOKEN", wrong, 1);
    for (int i = 0; i < 5; i++) {
        char tag[32];
        snprintf(tag, sizeof tag, "wrong-%d", i);
        ck_assert_msg(e2e_client_status(dir, "meminfo", srv.unix_addr, tag, &err) > 0, "a wrong token was admitted");
        free(err);
    }
    /* the daemon counts a failure once it has reaped that session's process */
    int locked = e2e_wait_log_lines(srv.log_path, "failed to authenticate 5 times", 1, 5000) >= 1;
    ck_assert_msg(locked, "the server did not lock the peer out after 5 failures");
    setenv("CUDAREM_TOKEN", token, 1);
    expect_unusable(srv.unix_addr, BUSY, "too many failed authentications");
}
END_TEST

/* ---- a server of another protocol version --------------------------------------- */

static int fake_read(void *fd, void *buf, int len)
{
    ssize_t n = read(*(int *)fd, buf, (size_t)len);
    return n > 0 ? (int)n : -1;
}

static int fake_write(void *fd, void *buf, int len)
{
    return (int)write(*(int *)fd, buf, (size_t)len);
}

/* Answers every HELLO on one connection with a protocol version one past ours. */
static void fake_serve(int fd)
{
    XDR x;
    xdrrec_create(&x, 0, 0, (char *)&fd, fake_read, fake_write);
    for (;;) {
        struct rpc_msg call;
        memset(&call, 0, sizeof call);
        x.x_op = XDR_DECODE;
        if (!xdrrec_skiprecord(&x) || !xdr_callmsg(&x, &call))
            break;
        crm_hello_res res;
        memset(&res, 0, sizeof res);
        res.proto_version = CRM_PROTO_VERSION + 1;
        res.backend = res.message = res.chan_path = "";
        struct rpc_msg reply = {.rm_xid = call.rm_xid, .rm_direction = REPLY};
        reply.rm_reply.rp_stat = MSG_ACCEPTED;
        reply.acpted_rply.ar_verf = _null_auth;
        reply.acpted_rply.ar_stat = SUCCESS;
        reply.acpted_rply.ar_results.where = (caddr_t)&res;
        reply.acpted_rply.ar_results.proc = (xdrproc_t)xdr_crm_hello_res;
        x.x_op = XDR_ENCODE;
        if (!xdr_replymsg(&x, &reply) || !xdrrec_endofrecord(&x, TRUE))
            break;
    }
    xdr_destroy(&x);
    close(fd);
}

/* Forks the fake server on a Unix socket in the scratch directory; ADDR gets its address. */
static void start_fake(char *addr, size_t len)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s/fake.sock", dir);
    int l = socket(AF_UNIX, SOCK_STREAM, 0);
    ck_assert_msg(l >= 0 && bind(l, (struct sockaddr *)&sa, sizeof sa) == 0 && listen(l, 8) == 0,
                  "cannot listen on %s", sa.sun_path);
    fake = fork();
    ck_assert_msg(fake >= 0, "fork failed");
    if (fake == 0) {
        for (;;) {
            int c = accept(l, NULL, NULL);
            if (c < 0)
                _exit(0);
            if (fork() == 0) {
                close(l);
                fake_serve(c);
                _exit(0);
            }
            close(c);
            while (waitpid(-1, NULL, WNOHANG) > 0)
                ;
        }
    }
    close(l);
    snprintf(addr, len, "unix:%s", sa.sun_path);
}

START_TEST(test_other_protocol)
{
    char addr[E2E_PATH_LEN + 16];
    start_fake(addr, sizeof addr);
    expect_unusable(addr, NO_DEVICE, "protocol version mismatch");
}
END_TEST

static Suite *unusable_suite(void)
{
    Suite *s = suite_create("e2e_unusable");
    TCase *tc = tcase_create("unusable");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, E2E_SAN ? 1800 : 600);
    tcase_add_test(tc, test_unreachable);
    tcase_add_test(tc, test_refused);
    tcase_add_test(tc, test_full);
    tcase_add_test(tc, test_quota);
    tcase_add_test(tc, test_untrusted_certificate);
    tcase_add_test(tc, test_no_token);
    tcase_add_test(tc, test_locked_out);
    tcase_add_test(tc, test_other_protocol);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(unusable_suite)
