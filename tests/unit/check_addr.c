/* check_addr.c -- unit tests of common/crm_addr: parsing and formatting endpoint
 * addresses (good and malformed), and listening/connecting on loopback TCP and on
 * Unix sockets in a temporary directory. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/crm_addr.h"
#include "protocol/crm_wire.h"
#include "tests/unit/crm_check.h"

/* Parses text expecting success. */
static crm_addr parse_ok(const char *text)
{
    crm_addr a;
    char err[128] = "";
    if (crm_addr_parse(text, &a, err, sizeof err) != 0)
        ck_abort_msg("parse of '%s' failed: %s", text, err);
    return a;
}

/* Parses text expecting failure with a reason. */
static void parse_fails(const char *text)
{
    crm_addr a;
    char err[128] = "";
    ck_assert_msg(crm_addr_parse(text, &a, err, sizeof err) == -1, "'%s' was accepted", text);
    ck_assert_msg(err[0] != '\0', "no reason given for '%s'", text);
}

static void assert_tcp(const crm_addr *a, const char *host, int port)
{
    ck_assert_int_eq(a->kind, CRM_ADDR_TCP);
    ck_assert_str_eq(a->host, host);
    ck_assert_int_eq(a->port, port);
}

/* ------------------------------------------------------------------ parse */

START_TEST(test_parse_tcp_forms)
{
    crm_addr a = parse_ok("tcp:host:1234");
    assert_tcp(&a, "host", 1234);
    a = parse_ok("host:1234");
    assert_tcp(&a, "host", 1234);
    a = parse_ok("127.0.0.1:1");
    assert_tcp(&a, "127.0.0.1", 1);
    a = parse_ok("tcp:gpu-box.example.org:65535");
    assert_tcp(&a, "gpu-box.example.org", 65535);
}
END_TEST

START_TEST(test_parse_bracketed_ipv6)
{
    crm_addr a = parse_ok("[::1]:99");
    assert_tcp(&a, "::1", 99);
    a = parse_ok("tcp:[fe80::1%eth0]:7000");
    assert_tcp(&a, "fe80::1%eth0", 7000);
}
END_TEST

START_TEST(test_parse_default_port_when_none_given)
{
    crm_addr a = parse_ok("tcp:host");
    assert_tcp(&a, "host", CRM_DEFAULT_PORT);
    a = parse_ok("localhost");
    assert_tcp(&a, "localhost", CRM_DEFAULT_PORT);
}
END_TEST

START_TEST(test_parse_bracketed_ipv6_without_port_takes_default)
{
    /* The colons inside the brackets are part of the host, not a port separator. */
    crm_addr a = parse_ok("tcp:[::1]");
    assert_tcp(&a, "::1", CRM_DEFAULT_PORT);
    a = parse_ok("[fe80::2]");
    assert_tcp(&a, "fe80::2", CRM_DEFAULT_PORT);
}
END_TEST

START_TEST(test_parse_unix_path)
{
    crm_addr a = parse_ok("unix:/tmp/x.sock");
    ck_assert_int_eq(a.kind, CRM_ADDR_UNIX);
    ck_assert_str_eq(a.path, "/tmp/x.sock");
    a = parse_ok("unix:relative.sock");
    ck_assert_int_eq(a.kind, CRM_ADDR_UNIX);
    ck_assert_str_eq(a.path, "relative.sock");
}
END_TEST

START_TEST(test_parse_rejects_bad_ports)
{
    parse_fails("host:0");
    parse_fails("host:70000");
    parse_fails("host:65536");
    parse_fails("host:abc");
    parse_fails("host:12ab");
    parse_fails("host:-1");
    parse_fails("host:");
    parse_fails("tcp:host:0");
    parse_fails("[::1]:0");
    parse_fails("[::1]:");
    parse_fails("host:99999999999999999999");
    parse_fails("host:+80");
    parse_fails("host: 80");
}
END_TEST

START_TEST(test_parse_rejects_ambiguous_ipv6_and_stray_brackets)
{
    parse_fails("::1");
    parse_fails("tcp:::1");
    parse_fails("fe80::2:99");
    parse_fails("[::1]x:99");
    parse_fails("[::1:99");
}
END_TEST

START_TEST(test_parse_rejects_empty_host)
{
    parse_fails("");
    parse_fails("tcp:");
    parse_fails(":1234");
    parse_fails("tcp::1234");
    parse_fails("[]:1234");
}
END_TEST

START_TEST(test_parse_host_length_limit)
{
    char text[300];
    crm_addr a;
    memset(text, 'h', 255);
    strcpy(text + 255, ":80");
    a = parse_ok(text);
    ck_assert_uint_eq(strlen(a.host), 255);
    ck_assert_int_eq(a.port, 80);
    memset(text, 'h', 256);
    strcpy(text + 256, ":80");
    parse_fails(text);
}
END_TEST

