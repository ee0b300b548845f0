/* crm_metrics.c -- the Prometheus exposition text of the shared table
 * (server/crm_metrics.h): per device, DCGM exporter names with its labels (gpu,
 * modelName, Hostname); per session, its counters labelled by session, user and
 * pid, with what it holds of each limited kind; server-wide, sessions, events, the
 * session limits and their refusals; and a histogram of calls' execution
 * times. Label values are escaped as the format asks (\\, \", \n). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "server/crm_metrics.h"
#include "server/crm_monitor.h"

#define CRM__MIB (1024.0 * 1024.0)

static void crm__label(FILE *f, const char *value)
{
    putc('"', f);
    for (const char *p = value; *p; p++) {
        if (*p == '\\' || *p == '"')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else
            putc(*p, f);
    }
    putc('"', f);
}

static void crm__head(FILE *f, const char *name, const char *type, const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One device sample: NAME{gpu="i",modelName="...",Hostname="..."} value */
static void crm__device_sample(FILE *f, const char *name, int gpu, const crm_monitor_device *d, const char *host,
                               double value)
{
    fprintf(f, "%s{gpu=\"%d\",modelName=", name, gpu);
    crm__label(f, d->name);
    fputs(",Hostname=", f);
    crm__label(f, host);
    fprintf(f, "} %.17g\n", value);
}

static void crm__devices(FILE *f, const char *host)
{
    static const struct {
        const char *name, *type, *help;
    } fams[] = {
        {"DCGM_FI_DEV_FB_TOTAL", "gauge", "Device memory, MiB."},
        {"DCGM_FI_DEV_FB_USED", "gauge", "Device memory cudarem sessions hold, MiB."},
        {"DCGM_FI_DEV_FB_FREE", "gauge", "Device memory not held by cudarem sessions, MiB."},
        {"DCGM_FI_DEV_GPU_UTIL", "gauge", "Percent of the last second the device ran kernels (emulated device)."},
        {"DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Percent of the last second the device copied memory (emulated device)."},
        {"cudarem_device_sessions", "gauge", "Sessions that used the device."},
    };
    crm_monitor_device d[CRM_MONITOR_DEVICES];
    crm_monitor_devices(d, CRM_MONITOR_DEVICES);
    for (size_t k = 0; k < sizeof fams / sizeof *fams; k++) {
        crm__head(f, fams[k].name, fams[k].type, fams[k].help);
        for (int i = 0; i < CRM_MONITOR_DEVICES; i++) {
            if (!d[i].known)
                continue;
            double total = (double)d[i].total / CRM__MIB, used = (double)d[i].used / CRM__MIB;
            double v[] = {total, used, total > used ? total - used : 0, d[i].util_compute, d[i].util_memory,
                          d[i].sessions};
            crm__device_sample(f, fams[k].name, i, &d[i], host, v[k]);
        }
    }
}

/* One session sample: NAME{session="id",user="...",server_pid="..."} value */
static void crm__session_sample(FILE *f, const char *name, const crm_monitor_session *s, double value)
{
    fprintf(f, "%s{session=\"%" PRIu64 "\",user=", name, s->id);
    crm__label(f, s->user);
    fprintf(f, ",server_pid=\"%d\"} %.17g\n", (int)s->server_pid, value);
}

static void crm__sessions(FILE *f)
{
    static const struct {
        const char *name, *type, *help;
    } fams[] = {
        {"cudarem_session_calls_total", "counter", "CUDA calls the session ran."},
        {"cudarem_session_bytes_in_total", "counter", "Bulk bytes the session sent the device."},
        {"cudarem_session_bytes_out_total", "counter", "Bulk bytes the device sent the session."},
        {"cudarem_session_memory_used_bytes", "gauge", "Device memory the session holds."},
        {"cudarem_session_kernel_seconds_total", "counter", "Device time the session's work took (emulated device)."},
        {"cudarem_session_start_time_seconds", "gauge", "When the session was admitted, seconds since the epoch."},
    };
    crm_monitor_session *v = calloc(CRM_MONITOR_SESSIONS, sizeof *v);
    int n = v ? crm_monitor_sessions(v, CRM_MONITOR_SESSIONS) : 0;
    if (n > CRM_MONITOR_SESSIONS)
        n = CRM_MONITOR_SESSIONS;
    crm__head(f, "cudarem_sessions", "gauge", "Sessions open.");
    fprintf(f, "cudarem_sessions %d\n", n);
    for (size_t k = 0; k < sizeof fams / sizeof *fams; k++) {
        crm__head(f, fams[k].name, fams[k].type, fams[k].help);
        for (int i = 0; i < n; i++) {
            double val[] = {(double)v[i].calls,  (double)v[i].bytes_in,        (double)v[i].bytes_out,
                            (double)v[i].memory, (double)v[i].kernel_ns / 1e9, (double)v[i].start_unix};
            crm__session_sample(f, fams[k].name, &v[i], val[k]);
        }
    }
    crm__head(f, "cudarem_session_held", "gauge",
              "What the session holds of each kind --session-limits bounds (host-memory and module-bytes in bytes).");
    for (int i = 0; i < n; i++)
        for (int kind = 0; kind < CRM_LIMIT_KINDS; kind++) {
            fprintf(f, "cudarem_session_held{session=\"%" PRIu64 "\",user=", v[i].id);
            crm__label(f, v[i].user);
            fprintf(f, ",server_pid=\"%d\",kind=\"%s\"} %" PRIu64 "\n", (int)v[i].server_pid, crm_limit_name(kind),
                    v[i].held[kind]);
        }
    free(v);
}

