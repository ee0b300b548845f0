/* cudarem_smi.c -- cudarem-smi: the devices and sessions of one or many cudarem
 * servers, shown like nvidia-smi, as a table or JSON, once or every few seconds;
 * and ending a session. It speaks to each server as an observer
 * (client/crm_observe.h), with an administrator's credentials. */
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "client/crm_observe.h"
#include "protocol/crm_limit_kinds.h"
#include "protocol/crm_status_json.h"
#include "common/crm_addr.h"

#define SMI_MAX_SERVERS 64
#define SMI_DEFAULT_SERVER "tcp:127.0.0.1:7470"

typedef struct smi_options {
    const char *servers[SMI_MAX_SERVERS];
    int nservers;
    int json;
    int objects;           /* --objects: what each session holds against its limits */
    int loop_seconds;      /* 0: once */
    uint64_t end_session;  /* 0: none */
} smi_options;

static volatile sig_atomic_t smi_stop;

static void smi_on_signal(int sig)
{
    (void)sig;
    smi_stop = 1;
}

static void smi_usage(FILE *f)
{
    fprintf(f,
            "Usage: cudarem-smi [OPTION]...\n"
            "Show the devices and sessions of cudarem servers, as nvidia-smi shows a GPU's.\n\n"
            "  -s, --server ADDR    a server: tcp:HOST:PORT, HOST:PORT or unix:PATH; a comma\n"
            "                       list or repeated for many (default: CUDAREM_SERVER, else\n"
            "                       " SMI_DEFAULT_SERVER "); a pool's @GPU lists are ignored\n"
            "      --json           print JSON: {\"servers\": [...]}, one document per line\n"
            "  -o, --objects        also show what each session holds of every kind the\n"
            "                       server's --session-limits bound, against those limits,\n"
            "                       and how many creations they refused\n"
            "  -l, --loop SECONDS   show again every SECONDS until interrupted\n"
            "      --end SESSION    end session SESSION (its number in the table) of the one\n"
            "                       server given; the session's process frees all it held\n"
            "  -h, --help           this text\n\n"
            "The servers answer an administrator only: a token (CUDAREM_TOKEN or\n"
            "CUDAREM_TOKEN_FILE) of a user added with cudarem-server --add-user USER --admin,\n"
            "or, on a Unix socket where the server admits by uid (--allow-uid, --insecure),\n"
            "root or the user the server runs as. CUDAREM_TLS=on and\n"
            "CUDAREM_TLS_CA apply as for programs. Exit status: 0 when every server answered,\n"
            "1 when one did not, 2 for a usage error.\n");
}

/* Adds the comma-separated addresses of list, a pool as CUDAREM_SERVER lists it
 * (client/crm_pool.h): an entry's "@GPU..." is dropped, as every device of a server
 * is shown. 0, or -1 when there are too many. */
static int smi_add_servers(smi_options *o, char *list)
{
    for (char *save = NULL, *a = strtok_r(list, ",", &save); a != NULL; a = strtok_r(NULL, ",", &save)) {
        char *gpus = strrchr(a, '@');
        if (gpus != NULL)
            *gpus = '\0';
        if (o->nservers == SMI_MAX_SERVERS)
            return -1;
        o->servers[o->nservers++] = a;
    }
    return 0;
}

/* 0, 1 (help shown) or -1 (usage error). */
static int smi_parse(int argc, char **argv, smi_options *o)
{
    static const struct option longs[] = {
        {"server", required_argument, NULL, 's'}, {"json", no_argument, NULL, 'j'},
        {"loop", required_argument, NULL, 'l'},   {"end", required_argument, NULL, 'e'},
        {"help", no_argument, NULL, 'h'},         {"objects", no_argument, NULL, 'o'},
        {NULL, 0, NULL, 0},
    };
    int opt;
    char *end;
    memset(o, 0, sizeof *o);
    while ((opt = getopt_long(argc, argv, "s:l:oh", longs, NULL)) != -1) {
        switch (opt) {
        case 's':
            if (smi_add_servers(o, optarg) != 0)
                return -1;
            break;
        case 'j': o->json = 1; break;
        case 'o': o->objects = 1; break;
        case 'l':
            o->loop_seconds = (int)strtol(optarg, &end, 10);
            if (*end != '\0' || o->loop_seconds < 1)
                return -1;
            break;
        case 'e':
            o->end_session = strtoull(optarg, &end, 10);
            if (*end != '\0' || o->end_session == 0)
                return -1;
            break;
        case 'h': smi_usage(stdout); return 1;
        default: return -1;
        }
    }
    if (optind < argc)
        return -1;
    if (o->nservers == 0) {
        const char *env = getenv("CUDAREM_SERVER");
        static char list[1024];
        snprintf(list, sizeof list, "%s", env && *env ? env : SMI_DEFAULT_SERVER);
        if (smi_add_servers(o, list) != 0)
            return -1;
    }
    return o->end_session != 0 && o->nservers != 1 ? -1 : 0;
}

