/* crm_blas_settings.c -- the shim's cuBLAS settings beyond crm_blas.c's: the atomics
 * mode and the SM count target of a handle (kept by the client, which answers the
 * Get calls, and sent to the server's handle without waiting), the CUDA runtime
 * version cuBLAS was built for, and cublasXerbla, the reference BLAS's report of a
 * bad argument. */
#include <stdio.h>
#include <cuda_runtime_api.h>
#include "crm_client_gen.h"
#include "interpose/crm_blas.h"
#include "interpose/crm_export.h"

static cublasStatus_t crm__set_atomics(crm_blas_state *st, const void *arg)
{
    cublasAtomicsMode_t mode = *(const cublasAtomicsMode_t *)arg;
    if (mode != CUBLAS_ATOMICS_NOT_ALLOWED && mode != CUBLAS_ATOMICS_ALLOWED)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (mode == st->atomics)
        return CUBLAS_STATUS_SUCCESS;
    crm_call call = {.api = CRM_API_cublasSetAtomicsMode};
    call.crm_call_u.cublasSetAtomicsMode.handle = st->id;
    call.crm_call_u.cublasSetAtomicsMode.mode = (int)mode;
    cublasStatus_t rc = crm_blas_async(&call);
    if (rc == CUBLAS_STATUS_SUCCESS)
        st->atomics = mode;
    return rc;
}

CRM_EXPORT cublasStatus_t cublasSetAtomicsMode(cublasHandle_t handle, cublasAtomicsMode_t mode)
{
    return crm_blas_with(handle, crm__set_atomics, &mode);
}

CRM_EXPORT cublasStatus_t cublasGetAtomicsMode(cublasHandle_t handle, cublasAtomicsMode_t *mode)
{
    crm_blas_state st;
    cublasStatus_t rc = crm_blas_get(handle, &st);
    if (rc == CUBLAS_STATUS_SUCCESS && mode == NULL)
        rc = CUBLAS_STATUS_INVALID_VALUE;
    if (rc == CUBLAS_STATUS_SUCCESS)
        *mode = st.atomics;
    return rc;
}

/* A target above the device's SM count is the server's to refuse (at the next
 * synchronising call); a negative one is refused here. */
static cublasStatus_t crm__set_sms(crm_blas_state *st, const void *arg)
{
    int target = *(const int *)arg;
    if (target < 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (target == st->sm_target)
        return CUBLAS_STATUS_SUCCESS;
    crm_call call = {.api = CRM_API_cublasSetSmCountTarget};
    call.crm_call_u.cublasSetSmCountTarget.handle = st->id;
    call.crm_call_u.cublasSetSmCountTarget.smCountTarget = target;
    cublasStatus_t rc = crm_blas_async(&call);
    if (rc == CUBLAS_STATUS_SUCCESS)
        st->sm_target = target;
    return rc;
}

CRM_EXPORT cublasStatus_t cublasSetSmCountTarget(cublasHandle_t handle, int smCountTarget)
{
    return crm_blas_with(handle, crm__set_sms, &smCountTarget);
}

CRM_EXPORT cublasStatus_t cublasGetSmCountTarget(cublasHandle_t handle, int *smCountTarget)
{
    crm_blas_state st;
    cublasStatus_t rc = crm_blas_get(handle, &st);
    if (rc == CUBLAS_STATUS_SUCCESS && smCountTarget == NULL)
        rc = CUBLAS_STATUS_INVALID_VALUE;
    if (rc == CUBLAS_STATUS_SUCCESS)
        *smCountTarget = st.sm_target;
    return rc;
}

/* The runtime version the shim (standing in for cuBLAS) was built against. */
CRM_EXPORT size_t cublasGetCudartVersion(void)
{
    return CUDART_VERSION;
}

CRM_EXPORT void cublasXerbla(const char *srName, int info)
{
    fprintf(stderr, " ** On entry to %s parameter number %d had an illegal value\n", srName != NULL ? srName : "?",
            info);
}
