/* crm_chan_link.c -- greeting, routing and accepting a data channel connection. */
#include <arpa/inet.h>
#include <errno.h>
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
#include "protocol/crm_sockio.h"
#include "protocol/crm_tls.h"

#define CRM_ACCEPT_TRIES 8       /* strangers that may come before the client */

static void crm__tune(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one); /* fails harmlessly on Unix sockets */
}

/* sockaddr of abstract Unix name `name`, and its length. */
static socklen_t crm__abstract(const char *name, struct sockaddr_un *sun)
{
    size_t n = strlen(name);
    memset(sun, 0, sizeof *sun);
    sun->sun_family = AF_UNIX;
    memcpy(sun->sun_path + 1, name, n); /* sun_path[0] = 0: abstract */
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

/* Reads n bytes within timeout_ms. 0 or -1. */
static int crm__read_timed(int fd, void *buf, size_t n, int timeout_ms)
{
    char *p = buf;
    while (n > 0) {
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        if (poll(&pf, 1, timeout_ms) <= 0)
            return -1;
        ssize_t got = recv(fd, p, n, 0);
        if (got <= 0)
            return -1;
        p += got;
        n -= (size_t)got;
    }
    return 0;
}

/* ---- the session ---------------------------------------------------------------- */

int crm_chan_listen(char *name, unsigned char *token)
{
    unsigned char rnd[8];
    struct sockaddr_un sun;
    if (getrandom(token, CRM_CHAN_TOKEN, 0) != CRM_CHAN_TOKEN || getrandom(rnd, sizeof rnd, 0) != sizeof rnd)
        return -1;
    snprintf(name, CRM_CHAN_PATH_MAX, "cudarem-chan-%d-%02x%02x%02x%02x%02x%02x%02x%02x", (int)getpid(), rnd[0], rnd[1],
             rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
    socklen_t len = crm__abstract(name, &sun);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && (bind(fd, (struct sockaddr *)&sun, len) != 0 || listen(fd, CRM_ACCEPT_TRIES) != 0)) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* Receives the socket a router passes on conn. The socket, or -1. */
static int crm__receive_fd(int conn, int timeout_ms)
{
    char byte;
    union {
        struct cmsghdr h;
        char space[CMSG_SPACE(sizeof(int))];
    } ctl;
    struct iovec iov = {&byte, 1};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.space, .msg_controllen = sizeof ctl.space};
    struct pollfd pf = {.fd = conn, .events = POLLIN};
    if (poll(&pf, 1, timeout_ms) <= 0 || recvmsg(conn, &msg, MSG_CMSG_CLOEXEC) != 1)
        return -1;
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    if (c == NULL || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(int)))
        return -1;
    int fd;
    memcpy(&fd, CMSG_DATA(c), sizeof fd);
    return fd;
}

/* Reads the token on fd within timeout_ms, inside TLS first when tls: 0 or -1. */
static int crm__read_token(int fd, unsigned char *got, int timeout_ms, int tls)
{
    char err[256];
    if (!tls)
        return crm__read_timed(fd, got, CRM_CHAN_TOKEN, timeout_ms);
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000}, none = {0, 0};
    if (crm_tls_accept(fd, timeout_ms, err, sizeof err) != 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    size_t have = 0;
    while (have < CRM_CHAN_TOKEN) {
        ssize_t n = crm_sock_read(fd, got + have, CRM_CHAN_TOKEN - have, NULL);
        if (n <= 0)
            return -1;
        have += (size_t)n;
    }
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof none);
    return 0;
}

int crm_chan_accept(int lfd, const unsigned char *token, int timeout_ms, int tls)
{
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < CRM_ACCEPT_TRIES; tries++) {
        struct pollfd p = {.fd = lfd, .events = POLLIN};
        unsigned char got[CRM_CHAN_TOKEN];
        if (poll(&p, 1, timeout_ms) <= 0)
            break;
        int conn = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (conn < 0)
            continue;
        fd = crm__receive_fd(conn, timeout_ms);
        close(conn);
        if (fd >= 0 && (crm__read_token(fd, got, timeout_ms, tls) != 0 || memcmp(got, token, sizeof got))) {
            crm_tls_drop(fd);
            close(fd); /* not our client */
            fd = -1;
        }
    }
    close(lfd);
    if (fd >= 0)
        crm__tune(fd);
    return fd;
}

/* ---- the daemon's router ----------------------------------------------------------- */

int crm_chan_is_channel(int fd, int timeout_ms)
{
    uint32_t magic;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, timeout_ms) <= 0)
        return 0;
    for (int i = 0; i < 100; i++) { /* the first word may come in pieces */
        ssize_t got = recv(fd, &magic, sizeof magic, MSG_PEEK);
        if (got == (ssize_t)sizeof magic)
            return ntohl(magic) == CRM_CHAN_MAGIC;
        if (got <= 0 || poll(&p, 1, 10) < 0)
            return 0;
    }
    return 0;
}

int crm_chan_route(int fd, int timeout_ms)
{
    uint32_t head[2];
    char name[CRM_CHAN_PATH_MAX + 1];
    struct sockaddr_un sun;
    if (crm__read_timed(fd, head, sizeof head, timeout_ms) != 0 || ntohl(head[0]) != CRM_CHAN_MAGIC ||
        ntohl(head[1]) == 0 || ntohl(head[1]) > CRM_CHAN_PATH_MAX ||
        crm__read_timed(fd, name, ntohl(head[1]), timeout_ms) != 0)
        return -1;
    name[ntohl(head[1])] = '\0';
    if (strlen(name) != ntohl(head[1]) || strncmp(name, "cudarem-chan-", 13) != 0)
        return -1;
    socklen_t len = crm__abstract(name, &sun);
    int conn = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (conn < 0 || connect(conn, (struct sockaddr *)&sun, len) != 0) {
        if (conn >= 0)
            close(conn);
        return -1;
    }
    char byte = 0;
    union {
        struct cmsghdr h;
        char space[CMSG_SPACE(sizeof(int))];
    } ctl;
    memset(&ctl, 0, sizeof ctl);
    struct iovec iov = {&byte, 1};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.space, .msg_controllen = sizeof ctl.space};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
    int rc = sendmsg(conn, &msg, MSG_NOSIGNAL) == 1 ? 0 : -1;
    close(conn);
    return rc;
}

/* ---- the client -------------------------------------------------------------------- */

int crm_chan_greet(int fd, const char *name, const unsigned char *token, const char *tls_host)
{
    size_t n = strlen(name);
    char buf[8 + CRM_CHAN_PATH_MAX + CRM_CHAN_TOKEN], err[256];
    if (n == 0 || n > CRM_CHAN_PATH_MAX)
        return -1;
    uint32_t head[2] = {htonl(CRM_CHAN_MAGIC), htonl((uint32_t)n)};
    memcpy(buf, head, sizeof head);
    memcpy(buf + 8, name, n);
    memcpy(buf + 8 + n, token, CRM_CHAN_TOKEN);
    if (tls_host == NULL) {
        if (crm_sock_write_all(fd, buf, 8 + n + CRM_CHAN_TOKEN, NULL) != 0)
            return -1;
    } else if (crm_sock_write_all(fd, buf, 8 + n, NULL) != 0 || crm_tls_connect(fd, tls_host, err, sizeof err) != 0 ||
               crm_sock_write_all(fd, token, CRM_CHAN_TOKEN, NULL) != 0) {
        return -1; /* the routing in clear, the token inside TLS */
    }
    crm__tune(fd);
    return 0;
}
