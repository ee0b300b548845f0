/* crm_scrub.h -- --scrub: device memory a session gives back (cudaFree, an unmapped
 * mapping, everything at the session's end) is zeroed first, so that no later
 * session can receive what it held. (The emulated device gives every allocation
 * fresh zero-filled pages anyway; a GPU's memory is reused as it is.) */
#ifndef CRM_SCRUB_H
#define CRM_SCRUB_H

#include <stdint.h>
#include "server/crm_session.h"

/* Set by the daemon before it forks sessions. */
extern int crm_scrub_on;

/* With --scrub: zeroes size bytes at base on device (waiting until they are) and
 * counts them in s->scrubbed; a failure is logged. Nothing without --scrub. */
void crm_scrub(crm_session *s, int device, uint64_t base, uint64_t size);

#endif
