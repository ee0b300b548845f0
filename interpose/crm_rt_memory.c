/* crm_rt_memory.c -- exported allocation calls: device memory through the server,
 * "pinned" host memory (page aligned, shared with a server on this machine,
 * recorded for pointer classification), and cudaPointerGetAttributes answered from those records. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cuda_runtime_api.h>
#include "client/crm_conn.h"
#include "client/crm_graph.h"
#include "client/crm_graph_mem.h"
#include "client/crm_handles.h"
#include "client/crm_hostmem.h"
#include "client/crm_managed.h"
#include "client/crm_ptrmap.h"
#include "common/crm_log.h"
#include "crm_client_gen.h"
#include "interpose/crm_drv.h"
#include "interpose/crm_export.h"
#include "interpose/crm_rt_managed.h"

/* Records a new device allocation of the thread's device. A pointer must name one
 * server's memory, so in a pool one overlapping another device's is refused, and
 * stays allocated on its server until the session ends. */
static cudaError_t crm__track(uint64_t ptr, uint64_t size)
{
    if (ptr == 0 || crm_ptrmap_add_fresh(ptr, size ? size : 1, crm_thread_device(), 0, crm_conn_pooled()) == 0)
        return cudaSuccess;
    crm_error("device %d's server gave address 0x%llx, which overlaps memory of another pooled device: "
              "refused with cudaErrorMemoryAllocation",
              crm_thread_device(), (unsigned long long)ptr);
    return cudaErrorMemoryAllocation;
}

/* 1 when p lies in mapped host memory (cudaHostAllocMapped), its entry in *r. */
static int crm__mapped_host(const void *p, crm_range *r)
{
    return crm_ptrmap_classify((uint64_t)(uintptr_t)p, r) == CRM_MEM_DEVICE &&
           ((r->kind >> 8) & CRM_PTRMAP_HOSTMAPPED);
}

cudaError_t crm_device_alloc(void **devPtr, size_t size)
{
    uint64_t ptr = 0;
    cudaError_t err = crm_rpc_cudaMalloc(size, &ptr);
    if (err == cudaSuccess)
        err = crm__track(ptr, size);
    if (err == cudaSuccess)
        *devPtr = (void *)(uintptr_t)ptr;
    return err;
}

CRM_EXPORT cudaError_t cudaMalloc(void **devPtr, size_t size)
{
    crm_drv_runtime_bind();
    if (devPtr == NULL)
        return crm_set_error(cudaErrorInvalidValue);
    cudaError_t err = crm_capture_refuse_sync(CRM_WIRE_BAD_HANDLE, CRM_WIRE_BAD_HANDLE); /* unsafe in a capture */
    if (err == cudaSuccess)
        err = crm_device_alloc(devPtr, size);
    return crm_set_error(err);
}

CRM_EXPORT cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height)
{
    uint64_t ptr = 0, got_pitch = 0;
    if (devPtr == NULL || pitch == NULL)
        return crm_set_error(cudaErrorInvalidValue);
    cudaError_t err = crm_rpc_cudaMallocPitch(width, height, &ptr, &got_pitch);
    if (err == cudaSuccess)
        err = crm__track(ptr, got_pitch * height);
    if (err == cudaSuccess) {
        *devPtr = (void *)(uintptr_t)ptr;
        *pitch = got_pitch;
    }
    return crm_set_error(err);
}

/* The client forgets the range before the server frees it: once freed there, the
 * address is the server's to hand out again, and another thread's cudaMalloc may
 * get it and record it before this call returns. Forgotten after the free, that
 * thread's fresh record went with it, and its copies to the address were refused.
 * In a pool the call goes to the server of the memory's device, which the table
 * no longer tells the connection. */
