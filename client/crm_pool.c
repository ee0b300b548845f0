/* crm_pool.c -- parsing a pool of servers and ordering its devices (client/crm_pool.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "client/crm_pool.h"

/* Parses "GPU[+GPU...]" into s->gpus. 0, or -1 with err set. */
static int crm__parse_gpus(const char *text, crm_pool_server *s, char *err, size_t errlen)
{
    const char *p = text;
    for (;;) {
        char *end;
        errno = 0;
        long gpu = strtol(p, &end, 10);
        if (end == p || errno != 0 || gpu < 0 || gpu >= CRM_POOL_MAX_DEVICES || (*end != '+' && *end != '\0')) {
            snprintf(err, errlen, "bad GPU list \"%s\" after %s@: expected numbers 0-%d joined by +", text, s->addr,
                     CRM_POOL_MAX_DEVICES - 1);
            return -1;
        }
        if (s->ngpus == CRM_POOL_MAX_DEVICES) {
            snprintf(err, errlen, "more than %d GPUs listed for %s", CRM_POOL_MAX_DEVICES, s->addr);
            return -1;
        }
        s->gpus[s->ngpus++] = (int)gpu;
        if (*end == '\0')
            return 0;
        p = end + 1; /* past '+': another number must follow */
    }
}

/* Parses one ENTRY of length len. */
static int crm__parse_entry(const char *entry, size_t len, crm_pool_server *s, char *err, size_t errlen)
{
    char text[CRM_POOL_ADDR_MAX + 4 * CRM_POOL_MAX_DEVICES];
    if (len == 0 || len >= sizeof text) {
        snprintf(err, errlen, len == 0 ? "an empty entry in the server list" : "a server entry is too long");
        return -1;
    }
    memcpy(text, entry, len);
    text[len] = '\0';
    char *at = strrchr(text, '@');
    if (at != NULL)
        *at = '\0';
    if (text[0] == '\0' || strlen(text) >= sizeof s->addr) {
        snprintf(err, errlen, "a server entry has no address, or one too long");
        return -1;
    }
    memset(s, 0, sizeof *s);
    snprintf(s->addr, sizeof s->addr, "%s", text);
    return at != NULL ? crm__parse_gpus(at + 1, s, err, errlen) : 0;
}

int crm_pool_parse(const char *text, crm_pool_spec *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const char *p = text;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
        if (out->nservers == CRM_POOL_MAX_SERVERS) {
            snprintf(err, errlen, "more than %d servers listed", CRM_POOL_MAX_SERVERS);
            return -1;
        }
        if (crm__parse_entry(p, len, &out->servers[out->nservers], err, errlen) != 0)
            return -1;
        out->nservers++;
        if (comma == NULL)
            return 0;
        p = comma + 1;
    }
}

static int crm__add(crm_pool_map *out, int server, int local, char *err, size_t errlen)
{
    if (out->count == CRM_POOL_MAX_DEVICES) {
        snprintf(err, errlen, "the pool has more than %d devices", CRM_POOL_MAX_DEVICES);
        return -1;
    }
    out->dev[out->count++] = (crm_pool_device){.server = server, .local = local};
    return 0;
}

int crm_pool_build(const crm_pool_spec *spec, const int *offered, crm_pool_map *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    for (int s = 0; s < spec->nservers; s++) {
        const crm_pool_server *srv = &spec->servers[s];
        int n = srv->ngpus > 0 ? srv->ngpus : offered[s];
        for (int i = 0; i < n; i++) {
            int local = srv->ngpus > 0 ? srv->gpus[i] : i;
            if (local >= offered[s]) {
                snprintf(err, errlen, "server %s has no GPU %d: it offers %d", srv->addr, local, offered[s]);
                return -1;
            }
            if (crm__add(out, s, local, err, errlen) != 0)
                return -1;
        }
    }
    return 0;
}

/* 1 when a is busier than b: a larger share of memory in use, then more sessions. */
static int crm__busier(const crm_pool_device *a, const crm_pool_device *b)
{
    long double share_a = a->memory_total ? (long double)a->memory_used / a->memory_total : 0;
    long double share_b = b->memory_total ? (long double)b->memory_used / b->memory_total : 0;
    if (share_a != share_b)
        return share_a > share_b;
    return a->sessions > b->sessions;
}

int crm_pool_pick(crm_pool_map *m, const char *policy)
{
    if (policy == NULL || policy[0] == '\0' || strcmp(policy, "order") == 0)
        return 0;
    if (strcmp(policy, "least-loaded") != 0)
        return -1;
    for (int i = 1; i < m->count; i++) { /* insertion sort: stable, and lists are short */
        crm_pool_device d = m->dev[i];
        int j = i;
        while (j > 0 && crm__busier(&m->dev[j - 1], &d)) {
            m->dev[j] = m->dev[j - 1];
            j--;
        }
        m->dev[j] = d;
    }
    return 0;
}

void crm_pool_visible(crm_pool_map *m, const char *visible)
{
    if (visible == NULL)
        return;
    crm_pool_map kept = {.count = 0};
    int taken[CRM_POOL_MAX_DEVICES] = {0};
    const char *p = visible;
    while (*p != '\0' && kept.count < m->count) {
        char *end;
        errno = 0;
        long idx = strtol(p, &end, 10);
        if (end == p || errno != 0 || idx < 0 || idx >= m->count || taken[idx] || (*end != ',' && *end != '\0'))
            break; /* CUDA hides every device from the first bad entry on */
        taken[idx] = 1;
        kept.dev[kept.count++] = m->dev[idx];
        p = *end == ',' ? end + 1 : end;
    }
    *m = kept;
}
