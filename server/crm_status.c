/* crm_status.c -- answering CRM_STATUS and CRM_END (server/crm_status.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/crm_log.h"
#include "crm_api.h"
#include "server/crm_auth_srv.h"
#include "server/crm_monitor.h"
#include "server/crm_status.h"

/* NULL when s may ask, else why not. */
static const char *crm__refusal(crm_session *s)
{
    if (!s->observer)
        return "status and session control need an observer session (cudarem-smi)";
    if (!crm_auth_srv_is_admin(s))
        return "only an administrator may see the sessions: a token whose auth file line ends in :admin "
               "(--add-user USER --admin), or root or the server's user admitted on a Unix socket";
    return NULL;
}

static void crm__fill_devices(crm_status_res *res)
{
    crm_monitor_device d[CRM_STATUS_DEVICES_MAX];
    crm_monitor_devices(d, CRM_STATUS_DEVICES_MAX);
    res->devices.devices_val = calloc(CRM_STATUS_DEVICES_MAX, sizeof *res->devices.devices_val);
    for (int i = 0; res->devices.devices_val != NULL && i < CRM_STATUS_DEVICES_MAX; i++) {
        if (!d[i].known)
            continue;
        crm_status_device *o = &res->devices.devices_val[res->devices.devices_len++];
        *o = (crm_status_device){.index = i, .name = strdup(d[i].name), .memory_total = d[i].total,
                                 .memory_used = d[i].used, .util_compute = d[i].util_compute,
                                 .util_memory = d[i].util_memory, .sessions = d[i].sessions};
    }
}

/* A malloc'd copy of the CRM_LIMIT_KINDS values of v, for an XDR array (freed with
 * the answer); NULL, an empty array, when memory runs out. */
static u_quad_t *crm__kinds_copy(const uint64_t *v, u_int *len)
{
    u_quad_t *out = malloc(CRM_LIMIT_KINDS * sizeof *out);
    *len = out != NULL ? CRM_LIMIT_KINDS : 0;
    for (int k = 0; out != NULL && k < CRM_LIMIT_KINDS; k++)
        out[k] = v[k];
    return out;
}

static void crm__fill_sessions(crm_status_res *res)
{
    crm_monitor_session *v = calloc(CRM_STATUS_SESSIONS_MAX, sizeof *v);
    int n = v ? crm_monitor_sessions(v, CRM_STATUS_SESSIONS_MAX) : 0;
    if (n > CRM_STATUS_SESSIONS_MAX)
        n = CRM_STATUS_SESSIONS_MAX;
    res->sessions.sessions_val = n > 0 ? calloc((size_t)n, sizeof *res->sessions.sessions_val) : NULL;
    for (int i = 0; res->sessions.sessions_val != NULL && i < n; i++) {
        crm_status_session *o = &res->sessions.sessions_val[res->sessions.sessions_len++];
        *o = (crm_status_session){.id = v[i].id, .user = strdup(v[i].user), .peer = strdup(v[i].peer),
                                  .client_pid = v[i].client_pid, .server_pid = v[i].server_pid,
                                  .start_unix = v[i].start_unix, .calls = v[i].calls, .bytes_in = v[i].bytes_in,
                                  .bytes_out = v[i].bytes_out, .memory_used = v[i].memory,
                                  .kernel_ns = v[i].kernel_ns, .devices = v[i].devices};
        o->held.held_val = crm__kinds_copy(v[i].held, &o->held.held_len);
    }
    free(v);
}

void crm_status_fill(crm_status_res *res)
{
    crm_monitor_server info;
    crm_monitor_server_info(&info);
    memset(res, 0, sizeof *res);
    res->message = strdup("");
    res->backend = strdup(info.backend);
    res->start_unix = info.start_unix;
    res->sessions_admitted = info.events[CRM_EVENT_ADMITTED];
    res->sessions_refused = info.events[CRM_EVENT_REFUSED];
    res->auth_failures = info.events[CRM_EVENT_AUTH_FAILED];
    res->sessions_ended_by_admin = info.events[CRM_EVENT_ENDED_BY_ADMIN];
    crm__fill_devices(res);
    crm__fill_sessions(res);
    res->limits.limits_val = crm__kinds_copy(crm_session_limits.max, &res->limits.limits_len);
    res->limit_hits.limit_hits_val = crm__kinds_copy(info.limit_hits, &res->limit_hits.limit_hits_len);
}

void crm_status_serve(crm_srv_rpc *x, crm_session *s)
{
    crm_status_res res;
    memset(&res, 0, sizeof res);
    if (!crm_srv_rpc_getargs(x, (xdrproc_t)(void (*)(void))xdr_void, NULL)) {
        crm_srv_rpc_error(x, GARBAGE_ARGS);
        return;
    }
    const char *why = crm__refusal(s);
    if (why == NULL) {
        crm_status_fill(&res);
    } else {
        res.status = 1;
        res.message = strdup(why);
        res.backend = strdup("");
    }
    crm_srv_rpc_reply(x, (xdrproc_t)xdr_crm_status_res, &res);
    xdr_free((xdrproc_t)xdr_crm_status_res, (char *)&res);
}

int crm_status_end_session(uint64_t id, const char *by, char *why, size_t whylen)
{
    crm_monitor_session *v = calloc(CRM_MONITOR_SESSIONS, sizeof *v);
    int n = v ? crm_monitor_sessions(v, CRM_MONITOR_SESSIONS) : 0, rc = -1;
    snprintf(why, whylen, "no session %llu is open", (unsigned long long)id);
    for (int i = 0; i < n && i < CRM_MONITOR_SESSIONS; i++) {
        if (v[i].id != id)
            continue;
        if (v[i].server_pid == getpid() || kill(v[i].server_pid, SIGUSR1) != 0) { /* tells its client why */
            snprintf(why, whylen, "cannot end session %llu: %s", (unsigned long long)id,
                     v[i].server_pid == getpid() ? "it is this one" : strerror(errno));
            break;
        }
        crm_warn("session %llu (user %s, %s) ended by administrator %s", (unsigned long long)id, v[i].user,
                 v[i].peer, by);
        crm_monitor_note(CRM_EVENT_ENDED_BY_ADMIN);
        rc = 0;
        break;
    }
    free(v);
    return rc;
}

void crm_status_end(crm_srv_rpc *x, crm_session *s)
{
    crm_end_args args;
    char why[256] = "";
    crm_end_res res = {.status = 0, .message = why};
    memset(&args, 0, sizeof args);
    if (!crm_srv_rpc_getargs(x, (xdrproc_t)xdr_crm_end_args, &args)) {
        crm_srv_rpc_error(x, GARBAGE_ARGS);
        return;
    }
    const char *refused = crm__refusal(s);
    if (refused != NULL) {
        res.status = 1;
        res.message = (char *)refused;
    } else if (crm_status_end_session(args.session_id, s->user, why, sizeof why) != 0) {
        res.status = 1;
    }
    crm_srv_rpc_reply(x, (xdrproc_t)xdr_crm_end_res, &res);
}
