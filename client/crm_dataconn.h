/* crm_dataconn.h -- the client's side of the data channel (protocol/crm_chan.h)
 * and of the shared window: whether to offer the window (CUDAREM_SHM), opening
 * the channel after HELLO (CUDAREM_CHANNEL), and closing both. */
#ifndef CRM_DATACONN_H
#define CRM_DATACONN_H

#include <sys/time.h>
#include "common/crm_addr.h"
#include "crm_api.h"

/* Offers a shared window in HELLO when CUDAREM_SHM is "on", or "auto" (default)
 * and the server at rpc_fd runs on this machine. name: 64 bytes. */
void crm_dataconn_offer_shm(int rpc_fd, crm_hello_args *args, char *name);
/* Asks for a data channel in HELLO unless CUDAREM_CHANNEL=off. */
void crm_dataconn_ask(crm_hello_args *args);
/* After HELLO: opens the channel the server offered, by a new connection to the
 * server's address (protocol/crm_chan_link.h), with the window's ring when the
 * server attached it, and makes it crm_chan_current; its reads and writes wait at
 * most timeout; over TLS checked against tls_host unless it is NULL. Without a
 * channel, bulk data travels in the RPC stream. */
void crm_dataconn_open(const crm_addr *server, const crm_hello_res *res, struct timeval timeout,
                       const char *tls_host);
/* Closes the channel and the window. */
void crm_dataconn_close(void);
/* In a forked child: lets go of the parent's channel without touching its thread. */
void crm_dataconn_forget(void);
/* Called after each RPC: waits for posted payloads; aborts them first when the RPC
 * failed. 0, or -1 when the channel broke. */
int crm_dataconn_settle(int rpc_failed);

#endif
