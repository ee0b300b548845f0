/* crm_slot.c -- a pooled session's device memory inside its address slot
 * (server/crm_slot.h). The slot's addresses are reserved in chunks: cudaMalloc's
 * chunks grow up from the slot's base, the client's own reservations down from its
 * end. Only this session's process uses these tables: no lock. */
#include <stdlib.h>
#include "common/crm_emu_window.h"
#include "common/crm_idmap.h"
#include "common/crm_log.h"
#include "common/crm_rangemap.h"
#include "server/crm_backend.h"
#include "server/crm_slot.h"

#define CRM_SLOT_CHUNK (64ull << 30) /* addresses reserved at a time for cudaMalloc */
#define CRM_SLOT_MAX_CHUNKS 64

typedef struct crm__chunk {
    uint64_t base, size;
} crm__chunk;

static struct {
    int active;
    uint64_t low;              /* cudaMalloc's chunks end here, growing up */
    uint64_t high;             /* the client's reservations start here, growing down */
    crm__chunk chunks[CRM_SLOT_MAX_CHUNKS];
    int nchunks;
    crm_rangemap allocs;       /* live allocations, rounded to the granularity */
    crm_idmap handles;         /* allocation base -> its CUmemGenericAllocationHandle (malloc'd) */
} crm__slot;

