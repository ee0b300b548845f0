/* crm_dashboard.c -- the --http site's routes (server/crm_dashboard.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/crm_log.h"
#include "protocol/crm_status_json.h"
#include "server/crm_auth_srv.h"
#include "server/crm_dashboard.h"
#include "server/crm_status.h"

#define CRM__JSON "application/json"

static void crm__status(crm_http_response *res)
{
    crm_status_res st;
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    crm_status_fill(&st);
    FILE *f = open_memstream(&res->body, &res->len);
    if (f != NULL) {
        crm_status_json(f, host, &st, NULL);
        fclose(f);
    }
    xdr_free((xdrproc_t)xdr_crm_status_res, (char *)&st);
    res->code = 200;
    res->type = CRM__JSON;
}

/* {"ok": ok, "message": message} with code. */
static void crm__answer(crm_http_response *res, int code, int ok, const char *message)
{
    FILE *f = open_memstream(&res->body, &res->len);
    if (f == NULL)
        return;
    fprintf(f, "{\"ok\": %s, \"message\": ", ok ? "true" : "false");
    crm_json_string(f, message);
    fputs("}", f);
    fclose(f);
    res->code = code;
    res->type = CRM__JSON;
}

/* POST /api/end, body "session=N", Authorization: Bearer USER:SECRET. */
static void crm__end(const crm_http_request *req, crm_http_response *res)
{
    char user[80], why[256];
    const char *token = strncmp(req->authorization, "Bearer ", 7) == 0 ? req->authorization + 7 : "";
    int role = crm_auth_srv_check_token(token, user, sizeof user);
    if (role < 0) {
        sleep(1); /* a wrong guess costs the guesser a second */
        crm_warn("dashboard: a request to end a session with no valid token");
        crm__answer(res, 403, 0, "no valid token: give an administrator's token (--add-user USER --admin)");
        return;
    }
    if (role == 0) {
        crm__answer(res, 403, 0, "only an administrator may end sessions");
        return;
    }
    char *end;
    const char *n = strncmp(req->body, "session=", 8) == 0 ? req->body + 8 : NULL;
    unsigned long long id = n ? strtoull(n, &end, 10) : 0;
    if (n == NULL || id == 0 || (*end != '\0' && *end != '&')) {
        crm__answer(res, 400, 0, "expected the body session=N");
        return;
    }
    if (crm_status_end_session(id, user, why, sizeof why) != 0) {
        crm__answer(res, 200, 0, why);
        return;
    }
    snprintf(why, sizeof why, "session %llu was told to end", id);
    crm__answer(res, 200, 1, why);
}

void crm_dashboard_handle(const crm_http_request *req, crm_http_response *res)
{
    int get = strcmp(req->method, "GET") == 0, post = strcmp(req->method, "POST") == 0;
    if (strcmp(req->path, "/") == 0 && get)
        crm_http_text(res, 200, "text/html; charset=utf-8", crm_dashboard_page);
    else if (strcmp(req->path, "/api/status") == 0 && get)
        crm__status(res);
    else if (strcmp(req->path, "/api/end") == 0 && post)
        crm__end(req, res);
    else
        crm_http_text(res, 404, "text/plain; charset=utf-8", "not here: the dashboard is at /\n");
}
