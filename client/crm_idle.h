/* crm_idle.h -- what the client knows has finished on the server, so that a
 * synchronisation or query whose answer it already has is answered without a
 * round trip.
 *
 * A device-to-host copy waits, on the server, for every earlier call on its stream
 * before its bytes come back, and a stream or device synchronisation waits for all
 * of its stream or device. So once such a round trip is back:
 *  - a synchronisation or query of that stream (every stream, after a device
 *    synchronisation) made before anything else is sent or queued has nothing left
 *    to wait for: torch's `loss.item()` is a copy followed by cudaStreamSynchronize;
 *  - an event recorded on that stream (any stream, after a device synchronisation)
 *    before the round trip's call has completed, whatever was queued since: torch's
 *    pinned-memory allocator queries the events of its freed blocks.
 * And an event whose record still waits in the client's queue has not completed:
 * the work before it has not even reached the server. The first query of such a
 * record answers cudaErrorNotReady here; a second one goes to the server (sending
 * the queue), so a program polling the event makes progress.
 * Every call sent or queued is noted, in the order the client issues them, so
 * "nothing since" is a drain recorded at the latest call noted. Errors
 * keep CUDA's semantics: the caller still reports a deferred failure at a
 * synchronisation. Not locked: the connection's lock guards it. */
#ifndef CRM_IDLE_H
#define CRM_IDLE_H

#include <stdint.h>
#include "common/crm_idmap.h"
#include "crm_api.h"

typedef struct crm_idle {
    uint64_t seq;          /* calls noted so far */
    uint64_t sent;         /* calls noted up to this one have been sent */
    uint64_t all_drained;  /* every call noted up to this one has completed */
    crm_idmap drained;     /* wire stream (client/crm_handles.h) -> calls noted up to this one
                              on it have completed */
    crm_idmap events;      /* wire event -> its last record (crm_idle_record, malloc'd) */
} crm_idle;

/* Notes a call about to be queued or sent (after the ones noted before it). */
void crm_idle_note(crm_idle *st, const crm_call *call);
/* Every call noted so far is on its way to the server. */
void crm_idle_sent(crm_idle *st);
/* Records what the final call of a message that just completed proved: call and
 * its decoded reply (NULL when the replies were lost). */
void crm_idle_after(crm_idle *st, const crm_call *call, const crm_reply *reply);
/* Forgets what was proven drained (a closed session). */
void crm_idle_forget(crm_idle *st);
/* 1 when call is a stream query, stream, event or device synchronisation or an event
 * query that st already answers: reply is then filled with the answer. 0: it must
 * go to the server. */
int crm_idle_answers(crm_idle *st, const crm_call *call, crm_reply *reply);
/* Frees the tables. */
void crm_idle_free(crm_idle *st);

#endif
