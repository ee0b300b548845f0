/* crm_idle.c -- answers synchronisations and queries on the client when an earlier
 * round trip already proved their work done (see crm_idle.h). */
#include "crm_idle.h"

#include <stdlib.h>
#include <string.h>
#include "client/crm_handles.h"

typedef struct crm_idle_record {
    uint64_t stream;  /* wire stream the event was recorded on */
    uint64_t seq;     /* the record's place among the calls noted */
    int told;         /* a query was answered "not ready" while it was queued */
} crm_idle_record;

static void crm__forget_event(crm_idle *st, uint64_t event)
{
    void *v = NULL;
    if (crm_idmap_del(&st->events, event, &v) == 0)
        free(v);
}

/* Remembers that event was recorded on stream as call seq; forgets it when memory
 * runs out (its queries then go to the server). */
static void crm__record(crm_idle *st, uint64_t event, uint64_t stream)
{
    void *v = NULL;
    crm_idle_record *r = crm_idmap_get(&st->events, event, &v) == 0 ? v : malloc(sizeof *r);
    if (r == NULL)
        return;
    *r = (crm_idle_record){stream, st->seq, 0};
    if (v == NULL && crm_idmap_put(&st->events, event, r) != 0)
        free(r);
}

void crm_idle_note(crm_idle *st, const crm_call *call)
{
    st->seq++;
    switch (call->api) {
    case CRM_API_cudaEventRecord:
        crm__record(st, call->crm_call_u.cudaEventRecord.event, call->crm_call_u.cudaEventRecord.stream);
        break;
    case CRM_API_cudaEventRecordWithFlags:
        crm__record(st, call->crm_call_u.cudaEventRecordWithFlags.event,
                    call->crm_call_u.cudaEventRecordWithFlags.stream);
        break;
    case CRM_API_cudaEventDestroy:
        crm__forget_event(st, call->crm_call_u.cudaEventDestroy.event);
        break;
    case CRM_API_cudaStreamDestroy:
        crm_idmap_del(&st->drained, call->crm_call_u.cudaStreamDestroy.stream, NULL);
        break;
    default:
        break;
    }
}

void crm_idle_sent(crm_idle *st)
{
    st->sent = st->seq;
}

void crm_idle_forget(crm_idle *st)
{
    st->all_drained = 0;
    crm_idmap_free(&st->drained);
}

/* Everything noted so far on stream (every stream when all) has completed. */
static void crm__drained(crm_idle *st, int all, uint64_t stream)
{
    if (all) {
        st->all_drained = st->seq;
        return;
    }
    crm_idmap_del(&st->drained, stream, NULL);
    crm_idmap_put(&st->drained, stream, (void *)(uintptr_t)st->seq); /* lost when memory runs out: no harm */
}

void crm_idle_after(crm_idle *st, const crm_call *call, const crm_reply *reply)
{
    if (call == NULL || reply == NULL || reply->api != call->api)
        return;
    switch (call->api) {
    case CRM_API_crm_memcpy_d2h: {
        const crm_args_crm_memcpy_d2h *a = &call->crm_call_u.crm_memcpy_d2h;
        /* a synchronous copy runs on the server's legacy default stream */
        if (reply->crm_reply_u.crm_memcpy_d2h.err == cudaSuccess)
            crm__drained(st, 0, a->async ? a->stream : CRM_WIRE_LEGACY_STREAM);
        break;
    }
    case CRM_API_crm_memcpy_host: /* only a synchronous one ends a message */
        if (reply->crm_reply_u.crm_memcpy_host.err == cudaSuccess && !call->crm_call_u.crm_memcpy_host.async)
            crm__drained(st, 0, CRM_WIRE_LEGACY_STREAM);
        break;
    case CRM_API_cudaStreamSynchronize:
        if (reply->crm_reply_u.cudaStreamSynchronize.err == cudaSuccess)
            crm__drained(st, 0, call->crm_call_u.cudaStreamSynchronize.stream);
        break;
    case CRM_API_cudaDeviceSynchronize:
        if (reply->crm_reply_u.cudaDeviceSynchronize.err == cudaSuccess)
            crm__drained(st, 1, 0);
        break;
    default:
        break;
    }
}

/* 1 when the latest call noted drained every stream. */
static int crm__device_idle(const crm_idle *st)
{
    return st->seq > 0 && st->all_drained == st->seq;
}

/* 1 when the latest call noted drained stream (or every stream). */
static int crm__covers(const crm_idle *st, uint64_t stream)
{
    void *drained = NULL;
    return crm__device_idle(st) || (crm_idmap_get(&st->drained, stream, &drained) == 0 &&
                                    (uint64_t)(uintptr_t)drained == st->seq);
}

/* The last record of event, or NULL when none is known. */
static crm_idle_record *crm__event(const crm_idle *st, uint64_t event)
{
    void *v = NULL;
    return crm_idmap_get(&st->events, event, &v) == 0 ? v : NULL;
}

/* 1 when the last record of event is known to have completed. */
static int crm__event_done(const crm_idle *st, uint64_t event)
{
    void *drained = NULL;
    const crm_idle_record *r = crm__event(st, event);
    if (r == NULL)
        return 0;
    if (r->seq <= st->all_drained)
        return 1;
    return crm_idmap_get(&st->drained, r->stream, &drained) == 0 && r->seq <= (uint64_t)(uintptr_t)drained;
}

/* 1 (once per record) when event's last record has not been sent yet. */
static int crm__event_still_queued(crm_idle *st, uint64_t event)
{
    crm_idle_record *r = crm__event(st, event);
    if (r == NULL || r->seq <= st->sent || r->told)
        return 0;
    r->told = 1;
    return 1;
}

int crm_idle_answers(crm_idle *st, const crm_call *call, crm_reply *reply)
{
    int answered = 0;
    cudaError_t answer = cudaSuccess;
    switch (call->api) {
    case CRM_API_cudaStreamSynchronize:
        answered = crm__covers(st, call->crm_call_u.cudaStreamSynchronize.stream);
        break;
    case CRM_API_cudaStreamQuery:
        answered = crm__covers(st, call->crm_call_u.cudaStreamQuery.stream);
        break;
    case CRM_API_cudaDeviceSynchronize:
        answered = crm__device_idle(st);
        break;
    case CRM_API_cudaEventQuery:
        answered = crm__event_done(st, call->crm_call_u.cudaEventQuery.event);
        if (!answered && crm__event_still_queued(st, call->crm_call_u.cudaEventQuery.event)) {
            answered = 1;
            answer = cudaErrorNotReady;
        }
        break;
    case CRM_API_cudaEventSynchronize:
        answered = crm__event_done(st, call->crm_call_u.cudaEventSynchronize.event);
        break;
    default:
        break;
    }
    if (answered) {
        memset(reply, 0, sizeof *reply);
        reply->api = call->api;
        reply->crm_reply_u.cudaEventQuery.err = answer; /* err is every arm's first field */
    }
    return answered;
}

static void crm__free_record(uint64_t id, void *value, void *arg)
{
    (void)id, (void)arg;
    free(value);
}

void crm_idle_free(crm_idle *st)
{
    crm_idmap_each(&st->events, crm__free_record, NULL);
    crm_idmap_free(&st->events);
    crm_idmap_free(&st->drained);
    memset(st, 0, sizeof *st);
}
