/* crm_addr.c -- parsing, connecting and listening for cudarem endpoint addresses. */
#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "common/crm_addr.h"
#include "protocol/crm_wire.h"

/* Digits only, 1..65535. */
static int crm__parse_port(const char *s, int *port)
{
    long v = 0;
    if (*s == '\0' || strlen(s) > 5)
        return -1;
    for (const char *c = s; *c; c++) {
        if (*c < '0' || *c > '9')
            return -1;
        v = v * 10 + (*c - '0');
    }
    if (v <= 0 || v > 65535)
        return -1;
    *port = (int)v;
    return 0;
}

/* Splits "HOST[:PORT]" or "[V6HOST][:PORT]" into host bytes and port text (NULL
 * when absent); -1 with a reason when the shape is wrong. */
static int crm__split_host_port(const char *hp, const char **host, size_t *hostlen, const char **port,
                                char *err, size_t errlen)
{
    *port = NULL;
    if (hp[0] == '[') {
        const char *close = strchr(hp, ']');
        if (close == NULL || (close[1] != '\0' && close[1] != ':')) {
            snprintf(err, errlen, "bad bracketed host in '%s'", hp);
            return -1;
        }
        *host = hp + 1;
        *hostlen = (size_t)(close - *host);
        if (close[1] == ':')
            *port = close + 2;
        return 0;
    }
    const char *colon = strchr(hp, ':');
    if (colon != NULL && strchr(colon + 1, ':') != NULL) {
        snprintf(err, errlen, "IPv6 address needs brackets, as in [::1]:%d: '%s'", CRM_DEFAULT_PORT, hp);
        return -1;
    }
    *host = hp;
    *hostlen = colon ? (size_t)(colon - hp) : strlen(hp);
    if (colon != NULL)
        *port = colon + 1;
    return 0;
}

static int crm__parse_tcp(const char *hp, crm_addr *out, char *err, size_t errlen)
{
    const char *host, *port;
    size_t hostlen;
    out->kind = CRM_ADDR_TCP;
    out->port = CRM_DEFAULT_PORT;
    if (crm__split_host_port(hp, &host, &hostlen, &port, err, errlen) != 0)
        return -1;
    if (port != NULL && crm__parse_port(port, &out->port) != 0) {
        snprintf(err, errlen, "bad port in '%s'", hp);
        return -1;
    }
    if (hostlen == 0 || hostlen >= sizeof out->host) {
        snprintf(err, errlen, "bad host in '%s'", hp);
        return -1;
    }
    memcpy(out->host, host, hostlen);
    out->host[hostlen] = '\0';
    return 0;
}

int crm_addr_parse(const char *text, crm_addr *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (strncmp(text, "unix:", 5) == 0) {
        size_t n = strlen(text + 5);
        if (n == 0 || n >= sizeof out->path) {
            snprintf(err, errlen, "bad unix socket path in '%s'", text);
            return -1;
        }
        out->kind = CRM_ADDR_UNIX;
        memcpy(out->path, text + 5, n + 1);
        return 0;
    }
    if (strncmp(text, "tcp:", 4) == 0)
        text += 4;
    return crm__parse_tcp(text, out, err, errlen);
}

void crm_addr_format(const crm_addr *a, char *buf, size_t len)
{
    if (a->kind == CRM_ADDR_UNIX)
        snprintf(buf, len, "unix:%s", a->path);
    else if (strchr(a->host, ':'))
        snprintf(buf, len, "tcp:[%s]:%d", a->host, a->port);
    else
        snprintf(buf, len, "tcp:%s:%d", a->host, a->port);
}

static int crm__unix_sockaddr(const crm_addr *a, struct sockaddr_un *sun)
{
    memset(sun, 0, sizeof *sun);
    sun->sun_family = AF_UNIX;
    memcpy(sun->sun_path, a->path, strlen(a->path) + 1);
    return socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
}

/* Waits for a non-blocking connect to finish; 0 when connected. */
static int crm__finish_connect(int fd, int timeout_ms)
{
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    int rc = poll(&p, 1, timeout_ms);
    if (rc == 0) {
        errno = ETIMEDOUT;
        return -1;
    }
    if (rc < 0)
        return -1;
    int soerr = 0;
    socklen_t len = sizeof soerr;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) != 0)
        return -1;
    if (soerr != 0) {
        errno = soerr;
        return -1;
    }
    return 0;
}