/* Reserves exactly [addr, addr + size): the driver takes addr as a hint only. */
static CUresult crm__reserve_at(uint64_t addr, uint64_t size)
{
    CUdeviceptr got = 0;
    CUresult rc = crm_rt.cuMemAddressReserve(&got, size, 0, (CUdeviceptr)addr, 0);
    if (rc == CUDA_SUCCESS && got != (CUdeviceptr)addr) {
        crm_rt.cuMemAddressFree(got, size);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    return rc;
}

static int crm__have_vmm(void)
{
    return crm_rt.cuMemCreate != NULL && crm_rt.cuMemRelease != NULL && crm_rt.cuMemMap != NULL &&
           crm_rt.cuMemUnmap != NULL && crm_rt.cuMemSetAccess != NULL && crm_rt.cuMemAddressReserve != NULL &&
           crm_rt.cuMemAddressFree != NULL && crm_rt.cuMemGetAllocationGranularity != NULL;
}

int crm_slot_open(unsigned slot)
{
    if (crm__slot.active)
        return 0;
    if (slot >= CRM_EMU_SLOTS || !crm__have_vmm())
        return -1;
    crm_rt.cudaFree(NULL); /* the device's context, which reservations need */
    crm_rt.cudaGetLastError();
    uint64_t base = crm_emu_slot_base(slot);
    if (crm__reserve_at(base, CRM_SLOT_CHUNK) != CUDA_SUCCESS) {
        crm_warn("address slot %u: the driver would not reserve 0x%llx; device addresses stay the driver's", slot,
                 (unsigned long long)base);
        return -1;
    }
    crm__slot.chunks[0] = (crm__chunk){base, CRM_SLOT_CHUNK};
    crm__slot.nchunks = 1;
    crm__slot.low = base + CRM_SLOT_CHUNK;
    crm__slot.high = base + CRM_EMU_WINDOW_SIZE;
    crm__slot.active = 1;
    crm_info("device memory of this session is mapped in address slot %u, from 0x%llx", slot,
             (unsigned long long)base);
    return 0;
}

int crm_slot_active(void)
{
    return crm__slot.active;
}

static CUmemAllocationProp crm__prop(int device)
{
    CUmemAllocationProp p = {0};
    p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = device;
    return p;
}

/* The first gap of size bytes in chunk c (ranges are sorted), or 0. */
static uint64_t crm__gap_in(const crm__chunk *c, uint64_t size)
{
    uint64_t at = c->base, end = c->base + c->size;
    for (size_t i = 0; i < crm__slot.allocs.count && at + size <= end; i++) {
        const crm_range *r = &crm__slot.allocs.ranges[i];
        if (r->base + r->size <= at || r->base >= end)
            continue;
        if (r->base >= at + size)
            return at;
        at = r->base + r->size;
    }
    return at + size <= end ? at : 0;
}

/* Where a new allocation of size bytes goes: a gap, else a new chunk. 0 when full. */
static uint64_t crm__place(uint64_t size)
{
    for (int i = 0; i < crm__slot.nchunks; i++) {
        uint64_t at = crm__gap_in(&crm__slot.chunks[i], size);
        if (at != 0)
            return at;
    }
    uint64_t chunk = size > CRM_SLOT_CHUNK ? size : CRM_SLOT_CHUNK;
    if (crm__slot.nchunks == CRM_SLOT_MAX_CHUNKS || crm__slot.high - crm__slot.low < chunk ||
        crm__reserve_at(crm__slot.low, chunk) != CUDA_SUCCESS)
        return 0;
    crm__slot.chunks[crm__slot.nchunks++] = (crm__chunk){crm__slot.low, chunk};
    crm__slot.low += chunk;
    return crm__slot.low - chunk;
}

/* Backs [at, at + size) with new memory of device, readable and writable by it. */
static CUresult crm__back(uint64_t at, uint64_t size, int device, CUmemGenericAllocationHandle *out)
{
    CUmemAllocationProp prop = crm__prop(device);
    CUmemAccessDesc access = {.location = prop.location, .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    CUresult rc = crm_rt.cuMemCreate(out, size, &prop, 0);
    if (rc != CUDA_SUCCESS)
        return rc;
    if ((rc = crm_rt.cuMemMap((CUdeviceptr)at, size, 0, *out, 0)) == CUDA_SUCCESS &&
        (rc = crm_rt.cuMemSetAccess((CUdeviceptr)at, size, &access, 1)) != CUDA_SUCCESS)
        crm_rt.cuMemUnmap((CUdeviceptr)at, size);
    if (rc != CUDA_SUCCESS)
        crm_rt.cuMemRelease(*out);
    return rc;
}

cudaError_t crm_slot_malloc(int device, uint64_t size, void **out)
{
    size_t gran = 0;
    CUmemAllocationProp prop = crm__prop(device);
    *out = NULL;
    if (size == 0)
        return cudaSuccess;
    if (crm_rt.cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS ||
        gran == 0 || size > UINT64_MAX - gran)
        return cudaErrorMemoryAllocation;
    uint64_t rounded = (size + gran - 1) / gran * gran, at = crm__place(rounded);
    CUmemGenericAllocationHandle *h = malloc(sizeof *h);
    if (at == 0 || h == NULL || crm__back(at, rounded, device, h) != CUDA_SUCCESS) {
        free(h);
        return cudaErrorMemoryAllocation;
    }
    crm_range r = {.base = at, .size = rounded, .device = device};
    if (crm_rangemap_add(&crm__slot.allocs, r) != 0 || crm_idmap_put(&crm__slot.handles, at, h) != 0) {
        crm_rangemap_remove(&crm__slot.allocs, at, NULL);
        crm_rt.cuMemUnmap((CUdeviceptr)at, rounded);
        crm_rt.cuMemRelease(*h);
        free(h);
        return cudaErrorMemoryAllocation;
    }
    *out = (void *)(uintptr_t)at;
    return cudaSuccess;
}

int crm_slot_owns(const void *p)
{
    const crm_range *r = crm__slot.active ? crm_rangemap_find(&crm__slot.allocs, (uint64_t)(uintptr_t)p) : NULL;
    return r != NULL && r->base == (uint64_t)(uintptr_t)p;
}

cudaError_t crm_slot_free(void *p)
{
    crm_range r;
    void *h = NULL;
    uint64_t at = (uint64_t)(uintptr_t)p;
    if (!crm_slot_owns(p))
        return cudaErrorInvalidValue;
    crm_rt.cudaDeviceSynchronize(); /* as cudaFree: work still using it ends first */
    crm_rangemap_remove(&crm__slot.allocs, at, &r);
    crm_idmap_del(&crm__slot.handles, at, &h);
    CUresult rc = crm_rt.cuMemUnmap((CUdeviceptr)at, r.size);
    if (h != NULL)
        crm_rt.cuMemRelease(*(CUmemGenericAllocationHandle *)h);
    free(h);
    return rc == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

CUresult crm_slot_reserve(uint64_t size, uint64_t alignment, CUdeviceptr *out)
{
    uint64_t align = alignment > (2u << 20) ? alignment : (2u << 20);
    if ((align & (align - 1)) != 0 || size == 0 || size > crm__slot.high - crm__slot.low)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t at = (crm__slot.high - size) & ~(align - 1);
    if (at < crm__slot.low)
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult rc = crm__reserve_at(at, size);
    if (rc == CUDA_SUCCESS) {
        crm__slot.high = at;
        *out = (CUdeviceptr)at;
    }
    return rc;
}