CRM_EXPORT cudaError_t cudaFree(void *devPtr)
{
    crm_drv_runtime_bind();
    if (devPtr == NULL)
        return cudaSuccess;
    cudaError_t refused = crm_capture_refuse_sync(CRM_WIRE_BAD_HANDLE, CRM_WIRE_BAD_HANDLE); /* it waits */
    if (refused != cudaSuccess)
        return crm_set_error(refused);
    if (crm_gmem_free((uint64_t)(uintptr_t)devPtr))
        return cudaSuccess; /* a graph's memory: free once no graph holds it (client/crm_graph_mem.h) */
    crm_range gone;
    if (crm__mapped_host(devPtr, &gone))
        return crm_set_error(cudaErrorInvalidValue); /* host memory: cudaFreeHost's */
    int known = crm_ptrmap_remove(CRM_MEM_DEVICE, (uint64_t)(uintptr_t)devPtr, &gone) == 0, local;
    if (known && ((gone.kind >> 8) & CRM_PTRMAP_MANAGED))
        crm_managed_remove(gone.base); /* gone here first too: its addresses may come back at once */
    int routed = known && crm_conn_pooled(), saved = routed ? crm_conn_device_begin(gone.device, &local) : 0;
    /* an allocation the client knows is freed without a round trip: the server's
     * later calls, another thread's cudaMalloc among them, run after it */
    cudaError_t err = known && !routed ? crm_rpc_cudaFree_queued((uint64_t)(uintptr_t)devPtr)
                                       : crm_rpc_cudaFree((uint64_t)(uintptr_t)devPtr);
    if (routed)
        crm_conn_device_end(saved);
    if (err != cudaSuccess && known)
        crm_ptrmap_add(CRM_MEM_DEVICE, gone.base, gone.size, gone.device, gone.kind >> 8);
    return crm_set_error(err);
}

/* Makes every page of [p, p+size) resident now, as page-locked memory is: copies
 * into it then run at memory speed instead of faulting page by page. */
static void crm__populate(void *p, size_t size)
{
#ifdef MADV_POPULATE_WRITE
    if (madvise(p, size, MADV_POPULATE_WRITE) == 0)
        return;
#endif
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    for (size_t off = 0; off < size; off += page)
        ((volatile char *)p)[off] = 0; /* fresh memory: its bytes are undefined to the program */
}

/* Page-aligned, resident memory standing in for page-locked memory: shared with
 * the server when it runs on this machine (client/crm_hostmem.h), so copies need
 * no transport at all; else private, since the bytes move over the network anyway
 * and what matters to programs is alignment, classification, and that copies do
 * not stop to fault pages in. */
static cudaError_t crm__host_alloc(void **ptr, size_t size, unsigned int flags)
{
    if (ptr == NULL)
        return cudaErrorInvalidValue;
    if (size == 0) {
        *ptr = NULL;
        return cudaSuccess;
    }
    if (flags & cudaHostAllocMapped) /* the device reaches it: managed memory's machinery */
        return crm_mapped_host_alloc(ptr, size, flags);
    void *p = NULL;
    int shared = crm_hostmem_alloc(size, &p) == 0;
    if (!shared && posix_memalign(&p, (size_t)sysconf(_SC_PAGESIZE), size) != 0)
        return cudaErrorMemoryAllocation;
    crm__populate(p, size);
    if (crm_ptrmap_add(CRM_MEM_PINNED, (uint64_t)(uintptr_t)p, size, crm_thread_device(), flags) != 0) {
        if (!shared || crm_hostmem_free(p) != 0)
            free(p);
        return cudaErrorMemoryAllocation;
    }
    *ptr = p;
    return cudaSuccess;
}

CRM_EXPORT cudaError_t cudaMallocHost(void **ptr, size_t size)
{
    return crm_set_error(crm__host_alloc(ptr, size, cudaHostAllocDefault));
}

CRM_EXPORT cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
    crm_drv_runtime_bind();
    const unsigned valid = cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined;
    if (flags & ~valid)
        return crm_set_error(cudaErrorInvalidValue);
    return crm_set_error(crm__host_alloc(pHost, size, flags));
}

