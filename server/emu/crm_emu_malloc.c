/* crm_emu_malloc.c -- device allocation API: cudaMalloc, cudaMallocPitch, cudaFree,
 * cudaMemGetInfo and cudaPointerGetAttributes. */
#include "server/emu/crm_emu.h"

#include <stdint.h>
#include <string.h>


#define CRM__PITCH_ALIGN 512 /* = textureAlignment in the device properties */

/* Size 0 succeeds with *devPtr = NULL; more than the free memory of the current
 * device is cudaErrorMemoryAllocation. */
CRM_EXPORT cudaError_t cudaMalloc(void **devPtr, size_t size)
{
    CRM__EMU_STICKY();
    if (devPtr == NULL)
        return crm__emu_ret(cudaErrorInvalidValue);
    if (size == 0) {
        *devPtr = NULL;
        return cudaSuccess;
    }
    crm__emu_wrlock();
    cudaError_t err = crm__mem_alloc(crm__emu_current(), size, devPtr);
    crm__emu_unlock();
    return crm__emu_ret(err);
}

/* The pitch is width rounded up to a multiple of 512 bytes. A zero width or height
 * succeeds with *devPtr = NULL. */
CRM_EXPORT cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height)
{
    CRM__EMU_STICKY();
    if (devPtr == NULL || pitch == NULL)
        return crm__emu_ret(cudaErrorInvalidValue);
    if (width > SIZE_MAX - CRM__PITCH_ALIGN)
        return crm__emu_ret(cudaErrorMemoryAllocation);
    size_t p = (width + CRM__PITCH_ALIGN - 1) / CRM__PITCH_ALIGN * CRM__PITCH_ALIGN;
    if (height != 0 && p > SIZE_MAX / height)
        return crm__emu_ret(cudaErrorMemoryAllocation);
    cudaError_t err = cudaMalloc(devPtr, p * height);
    if (err == cudaSuccess)
        *pitch = p;
    return err;
}

/* NULL succeeds; anything but the start of a live allocation (including a second
 * free) is cudaErrorInvalidValue. */
CRM_EXPORT cudaError_t cudaFree(void *devPtr)
{
    CRM__EMU_STICKY();
    if (devPtr == NULL)
        return cudaSuccess;
    crm__emu_wrlock();
    cudaError_t err = crm__mem_free(devPtr);
    crm__emu_unlock();
    return crm__emu_ret(err);
}

CRM_EXPORT cudaError_t cudaMemGetInfo(size_t *free, size_t *total)
{
    CRM__EMU_STICKY();
    if (free == NULL || total == NULL)
        return crm__emu_ret(cudaErrorInvalidValue);
    size_t size = crm__emu_mem_size();
    crm__emu_rdlock();
    *free = size - crm__mem_used(crm__emu_current());
    crm__emu_unlock();
    *total = size;
    return cudaSuccess;
}

/* Fills *a for ptr; the table lock is held shared. */
static void crm__pointer_attributes(struct cudaPointerAttributes *a, const void *ptr)
{
    int dev;
    memset(a, 0, sizeof *a);
    if (crm__mem_range(ptr, 1, &dev)) {
        a->type = cudaMemoryTypeDevice;
        a->device = dev;
        a->devicePointer = (void *)ptr;
    } else if (crm__host_find(ptr, &dev)) {
        a->type = cudaMemoryTypeHost;
        a->device = dev;
        a->devicePointer = (void *)ptr;
        a->hostPointer = (void *)ptr;
    } else { /* as CUDA >= 11: success, "unregistered", no device alias */
        a->type = cudaMemoryTypeUnregistered;
        a->device = cudaInvalidDeviceId;
        a->hostPointer = (void *)ptr;
    }
}

/* Unknown pointers (NULL, freed device memory, plain host memory) succeed with type
 * cudaMemoryTypeUnregistered and device cudaInvalidDeviceId, as CUDA >= 11 does. */
CRM_EXPORT cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attributes,
                                                const void *ptr)
{
    if (attributes == NULL)
        return crm__emu_ret(cudaErrorInvalidValue);
    crm__emu_rdlock();
    crm__pointer_attributes(attributes, ptr);
    crm__emu_unlock();
    return cudaSuccess;
}
