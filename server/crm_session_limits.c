/* crm_session_limits.c -- a session's holdings against --session-limits
 * (server/crm_limits.h): what it holds of each kind, read from its own tables where
 * they say it and counted where they do not; the check a handler makes before it
 * creates anything; the one log line per kind when a limit is reached; and what the
 * session publishes for cudarem-smi and the metrics. */
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include "common/crm_log.h"
#include "crm_api.h"
#include "server/crm_monitor.h"
#include "server/crm_session.h"

_Static_assert(CRM_LIMIT_KINDS <= CRM_LIMIT_KINDS_MAX, "every limit kind fits the wire's arrays");

#define CRM__HOST_MEMORY_EVERY_NS 100000000ull /* reads of /proc/self/statm: at most 10 a second */

/* Resident memory of this process that no other process shares (its heap, stacks
 * and private mappings; not device memory the emulated device keeps in a shared
 * pool), bytes; 0 when unknown. */
static uint64_t crm__private_resident(void)
{
    unsigned long long size = 0, resident = 0, shared = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL)
        return 0;
    int n = fscanf(f, "%llu %llu %llu", &size, &resident, &shared);
    fclose(f);
    if (n != 3 || shared > resident)
        return 0;
    return (uint64_t)(resident - shared) * (uint64_t)sysconf(_SC_PAGESIZE);
}

static uint64_t crm__host_memory(crm_session *s, int fresh)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    if (fresh || s->host_memory_at == 0 || now - s->host_memory_at >= CRM__HOST_MEMORY_EVERY_NS) {
        s->host_memory = crm__private_resident();
        s->host_memory_at = now;
    }
    return s->host_memory;
}

uint64_t crm_session_held(crm_session *s, int kind)
{
    switch (kind) {
    case CRM_LIMIT_STREAMS: return s->streams.used;
    case CRM_LIMIT_EVENTS: return s->events.used;
    case CRM_LIMIT_PINNED: return s->hostmem.used;
    case CRM_LIMIT_ALLOCATIONS: return s->allocs.count + s->counted[kind];
    case CRM_LIMIT_HOST_MEMORY: return crm__host_memory(s, 0);
    default: return kind >= 0 && kind < CRM_LIMIT_KINDS ? s->counted[kind] : 0;
    }
}

/* A value of kind for a log line: "16 streams", "256 KiB of module-bytes". */
static void crm__amount(char *buf, size_t len, int kind, uint64_t v)
{
    if (!crm_limit_is_bytes(kind))
        snprintf(buf, len, "%llu %s", (unsigned long long)v, crm_limit_name(kind));
    else if (v < (1ull << 20))
        snprintf(buf, len, "%.0f KiB of %s", (double)v / 1024.0, crm_limit_name(kind));
    else if (v < (1ull << 30))
        snprintf(buf, len, "%.1f MiB of %s", (double)v / 1048576.0, crm_limit_name(kind));
    else
        snprintf(buf, len, "%.1f GiB of %s", (double)v / 1073741824.0, crm_limit_name(kind));
}

/* The limit's log line, once per kind and session until it falls below again. */
static void crm__log_reached(crm_session *s, int kind, uint64_t held, uint64_t limit)
{
    char limit_text[64], held_text[64];
    if (s->limits_logged & (1u << kind))
        return;
    s->limits_logged |= 1u << kind;
    crm__amount(limit_text, sizeof limit_text, kind, limit);
    crm__amount(held_text, sizeof held_text, kind, held);
    crm_warn("session %llu (%s): reached its limit of %s (--session-limits %s=%llu), holding %s: creations "
             "past it fail as out of memory",
             (unsigned long long)s->id, s->user, limit_text, crm_limit_name(kind), (unsigned long long)limit,
             held_text);
}

/* 0 when held + more stays within kind's limit; else logs, counts and returns -1. */
static int crm__within(crm_session *s, int kind, uint64_t more)
{
    uint64_t limit = crm_session_limits.max[kind];
    if (limit == 0)
        return 0;
    uint64_t held = crm_session_held(s, kind);
    if (held <= limit && more <= limit - held)
        return 0;
    crm__log_reached(s, kind, held, limit);
    crm_monitor_limit_hit(kind);
    return -1;
}

int crm_session_room(crm_session *s, int kind, uint64_t more)
{
    if (kind < 0 || kind >= CRM_LIMIT_HOST_MEMORY)
        return -1;
    if (crm__within(s, kind, more) != 0)
        return -1;
    /* every creation costs host memory: none while the process holds too much */
    if (crm_session_limits.max[CRM_LIMIT_HOST_MEMORY] != 0 && crm__within(s, CRM_LIMIT_HOST_MEMORY, 0) != 0) {
        crm__host_memory(s, 1); /* the next creation sees what was given back since */
        return -1;
    }
    return 0;
}

void crm_session_count(crm_session *s, int kind, int64_t delta)
{
    if (kind < 0 || kind >= CRM_LIMIT_KINDS)
        return;
    if (delta < 0 && (uint64_t)-delta > s->counted[kind])
        s->counted[kind] = 0;
    else
        s->counted[kind] += (uint64_t)delta;
    if (delta < 0)
        s->limits_logged &= ~(1u << kind); /* below the limit again: the next hit is news */
}

void crm_session_publish_held(crm_session *s)
{
    uint64_t held[CRM_LIMIT_KINDS];
    for (int k = 0; k < CRM_LIMIT_KINDS; k++)
        held[k] = crm_session_held(s, k);
    crm_monitor_session_held(held);
}
