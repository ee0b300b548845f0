/* crm_chan_link.c -- listening for, accepting and connecting a data channel. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "protocol/crm_chan_link.h"

#define CRM_ACCEPT_TRIES 8       /* strangers that may connect before the client */

static void crm__tune(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* sockaddr of abstract Unix name `path`, and its length. */
static socklen_t crm__abstract(const char *path, struct sockaddr_un *sun)
{
    size_t n = strlen(path);
    memset(sun, 0, sizeof *sun);
    sun->sun_family = AF_UNIX;
    memcpy(sun->sun_path + 1, path, n); /* sun_path[0] = 0: abstract */
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

static int crm__listen_at(struct sockaddr_storage *ss, socklen_t len)
{
    int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (bind(fd, (struct sockaddr *)ss, len) != 0 || listen(fd, CRM_ACCEPT_TRIES) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

int crm_chan_listen(int rpc_fd, uint32_t *port, char *path, unsigned char *token)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    unsigned char rnd[8];
    path[0] = '\0';
    *port = 0;
    if (getrandom(token, CRM_CHAN_TOKEN, 0) != CRM_CHAN_TOKEN || getrandom(rnd, sizeof rnd, 0) != sizeof rnd ||
        getsockname(rpc_fd, (struct sockaddr *)&ss, &len) != 0)
        return -1;
    if (ss.ss_family == AF_UNIX) {
        snprintf(path, CRM_CHAN_PATH_MAX, "cudarem-chan-%d-%02x%02x%02x%02x%02x%02x%02x%02x", (int)getpid(), rnd[0],
                 rnd[1], rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
        len = crm__abstract(path, (struct sockaddr_un *)&ss);
    } else if (ss.ss_family == AF_INET) {
        ((struct sockaddr_in *)&ss)->sin_port = 0;
    } else if (ss.ss_family == AF_INET6) {
        ((struct sockaddr_in6 *)&ss)->sin6_port = 0;
    } else {
        return -1;
    }
    int fd = crm__listen_at(&ss, len);
    if (fd < 0 || ss.ss_family == AF_UNIX)
        return fd;
    len = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0) {
        close(fd);
        return -1;
    }
    *port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                          : ((struct sockaddr_in6 *)&ss)->sin6_port);
    return fd;
}

/* Reads n bytes within timeout_ms. 0 or -1. */
static int crm__read_timed(int fd, unsigned char *buf, size_t n, int timeout_ms)
{
    while (n > 0) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, timeout_ms) <= 0)
            return -1;
        ssize_t got = read(fd, buf, n);
        if (got <= 0)
            return -1;
        buf += got;
        n -= (size_t)got;
    }
    return 0;
}

int crm_chan_accept(int lfd, const unsigned char *token, int timeout_ms)
{
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < CRM_ACCEPT_TRIES; tries++) {
        struct pollfd p = {.fd = lfd, .events = POLLIN};
        unsigned char got[CRM_CHAN_TOKEN];
        if (poll(&p, 1, timeout_ms) <= 0)
            break;
        fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd >= 0 && (crm__read_timed(fd, got, sizeof got, timeout_ms) != 0 || memcmp(got, token, sizeof got))) {
            close(fd); /* not our client */
            fd = -1;
        }
    }
    close(lfd);
    if (fd >= 0)
        crm__tune(fd);
    return fd;
}

/* The server's channel address: rpc_fd's peer with another port, or the abstract name. */
static socklen_t crm__channel_addr(int rpc_fd, uint32_t port, const char *path, struct sockaddr_storage *ss)
{
    socklen_t len = sizeof *ss;
    if (getpeername(rpc_fd, (struct sockaddr *)ss, &len) != 0)
        len = 0, ss->ss_family = AF_UNIX; /* an unnamed Unix peer */
    if (ss->ss_family == AF_UNIX)
        return path[0] && strlen(path) < CRM_CHAN_PATH_MAX ? crm__abstract(path, (struct sockaddr_un *)ss) : 0;
    if (port == 0 || port > 65535)
        return 0;
    if (ss->ss_family == AF_INET)
        ((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
    return len;
}

int crm_chan_connect(int rpc_fd, uint32_t port, const char *path, const unsigned char *token, int timeout_ms)
{
    struct sockaddr_storage ss;
    socklen_t len = crm__channel_addr(rpc_fd, port, path, &ss);
    if (len == 0)
        return -1;
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    int rc = connect(fd, (struct sockaddr *)&ss, len), err = 0;
    socklen_t elen = sizeof err;
    if (rc != 0 && errno == EINPROGRESS) {
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        rc = poll(&p, 1, timeout_ms) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) == 0 && err == 0
                 ? 0
                 : -1;
    }
    if (rc != 0 || fcntl(fd, F_SETFL, 0) != 0 || write(fd, token, CRM_CHAN_TOKEN) != CRM_CHAN_TOKEN) {
        close(fd);
        return -1;
    }
    crm__tune(fd);
    return fd;
}
