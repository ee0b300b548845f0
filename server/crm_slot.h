/* crm_slot.h -- a pooled session's device memory at addresses of its own: the
 * client that pools several servers gives each session an address slot
 * (common/crm_emu_window.h), and device pointers of one server must never equal
 * another's. The emulated device moves its whole window there; on a GPU, whose
 * driver chooses cudaMalloc's addresses, this module reserves virtual addresses
 * inside the slot (cuMemAddressReserve at a chosen address) and maps physical
 * memory into them (cuMemCreate, cuMemMap, cuMemSetAccess) for every cudaMalloc,
 * and places the client's own reservations (cuMemAddressReserve) there too.
 * CUDAREM_SLOT_VMM=1 makes the emulated device's sessions use it as well, to test it. */
#ifndef CRM_SLOT_H
#define CRM_SLOT_H

#include <stddef.h>
#include <stdint.h>
#include <cuda.h>
#include <cuda_runtime_api.h>

/* Starts placing the session's memory in `slot`: reserves its first addresses at
 * the slot's base. 0, or -1 when the driver placed them elsewhere (nothing kept). */
int crm_slot_open(unsigned slot);
/* 1 once crm_slot_open succeeded. */
int crm_slot_active(void);
/* cudaMalloc inside the slot, on `device`: size rounded up to the allocation
 * granularity. cudaErrorMemoryAllocation when the device or the slot is full. */
cudaError_t crm_slot_malloc(int device, uint64_t size, void **out);
/* 1 when p starts an allocation crm_slot_malloc made. */
int crm_slot_owns(const void *p);
/* cudaFree of such an allocation (the device is synchronised first). */
cudaError_t crm_slot_free(void *p);
/* A reservation of size bytes (alignment a power of two or 0) for the client's
 * virtual memory calls, inside the slot. */
CUresult crm_slot_reserve(uint64_t size, uint64_t alignment, CUdeviceptr *out);

#endif
