/* crm_idle.c -- answers a synchronisation on the client when the previous round trip
 * already drained what it waits for (see crm_idle.h). */
#include "crm_idle.h"

#include <string.h>
#include "client/crm_handles.h"

void crm_idle_forget(crm_idle *st)
{
    memset(st, 0, sizeof *st);
}

static void crm__drained(crm_idle *st, int all, uint64_t stream)
{
    st->known = 1;
    st->all = all;
    st->stream = stream;
}

void crm_idle_after(crm_idle *st, const crm_call *call, const crm_reply *reply)
{
    crm_idle_forget(st);
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

static int crm__covers(const crm_idle *st, uint64_t stream)
{
    return st->known && (st->all || st->stream == stream);
}

int crm_idle_answers(const crm_idle *st, const crm_call *call, crm_reply *reply)
{
    int answered = 0;
    switch (call->api) {
    case CRM_API_cudaStreamSynchronize:
        answered = crm__covers(st, call->crm_call_u.cudaStreamSynchronize.stream);
        break;
    case CRM_API_cudaStreamQuery:
        answered = crm__covers(st, call->crm_call_u.cudaStreamQuery.stream);
        break;
    case CRM_API_cudaDeviceSynchronize:
        answered = st->known && st->all;
        break;
    default:
        break;
    }
    if (answered) {
        memset(reply, 0, sizeof *reply); /* every arm's err is 0: cudaSuccess */
        reply->api = call->api;
    }
    return answered;
}
