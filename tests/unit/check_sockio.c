/* check_sockio.c -- unit tests of the socket reads' polling (protocol/crm_sockio.c):
 * what a poll returns when bytes are there, come late, never come or the peer has
 * gone; the poll that takes nothing (TLS); a read that outlasts its poll still gets its bytes; CUDAREM_SPIN_US's values;
 * a stop flag (crm_sock_stop_on) that ends reads, whether they poll or sleep. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "protocol/crm_sockio.h"
#include "tests/unit/crm_check.h"

static int sv[2];

static void open_pair(void)
{
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
}

static void close_pair(void)
{
    close(sv[0]);
    close(sv[1]);
}

/* Writes "late" to sv[0] after the given milliseconds. */
static void *write_later(void *arg)
{
    struct timespec pause = {0, (long)(intptr_t)arg * 1000000L};
    nanosleep(&pause, NULL);
    ck_assert_int_eq(write(sv[0], "late", 4), 4);
    return NULL;
}

START_TEST(test_bytes_waiting)
{
    open_pair();
    ck_assert_int_eq(write(sv[0], "ready", 5), 5);
    char buf[16];
    ck_assert_int_eq(crm_sock_spin_recv(sv[1], buf, sizeof buf), 5);
    ck_assert(memcmp(buf, "ready", 5) == 0);
    close_pair();
}
END_TEST

/* Nothing comes: the poll gives up with EAGAIN and takes nothing; the bytes that
 * come later are all there for the next read. */
START_TEST(test_nothing_comes)
{
    open_pair();
    char buf[16];
    errno = 0;
    ck_assert_int_eq(crm_sock_spin_recv(sv[1], buf, sizeof buf), -1);
    ck_assert(errno == EAGAIN || errno == EWOULDBLOCK);
    ck_assert_int_eq(write(sv[0], "after", 5), 5);
    ck_assert_int_eq(crm_sock_read(sv[1], buf, sizeof buf, NULL), 5);
    ck_assert(memcmp(buf, "after", 5) == 0);
    close_pair();
}
END_TEST

START_TEST(test_peer_gone)
{
    open_pair();
    close(sv[0]);
    char buf[16];
    ck_assert_int_eq(crm_sock_spin_recv(sv[1], buf, sizeof buf), 0);
    ck_assert_int_eq(crm_sock_read(sv[1], buf, sizeof buf, NULL), 0);
    close(sv[1]);
}
END_TEST

/* The poll without taking (for TLS sockets): 1 with bytes waiting, which stay for
 * the read; 0 when none come; 1 once the peer has gone (the read says so). */
START_TEST(test_spin_wait)
{
    open_pair();
    ck_assert_int_eq(crm_sock_spin_wait(sv[1]), 0);
    ck_assert_int_eq(write(sv[0], "kept", 4), 4);
    ck_assert_int_eq(crm_sock_spin_wait(sv[1]), 1);
    char buf[16];
    ck_assert_int_eq(crm_sock_read(sv[1], buf, sizeof buf, NULL), 4);
    ck_assert(memcmp(buf, "kept", 4) == 0);
    close(sv[0]);
    ck_assert_int_eq(crm_sock_spin_wait(sv[1]), 1);
    ck_assert_int_eq(crm_sock_read(sv[1], buf, sizeof buf, NULL), 0);
    close(sv[1]);
}
END_TEST

/* Bytes written 0 ms (within any poll) or 30 ms (past it) after the read began. */
START_TEST(test_read_outlasts_poll)
{
    open_pair();
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, write_later, (void *)(intptr_t)(_i == 0 ? 0 : 30)), 0);
    char buf[16];
    ck_assert_int_eq(crm_sock_read(sv[1], buf, sizeof buf, NULL), 4);
    ck_assert(memcmp(buf, "late", 4) == 0);
    pthread_join(t, NULL);
    close_pair();
}
END_TEST

/* A set stop flag ends a read at once, with EINTR as a signal would: a read that
 * would sleep, and a poll even when bytes wait (a stop signal that lands during a
 * poll interrupts no system call), and a whole read gives up instead of retrying
 * (it would spin); writes still go (the goodbye). The bytes stay for the read after
 * the flag clears. */
START_TEST(test_stop_flag_ends_reads)
{
    static volatile sig_atomic_t stop = 1;
    open_pair();
    crm_sock_stop_on(&stop);
    char buf[16];
    for (int poll = 0; poll < 2; poll++) {
        errno = 0;
        ck_assert_int_eq(crm_sock_read_once(sv[1], buf, sizeof buf, poll), -1);
        ck_assert_int_eq(errno, EINTR);
    }
    ck_assert_int_eq(write(sv[0], "kept", 4), 4);
    ck_assert_int_eq(crm_sock_spin_recv(sv[1], buf, sizeof buf), -1);
    crm_sockio_policy wake = {.retry_timeouts = 1};
    ck_assert_int_eq(crm_sock_read(sv[1], buf, sizeof buf, NULL), -1); /* not retried forever */
    ck_assert_int_eq(crm_sock_read(sv[1], buf, sizeof buf, &wake), -1);
    ck_assert_int_eq(errno, EINTR);
    ck_assert_int_eq(crm_sock_write_all(sv[1], "bye", 3, &wake), 0); /* the goodbye still goes */
    ck_assert_int_eq(read(sv[0], buf, sizeof buf), 3);
    stop = 0;
    ck_assert_int_eq(crm_sock_read_once(sv[1], buf, sizeof buf, 1), 4);
    ck_assert(memcmp(buf, "kept", 4) == 0);
    crm_sock_stop_on(NULL);
    close_pair();
}
END_TEST

/* CUDAREM_SPIN_US: the poll's length, 0 for none, capped; the default for a value
 * that is not a count of microseconds, or none: 50 us with two cores, 0 with one. */
START_TEST(test_spin_setting)
{
    ck_assert_uint_eq(crm_sock_spin_parse("0", 2), 0);
    ck_assert_uint_eq(crm_sock_spin_parse("250", 2), 250000);
    ck_assert_uint_eq(crm_sock_spin_parse("250", 1), 250000);
    ck_assert_uint_eq(crm_sock_spin_parse("999999999", 2), CRM_SOCK_SPIN_MAX_US * 1000ull);
    const char *not_counts[] = {NULL, "", "fast", "-5", "12us"};
    for (size_t i = 0; i < sizeof not_counts / sizeof *not_counts; i++) {
        ck_assert_uint_eq(crm_sock_spin_parse(not_counts[i], 2), CRM_SOCK_SPIN_US * 1000ull);
        ck_assert_uint_eq(crm_sock_spin_parse(not_counts[i], 1), 0);
    }
}
END_TEST

static Suite *sockio_suite(void)
{
    Suite *s = suite_create("sockio");
    TCase *tc = tcase_create("sockio");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_bytes_waiting);
    tcase_add_test(tc, test_nothing_comes);
    tcase_add_test(tc, test_peer_gone);
    tcase_add_test(tc, test_spin_wait);
    tcase_add_loop_test(tc, test_read_outlasts_poll, 0, 2);
    tcase_add_test(tc, test_spin_setting);
    tcase_add_test(tc, test_stop_flag_ends_reads);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(sockio_suite)