/* Mapped host memory is the server's too: freed there, after the work queued before. */
static cudaError_t crm__free_mapped(void *ptr)
{
    crm_range r;
    uint64_t p = (uint64_t)(uintptr_t)ptr;
    if (!crm__mapped_host(ptr, &r) || r.base != p)
        return cudaErrorInvalidValue;
    crm_ptrmap_remove(CRM_MEM_DEVICE, p, NULL);
    crm_managed_remove(p);
    if (crm_conn_pooled()) {
        int local, saved = crm_conn_device_begin(r.device, &local);
        cudaError_t err = crm_rpc_cudaFree(p);
        crm_conn_device_end(saved);
        return err;
    }
    return crm_rpc_cudaFree_queued(p);
}

CRM_EXPORT cudaError_t cudaFreeHost(void *ptr)
{
    crm_range r;
    if (ptr == NULL)
        return cudaSuccess;
    if (crm__mapped_host(ptr, &r))
        return crm_set_error(crm__free_mapped(ptr));
    if (crm_ptrmap_remove(CRM_MEM_PINNED, (uint64_t)(uintptr_t)ptr, NULL) != 0)
        return crm_set_error(cudaErrorInvalidValue);
    if (crm_hostmem_free(ptr) != 0)
        free(ptr);
    return cudaSuccess;
}

/* The pages holding [p, p + size). */
static void crm__pages(const void *p, size_t size, uint64_t *first, uint64_t *len)
{
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), a = (uint64_t)(uintptr_t)p;
    *first = a / page * page;
    *len = (a + size + page - 1) / page * page - *first;
}

/* Registered memory the device reaches (cudaHostRegisterMapped): the server
 * allocates a device twin of its pages and the client keeps the two coherent as
 * managed memory (client/crm_managed.h). A registration that cannot be made so
 * (pages shared with another registration) stays the client's alone, said once. */
static void crm__register_mapped(void *ptr, size_t size)
{
    static int logged;
    uint64_t first, len, dev = 0;
    crm__pages(ptr, size, &first, &len);
    cudaError_t err = crm_rpc_crm_malloc_managed(len, &dev);
    if (err == cudaSuccess && crm_managed_register(first, len, dev, crm_thread_device()) == 0) {
        crm_ptrmap_add_fresh(dev, len, crm_thread_device(), 0, crm_conn_pooled());
        return;
    }
    if (err == cudaSuccess)
        crm_rpc_cudaFree(dev);
    if (!__atomic_exchange_n(&logged, 1, __ATOMIC_RELAXED))
        crm_warn("cudaHostRegister(cudaHostRegisterMapped) at %p: the device cannot reach this memory (%s); "
                 "cudaHostGetDevicePointer will answer cudaErrorNotSupported",
                 ptr, err != cudaSuccess ? cudaGetErrorName(err) : "its pages are shared with tracked memory");
}

CRM_EXPORT cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
    const unsigned valid = cudaHostRegisterPortable | cudaHostRegisterMapped | cudaHostRegisterIoMemory |
                           cudaHostRegisterReadOnly;
    if (ptr == NULL || size == 0 || (flags & ~valid))
        return crm_set_error(cudaErrorInvalidValue);
    if (crm_ptrmap_add(CRM_MEM_REGISTERED, (uint64_t)(uintptr_t)ptr, size, crm_thread_device(), flags) != 0)
        return crm_set_error(cudaErrorHostMemoryAlreadyRegistered);
    if (flags & cudaHostRegisterMapped)
        crm__register_mapped(ptr, size);
    return cudaSuccess;
}

