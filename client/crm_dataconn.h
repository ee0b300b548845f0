/* crm_dataconn.h -- the client's side of the data channel (protocol/crm_chan.h)
 * and of the shared window: whether to offer the window (CUDAREM_SHM), opening
 * the channel after HELLO (CUDAREM_CHANNEL), and closing both. */
#ifndef CRM_DATACONN_H
#define CRM_DATACONN_H

#include <sys/time.h>
#include "common/crm_addr.h"
#include "protocol/crm_chan.h"
#include "crm_api.h"

/* Offers a shared window in HELLO when CUDAREM_SHM is "on", or "auto" (default)
 * and the server at rpc_fd runs on this machine. name: 64 bytes. */
void crm_dataconn_offer_shm(int rpc_fd, crm_hello_args *args, char *name);
/* Asks for a data channel in HELLO unless CUDAREM_CHANNEL=off. */
void crm_dataconn_ask(crm_hello_args *args);
/* After HELLO: opens the channel the server offered into *chan, by a new
 * connection to the server's address (protocol/crm_chan_link.h), with the window's
 * ring when the server attached it; its reads and writes wait at most timeout;
 * over TLS checked against tls_host unless it is NULL. Returns 1 when it opened;
 * 0 when there is none, and bulk data travels in the RPC stream. The connection
 * makes a server's channel crm_chan_current while it talks to that server. */
int crm_dataconn_open(crm_chan *chan, const crm_addr *server, const crm_hello_res *res, struct timeval timeout,
                      const char *tls_host);
/* Closes a channel crm_dataconn_open opened. */
void crm_dataconn_close(crm_chan *chan);
/* Detaches the window (after its server's session ended or HELLO failed). */
void crm_dataconn_drop_window(void);
/* In a forked child: lets go of the parent's channel without touching its thread. */
void crm_dataconn_forget(crm_chan *chan);
/* Called after each RPC: waits for posted payloads; aborts them first when the RPC
 * failed. 0, or -1 when the channel broke. */
int crm_dataconn_settle(int rpc_failed);

#endif
