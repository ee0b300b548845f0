/* crm_shm.h -- shared memory between a client and a server on one machine. A
 * region is a POSIX shared memory object the client creates with a random name
 * and a random cookie in its first page; it names both to the server, which
 * attaches after checking them and removes the name, so nothing outlives the two
 * mappings. Two uses:
 * - the bulk window: one per process (the client's connection, or a session
 *   process on the server), named in HELLO, which the data channel uses as a ring
 *   (protocol/crm_chan.h) for large pieces of payloads instead of its socket;
 * - pinned host memory (client/crm_hostmem.h): each cudaMallocHost allocation is
 *   a region of its own, which the server copies to and from directly. */
#ifndef CRM_SHM_H
#define CRM_SHM_H

#include <stddef.h>
#include <stdint.h>

#define CRM_SHM_COOKIE 16                 /* random bytes proving the region's owner */
#define CRM_SHM_HEADER 4096               /* the cookie's page; data follows */
#define CRM_SHM_DEFAULT_SIZE (8u << 20)   /* window data bytes (the ring); CUDAREM_SHM_SIZE overrides */
#define CRM_SHM_NAME_PREFIX "/cudarem-"
#define CRM_SHM_NAME_MAX 64
#define CRM_SHM_SIZE_MAX (1ull << 40)

/* One mapped region: the cookie's page, then `size` data bytes at `data`. */
typedef struct crm_shm_region {
    char *map;        /* start of the mapping, NULL when none */
    size_t map_size;  /* CRM_SHM_HEADER + size */
    char *data;       /* the data bytes, page aligned */
    uint64_t size;
    int fd;           /* the creator's descriptor until it reserved the pages; else -1 */
} crm_shm_region;

/* Client: creates a region of `size` data bytes; fills name (CRM_SHM_NAME_MAX
 * bytes) and cookie. 0, or -1 (nothing is left behind). It does little between
 * creating the name and returning, since a client killed before the name is
 * removed leaves it in /dev/shm: reserving the pages comes after. */
int crm_shm_region_create(crm_shm_region *r, uint64_t size, char *name, unsigned char *cookie);
/* Client, once the name is removed: reserves every page, so that touching them can
 * never fault for want of shared memory (a full /dev/shm fails here instead), and
 * closes the descriptor. 0 or -1. */
int crm_shm_region_reserve(crm_shm_region *r);
/* Server: attaches a client's region after checking name, size and cookie, and
 * removes the name (a client killed before it could is then no leak). The region
 * is watched by protocol/crm_shm_guard.h until unmapped. 0 or -1. */
int crm_shm_region_attach(crm_shm_region *r, const char *name, uint64_t size, const unsigned char *cookie);
/* Unmaps a region (nothing when none). */
void crm_shm_region_unmap(crm_shm_region *r);
/* Client: removes the name (the mappings stay). */
void crm_shm_unlink(const char *name);

/* Client: removes the names of regions of our user older than max_age_s
 * seconds. A name lives from its creation until the server attaches it (at most
 * one HELLO or attach round trip), so an old one was left by a client killed in
 * between. Returns how many were removed. */
int crm_shm_sweep_stale(const char *dir, long max_age_s);
#define CRM_SHM_STALE_S 3600 /* beyond any round trip's time limit (CUDAREM_TIMEOUT, 300 s) */

/* The window of this process, NULL when none. */
extern char *crm_shm_data;
extern uint64_t crm_shm_data_size;

/* Client: creates the window of `size` data bytes (crm_shm_region_create; its
 * pages are not reserved: the ring touches them all at once). */
int crm_shm_create(uint64_t size, char *name, unsigned char *cookie);
/* Server: attaches the client's window (crm_shm_region_attach). */
int crm_shm_attach(const char *name, uint64_t size, const unsigned char *cookie);
/* Unmaps the window. */
void crm_shm_detach(void);

#endif
