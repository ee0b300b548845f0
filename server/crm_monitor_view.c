/* crm_monitor_view.c -- what the shared table (server/crm_monitor.c) tells an
 * operator: sessions described with their peer, start and counters, devices with
 * their names and memory, and the server's event counts. Sessions write their
 * own slot; readers copy what they find, so a view is a consistent-enough
 * snapshot, never a lock on the sessions. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "server/crm_monitor_table.h"

void crm_monitor_set_backend(const char *name)
{
    if (crm__table_get() != NULL)
        snprintf(crm__t->backend, sizeof crm__t->backend, "%s", name);
}

void crm_monitor_session_describe(const char *peer)
{
    if (crm__me == NULL)
        return;
    snprintf(crm__me->peer, sizeof crm__me->peer, "%s", peer);
    atomic_store(&crm__me->start_unix, (int64_t)time(NULL));
    atomic_store(&crm__me->described, 1);
}

void crm_monitor_session_counts(uint64_t calls, uint64_t bytes_in, uint64_t bytes_out)
{
    if (crm__me == NULL)
        return;
    atomic_store(&crm__me->calls, calls);
    atomic_store(&crm__me->bytes_in, bytes_in);
    atomic_store(&crm__me->bytes_out, bytes_out);
}

void crm_monitor_session_held(const uint64_t held[CRM_LIMIT_KINDS])
{
    if (crm__me == NULL)
        return;
    for (int k = 0; k < CRM_LIMIT_KINDS; k++)
        atomic_store(&crm__me->held[k], held[k]);
}

void crm_monitor_limit_hit(int kind)
{
    if (crm__table_get() != NULL && kind >= 0 && kind < CRM_LIMIT_KINDS)
        atomic_fetch_add(&crm__t->limit_hits[kind], 1);
}

void crm_monitor_device_describe(int device, const char *name, uint64_t total)
{
    if (crm__table_get() == NULL || device < 0 || device >= CRM_MONITOR_DEVICES)
        return;
    crm__device_desc *d = &crm__t->desc[device];
    crm__lock();
    if (!atomic_load(&d->known)) {
        snprintf(d->name, sizeof d->name, "%s", name);
        atomic_store(&d->total, total);
        atomic_store(&d->known, 1);
    }
    pthread_mutex_unlock(&crm__t->lock);
}

const uint64_t crm_monitor_call_bounds_ns[CRM_MONITOR_CALL_BUCKETS] = {
    10000ull,     50000ull,     100000ull,     500000ull,     1000000ull,    5000000ull,
    10000000ull,  50000000ull,  100000000ull,  500000000ull,  1000000000ull, 5000000000ull,
};

void crm_monitor_call_time(uint64_t ns)
{
    int b = 0;
    if (crm__table_get() == NULL)
        return;
    while (b < CRM_MONITOR_CALL_BUCKETS && ns > crm_monitor_call_bounds_ns[b])
        b++;
    atomic_fetch_add(&crm__t->call_buckets[b], 1);
    atomic_fetch_add(&crm__t->call_ns, ns);
}

int crm_monitor_refusal_log(uint64_t *quiet)
{
    int64_t now = (int64_t)time(NULL), second;
    *quiet = 0;
    if (crm__table_get() == NULL)
        return 1;
    second = atomic_load(&crm__t->refusal_second);
    if (second != now && atomic_compare_exchange_strong(&crm__t->refusal_second, &second, now))
        atomic_store(&crm__t->refusals_logged, 0); /* a new second (a race costs a line or two) */
    if (atomic_fetch_add(&crm__t->refusals_logged, 1) >= CRM_MONITOR_REFUSALS_LOGGED) {
        atomic_fetch_add(&crm__t->refusals_quiet, 1);
        return 0;
    }
    *quiet = atomic_exchange(&crm__t->refusals_quiet, 0);
    return 1;
}

void crm_monitor_note(enum crm_monitor_event ev)
{
    if (crm__table_get() != NULL && ev >= 0 && ev < CRM_MONITOR_EVENTS)
        atomic_fetch_add(&crm__t->events[ev], 1);
}

