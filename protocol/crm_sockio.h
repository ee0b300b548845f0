/* crm_sockio.h -- whole reads and writes on stream sockets (through the socket's TLS
 * session, protocol/crm_tls.h, when it has one), never raising SIGPIPE,
 * shared by the RPC record streams of client and server and the data channel's
 * set-up. A read or write interrupted by a signal, or woken by its socket's
 * SO_RCVTIMEO/SO_SNDTIMEO, is retried while `keep_going` says so. */
#ifndef CRM_SOCKIO_H
#define CRM_SOCKIO_H

#include <stddef.h>
#include <signal.h>
#include <sys/types.h>

/* When to retry a read or write that returned early: interrupted (EINTR), or
 * timed out (EAGAIN). NULL: retry interruptions, give up on a timeout. */
typedef struct crm_sockio_policy {
    int retry_timeouts;                 /* 1: a timeout is a wake-up, not a failure */
    volatile const sig_atomic_t *stop;  /* when non-NULL and set: give up instead */
} crm_sockio_policy;

/* Reads at most len bytes: the count (> 0), 0 at end of stream, -1 on error or
 * timeout (errno says which). */
ssize_t crm_sock_read(int fd, void *buf, size_t len, const crm_sockio_policy *p);
/* Writes all n bytes: 0, or -1. */
int crm_sock_write_all(int fd, const void *buf, size_t n, const crm_sockio_policy *p);

#endif
