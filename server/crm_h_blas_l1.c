/* crm_h_blas_l1.c -- handlers of the cuBLAS level 1 calls: footprint checks of the
 * vectors (any increment sign for axpy, copy and dot), then the backend.
 *
 * nrm2, asum, amax and scal touch nothing when incx <= 0 (reference BLAS): the
 * backend is then called with n = 0 (results become 0) or, for scal, not at all,
 * so no backend ever sees a vector the server did not check. */
#include "server/crm_h_blas.h"

/* Checks vector x of n elements inc apart. */
static cublasStatus_t crm__vec(crm_session *s, uint64_t x, int n, int inc, size_t elem)
{
    uint64_t bytes;
    if (crm_blas_vec_bytes(n, inc, elem, &bytes) != 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    return crm_hblas_region(s, x, bytes);
}

#define CRM__P(a) ((void *)(uintptr_t)(a))

static cublasStatus_t crm__axpy(crm_session *s, uint64_t handle, int pmode, int n, uint64_t alpha, uint64_t x,
                                int incx, uint64_t y, int incy, size_t elem)
{
    cublasHandle_t h;
    crm_hblas_scalar a;
    int have = elem == 4 ? crm_rt.cublasSaxpy_v2 != NULL : crm_rt.cublasDaxpy_v2 != NULL;
    cublasStatus_t st = crm_hblas_begin(s, handle, pmode, have, &h);
    if (st != CUBLAS_STATUS_SUCCESS || n <= 0)
        return st;
    if ((st = crm_hblas_scalar_in(s, pmode, alpha, elem, &a)) != CUBLAS_STATUS_SUCCESS ||
        (st = crm__vec(s, x, n, incx, elem)) != CUBLAS_STATUS_SUCCESS ||
        (st = crm__vec(s, y, n, incy, elem)) != CUBLAS_STATUS_SUCCESS)
        return st;
    if (elem == 4)
        return crm_rt.cublasSaxpy_v2(h, n, crm_hblas_ptr(&a), CRM__P(x), incx, CRM__P(y), incy);
    return crm_rt.cublasDaxpy_v2(h, n, crm_hblas_ptr(&a), CRM__P(x), incx, CRM__P(y), incy);
}

cublasStatus_t crm_srv_cublasSaxpy_v2(crm_session *s, uint64_t handle, int pmode, int n, uint64_t alpha, uint64_t x,
                                      int incx, uint64_t y, int incy)
{
    return crm__axpy(s, handle, pmode, n, alpha, x, incx, y, incy, sizeof(float));
}

cublasStatus_t crm_srv_cublasDaxpy_v2(crm_session *s, uint64_t handle, int pmode, int n, uint64_t alpha, uint64_t x,
                                      int incx, uint64_t y, int incy)
{
    return crm__axpy(s, handle, pmode, n, alpha, x, incx, y, incy, sizeof(double));
}

static cublasStatus_t crm__scal(crm_session *s, uint64_t handle, int pmode, int n, uint64_t alpha, uint64_t x, int incx,
                                size_t elem)
{
    cublasHandle_t h;
    crm_hblas_scalar a;
    int have = elem == 4 ? crm_rt.cublasSscal_v2 != NULL : crm_rt.cublasDscal_v2 != NULL;
    cublasStatus_t st = crm_hblas_begin(s, handle, pmode, have, &h);
    if (st != CUBLAS_STATUS_SUCCESS || n <= 0 || incx <= 0)
        return st;
    if ((st = crm_hblas_scalar_in(s, pmode, alpha, elem, &a)) != CUBLAS_STATUS_SUCCESS ||
        (st = crm__vec(s, x, n, incx, elem)) != CUBLAS_STATUS_SUCCESS)
        return st;
    if (elem == 4)
        return crm_rt.cublasSscal_v2(h, n, crm_hblas_ptr(&a), CRM__P(x), incx);
    return crm_rt.cublasDscal_v2(h, n, crm_hblas_ptr(&a), CRM__P(x), incx);
}

cublasStatus_t crm_srv_cublasSscal_v2(crm_session *s, uint64_t handle, int pmode, int n, uint64_t alpha, uint64_t x,
                                      int incx)
{
    return crm__scal(s, handle, pmode, n, alpha, x, incx, sizeof(float));
}

cublasStatus_t crm_srv_cublasDscal_v2(crm_session *s, uint64_t handle, int pmode, int n, uint64_t alpha, uint64_t x,
                                      int incx)
{
    return crm__scal(s, handle, pmode, n, alpha, x, incx, sizeof(double));
}

static cublasStatus_t crm__copy(crm_session *s, uint64_t handle, int n, uint64_t x, int incx, uint64_t y, int incy,
                                size_t elem)
{
    cublasHandle_t h;
    int have = elem == 4 ? crm_rt.cublasScopy_v2 != NULL : crm_rt.cublasDcopy_v2 != NULL;
    cublasStatus_t st = crm_hblas_begin(s, handle, CRM_HBLAS_NO_MODE, have, &h);
    if (st != CUBLAS_STATUS_SUCCESS || n <= 0)
        return st;
    if ((st = crm__vec(s, x, n, incx, elem)) != CUBLAS_STATUS_SUCCESS ||
        (st = crm__vec(s, y, n, incy, elem)) != CUBLAS_STATUS_SUCCESS)
        return st;
    if (elem == 4)
        return crm_rt.cublasScopy_v2(h, n, CRM__P(x), incx, CRM__P(y), incy);
    return crm_rt.cublasDcopy_v2(h, n, CRM__P(x), incx, CRM__P(y), incy);
}

cublasStatus_t crm_srv_cublasScopy_v2(crm_session *s, uint64_t handle, int n, uint64_t x, int incx, uint64_t y,
                                      int incy)
{
    return crm__copy(s, handle, n, x, incx, y, incy, sizeof(float));
}

cublasStatus_t crm_srv_cublasDcopy_v2(crm_session *s, uint64_t handle, int n, uint64_t x, int incx, uint64_t y,
                                      int incy)
{
    return crm__copy(s, handle, n, x, incx, y, incy, sizeof(double));
}

/* The result of a reduction: a local value in host mode, a checked device address
 * in device mode. */
static cublasStatus_t crm__result(crm_session *s, int pmode, uint64_t result, size_t size, crm_hblas_scalar *r)
{
    cublasStatus_t st = crm_hblas_scalar_in(s, pmode, result, size, r);
    if (r->host)
        r->v.d = 0.0; /* the word carried nothing in host mode */
    return st;
}

static cublasStatus_t crm__dot(crm_session *s, uint64_t handle, int pmode, int n, uint64_t x, int incx, uint64_t y,
                               int incy, uint64_t result, uint64_t *value, size_t elem)
{
    cublasHandle_t h;
    crm_hblas_scalar r;
    int have = elem == 4 ? crm_rt.cublasSdot_v2 != NULL : crm_rt.cublasDdot_v2 != NULL;
    cublasStatus_t st = crm_hblas_begin(s, handle, pmode, have, &h);
    if (st != CUBLAS_STATUS_SUCCESS || (st = crm__result(s, pmode, result, elem, &r)) != CUBLAS_STATUS_SUCCESS)
        return st;
    if (n < 0)
        n = 0;
    if ((st = crm__vec(s, x, n, incx, elem)) != CUBLAS_STATUS_SUCCESS ||
        (st = crm__vec(s, y, n, incy, elem)) != CUBLAS_STATUS_SUCCESS)
        return st;
    if (elem == 4)
        st = crm_rt.cublasSdot_v2(h, n, CRM__P(x), incx, CRM__P(y), incy, crm_hblas_ptr(&r));
    else
        st = crm_rt.cublasDdot_v2(h, n, CRM__P(x), incx, CRM__P(y), incy, crm_hblas_ptr(&r));
    *value = crm_hblas_word(&r, elem);
    return st;
}

cublasStatus_t crm_srv_cublasSdot_v2(crm_session *s, uint64_t handle, int pmode, int n, uint64_t x, int incx,
                                     uint64_t y, int incy, uint64_t result, uint64_t *value)
{
    return crm__dot(s, handle, pmode, n, x, incx, y, incy, result, value, sizeof(float));
}

cublasStatus_t crm_srv_cublasDdot_v2(crm_session *s, uint64_t handle, int pmode, int n, uint64_t x, int incx,
                                     uint64_t y, int incy, uint64_t result, uint64_t *value)
{
    return crm__dot(s, handle, pmode, n, x, incx, y, incy, result, value, sizeof(double));
}

enum crm__reduce { CRM__SNRM2, CRM__DNRM2, CRM__SASUM, CRM__DASUM, CRM__ISAMAX, CRM__IDAMAX };

static int crm__reduce_have(enum crm__reduce op)
{
    switch (op) {
    case CRM__SNRM2: return crm_rt.cublasSnrm2_v2 != NULL;
    case CRM__DNRM2: return crm_rt.cublasDnrm2_v2 != NULL;
    case CRM__SASUM: return crm_rt.cublasSasum_v2 != NULL;
    case CRM__DASUM: return crm_rt.cublasDasum_v2 != NULL;
    case CRM__ISAMAX: return crm_rt.cublasIsamax_v2 != NULL;
    default: return crm_rt.cublasIdamax_v2 != NULL;
    }
}

static cublasStatus_t crm__reduce_call(enum crm__reduce op, cublasHandle_t h, int n, void *x, int incx, void *r)
{
    switch (op) {
    case CRM__SNRM2: return crm_rt.cublasSnrm2_v2(h, n, x, incx, r);
    case CRM__DNRM2: return crm_rt.cublasDnrm2_v2(h, n, x, incx, r);
    case CRM__SASUM: return crm_rt.cublasSasum_v2(h, n, x, incx, r);
    case CRM__DASUM: return crm_rt.cublasDasum_v2(h, n, x, incx, r);
    case CRM__ISAMAX: return crm_rt.cublasIsamax_v2(h, n, x, incx, r);
    default: return crm_rt.cublasIdamax_v2(h, n, x, incx, r);
    }
}

static cublasStatus_t crm__reduce(crm_session *s, enum crm__reduce op, uint64_t handle, int pmode, int n, uint64_t x,
                                  int incx, uint64_t result, uint64_t *value)
{
    cublasHandle_t h;
    crm_hblas_scalar r;
    size_t elem = op == CRM__SNRM2 || op == CRM__SASUM || op == CRM__ISAMAX ? sizeof(float) : sizeof(double);
    size_t rsize = op == CRM__ISAMAX || op == CRM__IDAMAX ? sizeof(int) : elem;
    cublasStatus_t st = crm_hblas_begin(s, handle, pmode, crm__reduce_have(op), &h);
    if (st != CUBLAS_STATUS_SUCCESS || (st = crm__result(s, pmode, result, rsize, &r)) != CUBLAS_STATUS_SUCCESS)
        return st;
    if (n < 0 || incx <= 0)
        n = 0; /* result 0, x untouched */
    if ((st = crm__vec(s, x, n, incx, elem)) != CUBLAS_STATUS_SUCCESS)
        return st;
    st = crm__reduce_call(op, h, n, CRM__P(x), incx > 0 ? incx : 1, crm_hblas_ptr(&r));
    *value = crm_hblas_word(&r, rsize);
    return st;
}

cublasStatus_t crm_srv_cublasSnrm2_v2(crm_session *s, uint64_t handle, int pmode, int n, uint64_t x, int incx,
                                      uint64_t result, uint64_t *value)
{
    return crm__reduce(s, CRM__SNRM2, handle, pmode, n, x, incx, result, value);
}

cublasStatus_t crm_srv_cublasDnrm2_v2(crm_session *s, uint64_t handle, int pmode, int n, uint64_t x, int incx,
                                      uint64_t result, uint64_t *value)
{
    return crm__reduce(s, CRM__DNRM2, handle, pmode, n, x, incx, result, value);
}

cublasStatus_t crm_srv_cublasSasum_v2(crm_session *s, uint64_t handle, int pmode, int n, uint64_t x, int incx,
                                      uint64_t result, uint64_t *value)
{
    return crm__reduce(s, CRM__SASUM, handle, pmode, n, x, incx, result, value);
}

cublasStatus_t crm_srv_cublasDasum_v2(crm_session *s, uint64_t handle, int pmode, int n, uint64_t x, int incx,
                                      uint64_t result, uint64_t *value)
{
    return crm__reduce(s, CRM__DASUM, handle, pmode, n, x, incx, result, value);
}

cublasStatus_t crm_srv_cublasIsamax_v2(crm_session *s, uint64_t handle, int pmode, int n, uint64_t x, int incx,
                                       uint64_t result, uint64_t *value)
{
    return crm__reduce(s, CRM__ISAMAX, handle, pmode, n, x, incx, result, value);
}

cublasStatus_t crm_srv_cublasIdamax_v2(crm_session *s, uint64_t handle, int pmode, int n, uint64_t x, int incx,
                                       uint64_t result, uint64_t *value)
{
    return crm__reduce(s, CRM__IDAMAX, handle, pmode, n, x, incx, result, value);
}
