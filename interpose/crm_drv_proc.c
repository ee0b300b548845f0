/* crm_drv_proc.c -- cuGetProcAddress in both its versions: the entry point of a
 * driver function as a given CUDA version defines it, from the table generated out
 * of cudaTypedefs.h (interpose/crm_drv_tables.h). Every function libcuda.so.1
 * exports has an entry point here; those cudarem does not implement answer
 * CUDA_ERROR_NOT_SUPPORTED and log their name once. The runtime's
 * cudaGetDriverEntryPoint* answer from the same table. */
#include <string.h>
#include "interpose/crm_drv.h"
#include "interpose/crm_drv_tables.h"
#include "interpose/crm_export.h"

#undef cuGetProcAddress /* cuda.h maps it to _v2; the 11.3 form is defined here too */

/* Index of the first row named `name` (rows are sorted by name), or -1. */
static long crm__first_row(const char *name)
{
    size_t lo = 0, hi = crm_drv_nprocs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(crm_drv_procs[mid].name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < crm_drv_nprocs && strcmp(crm_drv_procs[lo].name, name) == 0 ? (long)lo : -1;
}

void *crm_drv_proc(const char *name, int version, cuuint64_t flags, CUdriverProcAddressQueryResult *status)
{
    long i = name != NULL ? crm__first_row(name) : -1;
    *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (i < 0)
        return NULL;
    *status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
    /* Rows of one name go newest first: the first one not newer than asked. */
    for (size_t k = (size_t)i; k < crm_drv_nprocs && strcmp(crm_drv_procs[k].name, name) == 0; k++) {
        const crm_drv_procent *e = &crm_drv_procs[k];
        if (e->version > version)
            continue;
        *status = CU_GET_PROC_ADDRESS_SUCCESS;
        if ((flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && e->fn_ptds != NULL)
            return e->fn_ptds;
        return e->fn;
    }
    return NULL;
}

CRM_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                        CUdriverProcAddressQueryResult *symbolStatus)
{
    CUdriverProcAddressQueryResult status;
    if (symbol == NULL || pfn == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    *pfn = crm_drv_proc(symbol, cudaVersion, flags, &status);
    if (symbolStatus != NULL)
        *symbolStatus = status;
    return *pfn != NULL ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

/* The CUDA 11.3 form, without the status. */
CRM_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    return cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, NULL);
}

/* ---- the runtime's doors to the driver's entry points -------------------------------- */

/* The runtime initialises the driver first, as NVIDIA's does: entry points taken
 * this way work at once, in the primary context of the thread's device. */
static cudaError_t crm__rt_entry(const char *symbol, void **funcPtr, int version, unsigned long long flags,
                                 enum cudaDriverEntryPointQueryResult *status)
{
    CUdriverProcAddressQueryResult st;
    if (symbol == NULL || funcPtr == NULL)
        return crm_set_error(cudaErrorInvalidValue);
    crm_drv_runtime_bind();
    /* cudaEnableDefault / cudaEnableLegacyStream / cudaEnablePerThreadDefaultStream
     * are the driver's flags under other names */
    *funcPtr = crm_drv_proc(symbol, version, flags, &st);
    if (status != NULL)
        *status = (enum cudaDriverEntryPointQueryResult)st;
    return *funcPtr != NULL ? cudaSuccess : crm_set_error(cudaErrorSymbolNotFound);
}

CRM_EXPORT cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr, unsigned int cudaVersion,
                                                        unsigned long long flags,
                                                        enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return crm__rt_entry(symbol, funcPtr, (int)cudaVersion, flags, driverStatus);
}

CRM_EXPORT cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags,
                                               enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return crm__rt_entry(symbol, funcPtr, CUDART_VERSION, flags, driverStatus);
}

/* Per-thread default stream builds: the default search gives the _ptsz/_ptds forms. */
static unsigned long long crm__ptsz_flags(unsigned long long flags)
{
    return flags == cudaEnableDefault ? cudaEnablePerThreadDefaultStream : flags;
}

CRM_EXPORT cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char *symbol, void **funcPtr,
                                                             unsigned int cudaVersion, unsigned long long flags,
                                                             enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return crm__rt_entry(symbol, funcPtr, (int)cudaVersion, crm__ptsz_flags(flags), driverStatus);
}

CRM_EXPORT cudaError_t cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr, unsigned long long flags,
                                                    enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return crm__rt_entry(symbol, funcPtr, CUDART_VERSION, crm__ptsz_flags(flags), driverStatus);
}
