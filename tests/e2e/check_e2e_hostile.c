/* check_e2e_hostile.c -- end-to-end suite: strangers on the network against a server
 * that wants tokens (--auth-file), while a client with a valid token works.
 *
 * Attacks: idle connections from another source (200, past every cap) and from the
 * client's own source (100, then the client a little later); handshakes that stall
 * half-way (a record announced and never sent) until --login-grace ends them; a
 * flood of connections opened and dropped at once; a flood of malformed openings
 * (a record of 2 GiB, garbage, a record cut short, a lone TLS byte); more idle
 * connections than
 * --max-sessions, which counts admitted sessions only; strangers at 64 addresses
 * filling --max-startups while a client admitted before returns. Under each, the client is
 * admitted and its program passes, the server's processes stay within
 * --max-startups-per-peer (plus the client's), and the attacker's connections over
 * the caps are closed. How long the client took is printed (not judged: speed is
 * measured in benchmarks/).
 */
#include "tests/e2e/e2e_harness.h"
#include "tests/unit/crm_check.h"
#include "server/crm_startup.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_ATTACK 256

static char dir[64], users[E2E_PATH_LEN], token[256];
static e2e_server srv;
static int attack[MAX_ATTACK], nattack;

static void setup(void)
{
    ck_assert_msg(e2e_dir_make(dir, sizeof dir) == 0, "mkdtemp failed");
    snprintf(users, sizeof users, "%s/users", dir);
    ck_assert_msg(e2e_add_user(dir, users, "alice", 0, token, sizeof token) == 0, "--add-user alice failed");
    nattack = 0;
}

static void teardown(void)
{
    for (int i = 0; i < nattack; i++)
        close(attack[i]);
    nattack = 0;
    e2e_server_kill(&srv);
    e2e_server_extra_args(NULL);
    unsetenv("CUDAREM_TOKEN");
    e2e_dir_remove(dir);
}

