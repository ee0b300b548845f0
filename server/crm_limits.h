/* crm_limits.h -- what one session may make the server hold besides device memory
 * (which --quota bounds): objects of each kind, module bytes and the session
 * process's own host memory, from --session-limits. The daemon parses them; each
 * session process inherits them and checks them before it creates anything
 * (server/crm_session_limits.c). A creation past a limit fails as the call fails on
 * a GPU out of memory; streams and events, whose creation is queued, report it at
 * the next synchronising call, as other queued work does. */
#ifndef CRM_LIMITS_H
#define CRM_LIMITS_H

#include <stddef.h>
#include <stdint.h>
#include "protocol/crm_limit_kinds.h"

typedef struct crm_limits {
    uint64_t max[CRM_LIMIT_KINDS]; /* 0: no limit */
} crm_limits;

/* The defaults (docs/operator-guide.md says how they were chosen). */
crm_limits crm_limits_default(void);
/* Applies "KIND=VALUE[,KIND=VALUE...]" to *l (VALUE 0: no limit; a byte kind takes
 * a size). 0, or -1 with err set and *l unchanged. */
int crm_limits_parse(const char *spec, crm_limits *l, char *err, size_t errlen);

/* The limits every session of this server runs under: set by the daemon before
 * it forks, read by the sessions, the status answer and the metrics. */
extern crm_limits crm_session_limits;

#endif
