/* crm_http.c -- the operator's HTTP process (server/crm_http.h): reading a request
 * (request line, Authorization, a small body), calling the site's handler, and
 * writing its answer. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include "server/crm_http.h"

#define CRM_HTTP_HEAD_MAX 8192
#define CRM_HTTP_IO_S 5
#define CRM_HTTP_SITES_MAX 4

static volatile sig_atomic_t crm__http_stop, crm__http_reload;

static void crm__http_on_signal(int sig)
{
    if (sig == SIGHUP)
        crm__http_reload = 1;
    else
        crm__http_stop = 1;
}

void crm_http_text(crm_http_response *res, int code, const char *type, const char *text)
{
    res->code = code;
    res->type = type;
    res->body = strdup(text);
    res->len = res->body ? strlen(text) : 0;
}

/* The value of header name in head (lines after the first), into out. */
static void crm__header(const char *head, const char *name, char *out, size_t len)
{
    size_t n = strlen(name);
    out[0] = '\0';
    for (const char *line = strstr(head, "\r\n"); line != NULL; line = strstr(line + 2, "\r\n")) {
        const char *h = line + 2;
        if (strncasecmp(h, name, n) != 0 || h[n] != ':')
            continue;
        h += n + 1;
        while (*h == ' ' || *h == '\t')
            h++;
        size_t v = strcspn(h, "\r\n");
        snprintf(out, len, "%.*s", (int)(v < len ? v : len - 1), h);
        return;
    }
}

/* Reads and parses a request. 0, or -1 (malformed, too large, too slow). */
static int crm__read_request(int fd, crm_http_request *req)
{
    char buf[CRM_HTTP_HEAD_MAX + CRM_HTTP_BODY_MAX + 1], len_text[32];
    size_t got = 0;
    char *end = NULL;
    while (end == NULL) {
        if (got >= CRM_HTTP_HEAD_MAX)
            return -1;
        ssize_t n = recv(fd, buf + got, CRM_HTTP_HEAD_MAX - got, 0);
        if (n <= 0)
            return -1;
        got += (size_t)n;
        buf[got] = '\0';
        end = strstr(buf, "\r\n\r\n");
    }
    *end = '\0';
    memset(req, 0, sizeof *req);
    if (sscanf(buf, "%7s %255s", req->method, req->path) != 2)
        return -1;
    req->path[strcspn(req->path, "?")] = '\0';
    crm__header(buf, "Authorization", req->authorization, sizeof req->authorization);
    crm__header(buf, "Content-Length", len_text, sizeof len_text);
    long want = len_text[0] ? strtol(len_text, NULL, 10) : 0;
    if (want < 0 || want > CRM_HTTP_BODY_MAX)
        return -1;
    size_t have = got - (size_t)(end + 4 - buf);
    memcpy(req->body, end + 4, have < (size_t)want ? have : (size_t)want);
    while (have < (size_t)want) {
        ssize_t n = recv(fd, req->body + have, (size_t)want - have, 0);
        if (n <= 0)
            return -1;
        have += (size_t)n;
    }
    req->body_len = (size_t)want;
    return 0;
}

static void crm__send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

static const char *crm__reason(int code)
{
    switch (code) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    default: return "Internal Server Error";
    }
}

static void crm__serve_one(int fd, crm_http_handler handler)
{
    crm_http_request req;
    crm_http_response res = {0};
    char head[256];
    struct timeval limit = {.tv_sec = CRM_HTTP_IO_S};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
    if (crm__read_request(fd, &req) != 0)
        crm_http_text(&res, 400, "text/plain; charset=utf-8", "a request this server does not read\n");
    else
        handler(&req, &res);
    if (res.body == NULL)
        crm_http_text(&res, 500, "text/plain; charset=utf-8", "out of memory\n");
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nCache-Control: no-store\r\n"
                     "X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n",
                     res.code, crm__reason(res.code), res.type ? res.type : "text/plain", res.len);
    crm__send_all(fd, head, (size_t)n);
    crm__send_all(fd, res.body ? res.body : "", res.len);
    free(res.body);
}

/* Serves fd in a process of its own; 0, or -1 when too many are running. */
static int crm__serve_apart(int fd, crm_http_handler handler, int *running)
{
    if (*running >= CRM_HTTP_CONCURRENT)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGTERM, SIG_DFL);
        crm__serve_one(fd, handler);
        _exit(0);
    }
    if (pid < 0)
        return -1;
    (*running)++;
    return 0;
}

static void crm__busy(int fd)
{
    static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    crm__send_all(fd, busy, sizeof busy - 1);
}

static void crm__http_loop(const int *fds, const crm_http_site *sites, int n, crm_http_reload reload)
{
    struct pollfd p[CRM_HTTP_SITES_MAX];
    int running = 0;
    for (int i = 0; i < n; i++)
        p[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
    while (!crm__http_stop) {
        while (running > 0 && waitpid(-1, NULL, WNOHANG) > 0)
            running--;
        if (crm__http_reload) {
            crm__http_reload = 0;
            if (reload.fn != NULL)
                reload.fn(reload.arg);
        }
        if (poll(p, (nfds_t)n, 200) <= 0)
            continue;
        for (int i = 0; i < n; i++) {
            if (!(p[i].revents & POLLIN))
                continue;
            int fd = accept(fds[i], NULL, NULL);
            if (fd < 0)
                continue;
            if (crm__serve_apart(fd, sites[i].handler, &running) != 0)
                crm__busy(fd);
            close(fd);
        }
    }
    while (running-- > 0)
        wait(NULL);
}

pid_t crm_http_start(const crm_http_site *sites, int nsites, const int *close_fds, int nclose,
                     crm_http_reload reload, char *err, size_t errlen)
{
    int fds[CRM_HTTP_SITES_MAX];
    if (nsites < 1 || nsites > CRM_HTTP_SITES_MAX) {
        snprintf(err, errlen, "between 1 and %d addresses", CRM_HTTP_SITES_MAX);
        return -1;
    }
    for (int i = 0; i < nsites; i++)
        if ((fds[i] = crm_addr_listen(&sites[i].addr, err, errlen)) < 0) {
            while (i-- > 0)
                close(fds[i]);
            return -1;
        }
    pid_t pid = fork();
    if (pid != 0) {
        if (pid < 0)
            snprintf(err, errlen, "fork: %s", strerror(errno));
        for (int i = 0; i < nsites; i++)
            close(fds[i]);
        return pid;
    }
    prctl(PR_SET_PDEATHSIG, SIGTERM); /* ends with the daemon, even a killed one */
    struct sigaction sa = {.sa_handler = crm__http_on_signal}; /* no SA_RESTART: poll returns */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGINT, SIG_IGN);
    for (int i = 0; i < nclose; i++)
        close(close_fds[i]);
    if (getppid() == 1) /* the daemon died before the death signal was armed */
        _exit(0);
    crm__http_loop(fds, sites, nsites, reload);
    _exit(0);
}
