/* crm_metrics.h -- --metrics ADDR: the server's figures in the Prometheus text
 * format (version 0.0.4) at GET /metrics, from the table the daemon shares with
 * its sessions (server/crm_monitor.h). Device figures take the names of NVIDIA's
 * DCGM exporter (DCGM_FI_DEV_FB_USED, ...), so existing GPU dashboards read them;
 * the rest are cudarem_*. Served by a small process of its own, forked by the
 * daemon, so a slow scraper never delays a session. */
#ifndef CRM_METRICS_H
#define CRM_METRICS_H

#include <stdio.h>
#include <sys/types.h>
#include "common/crm_addr.h"

/* Writes the exposition text of the table's present state to f. */
void crm_metrics_write(FILE *f, const char *hostname);

/* Daemon: listens on addr and forks the process that answers there; it closes
 * close_fds[0 .. nclose-1] (the session listeners) and ends with the daemon. The
 * child's pid, or -1 with err set (nothing left running). */
pid_t crm_metrics_start(const crm_addr *addr, const int *close_fds, int nclose, char *err, size_t errlen);

#endif
