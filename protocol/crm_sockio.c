/* crm_sockio.c -- whole reads and writes on stream sockets (through their TLS
 * session when they have one). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "protocol/crm_sockio.h"
#include "protocol/crm_tls.h"

static volatile const sig_atomic_t *crm__stop; /* crm_sock_stop_on */

void crm_sock_stop_on(volatile const sig_atomic_t *flag)
{
    crm__stop = flag;
}

/* Whether the stop flag is set; errno EINTR when it is. */
static int crm__stopped(void)
{
    if (crm__stop == NULL || !*crm__stop)
        return 0;
    errno = EINTR;
    return 1;
}

/* Whether a call that failed with errno may be made again: not once the stop flag
 * is set, whoever reads or writes (a loop that retried would spin, since every
 * read then fails at once). */
static int crm__again(const crm_sockio_policy *p)
{
    if (crm__stop != NULL && *crm__stop)
        return 0;
    if (errno == EINTR)
        return 1;
    return (errno == EAGAIN || errno == EWOULDBLOCK) && p != NULL && p->retry_timeouts;
}

static uint64_t crm__spin_ns;
static pthread_once_t crm__spin_once = PTHREAD_ONCE_INIT;

uint64_t crm_sock_spin_parse(const char *value, long cores)
{
    char *end = NULL;
    long us = value != NULL && *value ? strtol(value, &end, 10) : -1;
    if (us < 0 || (end != NULL && *end != '\0'))
        us = cores >= 2 ? CRM_SOCK_SPIN_US : 0;
    return (uint64_t)(us > CRM_SOCK_SPIN_MAX_US ? CRM_SOCK_SPIN_MAX_US : us) * 1000u;
}

static void crm__spin_init(void)
{
    crm__spin_ns = crm_sock_spin_parse(getenv("CUDAREM_SPIN_US"), sysconf(_SC_NPROCESSORS_ONLN));
}

uint64_t crm_sock_spin_ns(void)
{
    pthread_once(&crm__spin_once, crm__spin_init);
    return crm__spin_ns;
}

static uint64_t crm__now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Polls in a row, in this thread, that found nothing; after k of them the next
 * 2^k - 1 reads sleep at once (k up to CRM_SOCK_SPIN_BACKOFF): on a machine too
 * busy to answer within a poll, or whose cores other work is waiting for, polling
 * would only take their time (32 clients on 2 cores: short sessions started 15x
 * less often with every read polling). */
static _Thread_local unsigned crm__misses, crm__skip;

static void crm__missed(void)
{
    if (crm__misses < CRM_SOCK_SPIN_BACKOFF)
        crm__misses++;
    crm__skip = (1u << crm__misses) - 1;
}

/* The poll of crm_sock_spin_recv with recv flags (MSG_DONTWAIT and maybe MSG_PEEK). */
static ssize_t crm__spin(int fd, void *buf, size_t len, int flags)
{
    uint64_t spin = crm_sock_spin_ns(), start = 0, before_yield = 0;
    if (spin > 0 && crm__skip > 0) {
        crm__skip--;
        spin = 0;
    }
    for (;;) { /* one look at least, polling or not */
        if (crm__stopped())
            return -1;
        ssize_t got = recv(fd, buf, len, flags);
        if (got >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
            crm__misses = 0;
            return got;
        }
        if (spin == 0)
            break;
        uint64_t now = crm__now_ns();
        if (start == 0) {
            start = now;
        } else if (now - start >= spin || now - before_yield >= CRM_SOCK_SPIN_BUSY_NS) {
            crm__missed(); /* out of time, or the yield ran other work: the core is wanted */
            break;
        }
        before_yield = now;
        sched_yield(); /* a peer on this core, or anyone else waiting for it, runs */
    }
    errno = EAGAIN;
    return -1;
}

ssize_t crm_sock_spin_recv(int fd, void *buf, size_t len)
{
    return crm__spin(fd, buf, len, MSG_DONTWAIT);
}

int crm_sock_spin_wait(int fd)
{
    char byte;
    if (crm_tls_pending(fd))
        return 1;
    return crm__spin(fd, &byte, 1, MSG_DONTWAIT | MSG_PEEK) >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
}

ssize_t crm_sock_read_once(int fd, void *buf, size_t len, int poll)
{
    if (crm_tls_on(fd)) {
        if (poll)
            crm_sock_spin_wait(fd); /* then the session reads what came, or sleeps */
        return crm__stopped() ? -1 : crm_tls_read(fd, buf, len);
    }
    if (poll) {
        ssize_t got = crm_sock_spin_recv(fd, buf, len);
        if (got >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
            return got;
    }
    return crm__stopped() ? -1 : recv(fd, buf, len, 0);
}

ssize_t crm_sock_read(int fd, void *buf, size_t len, const crm_sockio_policy *p)
{
    for (int poll = 1;; poll = 0) {
        ssize_t got = crm_sock_read_once(fd, buf, len, poll);
        if (got >= 0 || !crm__again(p))
            return got;
    }
}

int crm_sock_write_all(int fd, const void *buf, size_t n, const crm_sockio_policy *p)
{
    const char *at = buf;
    while (n > 0) {
        ssize_t put = crm_tls_on(fd) ? crm_tls_write(fd, at, n) : send(fd, at, n, MSG_NOSIGNAL);
        if (put < 0 && crm__again(p))
            continue;
        if (put <= 0)
            return -1;
        at += put;
        n -= (size_t)put;
    }
    return 0;
}
