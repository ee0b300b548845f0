/* crm_emu_vmm.c -- the driver's virtual memory management on the emulated device:
 * cuMemAddressReserve/Free, cuMemCreate/Release, cuMemMap/Unmap, cuMemSetAccess and
 * cuMemGetAllocationGranularity (what torch's expandable segments use).
 *
 * A physical allocation is a memfd charged to its device; mapping it maps the file's
 * pages into a reservation of the device window (crm_emu_mem.c), PROT_NONE until
 * cuMemSetAccess grants access, so one allocation may be mapped at several addresses
 * and mappings of adjacent addresses form one contiguous range, as on a GPU. Device
 * code and copies see a mapped range once read-write access is set (crm__vmm_range).
 * Driver calls leave the runtime's last error alone, as NVIDIA's driver does. Released
 * allocations live on until their last mapping goes. */
#include "server/emu/crm_emu.h"

#include <cuda.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define CRM__GRANULARITY (2u << 20) /* what GPUs report: 2 MiB, minimum and recommended */

typedef struct crm__phys {
    int fd;            /* the memory: a memfd of `size` bytes */
    size_t size;
    int dev;           /* device charged */
    unsigned maps;     /* live mappings of it */
    int released;      /* cuMemRelease called: destroyed with its last mapping */
} crm__phys;

typedef struct crm__map {
    uintptr_t base;    /* first address, granularity aligned */
    size_t size;
    crm__phys *phys;
    int prot;          /* PROT_* granted by cuMemSetAccess; PROT_NONE until then */
} crm__map;

static crm__map *crm__maps;   /* sorted by base, never overlapping */
static size_t crm__nmaps, crm__mapcap;
static crm__registry crm__physs;

static int crm__aligned(uint64_t v)
{
    return v % CRM__GRANULARITY == 0;
}

/* A device location of this emulated machine. */
static int crm__valid_location(const CUmemLocation *loc)
{
    return loc->type == CU_MEM_LOCATION_TYPE_DEVICE && crm__emu_valid_device(loc->id);
}

CRM_EXPORT CUresult cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
                                                  CUmemAllocationGranularity_flags option)
{
    if (granularity == NULL || prop == NULL || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
        !crm__valid_location(&prop->location) ||
        (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM && option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))
        return CUDA_ERROR_INVALID_VALUE;
    *granularity = CRM__GRANULARITY;
    return CUDA_SUCCESS;
}

/* addr is a hint, as on a GPU: followed when that range of the window is free. */
CRM_EXPORT CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                        unsigned long long flags)
{
    void *p = NULL;
    if (ptr == NULL || size == 0 || !crm__aligned(size) || flags != 0 || (alignment & (alignment - 1)) != 0)
        return CUDA_ERROR_INVALID_VALUE;
    crm__emu_wrlock();
    cudaError_t err =
        crm__mem_reserve(size, alignment > CRM__GRANULARITY ? alignment : CRM__GRANULARITY, (uintptr_t)addr, &p);
    crm__emu_unlock();
    if (err != cudaSuccess)
        return err == cudaErrorMemoryAllocation ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_VALUE;
    *ptr = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}

