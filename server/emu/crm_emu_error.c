/* crm_emu_error.c -- per-thread last error, each device's sticky error (a kernel
 * fault), and the error-name functions of the emulated device. */
#include "server/emu/crm_emu.h"

#include <stdatomic.h>

#include "common/crm_errors.h"

/* Sticky until read by cudaGetLastError; each host thread has its own. */
static _Thread_local cudaError_t crm__last_error = cudaSuccess;

cudaError_t crm__emu_ret(cudaError_t err)
{
    if (err != cudaSuccess)
        crm__last_error = err;
    return err;
}

static _Atomic int crm__sticky[CRM_EMU_MAX_DEVICES];

/* The errors after which a GPU's context cannot be used again. */
static int crm__is_sticky(cudaError_t err)
{
    switch (err) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure: return 1;
    default: return 0;
    }
}

void crm__emu_poison(cudaError_t err)
{
    int none = 0;
    if (crm__is_sticky(err))
        atomic_compare_exchange_strong(&crm__sticky[crm__emu_current()], &none, (int)err);
}

cudaError_t crm__emu_sticky(void)
{
    return (cudaError_t)atomic_load(&crm__sticky[crm__emu_current()]);
}

void crm__emu_unpoison(void)
{
    atomic_store(&crm__sticky[crm__emu_current()], 0);
}

/* A sticky error stays: the next call reports it again. */
CRM_EXPORT cudaError_t cudaGetLastError(void)
{
    cudaError_t err = crm__last_error;
    crm__last_error = cudaSuccess;
    return err != cudaSuccess ? err : crm__emu_sticky();
}

CRM_EXPORT cudaError_t cudaPeekAtLastError(void)
{
    return crm__last_error != cudaSuccess ? crm__last_error : crm__emu_sticky();
}

CRM_EXPORT const char *cudaGetErrorName(cudaError_t error)
{
    return crm_error_name((int)error);
}

CRM_EXPORT const char *cudaGetErrorString(cudaError_t error)
{
    return crm_error_string((int)error);
}
