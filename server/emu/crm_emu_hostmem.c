/* crm_emu_hostmem.c -- page-locked host memory: cudaMallocHost/cudaHostAlloc/cudaFreeHost,
 * cudaHostRegister/cudaHostUnregister, cudaHostGetFlags/cudaHostGetDevicePointer, and
 * the table that lets pointer queries know it.
 *
 * The emulated device reaches all host memory, so "page-locked" memory is ordinary
 * page-aligned anonymous memory; what matters is tracking it like CUDA does.
 */
#include "server/emu/crm_emu.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/crm_emu_window.h"

#define CRM__HOST_ALLOC_FLAGS \
    (cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined)
#define CRM__HOST_REGISTER_FLAGS \
    (cudaHostRegisterPortable | cudaHostRegisterMapped | cudaHostRegisterIoMemory | \
     cudaHostRegisterReadOnly)

typedef struct crm__host {
    uintptr_t base;  /* first byte */
    size_t size;     /* bytes */
    int dev;         /* device current when it was made */
    int registered;  /* 1: cudaHostRegister (caller owns it); 0: we mapped it */
    unsigned flags;  /* cudaHostAlloc* or cudaHostRegister* flags */
} crm__host;

static crm__host *crm__hosts;  /* live ranges, unordered */
static size_t crm__nhosts;     /* entries in use */
static size_t crm__hcap;       /* entries allocated */

/* Returns the index of the entry containing [p, p + n) partly or wholly, or -1. */
static long crm__host_overlap(uintptr_t p, size_t n)
{
    for (size_t i = 0; i < crm__nhosts; i++)
        if (p < crm__hosts[i].base + crm__hosts[i].size && crm__hosts[i].base < p + n)
            return (long)i;
    return -1;
}

/* Returns the index of the entry starting exactly at p, or -1. */
static long crm__host_exact(uintptr_t p)
{
    for (size_t i = 0; i < crm__nhosts; i++)
        if (crm__hosts[i].base == p)
            return (long)i;
    return -1;
}

/* Returns 1 when [p, p + n) touches the device window of any slot. */
static int crm__hits_window(uintptr_t p, size_t n)
{
    return p < CRM_EMU_WINDOW_BASE + CRM_EMU_SPAN && p + n > CRM_EMU_WINDOW_BASE;
}

static int crm__host_add(const crm__host *h)
{
    if (crm__nhosts == crm__hcap) {
        size_t cap = crm__hcap ? crm__hcap * 2 : 16;
        crm__host *n = realloc(crm__hosts, cap * sizeof *n);
        if (n == NULL)
            return -1;
        crm__hosts = n;
        crm__hcap = cap;
    }
    crm__hosts[crm__nhosts++] = *h;
    return 0;
}

/* Drops entry i, unmapping the memory when we allocated it. */
static void crm__host_remove(size_t i)
{
    if (!crm__hosts[i].registered)
        munmap((void *)crm__hosts[i].base, crm__hosts[i].size);
    crm__hosts[i] = crm__hosts[--crm__nhosts];
}

int crm__host_find(const void *p, int *dev)
{
    long i = crm__host_overlap((uintptr_t)p, 1);
    if (i < 0)
        return 0;
    if (dev != NULL)
        *dev = crm__hosts[i].dev;
    return 1;
}

void crm__host_release_device(int dev)
{
    for (size_t i = crm__nhosts; i-- > 0;)
        if (crm__hosts[i].dev == dev)
            crm__host_remove(i);
}

/* Maps size bytes and records them. Exclusive lock held. */
static cudaError_t crm__host_map(void **ptr, size_t size, unsigned flags)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return cudaErrorMemoryAllocation;
    crm__host h = { (uintptr_t)p, size, crm__emu_current(), 0, flags };
    if (crm__host_add(&h) != 0) {
        munmap(p, size);
        return cudaErrorMemoryAllocation;
    }
    *ptr = p;
    return cudaSuccess;
}

/* Size 0 succeeds with *pHost = NULL, like cudaMalloc. */
CRM_EXPORT cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
    CRM__EMU_STICKY();
    if (pHost == NULL || (flags & ~(unsigned)CRM__HOST_ALLOC_FLAGS) != 0)
        return crm__emu_ret(cudaErrorInvalidValue);
    if (size == 0) {
        *pHost = NULL;
        return cudaSuccess;
    }
    crm__emu_wrlock();
    cudaError_t err = crm__host_map(pHost, size, flags);
    crm__emu_unlock();
    return crm__emu_ret(err);
}

