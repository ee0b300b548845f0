/* crm_metrics.h -- --metrics ADDR: the server's figures in the Prometheus text
 * format (version 0.0.4) at GET /metrics, from the table the daemon shares with
 * its sessions (server/crm_monitor.h). Device figures take the names of NVIDIA's
 * DCGM exporter (DCGM_FI_DEV_FB_USED, ...), so existing GPU dashboards read them;
 * the rest are cudarem_*. Served by the operator's HTTP process (server/crm_http.h). */
#ifndef CRM_METRICS_H
#define CRM_METRICS_H

#include <stdio.h>
#include "server/crm_http.h"

/* Writes the exposition text of the table's present state to f. */
void crm_metrics_write(FILE *f, const char *hostname);
/* The --metrics site: GET /metrics, 404 elsewhere. */
void crm_metrics_handle(const crm_http_request *req, crm_http_response *res);

#endif
