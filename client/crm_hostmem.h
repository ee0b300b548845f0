/* crm_hostmem.h -- pinned host memory shared with the server. When the server runs
 * on this machine (the data channel has a shared-memory ring), a cudaMallocHost
 * allocation larger than what travels inline becomes a shared-memory region
 * (protocol/crm_shm.h) the server attaches under an id of ours. A copy between it
 * and the device then moves no bytes through the connection: the server copies
 * them itself, once, as a GPU's DMA engine copies page-locked memory. Locked. */
#ifndef CRM_HOSTMEM_H
#define CRM_HOSTMEM_H

#include <stddef.h>
#include <stdint.h>

/* Allocations up to this many bytes stay private: their copies travel inline. */
#define CRM_HOSTMEM_MIN_BYTES (32u << 10)

/* Allocates `size` bytes the server shares, page aligned, into *out: 0, or -1 when
 * sharing is off (CUDAREM_SHARED_PINNED=off), unavailable or refused, and the
 * caller must allocate privately. Costs one round trip. */
int crm_hostmem_alloc(size_t size, void **out);
/* Frees p when it is the start of a shared allocation: 0, else -1 (not ours). The
 * server lets go after every copy queued before this call. */
int crm_hostmem_free(void *p);
/* 1 when the extent bytes at p lie inside one shared allocation the server of
 * this process's session has attached: *id and *offset name them. 0 otherwise. */
int crm_hostmem_find(const void *p, uint64_t extent, uint64_t *id, uint64_t *offset);

#endif
