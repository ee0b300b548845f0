/* crm_chan_link.h -- opening a session's data channel (protocol/crm_chan.h). The
 * session process listens beside its RPC connection: on the same local address
 * with a fresh port for TCP, on an abstract Unix name for a Unix socket. HELLO's
 * reply names the place and a random token; the client connects and sends the
 * token; the server accepts, checks the token, and stops listening. */
#ifndef CRM_CHAN_LINK_H
#define CRM_CHAN_LINK_H

#include <stddef.h>
#include <stdint.h>
#include "protocol/crm_chan.h"

#define CRM_CHAN_PATH_MAX 100

/* Server: listens beside connected socket rpc_fd; fills *port (TCP) or path
 * (Unix, abstract name without its leading NUL; "" for TCP) and a fresh token.
 * The listening fd, or -1. */
int crm_chan_listen(int rpc_fd, uint32_t *port, char *path, unsigned char *token);
/* Server: accepts the client that presents token within timeout_ms; closes lfd.
 * The connected fd, or -1. */
int crm_chan_accept(int lfd, const unsigned char *token, int timeout_ms);
/* Client: connects to the channel named in HELLO, on the host of rpc_fd, and
 * sends the token. The connected fd, or -1. */
int crm_chan_connect(int rpc_fd, uint32_t port, const char *path, const unsigned char *token, int timeout_ms);

#endif