/* Index of the first mapping whose base is >= a. Lock held. */
static size_t crm__lower(uintptr_t a)
{
    size_t lo = 0, hi = crm__nmaps;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (crm__maps[mid].base < a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* 1 when some mapping overlaps [a, a + n). Lock held. */
static int crm__overlaps(uintptr_t a, size_t n)
{
    size_t i = crm__lower(a);
    if (i < crm__nmaps && crm__maps[i].base < a + n)
        return 1;
    return i > 0 && crm__maps[i - 1].base + crm__maps[i - 1].size > a;
}

CRM_EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    crm__emu_wrlock();
    CUresult rc = crm__overlaps((uintptr_t)ptr, size) ? CUDA_ERROR_INVALID_VALUE /* still mapped */
                  : crm__mem_unreserve((void *)(uintptr_t)ptr, size) == cudaSuccess ? CUDA_SUCCESS
                                                                                    : CUDA_ERROR_INVALID_VALUE;
    crm__emu_unlock();
    return rc;
}

CRM_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
                                unsigned long long flags)
{
    if (handle == NULL || prop == NULL || size == 0 || !crm__aligned(size) || flags != 0 ||
        prop->type != CU_MEM_ALLOCATION_TYPE_PINNED || !crm__valid_location(&prop->location))
        return CUDA_ERROR_INVALID_VALUE;
    if (prop->requestedHandleTypes & ~(unsigned)CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
        return CUDA_ERROR_NOT_SUPPORTED; /* Win32 and fabric handles */
    crm__phys *ph = calloc(1, sizeof *ph);
    if (ph == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *ph = (crm__phys){.fd = -1, .size = size, .dev = prop->location.id};
    crm__emu_wrlock();
    CUresult rc = CUDA_ERROR_OUT_OF_MEMORY;
    if (crm__pool_charge(ph->dev, size, crm__emu_mem_size()) == 0) {
        ph->fd = memfd_create("cudarem-emu-vmm", MFD_CLOEXEC);
        if (ph->fd >= 0 && ftruncate(ph->fd, (off_t)size) == 0 && crm__registry_add(&crm__physs, ph) == 0)
            rc = CUDA_SUCCESS;
        else
            crm__pool_release(ph->dev, size);
    }
    crm__emu_unlock();
    if (rc != CUDA_SUCCESS) {
        if (ph->fd >= 0)
            close(ph->fd);
        free(ph);
        return rc;
    }
    *handle = (CUmemGenericAllocationHandle)(uintptr_t)ph;
    return CUDA_SUCCESS;
}

/* Frees ph once it is released and unmapped. Exclusive lock held. */
static void crm__phys_settle(crm__phys *ph)
{
    if (!ph->released || ph->maps > 0)
        return;
    crm__registry_remove(&crm__physs, ph);
    crm__pool_release(ph->dev, ph->size);
    close(ph->fd);
    free(ph);
}

/* The live allocation behind handle, or NULL. Lock held. */
static crm__phys *crm__phys_of(CUmemGenericAllocationHandle handle)
{
    crm__phys *ph = (crm__phys *)(uintptr_t)handle;
    return crm__registry_has(&crm__physs, ph) && !ph->released ? ph : NULL;
}

CRM_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
    crm__emu_wrlock();
    crm__phys *ph = crm__phys_of(handle);
    if (ph != NULL) {
        ph->released = 1;
        crm__phys_settle(ph);
    }
    crm__emu_unlock();
    return ph != NULL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Inserts m at its place. 0, or -1 when memory runs out. Lock held. */
static int crm__map_insert(const crm__map *m)
{
    if (crm__nmaps == crm__mapcap) {
        size_t cap = crm__mapcap ? crm__mapcap * 2 : 64;
        crm__map *n = realloc(crm__maps, cap * sizeof *n);
        if (n == NULL)
            return -1;
        crm__maps = n;
        crm__mapcap = cap;
    }
    size_t i = crm__lower(m->base);
    memmove(&crm__maps[i + 1], &crm__maps[i], (crm__nmaps - i) * sizeof *m);
    crm__maps[i] = *m;
    crm__nmaps++;
    return 0;
}

CRM_EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                             unsigned long long flags)
{
    uintptr_t a = (uintptr_t)ptr;
    if (size == 0 || !crm__aligned(a) || !crm__aligned(size) || !crm__aligned(offset) || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    crm__emu_wrlock();
    crm__phys *ph = crm__phys_of(handle);
    CUresult rc = CUDA_ERROR_INVALID_VALUE;
    if (ph != NULL && offset <= ph->size && size <= ph->size - offset && crm__mem_reservation((void *)a, size) &&
        !crm__overlaps(a, size)) {
        crm__map m = {a, size, ph, PROT_NONE};
        void *p = mmap((void *)a, size, PROT_NONE, MAP_SHARED | MAP_FIXED, ph->fd, (off_t)offset);
        if (p == MAP_FAILED || crm__map_insert(&m) != 0) {
            if (p != MAP_FAILED)
                mmap((void *)a, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            ph->maps++;
            rc = CUDA_SUCCESS;
        }
    } else if (ph == NULL) {
        rc = CUDA_ERROR_INVALID_HANDLE;
    }
    crm__emu_unlock();
    return rc;
}

/* The mappings [*first, *last) that exactly cover [a, a + n), without gaps: 1, or 0
 * when the range is not a run of whole mappings. Lock held. */
static int crm__whole_maps(uintptr_t a, size_t n, size_t *first, size_t *last)
{
    size_t i = crm__lower(a), j = i;
    uintptr_t at = a;
    while (j < crm__nmaps && crm__maps[j].base == at && at - a < n) {
        at += crm__maps[j].size;
        j++;
    }
    *first = i;
    *last = j;
    return j > i && at - a == n;
}

CRM_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    size_t first, last;
    crm__emu_wrlock();
    int ok = crm__whole_maps((uintptr_t)ptr, size, &first, &last);
    for (size_t i = first; ok && i < last; i++) {
        crm__map *m = &crm__maps[i];
        mmap((void *)m->base, m->size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
        m->phys->maps--;
        crm__phys_settle(m->phys);
    }
    if (ok) {
        memmove(&crm__maps[first], &crm__maps[last], (crm__nmaps - last) * sizeof *crm__maps);
        crm__nmaps -= last - first;
    }
    crm__emu_unlock();
    return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static int crm__prot_of(CUmemAccess_flags f)
{
    switch (f) {
    case CU_MEM_ACCESS_FLAGS_PROT_NONE: return PROT_NONE;
    case CU_MEM_ACCESS_FLAGS_PROT_READ: return PROT_READ;
    case CU_MEM_ACCESS_FLAGS_PROT_READWRITE: return PROT_READ | PROT_WRITE;
    default: return -1;
    }
}

/* The emulated device's code runs in this process, so the access the device itself
 * gets is what the pages get; other devices of the machine share it. */
CRM_EXPORT CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
    size_t first, last;
    int prot = -1;
    if (desc == NULL || count == 0)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < count; i++) {
        int p = crm__prot_of(desc[i].flags);
        if (!crm__valid_location(&desc[i].location) || p < 0)
            return CUDA_ERROR_INVALID_VALUE;
        prot = p > prot ? p : prot;
    }
    crm__emu_wrlock();
    int ok = crm__whole_maps((uintptr_t)ptr, size, &first, &last) && mprotect((void *)(uintptr_t)ptr, size, prot) == 0;
    for (size_t i = first; ok && i < last; i++)
        crm__maps[i].prot = prot;
    crm__emu_unlock();
    return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

int crm__vmm_range(const void *p, size_t n, int *dev)
{
    uintptr_t a = (uintptr_t)p, end = a + n;
    size_t i = crm__lower(a + 1);
    if (i == 0 || crm__maps[i - 1].base + crm__maps[i - 1].size <= a)
        return 0;
    i--;
    if (dev != NULL)
        *dev = crm__maps[i].phys->dev;
    for (uintptr_t at = a; at < end; i++) {
        if (i == crm__nmaps || crm__maps[i].base > at || crm__maps[i].prot != (PROT_READ | PROT_WRITE))
            return 0; /* copies and kernels may write: only read-write mappings qualify */
        at = crm__maps[i].base + crm__maps[i].size;
    }
    return 1;
}