static void start_server(char *const *extra)
{
    static char *args[16];
    int n = 0;
    args[n++] = "--auth-file";
    args[n++] = users;
    for (int i = 0; extra != NULL && extra[i] != NULL && n < 15; i++)
        args[n++] = extra[i];
    args[n] = NULL;
    char err[512];
    e2e_server_extra_args(args);
    ck_assert_msg(e2e_server_start_logged(&srv, dir, 0, err, sizeof err) == 0, "server start: %s", err);
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* A TCP connection to the server from source address src (127.0.0.x), or -1. */
static int connect_from(const char *src)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in from = {.sin_family = AF_INET}, to = {.sin_family = AF_INET};
    inet_pton(AF_INET, src, &from.sin_addr);
    inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    to.sin_port = htons((uint16_t)srv.port);
    if (fd < 0 || bind(fd, (struct sockaddr *)&from, sizeof from) != 0 ||
        connect(fd, (struct sockaddr *)&to, sizeof to) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* Opens n idle connections from src, kept in attack[]. */
static void open_idle(const char *src, int n)
{
    for (int i = 0; i < n && nattack < MAX_ATTACK; i++) {
        int fd = connect_from(src);
        ck_assert_msg(fd >= 0, "connect from %s: %s", src, strerror(errno));
        attack[nattack++] = fd;
    }
}

/* How many of the attacker's connections the server has closed: waits until want
 * are, or max_ms have passed. */
static int closed_by_server(int want, int max_ms)
{
    long long deadline = now_ms() + max_ms;
    int closed;
    do {
        closed = 0;
        for (int i = 0; i < nattack; i++) {
            struct pollfd p = {attack[i], POLLIN, 0};
            char byte;
            if (poll(&p, 1, 0) == 1 && recv(attack[i], &byte, 1, MSG_DONTWAIT | MSG_PEEK) <= 0)
                closed++;
        }
        if (closed < want)
            e2e_sleep_ms(50);
    } while (closed < want && now_ms() < deadline);
    return closed;
}

/* The server's session processes now. */
static int server_children(void)
{
    long long rss_kib;
    return e2e_server_footprint(&srv, &rss_kib) - 1; /* less the daemon */
}

/* The client with alice's token runs PROG (tests/cuda) over TCP, from 127.0.0.1,
 * and must pass; returns how long it took, in ms. */
static long long client_runs(const char *prog, const char *attack_name)
{
    char *err;
    setenv("CUDAREM_TOKEN", token, 1);
    long long t0 = now_ms();
    int rc = e2e_client_status(dir, prog, srv.tcp_addr, prog, &err);
    long long took = now_ms() - t0;
    if (rc != 0) {
        char *log = e2e_read_file(srv.log_path);
        e2e_dump("client stderr", err, 2000);
        e2e_dump("server log", log, 4000);
        free(log);
    }
    free(err);
    unsetenv("CUDAREM_TOKEN");
    ck_assert_msg(rc == 0, "%s: the client's %s failed (exit %d)", attack_name, prog, rc);
    long long rss_kib;
    int procs = e2e_server_footprint(&srv, &rss_kib);
    fprintf(stderr, "hostile: %s: the client's %s passed in %lld ms; %d session processes; the server's %d processes "
            "%lld MiB resident\n", attack_name, prog, took, server_children(), procs, rss_kib / 1024);
    return took;
}

START_TEST(test_idle_from_another_source)
{
    start_server((char *[]){"--max-startups-per-peer", "32", NULL});
    open_idle("127.0.0.2", 200);
    int procs = server_children();
    ck_assert_msg(procs <= 32, "%d processes for one source's idle connections, --max-startups-per-peer 32", procs);
    client_runs("meminfo", "200 idle connections from another source");
    int closed = closed_by_server(200 - 32, 10000);
    ck_assert_msg(closed >= 200 - 32, "only %d of the attacker's 200 connections were closed", closed);
}
END_TEST

START_TEST(test_idle_from_the_same_source)
{
    start_server((char *[]){"--max-startups-per-peer", "32", NULL});
    open_idle("127.0.0.1", 100);
    e2e_sleep_ms(CRM_STARTUP_MIN_AGE_MS + 300); /* idle long enough to be ended for a newcomer */
    client_runs("meminfo", "100 idle connections from the client's own source");
}
END_TEST

/* A record mark announcing 4,000 bytes, and 10 of them: the server's read waits. */
static void stall_half_way(int fd)
{
    unsigned char mark[4] = {0x80, 0x00, 0x0f, 0xa0}, part[10] = {0};
    ck_assert_int_eq(send(fd, mark, sizeof mark, MSG_NOSIGNAL), (ssize_t)sizeof mark);
    ck_assert_int_eq(send(fd, part, sizeof part, MSG_NOSIGNAL), (ssize_t)sizeof part);
}

START_TEST(test_stalled_handshakes_end_at_the_grace)
{
    start_server((char *[]){"--login-grace", "1", NULL});
    open_idle("127.0.0.2", 20);
    for (int i = 0; i < nattack; i++)
        stall_half_way(attack[i]);
    client_runs("meminfo", "20 handshakes stalled half-way");
    int closed = closed_by_server(20, 10000);
    ck_assert_msg(closed == 20, "%d of 20 stalled handshakes were ended by --login-grace 1", closed);
    for (int i = 0; i < 100 && server_children() > 0; i++) /* the daemon reaps them */
        e2e_sleep_ms(50);
    ck_assert_int_eq(server_children(), 0);
}
END_TEST

/* A child process connecting from 127.0.0.2 until killed, sending opening(i) on the
 * i-th connection (nothing when it returns len 0), then closing it. */
typedef struct attack_bytes {
    const void *p;
    size_t n;
} attack_bytes;

static pid_t start_attacker(attack_bytes (*opening)(unsigned i))
{
    pid_t pid = fork();
    ck_assert_msg(pid >= 0, "fork failed");
    if (pid == 0) {
        for (unsigned i = 0;; i++) {
            int fd = connect_from("127.0.0.2");
            if (fd < 0)
                continue;
            attack_bytes b = opening(i);
            if (b.n > 0) {
                ssize_t sent = send(fd, b.p, b.n, MSG_NOSIGNAL);
                (void)sent;
            }
            close(fd);
        }
    }
    return pid;
}

/* Connections opened and dropped at once. */
static attack_bytes nothing(unsigned i)
{
    (void)i;
    return (attack_bytes){NULL, 0};
}

static pid_t start_flood(void)
{
    return start_attacker(nothing);
}

START_TEST(test_connection_flood)
{
    start_server(NULL);
    pid_t flood = start_flood();
    e2e_sleep_ms(500);
    client_runs("meminfo", "a flood of connections opened and dropped");
    client_runs("copy", "a flood of connections opened and dropped");
    kill(flood, SIGKILL);
    waitpid(flood, NULL, 0);
}
END_TEST

/* One malformed opening per connection, in turn: a record announcing 2 GiB,
 * garbage, a record cut short, a TLS-looking byte and nothing more. */
static attack_bytes malformed(unsigned i)
{
    static const unsigned char huge[8] = {0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4};
    static const unsigned char cut[12] = {0x80, 0, 0x10, 0, 0, 0, 0, 1}, tls[1] = {0x16};
    static unsigned char junk[64];
    for (unsigned k = 0; k < sizeof junk; k++)
        junk[k] = (unsigned char)(k * 37 + 11);
    const attack_bytes kinds[] = {{huge, sizeof huge}, {junk, sizeof junk}, {cut, sizeof cut}, {tls, sizeof tls}};
    return kinds[i % 4];
}

static pid_t start_garbage(void)
{
    return start_attacker(malformed);
}

START_TEST(test_malformed_openings_flood)
{
    start_server(NULL);
    pid_t garbage = start_garbage();
    e2e_sleep_ms(500);
    client_runs("copy", "a flood of malformed openings");
    kill(garbage, SIGKILL);
    waitpid(garbage, NULL, 0);
    client_runs("meminfo", "after a flood of malformed openings");
    /* strangers' connections are logged at debug only: the flood cannot fill the log */
    char *log = e2e_read_file(srv.log_path);
    int lines = 0;
    for (const char *c = log; *c; c++)
        lines += *c == '\n';
    if (lines > 40)
        e2e_dump("server log", log, 3000);
    free(log);
    fprintf(stderr, "hostile: the flood left %d lines in the server's log\n", lines);
    ck_assert_msg(lines <= 40, "the server's log grew to %d lines under the flood", lines);
}
END_TEST

START_TEST(test_max_sessions_counts_admitted_only)
{
    start_server((char *[]){"--max-sessions", "2", NULL});
    open_idle("127.0.0.2", 10);
    client_runs("meminfo", "10 idle connections and --max-sessions 2");
}
END_TEST

/* Strangers at 64 addresses hold every startup --max-startups allows, all younger
 * than CRM_STARTUP_MIN_AGE_MS: a stranger more is closed at once, while the client,
 * admitted before from its address, ends a stranger's startup and is admitted. */
START_TEST(test_many_addresses_keep_out_no_returning_user)
{
    start_server((char *[]){"--max-startups", "64", NULL});
    client_runs("meminfo", "before the strangers came");
    for (int i = 0; i < 64; i++) {
        char src[32];
        snprintf(src, sizeof src, "127.0.0.%d", 2 + i);
        open_idle(src, 1);
    }
    e2e_sleep_ms(200); /* every one accepted, none 2 s old */
    open_idle("127.0.0.100", 1);
    int stranger = attack[nattack - 1];
    client_runs("copy", "64 young connections from 64 addresses");
    struct pollfd p = {stranger, POLLIN, 0};
    char byte;
    int closed = poll(&p, 1, 2000) == 1 && recv(stranger, &byte, 1, MSG_DONTWAIT | MSG_PEEK) <= 0;
    ck_assert_msg(closed, "a stranger past --max-startups 64 was not closed");
    int procs = server_children();
    for (int i = 0; i < 40 && procs > 64; i++) { /* the ended ones, until the daemon reaps them */
        e2e_sleep_ms(50);
        procs = server_children();
    }
    ck_assert_msg(procs <= 64, "%d processes for 65 strangers under --max-startups 64", procs);
}
END_TEST

static Suite *hostile_suite(void)
{
    Suite *s = suite_create("e2e_hostile");
    TCase *tc = tcase_create("strangers");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, E2E_SAN ? 600 : 120);
    tcase_add_test(tc, test_idle_from_another_source);
    tcase_add_test(tc, test_idle_from_the_same_source);
    tcase_add_test(tc, test_stalled_handshakes_end_at_the_grace);
    tcase_add_test(tc, test_connection_flood);
    tcase_add_test(tc, test_malformed_openings_flood);
    tcase_add_test(tc, test_max_sessions_counts_admitted_only);
    tcase_add_test(tc, test_many_addresses_keep_out_no_returning_user);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(hostile_suite)
