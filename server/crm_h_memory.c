/* crm_h_memory.c -- handlers of device memory calls: allocation, free, memset and
 * copies, each checking addresses against the session's allocation table first. */
#include <stdlib.h>
#include "crm_server_gen.h"
#include "server/crm_backend.h"
#include "server/crm_monitor.h"
#include "server/crm_scrub.h"
#include "server/crm_session.h"
#include "server/crm_slot.h"
#include "server/crm_xfer.h"

/* The backend's cudaMalloc, inside the session's address slot when it has one. */
static cudaError_t crm__malloc(uint64_t size, void **ptr)
{
    return crm_slot_active() ? crm_slot_malloc(crm_session_device(), size, ptr) : crm_rt.cudaMalloc(ptr, size);
}

static cudaError_t crm__free(void *ptr)
{
    return crm_slot_owns(ptr) ? crm_slot_free(ptr) : crm_rt.cudaFree(ptr);
}

/* cudaMallocPitch in the address slot: rows padded to 512 bytes, as GPUs pad them. */
static cudaError_t crm__malloc_pitch(uint64_t width, uint64_t height, void **ptr, size_t *pitch)
{
    if (!crm_slot_active())
        return crm_rt.cudaMallocPitch(ptr, pitch, width, height);
    if (width > UINT64_MAX - 511)
        return cudaErrorMemoryAllocation;
    *pitch = (width + 511) / 512 * 512;
    if (height && *pitch > UINT64_MAX / height)
        return cudaErrorMemoryAllocation;
    return crm__malloc(*pitch * height, ptr);
}

/* Records a fresh allocation of size bytes, of which `charged` were charged to the
 * session before it was made; frees it again if the table cannot hold it. */
static cudaError_t crm__track(crm_session *s, void *ptr, uint64_t size, uint64_t charged)
{
    int device = crm_session_device();
    crm_range r = {.base = (uint64_t)(uintptr_t)ptr, .size = size ? size : 1, .device = device};
    if (ptr == NULL || crm_rangemap_add(&s->allocs, r) != 0) {
        crm_monitor_charge(device, -(int64_t)charged);
        if (ptr == NULL)
            return cudaSuccess;
        crm__free(ptr);
        return cudaErrorMemoryAllocation;
    }
    crm_monitor_charge(device, (int64_t)r.size - (int64_t)charged);
    s->allocated += r.size;
    return cudaSuccess;
}

/* Charges an allocation of size bytes before it is made: the user's --quota limits
 * it as a full device would (cudaErrorMemoryAllocation), and so does the session's
 * count of allocations (--session-limits). */
