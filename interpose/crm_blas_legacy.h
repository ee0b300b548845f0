/* crm_blas_legacy.h -- what the legacy cuBLAS API's wrappers (generated into
 * crm_blas_legacy_gen.c by protocol/gen_legacy.py) share with its helpers
 * (crm_blas_legacy.c): the process-wide v2 handle the legacy calls run on, the
 * error they keep for cublasGetError, and the characters they take for enums. It
 * includes the legacy cublas.h, so it stays out of the v2 files. */
#ifndef CRM_BLAS_LEGACY_H
#define CRM_BLAS_LEGACY_H

#include <cublas.h>

/* The handle cublasInit made (host pointer mode), or NULL before it and after
 * cublasShutdown: the v2 call then answers CUBLAS_STATUS_NOT_INITIALIZED. */
cublasHandle_t crm_legacy_handle(void);
/* Keeps st for cublasGetError when it is a failure. */
void crm_legacy_status(cublasStatus_t st);

/* The characters of the legacy calls, either case; any other gives a value no v2
 * call accepts (CUBLAS_STATUS_INVALID_VALUE). */
static inline cublasOperation_t crm_legacy_op(char c)
{
    return c == 'N' || c == 'n' ? CUBLAS_OP_N : c == 'T' || c == 't' ? CUBLAS_OP_T
                                            : c == 'C' || c == 'c' ? CUBLAS_OP_C : (cublasOperation_t)-1;
}

static inline cublasFillMode_t crm_legacy_fill(char c)
{
    return c == 'U' || c == 'u' ? CUBLAS_FILL_MODE_UPPER
                                : c == 'L' || c == 'l' ? CUBLAS_FILL_MODE_LOWER : (cublasFillMode_t)-1;
}

static inline cublasSideMode_t crm_legacy_side(char c)
{
    return c == 'L' || c == 'l' ? CUBLAS_SIDE_LEFT : c == 'R' || c == 'r' ? CUBLAS_SIDE_RIGHT : (cublasSideMode_t)-1;
}

static inline cublasDiagType_t crm_legacy_diag(char c)
{
    return c == 'U' || c == 'u' ? CUBLAS_DIAG_UNIT : c == 'N' || c == 'n' ? CUBLAS_DIAG_NON_UNIT : (cublasDiagType_t)-1;
}

#endif