/* ---- text ----------------------------------------------------------------------- */

static double smi_mib(uint64_t bytes)
{
    return (double)bytes / (1024.0 * 1024.0);
}

static uint64_t smi_kernel_total(const crm_status_res *r)
{
    uint64_t total = 0;
    for (u_int i = 0; i < r->sessions.sessions_len; i++)
        total += r->sessions.sessions_val[i].kernel_ns;
    return total;
}

static void smi_text_devices(const crm_status_res *r)
{
    static const char rule[] =
        "+-----+----------------------------------+---------------------------+-----------+----------+\n";
    printf("%s| GPU | Name                             |    Memory used / total    | Util c/m  | Sessions |\n%s",
           rule, rule);
    for (u_int i = 0; i < r->devices.devices_len; i++) {
        const crm_status_device *d = &r->devices.devices_val[i];
        printf("| %3d | %-32.32s | %8.0fMiB / %8.0fMiB | %3u%% %3u%% | %8d |\n", d->index, d->name,
               smi_mib(d->memory_used), smi_mib(d->memory_total), d->util_compute, d->util_memory, d->sessions);
    }
    if (r->devices.devices_len == 0)
        printf("| no device described yet: the first session tells the server its devices         |\n");
    printf("%s", rule);
}

static void smi_text_sessions(const crm_status_res *r, time_t now)
{
    uint64_t kernel_total = smi_kernel_total(r);
    printf("%6s  %-16s %-44s %8s %10s %10s %10s %10s %7s\n", "ID", "USER", "PEER", "AGE", "MEMORY", "CALLS",
           "IN", "OUT", "KERNEL");
    for (u_int i = 0; i < r->sessions.sessions_len; i++) {
        const crm_status_session *s = &r->sessions.sessions_val[i];
        long age = s->start_unix > 0 ? (long)(now - s->start_unix) : 0;
        char share[16] = "-";
        if (kernel_total > 0)
            snprintf(share, sizeof share, "%.0f%%", 100.0 * (double)s->kernel_ns / (double)kernel_total);
        printf("%6" PRIu64 "  %-16.16s %-44.44s %5ld:%02ld %7.0fMiB %10" PRIu64 " %7.0fMiB %7.0fMiB %7s\n", s->id,
               s->user, s->peer, age / 60, age % 60, smi_mib(s->memory_used), s->calls, smi_mib(s->bytes_in),
               smi_mib(s->bytes_out), share);
    }
    if (r->sessions.sessions_len == 0)
        printf("  no sessions\n");
}

/* One held or limit value: a count, or MiB for a byte kind; "-" for no limit. */
static void smi_kind_value(char *buf, size_t len, int kind, uint64_t v, int is_limit)
{
    if (is_limit && v == 0)
        snprintf(buf, len, "-");
    else if (crm_limit_is_bytes(kind))
        snprintf(buf, len, "%.0fMiB", smi_mib(v));
    else
        snprintf(buf, len, "%" PRIu64, v);
}

/* Value k of an array the server sent, 0 when it sent fewer. */
static uint64_t smi_kind_at(const u_quad_t *v, u_int n, int k)
{
    return (u_int)k < n ? (uint64_t)v[k] : 0;
}

/* --objects: per session, what it holds of each limited kind; then the limits and
 * the creations they refused. */
static void smi_text_objects(const crm_status_res *r)
{
    char cell[32];
    printf("\n%6s ", "ID");
    for (int k = 0; k < CRM_LIMIT_KINDS; k++)
        printf(" %12s", crm_limit_name(k));
    printf("\n");
    for (u_int i = 0; i < r->sessions.sessions_len; i++) {
        const crm_status_session *s = &r->sessions.sessions_val[i];
        printf("%6" PRIu64 " ", s->id);
        for (int k = 0; k < CRM_LIMIT_KINDS; k++) {
            smi_kind_value(cell, sizeof cell, k, smi_kind_at(s->held.held_val, s->held.held_len, k), 0);
            printf(" %12s", cell);
        }
        printf("\n");
    }
    printf("%6s ", "limit");
    for (int k = 0; k < CRM_LIMIT_KINDS; k++) {
        smi_kind_value(cell, sizeof cell, k, smi_kind_at(r->limits.limits_val, r->limits.limits_len, k), 1);
        printf(" %12s", cell);
    }
    printf("\n%6s ", "hits");
    for (int k = 0; k < CRM_LIMIT_KINDS; k++)
        printf(" %12" PRIu64, smi_kind_at(r->limit_hits.limit_hits_val, r->limit_hits.limit_hits_len, k));
    printf("\n");
}

