/* check_e2e_tls.c -- end-to-end suite: TLS between client and server. A server
 * with --tls-cert/--tls-key serves a client with CUDAREM_TLS=on that trusts its
 * certificate (CUDAREM_TLS_CA): copies large enough to use the data channel pass,
 * the channel over TLS too; a token proves itself inside TLS; a plain TCP client is
 * refused with a message saying TLS is needed, while a plain Unix-socket client is
 * served; a client that does not trust the certificate, or that speaks TLS to a
 * plain server, fails with a message saying which. The certificates are made by
 * openssl(1) for each test. */
#include "tests/e2e/e2e_harness.h"
#include "tests/unit/crm_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static char dir[64], cert[E2E_PATH_LEN], key[E2E_PATH_LEN], other[E2E_PATH_LEN], other_key[E2E_PATH_LEN];
static e2e_server srv;

static void setup(void)
{
    ck_assert_msg(e2e_dir_make(dir, sizeof dir) == 0, "mkdtemp failed");
    snprintf(cert, sizeof cert, "%s/cert.pem", dir);
    snprintf(key, sizeof key, "%s/key.pem", dir);
    snprintf(other, sizeof other, "%s/other.pem", dir);
    snprintf(other_key, sizeof other_key, "%s/other-key.pem", dir);
    ck_assert_msg(e2e_make_cert(cert, key) == 0, "openssl(1) could not make a certificate");
    ck_assert_msg(e2e_make_cert(other, other_key) == 0, "openssl(1) could not make a certificate");
    unsetenv("CUDAREM_TLS");
    unsetenv("CUDAREM_TLS_CA");
    unsetenv("CUDAREM_TOKEN");
}

static void teardown(void)
{
    e2e_server_kill(&srv);
    e2e_server_extra_args(NULL);
    e2e_dir_remove(dir);
}

static void start_server(char *const *args)
{
    char err[512];
    e2e_server_extra_args(args);
    ck_assert_msg(e2e_server_start(&srv, dir, 0, err, sizeof err) == 0, "server start: %s", err);
}

static void expect(const char *prog, const char *addr, const char *tag, int pass, const char *want)
{
    char *err;
    int rc = e2e_client_status(dir, prog, addr, tag, &err);
    int ok = (pass ? rc == 0 : rc > 0) && (want == NULL || strstr(err, want) != NULL) &&
             (!pass || strstr(err, "data channel") == NULL);
    if (!ok)
        e2e_dump(tag, err, 2000);
    free(err);
    ck_assert_msg(ok, "%s: exit %d, expected %s%s%s", tag, rc, pass ? "success" : "a failure",
                  want ? " saying " : "", want ? want : "");
}

static char *const tls_args[] = {"--tls-cert", cert, "--tls-key", key, NULL};

START_TEST(test_copies_over_tls)
{
    start_server(tls_args);
    setenv("CUDAREM_TLS", "on", 1);
    setenv("CUDAREM_TLS_CA", cert, 1);
    expect("copy", srv.tcp_addr, "copy-tls", 1, NULL);
    char *log = e2e_read_file(srv.log_path);
    int channel_missing = strstr(log, "did not open its data channel") != NULL;
    free(log);
    ck_assert_msg(!channel_missing, "the data channel did not open over TLS");
}
END_TEST

START_TEST(test_plain_tcp_refused_plain_unix_served)
{
    start_server(tls_args);
    expect("meminfo", srv.tcp_addr, "plain-tcp", 0, "takes TCP clients over TLS only");
    expect("meminfo", srv.unix_addr, "plain-unix", 1, NULL);
}
END_TEST

START_TEST(test_untrusted_certificate)
{
    start_server(tls_args);
    setenv("CUDAREM_TLS", "on", 1);
    setenv("CUDAREM_TLS_CA", other, 1);
    expect("meminfo", srv.tcp_addr, "wrong-ca", 0, "certificate is not trusted for 127.0.0.1");
}
END_TEST

START_TEST(test_tls_to_a_plain_server)
{
    start_server(NULL);
    setenv("CUDAREM_TLS", "on", 1);
    setenv("CUDAREM_TLS_CA", cert, 1);
    expect("meminfo", srv.tcp_addr, "tls-to-plain", 0, "does the server speak TLS?");
}
END_TEST

START_TEST(test_token_inside_tls)
{
    char users[E2E_PATH_LEN], server[E2E_PATH_LEN], token[200];
    e2e_proc p;
    snprintf(users, sizeof users, "%s/users", dir);
    e2e_build_path("cudarem-server", server, sizeof server);
    char *argv[] = {server, "--auth-file", users, "--add-user", "alice", NULL};
    e2e_proc_opts plain = {NULL, 0, 0};
    ck_assert_int_eq(e2e_run(&p, dir, "add-user", server, argv, &plain), 0);
    char *out = e2e_read_file(p.out_path);
    ck_assert_int_eq(sscanf(out, "%199s", token), 1);
    free(out);
    char *const args[] = {"--tls-cert", cert, "--tls-key", key, "--auth-file", users, NULL};
    start_server(args);
    setenv("CUDAREM_TLS", "on", 1);
    setenv("CUDAREM_TLS_CA", cert, 1);
    setenv("CUDAREM_TOKEN", token, 1);
    expect("copy", srv.tcp_addr, "token-tls", 1, NULL);
}
END_TEST

static Suite *e2e_tls_suite(void)
{
    Suite *s = suite_create("e2e_tls");
    TCase *tc = tcase_create("tls");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_copies_over_tls);
    tcase_add_test(tc, test_plain_tcp_refused_plain_unix_served);
    tcase_add_test(tc, test_untrusted_certificate);
    tcase_add_test(tc, test_tls_to_a_plain_server);
    tcase_add_test(tc, test_token_inside_tls);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(e2e_tls_suite)
