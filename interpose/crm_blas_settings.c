/* crm_blas_settings.c -- the shim's cuBLAS handle settings that travel as one int:
 * the math mode, the atomics mode and the SM count target (kept by the client,
 * which answers the Get calls, and sent to the server's handle without waiting
 * when they change); and two calls answered here: the CUDA runtime version cuBLAS
 * was built for, and cublasXerbla, the reference BLAS's report of a bad argument. */
#include <stddef.h>
#include <stdio.h>
#include <cuda_runtime_api.h>
#include "crm_client_gen.h"
#include "interpose/crm_blas.h"
#include "interpose/crm_export.h"

/* One setting's change: the call (handle and one int: the arms of SetMathMode,
 * SetAtomicsMode and SetSmCountTarget share that layout) and where it is kept. */
typedef struct crm__setting {
    int valid;                   /* 0: INVALID_VALUE (after an unknown handle, as cuBLAS) */
    int api;
    int value;
    size_t kept;                 /* offset of the int in crm_blas_state */
} crm__setting;

static cublasStatus_t crm__send(crm_blas_state *st, const void *arg)
{
    const crm__setting *set = arg;
    int *kept = (int *)((char *)st + set->kept);
    if (!set->valid)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (set->value == *kept)
        return CUBLAS_STATUS_SUCCESS;
    crm_call call = {.api = set->api};
    call.crm_call_u.cublasSetMathMode.handle = st->id;
    call.crm_call_u.cublasSetMathMode.mode = set->value;
    cublasStatus_t rc = crm_blas_async(&call);
    if (rc == CUBLAS_STATUS_SUCCESS)
        *kept = set->value;
    return rc;
}

static cublasStatus_t crm__set(cublasHandle_t handle, int valid, int api, int value, size_t kept)
{
    crm__setting set = {valid, api, value, kept};
    return crm_blas_with(handle, crm__send, &set);
}

/* The kept int at offset `kept` of handle's state, into *out. */
static cublasStatus_t crm__get(cublasHandle_t handle, int *out, size_t kept)
{
    crm_blas_state st;
    cublasStatus_t rc = crm_blas_get(handle, &st);
    if (rc == CUBLAS_STATUS_SUCCESS && out == NULL)
        rc = CUBLAS_STATUS_INVALID_VALUE;
    if (rc == CUBLAS_STATUS_SUCCESS)
        *out = *(const int *)((const char *)&st + kept);
    return rc;
}

CRM_EXPORT cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode)
{
    return crm__set(handle, crm_blas_math_ok((int)mode), CRM_API_cublasSetMathMode, (int)mode,
                    offsetof(crm_blas_state, math));
}

CRM_EXPORT cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t *mode)
{
    int v = 0;
    cublasStatus_t rc = crm__get(handle, mode != NULL ? &v : NULL, offsetof(crm_blas_state, math));
    if (rc == CUBLAS_STATUS_SUCCESS)
        *mode = (cublasMath_t)v;
    return rc;
}

CRM_EXPORT cublasStatus_t cublasSetAtomicsMode(cublasHandle_t handle, cublasAtomicsMode_t mode)
{
    return crm__set(handle, mode == CUBLAS_ATOMICS_NOT_ALLOWED || mode == CUBLAS_ATOMICS_ALLOWED,
                    CRM_API_cublasSetAtomicsMode, (int)mode, offsetof(crm_blas_state, atomics));
}

CRM_EXPORT cublasStatus_t cublasGetAtomicsMode(cublasHandle_t handle, cublasAtomicsMode_t *mode)
{
    int v = 0;
    cublasStatus_t rc = crm__get(handle, mode != NULL ? &v : NULL, offsetof(crm_blas_state, atomics));
    if (rc == CUBLAS_STATUS_SUCCESS)
        *mode = (cublasAtomicsMode_t)v;
    return rc;
}

/* A target above the device's SM count is the server's to refuse (at the next
 * synchronising call); a negative one is refused here. */
CRM_EXPORT cublasStatus_t cublasSetSmCountTarget(cublasHandle_t handle, int smCountTarget)
{
    return crm__set(handle, smCountTarget >= 0, CRM_API_cublasSetSmCountTarget, smCountTarget,
                    offsetof(crm_blas_state, sm_target));
}

CRM_EXPORT cublasStatus_t cublasGetSmCountTarget(cublasHandle_t handle, int *smCountTarget)
{
    return crm__get(handle, smCountTarget, offsetof(crm_blas_state, sm_target));
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
