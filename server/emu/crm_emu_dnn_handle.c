/* crm_emu_dnn_handle.c -- cuDNN handles, library version and error strings of the
 * emulated device, and the argument checks its compute routines share. */
#include "server/emu/crm_emu_dnn.h"

#include <stdio.h>
#include <stdlib.h>

static crm__registry crm__dnn_handles; /* live struct cudnnContext *, under the device lock */

int crm__dnn_handle_ok(cudnnHandle_t h)
{
    crm__emu_rdlock();
    int ok = h != NULL && crm__registry_has(&crm__dnn_handles, h);
    crm__emu_unlock();
    return ok;
}

double crm__dnn_scalar(const void *p, int dtype)
{
    return crm_dnn_scalar_is_double(dtype) ? *(const double *)p : (double)*(const float *)p;
}

cudnnStatus_t crm__dnn_bind(crm__dview *v, const crm_dnn_tdesc *d, const void *p)
{
    uint64_t bytes;
    if (d->nbdims == 0 || p == NULL)
        return CUDNN_STATUS_BAD_PARAM;
    if (d->dtype != CUDNN_DATA_FLOAT && d->dtype != CUDNN_DATA_DOUBLE && d->dtype != CUDNN_DATA_HALF &&
        d->dtype != CUDNN_DATA_BFLOAT16)
        return CUDNN_STATUS_NOT_SUPPORTED;
    if (crm_dnn_tensor_bytes(d, &bytes) != 0 || bytes > SIZE_MAX || !crm__mem_range(p, (size_t)bytes, NULL))
        return CUDNN_STATUS_EXECUTION_FAILED;
    v->d = d;
    v->p = (void *)p;
    return CUDNN_STATUS_SUCCESS;
}

CRM_EXPORT cudnnStatus_t cudnnCreate(cudnnHandle_t *handle)
{
    if (handle == NULL)
        return CUDNN_STATUS_BAD_PARAM;
    struct cudnnContext *h = calloc(1, sizeof *h);
    if (h == NULL)
        return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    crm__emu_wrlock();
    int rc = crm__registry_add(&crm__dnn_handles, h);
    crm__emu_unlock();
    if (rc != 0) {
        free(h);
        return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    }
    *handle = h;
    return CUDNN_STATUS_SUCCESS;
}

CRM_EXPORT cudnnStatus_t cudnnDestroy(cudnnHandle_t handle)
{
    crm__emu_wrlock();
    int rc = handle != NULL ? crm__registry_remove(&crm__dnn_handles, handle) : -1;
    crm__emu_unlock();
    if (rc != 0)
        return CUDNN_STATUS_BAD_PARAM;
    free(handle);
    return CUDNN_STATUS_SUCCESS;
}

/* A stream of another device or a destroyed one is refused (CUDNN_STATUS_BAD_PARAM). */
CRM_EXPORT cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t streamId)
{
    if (!crm__dnn_handle_ok(handle))
        return CUDNN_STATUS_BAD_PARAM;
    crm__emu_rdlock();
    cudaError_t err = crm__stream_check(streamId, NULL);
    crm__emu_unlock();
    if (err != cudaSuccess)
        return CUDNN_STATUS_BAD_PARAM;
    handle->stream = streamId;
    return CUDNN_STATUS_SUCCESS;
}

CRM_EXPORT cudnnStatus_t cudnnGetStream(cudnnHandle_t handle, cudaStream_t *streamId)
{
    if (!crm__dnn_handle_ok(handle) || streamId == NULL)
        return CUDNN_STATUS_BAD_PARAM;
    *streamId = handle->stream;
    return CUDNN_STATUS_SUCCESS;
}

CRM_EXPORT size_t cudnnGetVersion(void)
{
    return CUDNN_VERSION;
}

CRM_EXPORT size_t cudnnGetMaxDeviceVersion(void)
{
    return CUDNN_MAX_DEVICE_VERSION;
}

CRM_EXPORT size_t cudnnGetCudartVersion(void)
{
    return CUDART_VERSION;
}

CRM_EXPORT const char *cudnnGetErrorString(cudnnStatus_t status)
{
    return crm_dnn_status_name(status);
}

CRM_EXPORT void cudnnGetLastErrorString(char *message, size_t max_size)
{
    if (message != NULL && max_size > 0)
        message[0] = '\0';
}

CRM_EXPORT cudnnStatus_t cudnnGetProperty(libraryPropertyType type, int *value)
{
    if (value == NULL)
        return CUDNN_STATUS_BAD_PARAM;
    switch (type) {
    case MAJOR_VERSION: *value = CUDNN_MAJOR; return CUDNN_STATUS_SUCCESS;
    case MINOR_VERSION: *value = CUDNN_MINOR; return CUDNN_STATUS_SUCCESS;
    case PATCH_LEVEL: *value = CUDNN_PATCHLEVEL; return CUDNN_STATUS_SUCCESS;
    default: return CUDNN_STATUS_BAD_PARAM;
    }
}