/* Without --objects: one line naming the limits that refused creations, if any. */
static void smi_text_limit_hits(const crm_status_res *r)
{
    char line[512] = "";
    for (int k = 0; k < CRM_LIMIT_KINDS; k++) {
        uint64_t hits = smi_kind_at(r->limit_hits.limit_hits_val, r->limit_hits.limit_hits_len, k);
        if (hits > 0)
            snprintf(line + strlen(line), sizeof line - strlen(line), "%s%s %" PRIu64, line[0] ? ", " : "",
                     crm_limit_name(k), hits);
    }
    if (line[0] != '\0')
        printf("creations refused by --session-limits since the start: %s (see --objects)\n", line);
}

static void smi_text(const char *addr, const crm_status_res *r, int objects)
{
    time_t now = time(NULL);
    long up = r->start_unix > 0 ? (long)(now - r->start_unix) : 0;
    printf("cudarem server %s  backend %s  up %ld:%02ld:%02ld  sessions: %u open, %" PRIu64 " admitted, %" PRIu64
           " refused (%" PRIu64 " without valid credentials), %" PRIu64 " ended by an administrator\n",
           addr, r->backend, up / 3600, up / 60 % 60, up % 60, r->sessions.sessions_len, r->sessions_admitted,
           r->sessions_refused, r->auth_failures, r->sessions_ended_by_admin);
    smi_text_devices(r);
    smi_text_sessions(r, now);
    if (objects)
        smi_text_objects(r);
    else
        smi_text_limit_hits(r);
}

/* ---- one pass over the servers --------------------------------------------------- */

static int smi_by_id(const void *a, const void *b)
{
    uint64_t x = ((const crm_status_session *)a)->id, y = ((const crm_status_session *)b)->id;
    return x < y ? -1 : x > y;
}

/* Shows server addr; 0, or -1 when it did not answer. */
static int smi_show_one(const smi_options *o, const char *addr)
{
    crm_observer obs;
    crm_status_res res;
    char err[512] = "";
    int rc = crm_observe_open(addr, &obs, err, sizeof err);
    if (rc == 0)
        rc = crm_observe_status(&obs, &res, err, sizeof err);
    crm_observe_close(&obs);
    if (rc == 0 && res.sessions.sessions_len > 1)
        qsort(res.sessions.sessions_val, res.sessions.sessions_len, sizeof *res.sessions.sessions_val, smi_by_id);
    if (o->json)
        crm_status_json(stdout, addr, rc == 0 ? &res : NULL, rc == 0 ? NULL : err);
    else if (rc == 0)
        smi_text(addr, &res, o->objects);
    else
        fprintf(stderr, "cudarem-smi: %s: %s\n", addr, err);
    if (rc == 0)
        xdr_free((xdrproc_t)xdr_crm_status_res, (char *)&res);
    return rc;
}

static int smi_show(const smi_options *o)
{
    int failed = 0;
    if (o->json)
        printf("{\"servers\": [");
    for (int i = 0; i < o->nservers; i++) {
        if (o->json && i > 0)
            printf(", ");
        else if (!o->json && i > 0)
            putchar('\n');
        failed |= smi_show_one(o, o->servers[i]) != 0;
    }
    if (o->json)
        printf("]}\n");
    fflush(stdout);
    return failed;
}

static int smi_end(const smi_options *o)
{
    crm_observer obs;
    char err[512] = "";
    int rc = crm_observe_open(o->servers[0], &obs, err, sizeof err);
    if (rc == 0)
        rc = crm_observe_end(&obs, o->end_session, err, sizeof err);
    crm_observe_close(&obs);
    if (rc != 0) {
        fprintf(stderr, "cudarem-smi: %s: %s\n", o->servers[0], err);
        return 1;
    }
    printf("cudarem-smi: session %" PRIu64 " of %s was told to end\n", o->end_session, o->servers[0]);
    return 0;
}

int main(int argc, char **argv)
{
    smi_options o;
    int rc = smi_parse(argc, argv, &o);
    if (rc != 0) {
        if (rc < 0)
            smi_usage(stderr);
        return rc < 0 ? 2 : 0;
    }
    signal(SIGPIPE, SIG_IGN);
    if (o.end_session != 0)
        return smi_end(&o);
    struct sigaction sa = {.sa_handler = smi_on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    int failed = smi_show(&o);
    while (o.loop_seconds > 0 && !smi_stop) {
        sleep((unsigned)o.loop_seconds);
        if (!smi_stop) {
            if (!o.json)
                putchar('\n');
            failed = smi_show(&o);
        }
    }
    return failed ? 1 : 0;
}
