/* crm_idle.h -- what the last round trip proved idle on the server, so that a
 * stream or device synchronisation right after it is answered on the client.
 *
 * A device-to-host copy waits, on the server, for every earlier call on its stream
 * before its bytes come back (torch's `loss.item()` is such a copy followed by
 * cudaStreamSynchronize of the same stream): when nothing was sent or queued since
 * that round trip, the stream has no work left, and the synchronisation would only
 * cost a second round trip to learn "done". The state describes the message last
 * sent; the caller consults it only when no call waits in the queue, so any call
 * made since (queued or sent) rules the shortcut out. Errors keep CUDA's semantics:
 * the caller still reports a deferred failure at the synchronisation. */
#ifndef CRM_IDLE_H
#define CRM_IDLE_H

#include <stdint.h>
#include "crm_api.h"

typedef struct crm_idle {
    int known;        /* 1: the last message's final call left `stream` (or all) drained */
    int all;          /* 1: every stream of the device (a device synchronisation) */
    uint64_t stream;  /* wire stream value (client/crm_handles.h) */
} crm_idle;

/* Records what the final call of a message that just completed proved: call and
 * its decoded reply. */
void crm_idle_after(crm_idle *st, const crm_call *call, const crm_reply *reply);
/* Forgets the proof (a message whose replies were lost, a closed session). */
void crm_idle_forget(crm_idle *st);
/* 1 when call is a stream query, stream or device synchronisation that st already
 * answers: reply is then filled with its success. 0: it must go to the server. */
int crm_idle_answers(const crm_idle *st, const crm_call *call, crm_reply *reply);

#endif
