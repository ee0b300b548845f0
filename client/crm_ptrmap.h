/* crm_ptrmap.h -- what the client knows about addresses: device allocations it
 * made through the server, and host memory it allocated as pinned or registered.
 * Classifies pointers for cudaMemcpyDefault and cudaPointerGetAttributes. Locked. */
#ifndef CRM_PTRMAP_H
#define CRM_PTRMAP_H

#include <stdint.h>
#include "common/crm_rangemap.h"

enum crm_mem_kind {
    CRM_MEM_NONE = 0,          /* unknown to cudarem: plain host memory */
    CRM_MEM_DEVICE = 1,        /* device allocation (cudaMalloc, cudaMallocPitch) */
    CRM_MEM_PINNED = 2,        /* cudaMallocHost / cudaHostAlloc */
    CRM_MEM_REGISTERED = 3     /* cudaHostRegister */
};

/* Flag of crm_ptrmap_add: a mapping of a virtual address reservation (the driver's
 * cuMemMap); adjacent mappings form one device region. */
#define CRM_PTRMAP_MAPPED 1u
/* Flag of crm_ptrmap_add: managed memory (client/crm_managed.h), a device range the
 * program may also touch. */
#define CRM_PTRMAP_MANAGED 2u
/* With CRM_PTRMAP_MANAGED: mapped host memory (cudaHostAlloc with
 * cudaHostAllocMapped), whose cudaHostAlloc flags are CRM_PTRMAP_HOST_FLAGS(flags). */
#define CRM_PTRMAP_HOSTMAPPED 4u
#define CRM_PTRMAP_HOST_FLAGS(flags) ((flags) >> 4)

/* Records a range; 0, or -1 when it overlaps a known range of the same side. */
int crm_ptrmap_add(enum crm_mem_kind kind, uint64_t base, uint64_t size, int device, uint32_t flags);
/* Records device memory of `device` that its server has just handed out. What the
 * client still holds over those addresses is out of date (a server does not hand
 * out live memory) and is dropped. In a pool (`pooled`), two servers whose drivers
 * place memory alike could hand out overlapping addresses (the emulated device
 * honours each server's address slot, a GPU's driver does not): there only the
 * device's own ranges are dropped, and an overlap with another device's leaves the
 * table as it was and returns -1. Returns 0, or -1. */
int crm_ptrmap_add_fresh(uint64_t base, uint64_t size, int device, uint32_t flags, int pooled);
/* Removes the range of `kind` starting at base into *out (may be NULL); -1 if none. */
int crm_ptrmap_remove(enum crm_mem_kind kind, uint64_t base, crm_range *out);
/* Kind of memory containing addr (device ranges first), and that range in *out. */
enum crm_mem_kind crm_ptrmap_classify(uint64_t addr, crm_range *out);
/* 1 when the pitched region (height rows of width bytes, pitch apart) lies inside
 * one device allocation (or adjacent mappings), so an asynchronous call on it cannot
 * fail for its address. */
int crm_ptrmap_device_region(uint64_t addr, uint64_t pitch, uint64_t width, uint64_t height);
/* Forgets every device range of `device` (cudaDeviceReset). */
void crm_ptrmap_drop_device(int device);

#endif
