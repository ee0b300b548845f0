/* crm_shm.h -- the shared-memory window for bulk data when client and server share
 * a machine. The client creates a POSIX shared memory object with a random name
 * and a random cookie in its first bytes, names both in HELLO, and unlinks the name
 * once the server has attached (or refused). The data channel then moves large
 * pieces of payloads through the window, used as a ring (protocol/crm_chan.h),
 * instead of through its socket. One window per process: the client's connection,
 * or a session process on the server. */
#ifndef CRM_SHM_H
#define CRM_SHM_H

#include <stddef.h>
#include <stdint.h>

#define CRM_SHM_COOKIE 16                 /* random bytes proving the window's owner */
#define CRM_SHM_HEADER 4096               /* the cookie's page; data follows */
#define CRM_SHM_DEFAULT_SIZE (8u << 20)   /* data bytes (the ring); CUDAREM_SHM_SIZE overrides */
#define CRM_SHM_NAME_PREFIX "/cudarem-"

/* The window of this process, NULL when none. */
extern char *crm_shm_data;
extern uint64_t crm_shm_data_size;

/* Client: creates a window of `size` data bytes; fills name (64 bytes) and cookie.
 * 0, or -1 (no window; bulk data goes through the socket). */
int crm_shm_create(uint64_t size, char *name, unsigned char *cookie);
/* Client: removes the name (the mapping stays). */
void crm_shm_unlink(const char *name);
/* Server: attaches the client's window after checking name, size and cookie, and
 * removes the name (a client killed before it could is then no leak). 0 or -1. */
int crm_shm_attach(const char *name, uint64_t size, const unsigned char *cookie);
/* Unmaps the window. */
void crm_shm_detach(void);

#endif
