/* crm_admit.h -- the daemon's guard against token guessing: failed authentications
 * counted per peer (its IP address, or its uid on a Unix socket), and the refusal
 * a peer gets while it is over the limit. A session process reports a failure by
 * its exit status (CRM_EXIT_AUTH_FAILED). */
#ifndef CRM_ADMIT_H
#define CRM_ADMIT_H

#include <stddef.h>
#include <time.h>

#define CRM_ADMIT_KEY_MAX 64
#define CRM_ADMIT_MAX_FAILURES 5   /* failures a peer may have in a window */
#define CRM_ADMIT_WINDOW_S 60      /* seconds from a peer's first failure */

/* The peer of connection fd as the table counts it. */
void crm_admit_peer_key(int fd, char *key, size_t len);
/* Counts a failed authentication of key at time now. */
void crm_admit_failed(const char *key, time_t now);
/* NULL when key may try, else why not (a static buffer, valid until the next call). */
const char *crm_admit_refusal(const char *key, time_t now);

#endif