static uint64_t crm__positive(int64_t v)
{
    return v > 0 ? (uint64_t)v : 0;
}

/* Copies slot s into out: 1, or 0 when it holds no described session. */
static int crm__copy_session(const crm__slot *s, crm_monitor_session *out)
{
    int pid = atomic_load(&s->server_pid);
    if (pid <= 0 || !atomic_load(&s->described))
        return 0;
    const crm__user *u = crm__user_of(s);
    memset(out, 0, sizeof *out);
    out->id = atomic_load(&s->session_id);
    snprintf(out->user, sizeof out->user, "%s", u ? u->name : "");
    memcpy(out->peer, s->peer, sizeof out->peer);
    out->peer[sizeof out->peer - 1] = '\0';
    out->client_pid = atomic_load(&s->client_pid);
    out->server_pid = pid;
    out->start_unix = atomic_load(&s->start_unix);
    out->calls = atomic_load(&s->calls);
    out->bytes_in = atomic_load(&s->bytes_in);
    out->bytes_out = atomic_load(&s->bytes_out);
    out->kernel_ns = atomic_load(&s->kernel_ns);
    for (int k = 0; k < CRM_LIMIT_KINDS; k++)
        out->held[k] = atomic_load(&s->held[k]);
    for (int d = 0; d < CRM_MONITOR_DEVICES; d++) {
        out->memory += crm__positive(atomic_load(&s->used[d]));
        if (atomic_load(&s->touched[d]))
            out->devices |= 1ull << d;
    }
    return out->id != 0;
}

int crm_monitor_sessions(crm_monitor_session *out, int max)
{
    crm_monitor_session one;
    int n = 0;
    if (crm__table_get() == NULL)
        return 0;
    for (int i = 0; i < CRM_MONITOR_SESSIONS; i++) {
        if (!crm__copy_session(&crm__t->slots[i], &one))
            continue;
        if (n < max)
            out[n] = one;
        n++;
    }
    return n;
}

int crm_monitor_devices(crm_monitor_device *out, int max)
{
    int known = 0;
    if (crm__table_get() == NULL)
        return 0;
    for (int d = 0; d < max && d < CRM_MONITOR_DEVICES; d++) {
        crm_monitor_device *o = &out[d];
        const crm__device_desc *desc = &crm__t->desc[d];
        memset(o, 0, sizeof *o);
        o->known = atomic_load(&desc->known);
        if (!o->known)
            continue;
        known++;
        snprintf(o->name, sizeof o->name, "%s", desc->name);
        o->total = atomic_load(&desc->total);
        crm_monitor_utilization(d, &o->util_compute, &o->util_memory);
        for (int i = 0; i < CRM_MONITOR_SESSIONS; i++) {
            const crm__slot *s = &crm__t->slots[i];
            if (atomic_load(&s->server_pid) <= 0 || !atomic_load(&s->touched[d]))
                continue;
            o->used += crm__positive(atomic_load(&s->used[d]));
            o->sessions++;
        }
    }
    return known;
}

void crm_monitor_server_info(crm_monitor_server *out)
{
    memset(out, 0, sizeof *out);
    if (crm__table_get() == NULL)
        return;
    out->start_unix = crm__t->start_unix;
    snprintf(out->backend, sizeof out->backend, "%s", crm__t->backend);
    for (int e = 0; e < CRM_MONITOR_EVENTS; e++)
        out->events[e] = atomic_load(&crm__t->events[e]);
    for (int b = 0; b <= CRM_MONITOR_CALL_BUCKETS; b++)
        out->call_buckets[b] = atomic_load(&crm__t->call_buckets[b]);
    out->call_ns = atomic_load(&crm__t->call_ns);
    for (int k = 0; k < CRM_LIMIT_KINDS; k++)
        out->limit_hits[k] = atomic_load(&crm__t->limit_hits[k]);
}