static int crm__connect_fd(int fd, const struct sockaddr *sa, socklen_t len, int timeout_ms)
{
    int flags = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    int rc = connect(fd, sa, len);
    if (rc != 0 && errno == EINPROGRESS)
        rc = crm__finish_connect(fd, timeout_ms);
    fcntl(fd, F_SETFL, flags);
    return rc;
}

static void crm__tcp_tune(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
}

static int crm__connect_tcp(const crm_addr *a, int timeout_ms, char *err, size_t errlen)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
    char port[16];
    snprintf(port, sizeof port, "%d", a->port);
    int rc = getaddrinfo(a->host, port, &hints, &res);
    if (rc != 0) {
        snprintf(err, errlen, "cannot resolve %s: %s", a->host, gai_strerror(rc));
        return -1;
    }
    int fd = -1, saved = 0;
    for (struct addrinfo *ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && crm__connect_fd(fd, ai->ai_addr, ai->ai_addrlen, timeout_ms) != 0) {
            saved = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0) {
        snprintf(err, errlen, "%s", strerror(saved ? saved : ECONNREFUSED));
        return -1;
    }
    crm__tcp_tune(fd);
    return fd;
}

int crm_addr_connect(const crm_addr *a, int timeout_ms, char *err, size_t errlen)
{
    if (a->kind == CRM_ADDR_TCP)
        return crm__connect_tcp(a, timeout_ms, err, errlen);
    struct sockaddr_un sun;
    int fd = crm__unix_sockaddr(a, &sun);
    if (fd < 0 || crm__connect_fd(fd, (struct sockaddr *)&sun, sizeof sun, timeout_ms) != 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

static int crm__listen_unix(const crm_addr *a, char *err, size_t errlen)
{
    struct sockaddr_un sun;
    int fd = crm__unix_sockaddr(a, &sun);
    if (fd < 0)
        goto fail;
    unlink(a->path); /* a stale socket file from a killed server */
    if (bind(fd, (struct sockaddr *)&sun, sizeof sun) != 0 || listen(fd, 64) != 0)
        goto fail;
    return fd;
fail:
    snprintf(err, errlen, "%s", strerror(errno));
    if (fd >= 0)
        close(fd);
    return -1;
}

static int crm__listen_tcp(const crm_addr *a, char *err, size_t errlen)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE}, *res = NULL;
    char port[16];
    snprintf(port, sizeof port, "%d", a->port);
    int rc = getaddrinfo(a->host, port, &hints, &res);
    if (rc != 0) {
        snprintf(err, errlen, "cannot resolve %s: %s", a->host, gai_strerror(rc));
        return -1;
    }
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, 64) != 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    return fd;
}

int crm_addr_listen(const crm_addr *a, char *err, size_t errlen)
{
    return a->kind == CRM_ADDR_UNIX ? crm__listen_unix(a, err, errlen) : crm__listen_tcp(a, err, errlen);
}

void crm_addr_peer(int fd, crm_peer *p)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    struct ucred cred;
    socklen_t cl = sizeof cred;
    memset(p, 0, sizeof *p);
    p->uid = p->pid = -1;
    snprintf(p->host, sizeof p->host, "?");
    if (getpeername(fd, (struct sockaddr *)&ss, &sl) != 0 || ss.ss_family == AF_UNIX) {
        p->is_unix = 1;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0) {
            p->uid = (long)cred.uid;
            p->pid = (long)cred.pid;
        }
    } else if (ss.ss_family == AF_INET) {
        struct sockaddr_in *in = (struct sockaddr_in *)&ss;
        inet_ntop(AF_INET, &in->sin_addr, p->host, sizeof p->host);
        p->port = ntohs(in->sin_port);
    } else if (ss.ss_family == AF_INET6) {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
        inet_ntop(AF_INET6, &in6->sin6_addr, p->host, sizeof p->host);
        p->port = ntohs(in6->sin6_port);
        p->v6 = 1;
    }
}

void crm_addr_peer_format(const crm_peer *p, char *buf, size_t len)
{
    if (p->is_unix && p->uid >= 0)
        snprintf(buf, len, "unix peer pid %ld uid %ld", p->pid, p->uid);
    else if (p->is_unix)
        snprintf(buf, len, "unix peer");
    else
        snprintf(buf, len, p->v6 ? "[%s]:%d" : "%s:%d", p->host, p->port);
}