static cudaError_t crm__charge(crm_session *s, uint64_t size)
{
    if (crm_session_room(s, CRM_LIMIT_ALLOCATIONS, 1) != 0) /* --session-limits allocations */
        return cudaErrorMemoryAllocation;
    return crm_session_charge(s, crm_session_device(), size) == 0 ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t crm_srv_cudaMalloc(crm_session *s, uint64_t size, uint64_t *devPtr)
{
    void *ptr = NULL;
    cudaError_t err = crm__charge(s, size);
    if (err != cudaSuccess)
        return err;
    err = crm__malloc(size, &ptr);
    if (err != cudaSuccess)
        crm_monitor_charge(crm_session_device(), -(int64_t)size);
    else if ((err = crm__track(s, ptr, size, size)) == cudaSuccess)
        *devPtr = (uint64_t)(uintptr_t)ptr;
    return err;
}

cudaError_t crm_srv_cudaMallocPitch(crm_session *s, uint64_t width, uint64_t height, uint64_t *devPtr,
                                    uint64_t *pitch)
{
    void *ptr = NULL;
    size_t got_pitch = 0;
    uint64_t want = width * height; /* the pitch's padding is charged after */
    cudaError_t err = height && width > UINT64_MAX / height ? cudaErrorMemoryAllocation : crm__charge(s, want);
    if (err != cudaSuccess)
        return err;
    err = crm__malloc_pitch(width, height, &ptr, &got_pitch);
    if (err != cudaSuccess)
        crm_monitor_charge(crm_session_device(), -(int64_t)want);
    else if ((err = crm__track(s, ptr, (uint64_t)got_pitch * height, want)) == cudaSuccess) {
        *devPtr = (uint64_t)(uintptr_t)ptr;
        *pitch = got_pitch;
    }
    return err;
}

cudaError_t crm_srv_cudaMemGetInfo(crm_session *s, uint64_t *free_bytes, uint64_t *total_bytes)
{
    size_t f = 0, t = 0;
    cudaError_t err = crm_rt.cudaMemGetInfo(&f, &t);
    crm_session_slice(s, crm_session_device(), &f, &t);
    *free_bytes = f;
    *total_bytes = t;
    return err;
}

cudaError_t crm_srv_cudaFree(crm_session *s, uint64_t devPtr)
{
    const crm_range *r = crm_rangemap_find(&s->allocs, devPtr);
    crm_range gone;
    if (devPtr == 0)
        return cudaSuccess;
    if (r == NULL || r->base != devPtr || r->kind == CRM_RANGE_SYMBOL || r->kind == CRM_RANGE_VMM)
        return cudaErrorInvalidValue;
    crm_scrub(s, r->device, devPtr, r->size);
    cudaError_t err = crm__free((void *)(uintptr_t)devPtr);
    if (err == cudaSuccess && crm_rangemap_remove(&s->allocs, devPtr, &gone) == 0)
        crm_monitor_charge(gone.device, -(int64_t)gone.size);
    return err;
}

cudaError_t crm_srv_crm_memset(crm_session *s, uint64_t dst, uint64_t pitch, int value, uint64_t width,
                               uint64_t height, uint64_t stream, int async)
{
    cudaStream_t h;
    void *p = (void *)(uintptr_t)dst;
    cudaError_t err = crm_session_check_region(s, dst, pitch, width, height);
    if (err == cudaSuccess)
        err = crm_session_stream(s, stream, &h);
    if (err != cudaSuccess)
        return err;
    if (height == 1 && pitch == width)
        return async ? crm_rt.cudaMemsetAsync(p, value, width, h) : crm_rt.cudaMemset(p, value, width);
    return async ? crm_rt.cudaMemset2DAsync(p, pitch, value, width, height, h)
                 : crm_rt.cudaMemset2D(p, pitch, value, width, height);
}

cudaError_t crm_srv_crm_memcpy_h2d(crm_session *s, const crm_h2d_args *data)
{
    (void)s;
    return data->status; /* the sink copied while decoding */
}

cudaError_t crm_srv_crm_memcpy_d2h(crm_session *s, uint64_t src, uint64_t spitch, uint64_t width,
                                   uint64_t height, uint64_t stream, int async, int level, crm_d2h_res *data)
{
    cudaStream_t h;
    /* the client chose the compression and the channel; bound the level to what zstd knows */
    int zlevel = level & CRM_LEVEL_MASK;
    data->level = (level & (CRM_LEVEL_CHANNEL | CRM_LEVEL_PROBE | CRM_LEVEL_LIVE)) |
                  (zlevel > CRM_ZSTD_MAX_LEVEL ? CRM_ZSTD_MAX_LEVEL : zlevel);
    cudaError_t err = crm_session_check_region(s, src, spitch, width, height);
    if (err == cudaSuccess)
        err = crm_session_stream(s, stream, &h);
    if (err == cudaSuccess)
        err = crm_xfer_d2h(s, src, spitch, width, height, h, async, data);
    return err;
}

cudaError_t crm_srv_crm_memcpy_d2d(crm_session *s, uint64_t dst, uint64_t dpitch, uint64_t src, uint64_t spitch,
                                   uint64_t width, uint64_t height, uint64_t stream, int async)
{
    cudaStream_t h;
    cudaError_t err = crm_session_check_region(s, dst, dpitch, width, height);
    if (err == cudaSuccess)
        err = crm_session_check_region(s, src, spitch, width, height);
    if (err == cudaSuccess)
        err = crm_session_stream(s, stream, &h);
    if (err != cudaSuccess)
        return err;
    void *d = (void *)(uintptr_t)dst;
    const void *sp = (const void *)(uintptr_t)src;
    return async ? crm_rt.cudaMemcpy2DAsync(d, dpitch, sp, spitch, width, height, cudaMemcpyDeviceToDevice, h)
                 : crm_rt.cudaMemcpy2D(d, dpitch, sp, spitch, width, height, cudaMemcpyDeviceToDevice);
}

/* Managed memory must lie where the client can map the same addresses: the emulated
 * device's window holds all its memory; a GPU's session places it in its address
 * slot (slot 0 when the client pools no servers). Zeroed, as a GPU's fresh managed
 * pages read, so the client starts with every block clean. */
cudaError_t crm_srv_crm_malloc_managed(crm_session *s, uint64_t size, uint64_t *devPtr)
{
    void *ptr = NULL;
    if (size == 0)
        return cudaErrorInvalidValue;
    if (crm_backend_kind() != CRM_BACKEND_EMU && !crm_slot_active() && crm_slot_open(0) != 0)
        return cudaErrorNotSupported;
    cudaError_t err = crm__charge(s, size);
    if (err != cudaSuccess)
        return err;
    err = crm__malloc(size, &ptr);
    if (err == cudaSuccess && (err = crm_rt.cudaMemset(ptr, 0, size)) != cudaSuccess)
        crm__free(ptr);
    if (err != cudaSuccess)
        crm_monitor_charge(crm_session_device(), -(int64_t)size);
    else if ((err = crm__track(s, ptr, size, size)) == cudaSuccess)
        *devPtr = (uint64_t)(uintptr_t)ptr;
    return err;
}