/* Each session's limits and how often they refused a creation, per kind. */
static void crm__limits(FILE *f, const crm_monitor_server *m)
{
    crm__head(f, "cudarem_session_limit", "gauge", "What one session may hold of each kind (--session-limits; 0: no limit).");
    for (int kind = 0; kind < CRM_LIMIT_KINDS; kind++)
        fprintf(f, "cudarem_session_limit{kind=\"%s\"} %" PRIu64 "\n", crm_limit_name(kind),
                crm_session_limits.max[kind]);
    crm__head(f, "cudarem_session_limit_hits_total", "counter", "Creations a session's limit refused, per kind.");
    for (int kind = 0; kind < CRM_LIMIT_KINDS; kind++)
        fprintf(f, "cudarem_session_limit_hits_total{kind=\"%s\"} %" PRIu64 "\n", crm_limit_name(kind),
                m->limit_hits[kind]);
}

static void crm__server(FILE *f, const crm_monitor_server *m)
{
    static const struct {
        const char *name, *help;
        int event;
    } fams[] = {
        {"cudarem_sessions_admitted_total", "Sessions admitted since the server started.", CRM_EVENT_ADMITTED},
        {"cudarem_sessions_refused_total", "Sessions refused (version, quota, full server, credentials).",
         CRM_EVENT_REFUSED},
        {"cudarem_auth_failures_total", "Sessions refused for want of a valid credential.", CRM_EVENT_AUTH_FAILED},
        {"cudarem_sessions_ended_by_admin_total", "Sessions an administrator ended.", CRM_EVENT_ENDED_BY_ADMIN},
    };
    for (size_t k = 0; k < sizeof fams / sizeof *fams; k++) {
        crm__head(f, fams[k].name, "counter", fams[k].help);
        fprintf(f, "%s %" PRIu64 "\n", fams[k].name, m->events[fams[k].event]);
    }
    crm__head(f, "cudarem_server_start_time_seconds", "gauge", "When the server started, seconds since the epoch.");
    fprintf(f, "cudarem_server_start_time_seconds %" PRId64 "\n", m->start_unix);
    crm__head(f, "cudarem_server_info", "gauge", "The device the server serves.");
    fputs("cudarem_server_info{backend=", f);
    crm__label(f, m->backend);
    fputs("} 1\n", f);
}

static void crm__call_histogram(FILE *f, const crm_monitor_server *m)
{
    uint64_t cumulative = 0;
    crm__head(f, "cudarem_call_duration_seconds", "histogram",
              "Time the server took to execute each CUDA call (its handler; not the network).");
    for (int b = 0; b < CRM_MONITOR_CALL_BUCKETS; b++) {
        cumulative += m->call_buckets[b];
        fprintf(f, "cudarem_call_duration_seconds_bucket{le=\"%g\"} %" PRIu64 "\n",
                (double)crm_monitor_call_bounds_ns[b] / 1e9, cumulative);
    }
    cumulative += m->call_buckets[CRM_MONITOR_CALL_BUCKETS];
    fprintf(f, "cudarem_call_duration_seconds_bucket{le=\"+Inf\"} %" PRIu64 "\n", cumulative);
    fprintf(f, "cudarem_call_duration_seconds_sum %.9f\n", (double)m->call_ns / 1e9);
    fprintf(f, "cudarem_call_duration_seconds_count %" PRIu64 "\n", cumulative);
}

void crm_metrics_write(FILE *f, const char *hostname)
{
    crm_monitor_server m;
    crm_monitor_server_info(&m);
    crm__devices(f, hostname);
    crm__sessions(f);
    crm__server(f, &m);
    crm__limits(f, &m);
    crm__call_histogram(f, &m);
}

void crm_metrics_handle(const crm_http_request *req, crm_http_response *res)
{
    char host[256] = "";
    if (strcmp(req->path, "/metrics") != 0) {
        crm_http_text(res, 404, "text/plain; charset=utf-8", "cudarem-server: the metrics are at /metrics\n");
        return;
    }
    if (strcmp(req->method, "GET") != 0) {
        crm_http_text(res, 405, "text/plain; charset=utf-8", "GET only\n");
        return;
    }
    gethostname(host, sizeof host - 1);
    FILE *f = open_memstream(&res->body, &res->len);
    if (f == NULL)
        return;
    crm_metrics_write(f, host);
    fclose(f);
    res->code = 200;
    res->type = "text/plain; version=0.0.4; charset=utf-8";
}
