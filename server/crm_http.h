/* crm_http.h -- the operator's HTTP: one small process, forked by the daemon, that
 * answers on the --metrics and --http addresses, one request per connection
 * (read with a time limit, answered, closed), each in a process of its own (at
 * most CRM_HTTP_CONCURRENT at once; more are answered 503), so neither a slow
 * browser nor a scraper delays a session or another request. It reads the table
 * the daemon shares with its sessions, re-reads what the daemon does on SIGHUP,
 * and ends with the daemon. */
#ifndef CRM_HTTP_H
#define CRM_HTTP_H

#include <stddef.h>
#include <sys/types.h>
#include "common/crm_addr.h"

#define CRM_HTTP_BODY_MAX 1024
#define CRM_HTTP_CONCURRENT 8

typedef struct crm_http_request {
    char method[8];
    char path[256];            /* without its query */
    char authorization[600];   /* the Authorization header's value, "" when none */
    char body[CRM_HTTP_BODY_MAX + 1];
    size_t body_len;
} crm_http_request;

typedef struct crm_http_response {
    int code;                  /* 200, 403, 404, ... */
    const char *type;          /* Content-Type */
    char *body;                /* malloc'd */
    size_t len;
} crm_http_response;

typedef void (*crm_http_handler)(const crm_http_request *req, crm_http_response *res);

/* An address and what answers there. */
typedef struct crm_http_site {
    crm_addr addr;
    crm_http_handler handler;
} crm_http_site;

/* What the process runs when it receives SIGHUP (the daemon passes its own on). */
typedef struct crm_http_reload {
    void (*fn)(void *arg);
    void *arg;
} crm_http_reload;

/* Listens on every site's address and forks the process that serves them; it
 * closes close_fds[0 .. nclose-1] (the session listeners). Its pid, or -1 with err
 * set (nothing left running). */
pid_t crm_http_start(const crm_http_site *sites, int nsites, const int *close_fds, int nclose,
                     crm_http_reload reload, char *err, size_t errlen);

/* Sets res to code with a copy of text. */
void crm_http_text(crm_http_response *res, int code, const char *type, const char *text);

#endif
