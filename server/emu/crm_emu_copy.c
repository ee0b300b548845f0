/* crm_emu_copy.c -- cudaMemcpy, cudaMemcpy2D and their Async forms on the emulated device.
 *
 * Copies run at once on the calling thread (streams are in order, so executing work
 * when it is enqueued is a valid schedule). Every device range is checked against
 * the live-allocation table and the kind must agree with the pointers.
 */
#include "server/emu/crm_emu.h"

#include <stdint.h>
#include <string.h>

#include "common/crm_emu_window.h"

/* Returns 1 when kind's source (src_side) or destination side is device memory. */
static int crm__kind_device(enum cudaMemcpyKind kind, const void *p, int src_side)
{
    switch (kind) {
    case cudaMemcpyHostToHost: return 0;
    case cudaMemcpyHostToDevice: return !src_side;
    case cudaMemcpyDeviceToHost: return src_side;
    case cudaMemcpyDeviceToDevice: return 1;
    default: return crm_emu_in_window(p); /* cudaMemcpyDefault: unified addressing */
    }
}

/* Returns the bytes spanned by height rows of width bytes, pitch apart, or 0 on
 * overflow (callers have width, height > 0 and width <= pitch). */
static size_t crm__extent(size_t pitch, size_t width, size_t height)
{
    if (height - 1 > (SIZE_MAX - width) / pitch)
        return 0;
    return (height - 1) * pitch + width;
}

/* Checks one side of a copy: a device side must lie inside one live allocation, a
 * host side must not be in the device window. The lock is held shared. */
static cudaError_t crm__check_side(const void *p, size_t extent, int device)
{
    if (p == NULL || extent == 0)
        return cudaErrorInvalidValue;
    if (device)
        return crm__mem_range(p, extent, NULL) ? cudaSuccess : cudaErrorInvalidValue;
    uintptr_t a = (uintptr_t)p;
    if (a > UINTPTR_MAX - extent || crm_emu_in_window(p) ||
        (a < CRM_EMU_WINDOW_BASE && a + extent > CRM_EMU_WINDOW_BASE))
        return cudaErrorInvalidValue;
    return cudaSuccess;
}

static void crm__copy_rows(void *dst, size_t dpitch, const void *src, size_t spitch,
                           size_t width, size_t height)
{
    for (size_t r = 0; r < height; r++)
        memmove((char *)dst + r * dpitch, (const char *)src + r * spitch, width);
}

/* The generic worker behind every copy. Errors, in the order checked:
 * cudaErrorInvalidMemcpyDirection (kind), cudaErrorInvalidPitchValue (width > a
 * pitch), then a zero width or height succeeds, then cudaErrorInvalidValue for a
 * range the kind's pointers cannot cover. */
static cudaError_t crm__copy(void *dst, size_t dpitch, const void *src, size_t spitch,
                             size_t width, size_t height, enum cudaMemcpyKind kind)
{
    if ((unsigned)kind > cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    if (width > dpitch || width > spitch)
        return cudaErrorInvalidPitchValue;
    if (width == 0 || height == 0)
        return cudaSuccess;
    size_t dext = crm__extent(dpitch, width, height);
    size_t sext = crm__extent(spitch, width, height);
    crm__emu_rdlock();
    cudaError_t err = crm__check_side(dst, dext, crm__kind_device(kind, dst, 0));
    if (err == cudaSuccess)
        err = crm__check_side(src, sext, crm__kind_device(kind, src, 1));
    if (err == cudaSuccess)
        crm__copy_rows(dst, dpitch, src, spitch, width, height);
    crm__emu_unlock();
    return err;
}

/* Checks the stream, then copies now. Unknown stream: cudaErrorInvalidResourceHandle. */
static cudaError_t crm__copy_async(void *dst, size_t dpitch, const void *src, size_t spitch,
                                   size_t width, size_t height, enum cudaMemcpyKind kind,
                                   cudaStream_t stream)
{
    crm__emu_rdlock();
    cudaError_t err = crm__stream_check(stream, NULL);
    crm__emu_unlock();
    if (err != cudaSuccess)
        return err;
    return crm__copy(dst, dpitch, src, spitch, width, height, kind);
}

CRM_EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t count,
                                  enum cudaMemcpyKind kind)
{
    CRM__EMU_STICKY();
    return crm__emu_ret(crm__copy(dst, count, src, count, count, 1, kind));
}

CRM_EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
                                       enum cudaMemcpyKind kind, cudaStream_t stream)
{
    CRM__EMU_STICKY();
    return crm__emu_ret(crm__copy_async(dst, count, src, count, count, 1, kind, stream));
}

CRM_EXPORT cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch,
                                    size_t width, size_t height, enum cudaMemcpyKind kind)
{
    CRM__EMU_STICKY();
    return crm__emu_ret(crm__copy(dst, dpitch, src, spitch, width, height, kind));
}

CRM_EXPORT cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src,
                                         size_t spitch, size_t width, size_t height,
                                         enum cudaMemcpyKind kind, cudaStream_t stream)
{
    CRM__EMU_STICKY();
    return crm__emu_ret(crm__copy_async(dst, dpitch, src, spitch, width, height, kind, stream));
}