START_TEST(test_parse_unix_path_limits)
{
    char text[200];
    parse_fails("unix:");
    strcpy(text, "unix:");
    memset(text + 5, 'p', 107);
    text[5 + 107] = '\0';
    crm_addr a = parse_ok(text); /* 107 chars + NUL fill sun_path exactly */
    ck_assert_uint_eq(strlen(a.path), 107);
    memset(text + 5, 'p', 108);
    text[5 + 108] = '\0';
    parse_fails(text);
    memset(text + 5, 'p', 150);
    text[5 + 150] = '\0';
    parse_fails(text);
}
END_TEST

START_TEST(test_parse_error_fits_small_buffer)
{
    crm_addr a;
    char err[8];
    memset(err, 'x', sizeof err);
    ck_assert_int_eq(crm_addr_parse("host:abc", &a, err, 4), -1);
    ck_assert_int_eq(err[3], '\0');
    ck_assert_int_eq(err[4], 'x'); /* nothing written past errlen */
}
END_TEST

/* ------------------------------------------------------------------ format */

static void assert_round_trip(const char *text, const char *want)
{
    crm_addr a = parse_ok(text), b;
    char buf[512];
    crm_addr_format(&a, buf, sizeof buf);
    ck_assert_str_eq(buf, want);
    b = parse_ok(buf);
    ck_assert_int_eq(b.kind, a.kind);
    ck_assert_str_eq(b.host, a.host);
    ck_assert_int_eq(b.port, a.port);
    ck_assert_str_eq(b.path, a.path);
}

START_TEST(test_format_round_trips)
{
    assert_round_trip("tcp:host:1234", "tcp:host:1234");
    assert_round_trip("host:1234", "tcp:host:1234");
    assert_round_trip("host", "tcp:host:7470");
    assert_round_trip("[::1]:99", "tcp:[::1]:99");
    assert_round_trip("10.0.0.1:5", "tcp:10.0.0.1:5");
    assert_round_trip("unix:/tmp/x.sock", "unix:/tmp/x.sock");
}
END_TEST

START_TEST(test_format_truncates_to_buffer)
{
    crm_addr a = parse_ok("tcp:averylonghostname:1234");
    char buf[12];
    memset(buf, 'x', sizeof buf);
    crm_addr_format(&a, buf, 8);
    ck_assert_str_eq(buf, "tcp:ave");
    ck_assert_int_eq(buf[8], 'x');
}
END_TEST

/* ------------------------------------------------------------------ sockets */

/* A TCP port on 127.0.0.1 that was free a moment ago. */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&sin, sizeof sin), 0);
    socklen_t len = sizeof sin;
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
    close(fd);
    return ntohs(sin.sin_port);
}

