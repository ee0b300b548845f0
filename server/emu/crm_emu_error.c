/* crm_emu_error.c -- per-thread last error and the error-name functions of the emulated device. */
#include "server/emu/crm_emu.h"

#include "common/crm_errors.h"

/* Sticky until read by cudaGetLastError; each host thread has its own. */
static _Thread_local cudaError_t crm__last_error = cudaSuccess;

cudaError_t crm__emu_ret(cudaError_t err)
{
    if (err != cudaSuccess)
        crm__last_error = err;
    return err;
}

CRM_EXPORT cudaError_t cudaGetLastError(void)
{
    cudaError_t err = crm__last_error;
    crm__last_error = cudaSuccess;
    return err;
}

CRM_EXPORT cudaError_t cudaPeekAtLastError(void)
{
    return crm__last_error;
}

CRM_EXPORT const char *cudaGetErrorName(cudaError_t error)
{
    return crm_error_name((int)error);
}

CRM_EXPORT const char *cudaGetErrorString(cudaError_t error)
{
    return crm_error_string((int)error);
}
