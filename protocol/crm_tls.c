/* crm_tls.c -- TLS sessions of sockets over libssl (protocol/crm_tls.h). */
#include <errno.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include "protocol/crm_tls.h"

#define CRM__MAX_FD 65536

static SSL_CTX *crm__server_ctx, *crm__client_ctx;
static SSL *crm__ssl[CRM__MAX_FD]; /* by socket */

/* libssl's newest error as text into err, after `what`. */
static void crm__error(const char *what, char *err, size_t errlen)
{
    char text[256] = "";
    unsigned long e = ERR_get_error();
    if (e != 0)
        ERR_error_string_n(e, text, sizeof text);
    ERR_clear_error();
    snprintf(err, errlen, "%s%s%s", what, text[0] ? ": " : "", text);
}

/* libssl writes with write(2): a vanished peer would raise SIGPIPE in the client's
 * program. SIGPIPE is blocked in the calling thread for the call, and one it
 * raised is taken back before the thread's mask is restored. */
static void crm__pipe_block(sigset_t *old)
{
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, old);
}

static void crm__pipe_restore(const sigset_t *old)
{
    sigset_t pipe, pending;
    struct timespec now = {0, 0};
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    if (!sigismember(old, SIGPIPE) && sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE)) {
        int saved = errno;
        sigtimedwait(&pipe, NULL, &now);
        errno = saved;
    }
    pthread_sigmask(SIG_SETMASK, old, NULL);
}

static SSL_CTX *crm__context(const SSL_METHOD *method)
{
    SSL_CTX *ctx = SSL_CTX_new(method);
    if (ctx != NULL) {
        SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
        SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_RENEGOTIATION);
        SSL_CTX_set_mode(ctx, SSL_MODE_AUTO_RETRY);
        SSL_CTX_set_read_ahead(ctx, 1); /* a record in one read(2), not header and body apart */
    }
    return ctx;
}

int crm_tls_server_setup(const char *cert, const char *key, char *err, size_t errlen)
{
    SSL_CTX *ctx = crm__context(TLS_server_method());
    if (ctx == NULL) {
        crm__error("cannot make a TLS context", err, errlen);
        return -1;
    }
    if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1) {
        crm__error(cert, err, errlen);
    } else if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1) {
        crm__error(key, err, errlen);
    } else if (SSL_CTX_check_private_key(ctx) != 1) {
        crm__error("the key does not match the certificate", err, errlen);
    } else {
        crm__server_ctx = ctx;
        return 0;
    }
    SSL_CTX_free(ctx);
    return -1;
}

int crm_tls_server_ready(void)
{
    return crm__server_ctx != NULL;
}

int crm_tls_client_setup(const char *ca, char *err, size_t errlen)
{
    if (crm__client_ctx != NULL)
        return 0;
    SSL_CTX *ctx = crm__context(TLS_client_method());
    if (ctx == NULL) {
        crm__error("cannot make a TLS context", err, errlen);
        return -1;
    }
    int loaded = ca ? SSL_CTX_load_verify_locations(ctx, ca, NULL) : SSL_CTX_set_default_verify_paths(ctx);
    if (loaded != 1) {
        crm__error(ca ? ca : "the system's CA certificates", err, errlen);
        SSL_CTX_free(ctx);
        return -1;
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    crm__client_ctx = ctx;
    return 0;
}

static void crm__timeouts(int fd, int timeout_ms, struct timeval *old_rcv, struct timeval *old_snd)
{
    socklen_t len = sizeof *old_rcv;
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    getsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, old_rcv, &len);
    len = sizeof *old_snd;
    getsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, old_snd, &len);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

/* A new session of ctx on fd, or NULL. */
static SSL *crm__session(SSL_CTX *ctx, int fd, char *err, size_t errlen)
{
    SSL *ssl = fd >= 0 && fd < CRM__MAX_FD && ctx ? SSL_new(ctx) : NULL;
    if (ssl == NULL || SSL_set_fd(ssl, fd) != 1) {
        crm__error(ctx ? "cannot start TLS on the socket" : "TLS is not set up", err, errlen);
        SSL_free(ssl);
        return NULL;
    }
    return ssl;
}

