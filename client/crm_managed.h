/* crm_managed.h -- managed memory (cudaMallocManaged, cuMemAllocManaged) on the
 * client: one address valid in the program and on the device.
 *
 * The server places the allocation where this process reserved the same addresses
 * (the emulated device's window, or a GPU session's address slot: see
 * common/crm_emu_window.h); here the range is mapped twice over one memory file:
 * the program's view at the device address, whose protection says which side holds
 * the current bytes, and an alias only cudarem reads and writes, so the shim never
 * faults on its own copies. Coherence is CUDA's for a device without concurrent
 * managed access (concurrentManagedAccess = 0), per block of CRM_MANAGED_BLOCK bytes:
 *   INVALID (no access): the device may hold newer bytes; a touch faults and the
 *     block is fetched (with the blocks after it when touches run forward);
 *   CLEAN (read only): both sides agree; a write faults and makes the block DIRTY;
 *   DIRTY (read-write): the host's bytes are newer; they travel to the device
 *     before the next call that may use device memory.
 * Every call that may write device memory makes every block INVALID again: the
 * program reads what a kernel wrote once it has synchronised, as CUDA promises, and
 * only the blocks it touches cross the network. Locked. */
#ifndef CRM_MANAGED_H
#define CRM_MANAGED_H

#include <stdint.h>
#include <cuda_runtime_api.h>
#include "crm_api.h"

#define CRM_MANAGED_BLOCK (64u << 10)       /* unit of tracking and of the smallest transfer */
#define CRM_MANAGED_READAHEAD (4u << 20)    /* most bytes one fault fetches */

/* Maps the server's fresh allocation [base, base + size) of `device`; `zeroed`:
 * its bytes are known to be zero (all blocks start CLEAN), else they start
 * INVALID. 0, or -1 when the addresses are not this process's to map. */
int crm_managed_add(uint64_t base, uint64_t size, int device, int zeroed);
/* Forgets the allocation starting at base and gives its addresses back to the
 * reservation: 0, or -1 when none starts there. */
int crm_managed_remove(uint64_t base);
/* Registered host memory made reachable by the device (cudaHostRegisterMapped):
 * the program's page-aligned [base, base + size) becomes a view of a memory file
 * holding its bytes, coherent with the server's allocation of size bytes at dev
 * exactly as managed memory is (every block starts DIRTY). 0, or -1 when the range
 * overlaps tracked memory or cannot be mapped (nothing changed then). */
int crm_managed_register(uint64_t base, uint64_t size, uint64_t dev, int device);
/* Gives the pages back as the program's own memory, holding the bytes the device
 * last wrote where it may have: 0, or -1 when base starts no registration. */
int crm_managed_unregister(uint64_t base);
/* The device address of program address addr (itself but in registered memory);
 * *registered (may be NULL) says whether addr lies in registered memory. */
uint64_t crm_managed_device_address(uint64_t addr, int *registered);

/* Forgets every allocation of `device` (cudaDeviceReset freed them on the server). */
void crm_managed_drop_device(int device);
/* 1 when addr lies in managed memory, with the allocation in *base and *size
 * (either may be NULL). */
int crm_managed_find(uint64_t addr, uint64_t *base, uint64_t *size);

/* Hooks of every call the connection sends (client/crm_conn.c): before, the dirty
 * blocks travel when a call may use device memory; after, a call that may write
 * device memory invalidates the host's copies. Cheap when nothing is managed. */
void crm_managed_before(const crm_call *calls, unsigned n);
void crm_managed_after(const crm_call *calls, unsigned n);

/* cudaMemPrefetchAsync to the host: fetches every INVALID block of the range,
 * after the work queued on wire stream `stream`. */
cudaError_t crm_managed_to_host(uint64_t addr, uint64_t len, uint64_t stream);
/* cudaMemPrefetchAsync to the device: pushes the range's DIRTY blocks and
 * invalidates its host copies. */
cudaError_t crm_managed_to_device(uint64_t addr, uint64_t len);

/* What cudaMemAdvise said of each block, for cudaMemRangeGetAttribute. */
enum crm_managed_advice { CRM_ADV_READ_MOSTLY, CRM_ADV_PREFERRED, CRM_ADV_ACCESSED_BY, CRM_ADV_LAST_PREFETCH };
/* Sets (set = 1) or clears advice `what` for location `loc` (a device, or
 * cudaCpuDeviceId) over the range. cudaErrorInvalidValue outside managed memory. */
cudaError_t crm_managed_advise(uint64_t addr, uint64_t len, enum crm_managed_advice what, int loc, int set);
/* The range's value of `what`, as cudaMemRangeGetAttribute answers: read-mostly 1
 * only when every block is; a location when every block agrees, else
 * cudaInvalidDeviceId. For CRM_ADV_ACCESSED_BY, fills out[0..n) with the
 * locations every block names (cudaInvalidDeviceId after them). */
cudaError_t crm_managed_range_attr(uint64_t addr, uint64_t len, enum crm_managed_advice what, int *out, size_t n);

typedef struct crm_managed_stats {
    uint64_t faults;        /* faults handled */
    uint64_t fetches;       /* round trips that fetched blocks */
    uint64_t fetched_bytes;
    uint64_t pushes;        /* runs of dirty blocks sent */
    uint64_t pushed_bytes;
} crm_managed_stats;
void crm_managed_get_stats(crm_managed_stats *out);

#endif