CRM_EXPORT cudaError_t cudaMallocHost(void **ptr, size_t size)
{
    CRM__EMU_STICKY();
    return cudaHostAlloc(ptr, size, cudaHostAllocDefault);
}

/* NULL succeeds; anything but the start of a cudaMallocHost/cudaHostAlloc block is
 * cudaErrorInvalidValue. */
CRM_EXPORT cudaError_t cudaFreeHost(void *ptr)
{
    if (ptr == NULL)
        return cudaSuccess;
    cudaError_t err = cudaErrorInvalidValue;
    crm__emu_wrlock();
    long i = crm__host_exact((uintptr_t)ptr);
    if (i >= 0 && !crm__hosts[i].registered) {
        crm__host_remove((size_t)i);
        err = cudaSuccess;
    }
    crm__emu_unlock();
    return crm__emu_ret(err);
}

/* Overlapping an already page-locked range is cudaErrorHostMemoryAlreadyRegistered;
 * device memory, NULL, size 0 or unknown flags are cudaErrorInvalidValue. */
CRM_EXPORT cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
    CRM__EMU_STICKY();
    uintptr_t p = (uintptr_t)ptr;
    if (ptr == NULL || size == 0 || size > UINTPTR_MAX - p ||
        (flags & ~(unsigned)CRM__HOST_REGISTER_FLAGS) != 0 ||
        crm__hits_window(p, size))
        return crm__emu_ret(cudaErrorInvalidValue);
    cudaError_t err = cudaSuccess;
    crm__emu_wrlock();
    crm__host h = { p, size, crm__emu_current(), 1, flags };
    if (crm__host_overlap(p, size) >= 0)
        err = cudaErrorHostMemoryAlreadyRegistered;
    else if (crm__host_add(&h) != 0)
        err = cudaErrorMemoryAllocation;
    crm__emu_unlock();
    return crm__emu_ret(err);
}

/* ptr must be the start of a cudaHostRegister range: else
 * cudaErrorHostMemoryNotRegistered (NULL: cudaErrorInvalidValue). */
CRM_EXPORT cudaError_t cudaHostUnregister(void *ptr)
{
    if (ptr == NULL)
        return crm__emu_ret(cudaErrorInvalidValue);
    cudaError_t err = cudaErrorHostMemoryNotRegistered;
    crm__emu_wrlock();
    long i = crm__host_exact((uintptr_t)ptr);
    if (i >= 0 && crm__hosts[i].registered) {
        crm__host_remove((size_t)i);
        err = cudaSuccess;
    }
    crm__emu_unlock();
    return crm__emu_ret(err);
}

/* Flags of the cudaHostAlloc block holding pHost, plus cudaHostAllocMapped: with
 * unified addressing every page-locked block is mapped. Registered ranges report
 * their cudaHostRegister flags the same way. Unknown pointer: cudaErrorInvalidValue. */
CRM_EXPORT cudaError_t cudaHostGetFlags(unsigned int *pFlags, void *pHost)
{
    if (pFlags == NULL)
        return crm__emu_ret(cudaErrorInvalidValue);
    crm__emu_rdlock();
    long i = crm__host_overlap((uintptr_t)pHost, 1);
    if (i >= 0)
        *pFlags = crm__hosts[i].flags | cudaHostAllocMapped;
    crm__emu_unlock();
    return i >= 0 ? cudaSuccess : crm__emu_ret(cudaErrorInvalidValue);
}

/* With unified addressing the device alias of page-locked memory is the host address
 * itself. flags must be 0; unknown pointer: cudaErrorInvalidValue. */
CRM_EXPORT cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned int flags)
{
    if (pDevice == NULL || flags != 0)
        return crm__emu_ret(cudaErrorInvalidValue);
    crm__emu_rdlock();
    int found = crm__host_find(pHost, NULL);
    crm__emu_unlock();
    if (!found)
        return crm__emu_ret(cudaErrorInvalidValue);
    *pDevice = pHost;
    return cudaSuccess;
}
