/* crm_metrics.c -- the process that answers GET /metrics (server/crm_metrics.h):
 * one request per connection, read with a time limit, answered and closed. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include "common/crm_log.h"
#include "server/crm_metrics.h"

#define CRM_METRICS_REQUEST_MAX 4096
#define CRM_METRICS_READ_S 5

static volatile sig_atomic_t crm__metrics_stop;

static void crm__metrics_on_term(int sig)
{
    (void)sig;
    crm__metrics_stop = 1;
}

/* Reads the request head (up to its blank line) into buf. Its length, or -1. */
static ssize_t crm__read_request(int fd, char *buf, size_t cap)
{
    size_t got = 0;
    while (got + 1 < cap) {
        ssize_t n = recv(fd, buf + got, cap - 1 - got, 0);
        if (n <= 0)
            return -1;
        got += (size_t)n;
        buf[got] = '\0';
        if (strstr(buf, "\r\n\r\n") != NULL || strstr(buf, "\n\n") != NULL)
            return (ssize_t)got;
    }
    return -1; /* a head this long is no scrape */
}

static void crm__send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0 && errno != EINTR)
            return;
        if (w > 0) {
            p += w;
            n -= (size_t)w;
        }
    }
}

static void crm__respond(int fd, const char *status, const char *type, const char *body, size_t len)
{
    char head[256];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n", status,
                     type, len);
    crm__send_all(fd, head, (size_t)n);
    crm__send_all(fd, body, len);
}

static void crm__serve_one(int fd, const char *host)
{
    char req[CRM_METRICS_REQUEST_MAX], *body = NULL;
    size_t len = 0;
    struct timeval limit = {.tv_sec = CRM_METRICS_READ_S};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
    if (crm__read_request(fd, req, sizeof req) < 0)
        return;
    if (strncmp(req, "GET /metrics ", 13) != 0 && strncmp(req, "GET /metrics?", 13) != 0) {
        static const char nf[] = "cudarem-server: the metrics are at /metrics\n";
        crm__respond(fd, "404 Not Found", "text/plain; charset=utf-8", nf, sizeof nf - 1);
        return;
    }
    FILE *f = open_memstream(&body, &len);
    if (f == NULL)
        return;
    crm_metrics_write(f, host);
    fclose(f);
    crm__respond(fd, "200 OK", "text/plain; version=0.0.4; charset=utf-8", body, len);
    free(body);
}

static void crm__metrics_loop(int lfd)
{
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    while (!crm__metrics_stop) {
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0)
            continue; /* EINTR at SIGTERM, or a connection gone before it was taken */
        crm__serve_one(fd, host);
        close(fd);
    }
}

pid_t crm_metrics_start(const crm_addr *addr, const int *close_fds, int nclose, char *err, size_t errlen)
{
    int lfd = crm_addr_listen(addr, err, errlen);
    if (lfd < 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        close(lfd);
        return -1;
    }
    if (pid > 0) {
        close(lfd);
        return pid;
    }
    prctl(PR_SET_PDEATHSIG, SIGTERM); /* ends with the daemon, even a killed one */
    struct sigaction sa = {.sa_handler = crm__metrics_on_term}; /* no SA_RESTART: accept returns */
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGHUP, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    for (int i = 0; i < nclose; i++)
        close(close_fds[i]);
    if (getppid() == 1) /* the daemon died before the death signal was armed */
        _exit(0);
    crm__metrics_loop(lfd);
    _exit(0);
}
