/* crm_tls.h -- TLS (OpenSSL's libssl) on a connection's socket: the server's context
 * (its certificate and key), the client's (the CAs it trusts, the name it checks),
 * and the TLS session of each socket, through which crm_sockio and the data channel
 * read and write. A socket without one is read and written as a plain socket.
 *
 * Where it starts: a client with CUDAREM_TLS=on opens TLS right after connecting
 * its session's connection; its data channel sends the routing greeting (magic and
 * channel name, which grant nothing) in clear, then opens TLS, then proves the
 * channel token inside it. A socket's session is used by one thread at a time. */
#ifndef CRM_TLS_H
#define CRM_TLS_H

#include <stddef.h>
#include <sys/types.h>

/* Server: loads the certificate chain and key (PEM). 0, or -1 with err set. */
int crm_tls_server_setup(const char *cert, const char *key, char *err, size_t errlen);
/* Server: 1 once set up. */
int crm_tls_server_ready(void);
/* Client: trusts the CAs of the PEM file ca (NULL: the system's). 0 or -1. */
int crm_tls_client_setup(const char *ca, char *err, size_t errlen);

/* Server: TLS handshake on fd within timeout_ms. 0, or -1 with err set. */
int crm_tls_accept(int fd, int timeout_ms, char *err, size_t errlen);
/* Client: TLS handshake on fd, checking the certificate names host (a name or an
 * IP address). 0, or -1 with err set. */
int crm_tls_connect(int fd, const char *host, char *err, size_t errlen);
/* 1 when fd has a TLS session. */
int crm_tls_on(int fd);
/* 1 when fd's TLS session holds bytes read from the socket and not yet taken. */
int crm_tls_pending(int fd);
/* 1 when the first byte waiting on fd (within timeout_ms) opens a TLS handshake. */
int crm_tls_is_hello(int fd, int timeout_ms);

/* Like recv and send on a socket with a TLS session: the count, 0 at the end of
 * the stream, -1 with errno (EAGAIN when the socket's timeout passed, EINTR). */
ssize_t crm_tls_read(int fd, void *buf, size_t len);
ssize_t crm_tls_write(int fd, const void *buf, size_t len);
/* Ends fd's TLS session (before the socket is closed); nothing without one. */
void crm_tls_drop(int fd);
/* Forgets fd's TLS session without a word to the peer: a forked child's copy of
 * its parent's connection, which the parent goes on using. */
void crm_tls_forget(int fd);

#endif
