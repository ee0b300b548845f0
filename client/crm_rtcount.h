/* crm_rtcount.h -- which call each synchronous round trip waited for: the counts
 * behind "round trips by call" in the CUDAREM_STATS report, so a program's remaining
 * round trips can be named (torch's step, examples/train_torch.py). Not locked: the
 * connection's lock guards every update; readers take a snapshot under it. */
#ifndef CRM_RTCOUNT_H
#define CRM_RTCOUNT_H

#include <stddef.h>
#include <stdint.h>

#define CRM_RTCOUNT_SLOTS 128   /* distinct wire calls counted; more share "other" */

typedef struct crm_rtcount {
    int api[CRM_RTCOUNT_SLOTS];        /* wire api number; 0: a flush of queued calls */
    uint64_t count[CRM_RTCOUNT_SLOTS]; /* round trips that waited for it */
    unsigned used;                     /* slots filled */
    uint64_t other;                    /* round trips of calls beyond the slots */
} crm_rtcount;

/* Counts one round trip that waited for wire call API (0: a flush). */
void crm_rtcount_add(crm_rtcount *rc, int api);
/* Writes "name=count name=count ..." (most first) into buf, NUL-terminated and cut
 * to len; returns the length the whole text needs, without the NUL. */
size_t crm_rtcount_format(const crm_rtcount *rc, char *buf, size_t len);

#endif