int crm_tls_accept(int fd, int timeout_ms, char *err, size_t errlen)
{
    struct timeval rcv, snd;
    SSL *ssl = crm__session(crm__server_ctx, fd, err, errlen);
    if (ssl == NULL)
        return -1;
    sigset_t old;
    crm__timeouts(fd, timeout_ms, &rcv, &snd);
    crm__pipe_block(&old);
    int ok = SSL_accept(ssl) == 1;
    crm__pipe_restore(&old);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &rcv, sizeof rcv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &snd, sizeof snd);
    if (!ok) {
        crm__error("TLS handshake failed", err, errlen);
        SSL_free(ssl);
        return -1;
    }
    crm__ssl[fd] = ssl;
    return 0;
}

int crm_tls_connect(int fd, const char *host, char *err, size_t errlen)
{
    SSL *ssl = crm__session(crm__client_ctx, fd, err, errlen);
    if (ssl == NULL)
        return -1;
    X509_VERIFY_PARAM *param = SSL_get0_param(ssl);
    int is_ip = X509_VERIFY_PARAM_set1_ip_asc(param, host) == 1;
    if (!is_ip) {
        SSL_set_tlsext_host_name(ssl, host);
        SSL_set1_host(ssl, host);
    }
    sigset_t old;
    crm__pipe_block(&old);
    int ok = SSL_connect(ssl) == 1;
    crm__pipe_restore(&old);
    if (!ok) {
        long v = SSL_get_verify_result(ssl);
        if (v != X509_V_OK)
            snprintf(err, errlen, "TLS: the server's certificate is not trusted for %s: %s", host,
                     X509_verify_cert_error_string(v));
        else
            crm__error("TLS handshake failed (does the server speak TLS?)", err, errlen);
        ERR_clear_error();
        SSL_free(ssl);
        return -1;
    }
    crm__ssl[fd] = ssl;
    return 0;
}

int crm_tls_on(int fd)
{
    return fd >= 0 && fd < CRM__MAX_FD && crm__ssl[fd] != NULL;
}

int crm_tls_pending(int fd)
{
    return crm_tls_on(fd) && SSL_has_pending(crm__ssl[fd]);
}

int crm_tls_is_hello(int fd, int timeout_ms)
{
    unsigned char first;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, timeout_ms) > 0 && recv(fd, &first, 1, MSG_PEEK) == 1 && first == 0x16;
}

/* errno for a failed SSL_read or SSL_write that returned rc. */
static ssize_t crm__failed(SSL *ssl, int rc)
{
    int saved = errno;
    int e = SSL_get_error(ssl, rc);
    ERR_clear_error();
    if (e == SSL_ERROR_ZERO_RETURN)
        return 0;
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
        errno = saved == EINTR ? EINTR : EAGAIN; /* the socket's timeout, or a signal */
    else if (e == SSL_ERROR_SYSCALL && saved != 0)
        errno = saved;
    else if (e == SSL_ERROR_SYSCALL)
        return 0; /* the peer closed without saying so */
    else
        errno = EPROTO;
    return -1;
}

/* One SSL_read_ex (reading) or SSL_write_ex on fd's session, as recv/send answer. */
static ssize_t crm__io(int fd, int reading, void *buf, size_t len)
{
    SSL *ssl = crm__ssl[fd];
    size_t done = 0;
    sigset_t old;
    crm__pipe_block(&old);
    errno = 0;
    int rc = reading ? SSL_read_ex(ssl, buf, len, &done) : SSL_write_ex(ssl, buf, len, &done);
    ssize_t r = rc == 1 ? (ssize_t)done : crm__failed(ssl, rc);
    crm__pipe_restore(&old);
    return r;
}

ssize_t crm_tls_read(int fd, void *buf, size_t len)
{
    return crm__io(fd, 1, buf, len);
}

ssize_t crm_tls_write(int fd, const void *buf, size_t len)
{
    return crm__io(fd, 0, (void *)buf, len);
}

void crm_tls_drop(int fd)
{
    struct timeval brief = {1, 0}; /* close_notify must not wait on a peer that stopped reading */
    if (!crm_tls_on(fd))
        return;
    sigset_t old;
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &brief, sizeof brief);
    crm__pipe_block(&old);
    SSL_shutdown(crm__ssl[fd]);
    crm__pipe_restore(&old);
    SSL_free(crm__ssl[fd]);
    crm__ssl[fd] = NULL;
    ERR_clear_error();
}

void crm_tls_forget(int fd)
{
    if (!crm_tls_on(fd))
        return;
    SSL_free(crm__ssl[fd]); /* writes nothing: no shutdown was begun */
    crm__ssl[fd] = NULL;
}