static void assert_blocking_cloexec(int fd)
{
    ck_assert_int_eq(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
    ck_assert_int_ne(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
}

/* Connects to the listener, accepts, and sends a few bytes each way. */
static void exchange(const crm_addr *a, int lfd)
{
    char err[128] = "";
    int cfd = crm_addr_connect(a, 2000, err, sizeof err);
    ck_assert_msg(cfd >= 0, "connect failed: %s", err);
    assert_blocking_cloexec(cfd);
    int sfd = accept(lfd, NULL, NULL);
    ck_assert_int_ge(sfd, 0);
    ck_assert_int_eq(write(cfd, "ping", 4), 4);
    char buf[8] = "";
    ck_assert_int_eq(read(sfd, buf, 4), 4);
    ck_assert_int_eq(memcmp(buf, "ping", 4), 0);
    ck_assert_int_eq(write(sfd, "pong", 4), 4);
    ck_assert_int_eq(read(cfd, buf, 4), 4);
    ck_assert_int_eq(memcmp(buf, "pong", 4), 0);
    close(sfd);
    close(cfd);
}

START_TEST(test_tcp_listen_and_connect_on_loopback)
{
    char text[64], err[128] = "";
    snprintf(text, sizeof text, "tcp:127.0.0.1:%d", free_port());
    crm_addr a = parse_ok(text);
    int lfd = crm_addr_listen(&a, err, sizeof err);
    ck_assert_msg(lfd >= 0, "listen failed: %s", err);
    ck_assert_int_ne(fcntl(lfd, F_GETFD) & FD_CLOEXEC, 0);
    exchange(&a, lfd);
    exchange(&a, lfd);
    close(lfd);
}
END_TEST

START_TEST(test_tcp_listen_on_busy_port_fails_with_reason)
{
    char text[64], err[128] = "";
    snprintf(text, sizeof text, "127.0.0.1:%d", free_port());
    crm_addr a = parse_ok(text);
    int lfd = crm_addr_listen(&a, err, sizeof err);
    ck_assert_msg(lfd >= 0, "listen failed: %s", err);
    err[0] = '\0';
    ck_assert_int_eq(crm_addr_listen(&a, err, sizeof err), -1);
    ck_assert_str_eq(err, strerror(EADDRINUSE));
    close(lfd);
}
END_TEST

START_TEST(test_tcp_connect_to_closed_port_fails_with_reason)
{
    char text[64], err[128] = "";
    snprintf(text, sizeof text, "127.0.0.1:%d", free_port());
    crm_addr a = parse_ok(text);
    ck_assert_int_eq(crm_addr_connect(&a, 2000, err, sizeof err), -1);
    ck_assert_str_eq(err, strerror(ECONNREFUSED));
}
END_TEST

/* A fresh temporary directory; the caller removes it. */
static void temp_dir(char *dir, size_t len)
{
    const char *base = getenv("TMPDIR");
    snprintf(dir, len, "%s/crm_addr_XXXXXX", base && *base ? base : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

START_TEST(test_unix_listen_and_connect_in_temp_dir)
{
    char dir[256], text[300], err[128] = "";
    temp_dir(dir, sizeof dir);
    snprintf(text, sizeof text, "unix:%s/s.sock", dir);
    crm_addr a = parse_ok(text);
    int lfd = crm_addr_listen(&a, err, sizeof err);
    ck_assert_msg(lfd >= 0, "listen failed: %s", err);
    ck_assert_int_eq(access(a.path, F_OK), 0);
    exchange(&a, lfd);
    close(lfd);

    /* The socket file left behind (a killed server) does not block a new listener. */
    ck_assert_int_eq(access(a.path, F_OK), 0);
    lfd = crm_addr_listen(&a, err, sizeof err);
    ck_assert_msg(lfd >= 0, "relisten over a stale socket failed: %s", err);
    exchange(&a, lfd);
    close(lfd);
    unlink(a.path);
    rmdir(dir);
}
END_TEST

START_TEST(test_unix_connect_without_listener_fails_with_reason)
{
    char dir[256], text[300], err[128] = "";
    temp_dir(dir, sizeof dir);
    snprintf(text, sizeof text, "unix:%s/none.sock", dir);
    crm_addr a = parse_ok(text);
    ck_assert_int_eq(crm_addr_connect(&a, 1000, err, sizeof err), -1);
    ck_assert_str_eq(err, strerror(ENOENT));

    /* A socket file nobody listens on any more: refused. */
    int lfd = crm_addr_listen(&a, err, sizeof err);
    ck_assert_int_ge(lfd, 0);
    close(lfd);
    err[0] = '\0';
    ck_assert_int_eq(crm_addr_connect(&a, 1000, err, sizeof err), -1);
    ck_assert_str_eq(err, strerror(ECONNREFUSED));
    unlink(a.path);
    rmdir(dir);
}
END_TEST

START_TEST(test_unix_listen_in_missing_dir_fails_with_reason)
{
    char err[128] = "";
    crm_addr a = parse_ok("unix:/nonexistent-crm-dir/x/s.sock");
    ck_assert_int_eq(crm_addr_listen(&a, err, sizeof err), -1);
    ck_assert_str_eq(err, strerror(ENOENT));
}
END_TEST

Suite *crm_addr_suite(void)
{
    Suite *s = suite_create("addr");
    TCase *tp = tcase_create("parse");
    tcase_add_test(tp, test_parse_tcp_forms);
    tcase_add_test(tp, test_parse_bracketed_ipv6);
    tcase_add_test(tp, test_parse_default_port_when_none_given);
    tcase_add_test(tp, test_parse_bracketed_ipv6_without_port_takes_default);
    tcase_add_test(tp, test_parse_unix_path);
    tcase_add_test(tp, test_parse_rejects_bad_ports);
    tcase_add_test(tp, test_parse_rejects_empty_host);
    tcase_add_test(tp, test_parse_rejects_ambiguous_ipv6_and_stray_brackets);
    tcase_add_test(tp, test_parse_host_length_limit);
    tcase_add_test(tp, test_parse_unix_path_limits);
    tcase_add_test(tp, test_parse_error_fits_small_buffer);
    tcase_add_test(tp, test_format_round_trips);
    tcase_add_test(tp, test_format_truncates_to_buffer);
    suite_add_tcase(s, tp);

    TCase *ts = tcase_create("sockets");
    tcase_add_test(ts, test_tcp_listen_and_connect_on_loopback);
    tcase_add_test(ts, test_tcp_listen_on_busy_port_fails_with_reason);
    tcase_add_test(ts, test_tcp_connect_to_closed_port_fails_with_reason);
    tcase_add_test(ts, test_unix_listen_and_connect_in_temp_dir);
    tcase_add_test(ts, test_unix_connect_without_listener_fails_with_reason);
    tcase_add_test(ts, test_unix_listen_in_missing_dir_fails_with_reason);
    suite_add_tcase(s, ts);
    return s;
}

CRM_CHECK_MAIN(crm_addr_suite)
