/* crm_status_json.h -- a server's status (crm_status_res, CRM_STATUS) as JSON, as
 * cudarem-smi --json prints it and the dashboard's /api/status serves it:
 * {"address": ..., "backend": ..., "start_unix": ..., counts, "devices": [...],
 * "sessions": [...]}, or {"address": ..., "error": ...}. Strings a client chose
 * (its host name inside the peer) are escaped. */
#ifndef CRM_STATUS_JSON_H
#define CRM_STATUS_JSON_H

#include <stdio.h>
#include "crm_api.h"

/* Writes one server's entry: its status r, or error when r is NULL. */
void crm_status_json(FILE *f, const char *address, const crm_status_res *r, const char *error);
/* Writes s as a JSON string. */
void crm_json_string(FILE *f, const char *s);

#endif
