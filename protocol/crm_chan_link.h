/* crm_chan_link.h -- opening a session's data channel (protocol/crm_chan.h).
 *
 * The client opens the channel the way it opened the session: a new connection to
 * the server's own address (so one published port or socket serves both, through
 * NAT and port forwarding too), whose first bytes are u32 CRM_CHAN_MAGIC, u32 the
 * length of the session's channel name, the name, then the session's 16-byte
 * token; HELLO's reply gave name and token. The daemon forks for it as for any
 * connection; that process sees the magic (crm_chan_is_channel), passes the socket
 * to the session through the session's abstract Unix listener named so
 * (crm_chan_route), and exits. The session receives it, reads the token, and
 * keeps the socket only when the token is its own. Over TLS (protocol/crm_tls.h)
 * the magic and name still come in clear, then the TLS handshake, then the token
 * inside it. */
#ifndef CRM_CHAN_LINK_H
#define CRM_CHAN_LINK_H

#include <stddef.h>
#include <stdint.h>
#include "protocol/crm_chan.h"

#define CRM_CHAN_MAGIC 0x43524d43u   /* "CRMC" */
#define CRM_CHAN_PATH_MAX 100

/* Session: listens on a fresh abstract Unix name (written to name, without its
 * leading NUL) and makes a fresh token. The listening fd, or -1. */
int crm_chan_listen(char *name, unsigned char *token);
/* Session: takes the client's socket from the daemon's router within timeout_ms
 * and checks its token (after a TLS handshake when tls); closes lfd. The socket,
 * or -1. */
int crm_chan_accept(int lfd, const unsigned char *token, int timeout_ms, int tls);

/* Daemon's child: 1 when the connection's first bytes (waited for up to
 * timeout_ms) are CRM_CHAN_MAGIC, else 0 and nothing is consumed. */
int crm_chan_is_channel(int fd, int timeout_ms);
/* Daemon's child: reads magic and name and passes fd to the session so named.
 * 0 or -1. */
int crm_chan_route(int fd, int timeout_ms);

/* Client: sends the greeting for session `name` with `token` on fd, a new
 * connection to the server's address, opening TLS checked against tls_host
 * before the token unless tls_host is NULL. 0 or -1. */
int crm_chan_greet(int fd, const char *name, const unsigned char *token, const char *tls_host);

#endif
