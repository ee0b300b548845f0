/* crm_status_json.c -- a server's status as JSON (protocol/crm_status_json.h). */
#include <inttypes.h>
#include "protocol/crm_limit_kinds.h"
#include "protocol/crm_status_json.h"

/* "KEY": {"streams": N, ...} from an array of the session limits' kinds. */
static void crm__json_kinds(FILE *f, const char *key, const u_quad_t *v, u_int n)
{
    fprintf(f, ", \"%s\": {", key);
    for (u_int k = 0; k < n && crm_limit_name((int)k) != NULL; k++)
        fprintf(f, "%s\"%s\": %" PRIu64, k ? ", " : "", crm_limit_name((int)k), (uint64_t)v[k]);
    putc('}', f);
}

void crm_json_string(FILE *f, const char *s)
{
    putc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(f, "\\u%04x", *p);
        else
            putc(*p, f);
    }
    putc('"', f);
}

static void crm__json_device(FILE *f, const crm_status_device *d)
{
    fprintf(f, "{\"index\": %d, \"name\": ", d->index);
    crm_json_string(f, d->name);
    fprintf(f,
            ", \"memory_total\": %" PRIu64 ", \"memory_used\": %" PRIu64 ", \"util_compute\": %u, "
            "\"util_memory\": %u, \"sessions\": %d}",
            d->memory_total, d->memory_used, d->util_compute, d->util_memory, d->sessions);
}

static void crm__json_session(FILE *f, const crm_status_session *s)
{
    fprintf(f, "{\"id\": %" PRIu64 ", \"user\": ", s->id);
    crm_json_string(f, s->user);
    fprintf(f, ", \"peer\": ");
    crm_json_string(f, s->peer);
    fprintf(f,
            ", \"client_pid\": %u, \"server_pid\": %d, \"start_unix\": %" PRId64 ", \"calls\": %" PRIu64
            ", \"bytes_in\": %" PRIu64 ", \"bytes_out\": %" PRIu64 ", \"memory_used\": %" PRIu64
            ", \"kernel_ns\": %" PRIu64 ", \"devices\": %" PRIu64,
            s->client_pid, s->server_pid, (int64_t)s->start_unix, s->calls, s->bytes_in, s->bytes_out,
            s->memory_used, s->kernel_ns, s->devices);
    crm__json_kinds(f, "held", s->held.held_val, s->held.held_len);
    putc('}', f);
}

void crm_status_json(FILE *f, const char *addr, const crm_status_res *r, const char *error)
{
    fprintf(f, "{\"address\": ");
    crm_json_string(f, addr);
    if (error != NULL) {
        fprintf(f, ", \"error\": ");
        crm_json_string(f, error);
        putc('}', f);
        return;
    }
    fprintf(f, ", \"backend\": ");
    crm_json_string(f, r->backend);
    fprintf(f,
            ", \"start_unix\": %" PRId64 ", \"sessions_admitted\": %" PRIu64 ", \"sessions_refused\": %" PRIu64
            ", \"auth_failures\": %" PRIu64 ", \"sessions_ended_by_admin\": %" PRIu64 ", \"devices\": [",
            (int64_t)r->start_unix, r->sessions_admitted, r->sessions_refused, r->auth_failures,
            r->sessions_ended_by_admin);
    for (u_int i = 0; i < r->devices.devices_len; i++) {
        fputs(i ? ", " : "", f);
        crm__json_device(f, &r->devices.devices_val[i]);
    }
    fprintf(f, "], \"sessions\": [");
    for (u_int i = 0; i < r->sessions.sessions_len; i++) {
        fputs(i ? ", " : "", f);
        crm__json_session(f, &r->sessions.sessions_val[i]);
    }
    putc(']', f);
    crm__json_kinds(f, "limits", r->limits.limits_val, r->limits.limits_len);
    crm__json_kinds(f, "limit_hits", r->limit_hits.limit_hits_val, r->limit_hits.limit_hits_len);
    putc('}', f);
}

