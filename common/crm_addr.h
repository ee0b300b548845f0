/* crm_addr.h -- cudarem endpoint addresses: "tcp:HOST:PORT", "HOST:PORT", "unix:PATH";
 * and who is at the other end of a connected socket. */
#ifndef CRM_ADDR_H
#define CRM_ADDR_H

#include <stddef.h>

enum crm_addr_kind { CRM_ADDR_TCP, CRM_ADDR_UNIX };

typedef struct crm_addr {
    enum crm_addr_kind kind;
    char host[256];        /* TCP host name or literal; brackets of [v6] stripped */
    int port;              /* TCP port */
    char path[108];        /* Unix socket path */
} crm_addr;

/* Parses text into *out; returns 0, or -1 with a reason in err (errlen bytes). */
int crm_addr_parse(const char *text, crm_addr *out, char *err, size_t errlen);
/* Formats an address the way crm_addr_parse reads it. */
void crm_addr_format(const crm_addr *a, char *buf, size_t len);
/* Opens a connected stream socket; returns the fd, or -1 with a reason in err.
 * timeout_ms bounds the connect (TCP). The socket is blocking, close-on-exec. */
int crm_addr_connect(const crm_addr *a, int timeout_ms, char *err, size_t errlen);
/* Who is at the other end of a connected socket. */
typedef struct crm_peer {
    int is_unix;           /* a Unix socket: uid and pid from the kernel (SO_PEERCRED) */
    long uid, pid;         /* -1 when unknown */
    char host[46];         /* TCP: the peer's address as text ("?" when unknown) */
    int port, v6;
} crm_peer;

/* Fills *p for socket fd. */
void crm_addr_peer(int fd, crm_peer *p);
/* "1.2.3.4:5", "[::1]:5" or "unix peer pid P uid U", for logs. */
void crm_addr_peer_format(const crm_peer *p, char *buf, size_t len);

/* Opens a listening socket; returns the fd, or -1 with a reason in err. */
int crm_addr_listen(const crm_addr *a, char *err, size_t errlen);

#endif
