/* crm_rt_error.c -- exported error calls, answered locally with no round trip. */
#include <cuda_runtime_api.h>
#include "client/crm_handles.h"
#include "common/crm_errors.h"
#include "interpose/crm_export.h"

CRM_EXPORT cudaError_t cudaGetLastError(void)
{
    return crm_take_error();
}

CRM_EXPORT cudaError_t cudaPeekAtLastError(void)
{
    return crm_peek_error();
}

CRM_EXPORT const char *cudaGetErrorString(cudaError_t error)
{
    return crm_error_string((int)error);
}

CRM_EXPORT const char *cudaGetErrorName(cudaError_t error)
{
    return crm_error_name((int)error);
}
