/* crm_emu_blas_l1.c -- emulated cuBLAS level 1 (axpy, scal, copy, dot, nrm2, asum,
 * amax in single and double precision) on OpenBLAS.
 *
 * Increments follow the reference BLAS: a negative increment walks the vector from
 * its highest address down; dot, axpy and copy accept any increment, while scal,
 * nrm2, asum and amax do nothing for incx <= 0 (the results are then 0). */
#include "server/emu/crm_emu_blas.h"

#include <cblas.h>

/* Room for any scalar the calls read or return. */
typedef union crm__scalar {
    float f;
    double d;
    int i;
    unsigned char raw[16];
} crm__scalar;

/* Checks vector v (n elements, inc apart) against device memory. */
static cublasStatus_t crm__vec(const void *v, int n, int inc, size_t elem)
{
    uint64_t bytes;
    if (crm_blas_vec_bytes(n, inc, elem, &bytes) != 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    return crm__blas_dev(v, bytes);
}

static cublasStatus_t crm__axpy(cublasHandle_t h, int n, const void *alpha, const void *x, int incx, void *y,
                                int incy, size_t elem)
{
    crm__scalar a;
    cublasStatus_t st = crm__blas_begin(h);
    if (st != CUBLAS_STATUS_SUCCESS || n <= 0)
        return st == CUBLAS_STATUS_SUCCESS ? crm__blas_end(st) : st;
    if ((st = crm__blas_get_scalar(h, alpha, elem, &a)) == CUBLAS_STATUS_SUCCESS &&
        (st = crm__vec(x, n, incx, elem)) == CUBLAS_STATUS_SUCCESS &&
        (st = crm__vec(y, n, incy, elem)) == CUBLAS_STATUS_SUCCESS) {
        if (elem == sizeof(float))
            cblas_saxpy(n, a.f, x, incx, y, incy);
        else
            cblas_daxpy(n, a.d, x, incx, y, incy);
    }
    return crm__blas_end(st);
}

CRM_EXPORT cublasStatus_t cublasSaxpy_v2(cublasHandle_t handle, int n, const float *alpha, const float *x, int incx,
                                         float *y, int incy)
{
    return crm__axpy(handle, n, alpha, x, incx, y, incy, sizeof(float));
}

CRM_EXPORT cublasStatus_t cublasDaxpy_v2(cublasHandle_t handle, int n, const double *alpha, const double *x, int incx,
                                         double *y, int incy)
{
    return crm__axpy(handle, n, alpha, x, incx, y, incy, sizeof(double));
}

static cublasStatus_t crm__scal(cublasHandle_t h, int n, const void *alpha, void *x, int incx, size_t elem)
{
    crm__scalar a;
    cublasStatus_t st = crm__blas_begin(h);
    if (st != CUBLAS_STATUS_SUCCESS || n <= 0 || incx <= 0)
        return st == CUBLAS_STATUS_SUCCESS ? crm__blas_end(st) : st;
    if ((st = crm__blas_get_scalar(h, alpha, elem, &a)) == CUBLAS_STATUS_SUCCESS &&
        (st = crm__vec(x, n, incx, elem)) == CUBLAS_STATUS_SUCCESS) {
        if (elem == sizeof(float))
            cblas_sscal(n, a.f, x, incx);
        else
            cblas_dscal(n, a.d, x, incx);
    }
    return crm__blas_end(st);
}

CRM_EXPORT cublasStatus_t cublasSscal_v2(cublasHandle_t handle, int n, const float *alpha, float *x, int incx)
{
    return crm__scal(handle, n, alpha, x, incx, sizeof(float));
}

CRM_EXPORT cublasStatus_t cublasDscal_v2(cublasHandle_t handle, int n, const double *alpha, double *x, int incx)
{
    return crm__scal(handle, n, alpha, x, incx, sizeof(double));
}

static cublasStatus_t crm__copy(cublasHandle_t h, int n, const void *x, int incx, void *y, int incy, size_t elem)
{
    cublasStatus_t st = crm__blas_begin(h);
    if (st != CUBLAS_STATUS_SUCCESS || n <= 0)
        return st == CUBLAS_STATUS_SUCCESS ? crm__blas_end(st) : st;
    if ((st = crm__vec(x, n, incx, elem)) == CUBLAS_STATUS_SUCCESS &&
        (st = crm__vec(y, n, incy, elem)) == CUBLAS_STATUS_SUCCESS) {
        if (elem == sizeof(float))
            cblas_scopy(n, x, incx, y, incy);
        else
            cblas_dcopy(n, x, incx, y, incy);
    }
    return crm__blas_end(st);
}

CRM_EXPORT cublasStatus_t cublasScopy_v2(cublasHandle_t handle, int n, const float *x, int incx, float *y, int incy)
{
    return crm__copy(handle, n, x, incx, y, incy, sizeof(float));
}

CRM_EXPORT cublasStatus_t cublasDcopy_v2(cublasHandle_t handle, int n, const double *x, int incx, double *y, int incy)
{
    return crm__copy(handle, n, x, incx, y, incy, sizeof(double));
}

static cublasStatus_t crm__dot(cublasHandle_t h, int n, const void *x, int incx, const void *y, int incy, void *result,
                               size_t elem)
{
    crm__scalar r = {.raw = {0}};
    cublasStatus_t st = crm__blas_begin(h);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    if (n > 0 && (st = crm__vec(x, n, incx, elem)) == CUBLAS_STATUS_SUCCESS &&
        (st = crm__vec(y, n, incy, elem)) == CUBLAS_STATUS_SUCCESS) {
        if (elem == sizeof(float))
            r.f = cblas_sdot(n, x, incx, y, incy);
        else
            r.d = cblas_ddot(n, x, incx, y, incy);
    }
    if (st == CUBLAS_STATUS_SUCCESS)
        st = crm__blas_put_result(h, result, &r, elem);
    return crm__blas_end(st);
}

CRM_EXPORT cublasStatus_t cublasSdot_v2(cublasHandle_t handle, int n, const float *x, int incx, const float *y,
                                        int incy, float *result)
{
    return crm__dot(handle, n, x, incx, y, incy, result, sizeof(float));
}

CRM_EXPORT cublasStatus_t cublasDdot_v2(cublasHandle_t handle, int n, const double *x, int incx, const double *y,
                                        int incy, double *result)
{
    return crm__dot(handle, n, x, incx, y, incy, result, sizeof(double));
}

enum crm__reduce { CRM__NRM2, CRM__ASUM, CRM__AMAX };

/* nrm2, asum and amax: 0 for n <= 0 or incx <= 0; amax is 1-based. */
static cublasStatus_t crm__reduce(cublasHandle_t h, enum crm__reduce op, int n, const void *x, int incx, void *result,
                                  size_t elem)
{
    crm__scalar r = {.raw = {0}};
    int sp = elem == sizeof(float);
    cublasStatus_t st = crm__blas_begin(h);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    if (n > 0 && incx > 0 && (st = crm__vec(x, n, incx, elem)) == CUBLAS_STATUS_SUCCESS) {
        switch (op) {
        case CRM__NRM2:
            if (sp)
                r.f = cblas_snrm2(n, x, incx);
            else
                r.d = cblas_dnrm2(n, x, incx);
            break;
        case CRM__ASUM:
            if (sp)
                r.f = cblas_sasum(n, x, incx);
            else
                r.d = cblas_dasum(n, x, incx);
            break;
        case CRM__AMAX:
            r.i = 1 + (int)(sp ? cblas_isamax(n, x, incx) : cblas_idamax(n, x, incx));
            break;
        }
    }
    if (st == CUBLAS_STATUS_SUCCESS)
        st = crm__blas_put_result(h, result, &r, op == CRM__AMAX ? sizeof(int) : elem);
    return crm__blas_end(st);
}

CRM_EXPORT cublasStatus_t cublasSnrm2_v2(cublasHandle_t handle, int n, const float *x, int incx, float *result)
{
    return crm__reduce(handle, CRM__NRM2, n, x, incx, result, sizeof(float));
}

CRM_EXPORT cublasStatus_t cublasDnrm2_v2(cublasHandle_t handle, int n, const double *x, int incx, double *result)
{
    return crm__reduce(handle, CRM__NRM2, n, x, incx, result, sizeof(double));
}

CRM_EXPORT cublasStatus_t cublasSasum_v2(cublasHandle_t handle, int n, const float *x, int incx, float *result)
{
    return crm__reduce(handle, CRM__ASUM, n, x, incx, result, sizeof(float));
}

CRM_EXPORT cublasStatus_t cublasDasum_v2(cublasHandle_t handle, int n, const double *x, int incx, double *result)
{
    return crm__reduce(handle, CRM__ASUM, n, x, incx, result, sizeof(double));
}

CRM_EXPORT cublasStatus_t cublasIsamax_v2(cublasHandle_t handle, int n, const float *x, int incx, int *result)
{
    return crm__reduce(handle, CRM__AMAX, n, x, incx, result, sizeof(float));
}

CRM_EXPORT cublasStatus_t cublasIdamax_v2(cublasHandle_t handle, int n, const double *x, int incx, int *result)
{
    return crm__reduce(handle, CRM__AMAX, n, x, incx, result, sizeof(double));
}
