/* crm_queue.h -- calls waiting to travel: asynchronous CUDA calls encoded at call
 * time (their bulk data captured) and sent in front of the next call that needs an
 * answer, so they cost no round trip of their own. Not locked: the connection's
 * lock guards it. */
#ifndef CRM_QUEUE_H
#define CRM_QUEUE_H

#include <stddef.h>
#include <stdint.h>
#include "crm_api.h"

typedef struct crm_queue {
    char *buf;        /* XDR encoding of the queued crm_call values, back to back */
    size_t len;       /* bytes used in buf */
    size_t cap;       /* bytes allocated */
    int *apis;        /* api number of each queued call, to check the replies */
    uint64_t *owners; /* the thread that queued each (crm_thread_serial), told of its failure */
    unsigned count;   /* calls queued */
    unsigned apis_cap;
} crm_queue;

/* Encodes call, queued by thread `owner`, at the end of the queue; 0, or -1 when
 * it cannot be encoded or memory runs out (the queue is unchanged then). */
int crm_queue_push(crm_queue *q, crm_call *call, uint64_t owner);
/* Writes the queued calls' encoding to xdrs (no count in front). */
bool_t crm_queue_put(XDR *xdrs, const crm_queue *q);
/* Empties the queue, keeping its memory. */
void crm_queue_clear(crm_queue *q);
/* Frees the queue's memory. */
void crm_queue_free(crm_queue *q);

#endif
