/* crm_dashboard.h -- --http ADDR: one page for the operator (server/crm_dashboard_page.c):
 * devices, sessions and the memory each holds, updated every two seconds from
 * GET /api/status (the JSON of cudarem-smi --json); and POST /api/end, which ends
 * a session for an administrator's token (Authorization: Bearer USER:SECRET, as
 * --add-user --admin printed it). Served by the operator's HTTP process
 * (server/crm_http.h); the token crosses the connection as it is, so serve the
 * page on loopback, or behind a proxy that adds TLS. */
#ifndef CRM_DASHBOARD_H
#define CRM_DASHBOARD_H

#include "server/crm_http.h"

extern const char crm_dashboard_page[];

void crm_dashboard_handle(const crm_http_request *req, crm_http_response *res);

#endif
