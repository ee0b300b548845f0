/* crm_emu_memset.c -- cudaMemset, cudaMemset2D and their Async forms on the emulated device. */
#include "server/emu/crm_emu.h"

#include <stdint.h>
#include <string.h>

/* The generic worker: cudaErrorInvalidPitchValue when width > pitch, success for a
 * zero width or height, cudaErrorInvalidValue unless every row lies inside one live
 * device allocation. The byte written is value's low byte. */
static cudaError_t crm__memset(void *p, size_t pitch, int value, size_t width, size_t height)
{
    if (width > pitch)
        return cudaErrorInvalidPitchValue;
    if (width == 0 || height == 0)
        return cudaSuccess;
    if (height - 1 > (SIZE_MAX - width) / pitch)
        return cudaErrorInvalidValue;
    size_t extent = (height - 1) * pitch + width;
    cudaError_t err = cudaErrorInvalidValue;
    crm__emu_rdlock();
    if (p != NULL && crm__mem_range(p, extent, NULL)) {
        for (size_t r = 0; r < height; r++)
            memset((char *)p + r * pitch, value & 0xff, width);
        err = cudaSuccess;
    }
    crm__emu_unlock();
    return err;
}

/* Checks the stream (cudaErrorInvalidResourceHandle), then sets the memory now. */
static cudaError_t crm__memset_async(void *p, size_t pitch, int value, size_t width,
                                     size_t height, cudaStream_t stream)
{
    crm__emu_rdlock();
    cudaError_t err = crm__stream_check(stream, NULL);
    crm__emu_unlock();
    if (err != cudaSuccess)
        return err;
    return crm__memset(p, pitch, value, width, height);
}

CRM_EXPORT cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
    CRM__EMU_STICKY();
    return crm__emu_ret(crm__memset(devPtr, count, value, count, 1));
}

CRM_EXPORT cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count,
                                       cudaStream_t stream)
{
    CRM__EMU_STICKY();
    return crm__emu_ret(crm__memset_async(devPtr, count, value, count, 1, stream));
}

CRM_EXPORT cudaError_t cudaMemset2D(void *devPtr, size_t pitch, int value, size_t width,
                                    size_t height)
{
    CRM__EMU_STICKY();
    return crm__emu_ret(crm__memset(devPtr, pitch, value, width, height));
}

CRM_EXPORT cudaError_t cudaMemset2DAsync(void *devPtr, size_t pitch, int value, size_t width,
                                         size_t height, cudaStream_t stream)
{
    CRM__EMU_STICKY();
    return crm__emu_ret(crm__memset_async(devPtr, pitch, value, width, height, stream));
}