CRM_EXPORT cudaError_t cudaHostUnregister(void *ptr)
{
    crm_range r;
    int registered;
    if (ptr == NULL)
        return crm_set_error(cudaErrorInvalidValue);
    if (crm_ptrmap_remove(CRM_MEM_REGISTERED, (uint64_t)(uintptr_t)ptr, &r) != 0)
        return crm_set_error(cudaErrorHostMemoryNotRegistered);
    uint64_t first, len, dev = crm_managed_device_address((uint64_t)(uintptr_t)ptr, &registered);
    crm__pages(ptr, r.size, &first, &len);
    if (registered && crm_managed_unregister(first) == 0) { /* the pages are the program's again */
        dev -= (uint64_t)(uintptr_t)ptr - first;
        crm_ptrmap_remove(CRM_MEM_DEVICE, dev, NULL);
        return crm_set_error(crm_rpc_cudaFree(dev));
    }
    return cudaSuccess;
}

CRM_EXPORT cudaError_t cudaHostGetFlags(unsigned int *pFlags, void *pHost)
{
    crm_range r;
    if (pFlags != NULL && crm__mapped_host(pHost, &r)) {
        *pFlags = CRM_PTRMAP_HOST_FLAGS(r.kind >> 8);
        return cudaSuccess;
    }
    if (pFlags == NULL || crm_ptrmap_classify((uint64_t)(uintptr_t)pHost, &r) != CRM_MEM_PINNED)
        return crm_set_error(cudaErrorInvalidValue);
    *pFlags = r.kind >> 8;
    return cudaSuccess;
}

CRM_EXPORT cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned int flags)
{
    static int logged;
    crm_range r;
    if (pDevice == NULL || pHost == NULL || flags != 0)
        return crm_set_error(cudaErrorInvalidValue);
    if (crm__mapped_host(pHost, &r)) { /* one address on both sides */
        *pDevice = pHost;
        return cudaSuccess;
    }
    int registered;
    uint64_t dev = crm_managed_device_address((uint64_t)(uintptr_t)pHost, &registered);
    if (registered) { /* registered with cudaHostRegisterMapped: its device twin */
        *pDevice = (void *)(uintptr_t)dev;
        return cudaSuccess;
    }
    if (!__atomic_exchange_n(&logged, 1, __ATOMIC_RELAXED))
        crm_warn("cudaHostGetDevicePointer: only memory allocated or registered mapped (cudaHostAllocMapped, "
                 "cudaHostRegisterMapped, or the driver's DEVICEMAP flags) is reachable by the remote device; "
                 "this memory lives in this client alone: cudaErrorNotSupported");
    return crm_set_error(cudaErrorNotSupported);
}

CRM_EXPORT cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attributes, const void *ptr)
{
    crm_range r;
    if (attributes == NULL)
        return crm_set_error(cudaErrorInvalidValue);
    memset(attributes, 0, sizeof *attributes);
    switch (crm_ptrmap_classify((uint64_t)(uintptr_t)ptr, &r)) {
    case CRM_MEM_DEVICE:
        attributes->type = (r.kind >> 8) & CRM_PTRMAP_HOSTMAPPED ? cudaMemoryTypeHost
                           : (r.kind >> 8) & CRM_PTRMAP_MANAGED  ? cudaMemoryTypeManaged
                                                                 : cudaMemoryTypeDevice;
        attributes->device = r.device;
        attributes->devicePointer = (void *)ptr;
        if (attributes->type != cudaMemoryTypeDevice)
            attributes->hostPointer = (void *)ptr;
        break;
    case CRM_MEM_PINNED:
    case CRM_MEM_REGISTERED: {
        int registered;
        uint64_t dev = crm_managed_device_address((uint64_t)(uintptr_t)ptr, &registered);
        attributes->type = cudaMemoryTypeHost;
        attributes->device = r.device;
        attributes->hostPointer = (void *)ptr;
        if (registered) /* registered mapped: its device twin */
            attributes->devicePointer = (void *)(uintptr_t)dev;
        break;
    }
    default:
        attributes->type = cudaMemoryTypeUnregistered;
        attributes->device = -2;
        break;
    }
    return cudaSuccess;
}
