/* crm_blas_legacy.c -- the legacy cuBLAS API's helpers (cublasInit, cublasShutdown,
 * cublasGetError, cublasGetVersion, cublasAlloc, cublasFree, cublasSetKernelStream)
 * and the one v2 handle every legacy call runs on; the BLAS calls themselves are
 * generated wrappers over the v2 calls (protocol/gen_legacy.py). As in NVIDIA's
 * library, the calls need cublasInit first and return no status: a failure is kept
 * until cublasGetError reads it. */
#include <pthread.h>
#include <stdatomic.h>
#include "interpose/crm_blas_legacy.h"
#include "interpose/crm_export.h"

static pthread_mutex_t crm__lock = PTHREAD_MUTEX_INITIALIZER; /* init and shutdown */
static _Atomic(cublasHandle_t) crm__handle;
static atomic_int crm__error = CUBLAS_STATUS_SUCCESS;

cublasHandle_t crm_legacy_handle(void)
{
    return atomic_load(&crm__handle);
}

void crm_legacy_status(cublasStatus_t st)
{
    if (st != CUBLAS_STATUS_SUCCESS)
        atomic_store(&crm__error, (int)st);
}

CRM_EXPORT cublasStatus_t cublasInit(void)
{
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
    pthread_mutex_lock(&crm__lock);
    if (atomic_load(&crm__handle) == NULL) {
        cublasHandle_t h = NULL;
        st = cublasCreate_v2(&h);
        if (st == CUBLAS_STATUS_SUCCESS)
            atomic_store(&crm__handle, h);
    }
    pthread_mutex_unlock(&crm__lock);
    return st;
}

CRM_EXPORT cublasStatus_t cublasShutdown(void)
{
    pthread_mutex_lock(&crm__lock);
    cublasHandle_t h = atomic_exchange(&crm__handle, NULL);
    pthread_mutex_unlock(&crm__lock);
    return h != NULL ? cublasDestroy_v2(h) : CUBLAS_STATUS_NOT_INITIALIZED;
}

CRM_EXPORT cublasStatus_t cublasGetError(void)
{
    return (cublasStatus_t)atomic_exchange(&crm__error, CUBLAS_STATUS_SUCCESS);
}

CRM_EXPORT cublasStatus_t cublasGetVersion(int *version)
{
    cublasHandle_t h = crm_legacy_handle();
    return h != NULL ? cublasGetVersion_v2(h, version) : CUBLAS_STATUS_NOT_INITIALIZED;
}

CRM_EXPORT cublasStatus_t cublasAlloc(int n, int elemSize, void **devicePtr)
{
    if (crm_legacy_handle() == NULL)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (n <= 0 || elemSize <= 0 || devicePtr == NULL)
        return CUBLAS_STATUS_INVALID_VALUE;
    return cudaMalloc(devicePtr, (size_t)n * (size_t)elemSize) == cudaSuccess ? CUBLAS_STATUS_SUCCESS
                                                                             : CUBLAS_STATUS_ALLOC_FAILED;
}

CRM_EXPORT cublasStatus_t cublasFree(void *devicePtr)
{
    if (crm_legacy_handle() == NULL)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    return cudaFree(devicePtr) == cudaSuccess ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INTERNAL_ERROR;
}

CRM_EXPORT cublasStatus_t cublasSetKernelStream(cudaStream_t stream)
{
    cublasHandle_t h = crm_legacy_handle();
    return h != NULL ? cublasSetStream_v2(h, stream) : CUBLAS_STATUS_NOT_INITIALIZED;
}
