/* crm_session_chan.h -- a session's data channel (protocol/crm_chan.h): listening
 * when HELLO asks for it, accepting the client at first use, the shared-memory
 * ring when the window is attached, and the payloads sent after each reply. */
#ifndef CRM_SESSION_CHAN_H
#define CRM_SESSION_CHAN_H

#include <stdint.h>

/* Listens for the channel (protocol/crm_chan_link.h), to come over TLS when tls;
 * fills what HELLO's reply tells the client. 0, or -1 (the session goes on
 * without a channel). */
int crm_session_chan_offer(char *name, unsigned char *token, int tls);
/* Takes the offered channel now rather than at its first use: a client that opens
 * it over TLS waits for the handshake right after HELLO. */
void crm_session_chan_open_now(void);
/* Replaces the offered channel's token with one both ends derived from the
 * session's authentication (server/crm_auth_srv.h), which HELLO does not send. */
void crm_session_chan_set_token(const unsigned char *token);
/* Sends the payloads the reply just sent announced. -1 when the channel broke:
 * the client can no longer be served. */
int crm_session_chan_after_reply(void);
/* Forgets payloads of a reply that was not sent. */
void crm_session_chan_discard(void);
/* Closes the channel and the listener. */
void crm_session_chan_close(void);

#endif
