/* crm_sockio.c -- whole reads and writes on stream sockets (through their TLS
 * session when they have one). */
#include <errno.h>
#include <sys/socket.h>
#include "protocol/crm_sockio.h"
#include "protocol/crm_tls.h"

/* Whether a call that failed with errno may be made again. */
static int crm__again(const crm_sockio_policy *p)
{
    if (p != NULL && p->stop != NULL && *p->stop)
        return 0;
    if (errno == EINTR)
        return 1;
    return (errno == EAGAIN || errno == EWOULDBLOCK) && p != NULL && p->retry_timeouts;
}

ssize_t crm_sock_read(int fd, void *buf, size_t len, const crm_sockio_policy *p)
{
    for (;;) {
        ssize_t got = crm_tls_on(fd) ? crm_tls_read(fd, buf, len) : recv(fd, buf, len, 0);
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
