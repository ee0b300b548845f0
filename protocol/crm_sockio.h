/* crm_sockio.h -- whole reads and writes on stream sockets (through the socket's TLS
 * session, protocol/crm_tls.h, when it has one), never raising SIGPIPE,
 * shared by the RPC record streams of client and server and the data channel's
 * set-up. A read or write interrupted by a signal, or woken by its socket's
 * SO_RCVTIMEO/SO_SNDTIMEO, is retried while `keep_going` says so. */
#ifndef CRM_SOCKIO_H
#define CRM_SOCKIO_H

#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <sys/types.h>

/* When to retry a read or write that returned early: interrupted (EINTR), or
 * timed out (EAGAIN). NULL: retry interruptions, give up on a timeout. Neither is
 * retried once the stop flag (crm_sock_stop_on) is set. */
typedef struct crm_sockio_policy {
    int retry_timeouts;                 /* 1: a timeout is a wake-up, not a failure */
} crm_sockio_policy;

/* How long a reader polls its socket before it sleeps in the kernel
 * (CUDAREM_SPIN_US overrides; 0: never). Reads on these sockets wait for an
 * answer the peer is about to send (a reply, the payload a reply announced, the
 * next call of a program making calls back to back), and waking a sleeper on
 * another core costs a 2-core VM 30-60 us, several times a round trip on one core.
 * Polling yields the core between tries, so a peer or other work on it runs. */
#define CRM_SOCK_SPIN_US 50
#define CRM_SOCK_SPIN_MAX_US 100000
#define CRM_SOCK_SPIN_BUSY_NS 20000  /* a yield this long ran other work: stop polling */
#define CRM_SOCK_SPIN_BACKOFF 8      /* after polls that found nothing, up to 255 reads sleep at once */
uint64_t crm_sock_spin_ns(void);
/* That length in ns for a CUDAREM_SPIN_US value (NULL: unset) on a machine with
 * `cores` cores: the default with two or more (with one, the peer cannot run while
 * this process polls), 0 with one, for a value that is not a count of us. */
uint64_t crm_sock_spin_parse(const char *value, long cores);
/* Polls fd for up to crm_sock_spin_ns(): what recv() gave (the count, 0 at end of
 * stream, -1 on error), or -1 with errno EAGAIN when nothing came in time, when a
 * yield let other work run meanwhile, or when this thread's recent polls found
 * nothing (they back off and only look once). Plain sockets only (a TLS
 * session's: crm_sock_spin_wait). */
ssize_t crm_sock_spin_recv(int fd, void *buf, size_t len);

/* Polls fd like crm_sock_spin_recv without taking anything, for a TLS session's
 * socket: 1 when bytes (or the end of the stream, or an error) wait there or in the
 * session, 0 when nothing came in time. */
int crm_sock_spin_wait(int fd);

/* A flag that, once set, ends every poll and read of this process: they return
 * -1 with errno EINTR instead of polling or sleeping, as a read that the setting
 * signal interrupted does, and a read or write that failed is not retried (NULL:
 * none). A session's server process gives its stop flag, so a stop signal that
 * lands while a read polls is not lost: otherwise the read would go on to sleep
 * for bytes that a stalled client never sends. */
void crm_sock_stop_on(volatile const sig_atomic_t *flag);

/* One read of at most len bytes, sleeping until some come, after a poll when
 * `poll` (crm_sock_spin_recv, or crm_sock_spin_wait on a TLS session's socket):
 * what recv() gives, interruptions and timeouts included. */
ssize_t crm_sock_read_once(int fd, void *buf, size_t len, int poll);
/* Reads at most len bytes, polling first: the count (> 0), 0 at end of stream, -1
 * on error or timeout (errno says which). */
ssize_t crm_sock_read(int fd, void *buf, size_t len, const crm_sockio_policy *p);
/* Writes all n bytes: 0, or -1. */
int crm_sock_write_all(int fd, const void *buf, size_t n, const crm_sockio_policy *p);

#endif
