/* crm_blas_l1.c -- the shim's cuBLAS level 1 (axpy, scal, copy, dot, nrm2, asum,
 * amax): calls without a host result are sent asynchronously; a result in host
 * pointer mode comes back in the reply (one round trip, as the real call blocks);
 * in device pointer mode it is written on the server and the call is asynchronous.
 * Calls with nothing to do return at once, as cuBLAS does (a host result is 0). */
#include <string.h>
#include "client/crm_conn.h"
#include "crm_client_gen.h"
#include "interpose/crm_blas.h"
#include "interpose/crm_export.h"

static cublasStatus_t crm__axpy(cublasHandle_t handle, int n, const void *alpha, const void *x, int incx, void *y,
                                int incy, size_t elem)
{
    crm_blas_state st;
    uint64_t a;
    cublasStatus_t rc = crm_blas_get(handle, &st);
    if (rc != CUBLAS_STATUS_SUCCESS || n <= 0)
        return rc;
    if ((rc = crm_blas_word(st.pmode, alpha, elem, &a)) != CUBLAS_STATUS_SUCCESS)
        return rc;
    crm_call call = {.api = elem == 4 ? CRM_API_cublasSaxpy_v2 : CRM_API_cublasDaxpy_v2};
    crm_args_cublasSaxpy_v2 args = {st.id, st.pmode, n, a, CRM_BLAS_DEV(x), incx, CRM_BLAS_DEV(y), incy};
    call.crm_call_u.cublasSaxpy_v2 = args; /* the Daxpy arm has the same members (common initial sequence) */ /* same layout */
    return crm_blas_async(&call);
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

static cublasStatus_t crm__scal(cublasHandle_t handle, int n, const void *alpha, void *x, int incx, size_t elem)
{
    crm_blas_state st;
    uint64_t a;
    cublasStatus_t rc = crm_blas_get(handle, &st);
    if (rc != CUBLAS_STATUS_SUCCESS || n <= 0 || incx <= 0)
        return rc;
    if ((rc = crm_blas_word(st.pmode, alpha, elem, &a)) != CUBLAS_STATUS_SUCCESS)
        return rc;
    crm_call call = {.api = elem == 4 ? CRM_API_cublasSscal_v2 : CRM_API_cublasDscal_v2};
    crm_args_cublasSscal_v2 args = {st.id, st.pmode, n, a, CRM_BLAS_DEV(x), incx};
    call.crm_call_u.cublasSscal_v2 = args; /* the Dscal arm has the same members (common initial sequence) */
    return crm_blas_async(&call);
}

CRM_EXPORT cublasStatus_t cublasSscal_v2(cublasHandle_t handle, int n, const float *alpha, float *x, int incx)
{
    return crm__scal(handle, n, alpha, x, incx, sizeof(float));
}

CRM_EXPORT cublasStatus_t cublasDscal_v2(cublasHandle_t handle, int n, const double *alpha, double *x, int incx)
{
    return crm__scal(handle, n, alpha, x, incx, sizeof(double));
}

static cublasStatus_t crm__copy(cublasHandle_t handle, int n, const void *x, int incx, void *y, int incy, size_t elem)
{
    crm_blas_state st;
    cublasStatus_t rc = crm_blas_get(handle, &st);
    if (rc != CUBLAS_STATUS_SUCCESS || n <= 0)
        return rc;
    crm_call call = {.api = elem == 4 ? CRM_API_cublasScopy_v2 : CRM_API_cublasDcopy_v2};
    crm_args_cublasScopy_v2 args = {st.id, n, CRM_BLAS_DEV(x), incx, CRM_BLAS_DEV(y), incy};
    call.crm_call_u.cublasScopy_v2 = args; /* the Dcopy arm has the same members (common initial sequence) */
    return crm_blas_async(&call);
}

CRM_EXPORT cublasStatus_t cublasScopy_v2(cublasHandle_t handle, int n, const float *x, int incx, float *y, int incy)
{
    return crm__copy(handle, n, x, incx, y, incy, sizeof(float));
}

CRM_EXPORT cublasStatus_t cublasDcopy_v2(cublasHandle_t handle, int n, const double *x, int incx, double *y, int incy)
{
    return crm__copy(handle, n, x, incx, y, incy, sizeof(double));
}

/* --- calls with a result ---------------------------------------------------------------------- */

/* A result call: api, its arguments in the wire order of the dot rows (x, incx,
 * y, incy; reductions have no y), where its result goes and how big it is. */
typedef struct crm__rcall {
    int api;
    int n;
    const void *x;
    int incx;
    const void *y;
    int incy;
    void *result;
    size_t rsize;
    int has_y;
} crm__rcall;

/* Fills the wire arguments of a dot (has_y) or a reduction. */
static void crm__rcall_fill(crm_call *call, const crm_blas_state *st, const crm__rcall *r, uint64_t result)
{
    call->api = r->api;
    if (r->has_y) {
        crm_args_cublasSdot_v2 a = {st->id, st->pmode, r->n, CRM_BLAS_DEV(r->x), r->incx,
                                    CRM_BLAS_DEV(r->y), r->incy, result};
        call->crm_call_u.cublasSdot_v2 = a; /* Sdot and Ddot arms: same members */
    } else {
        crm_args_cublasSnrm2_v2 a = {st->id, st->pmode, r->n, CRM_BLAS_DEV(r->x), r->incx, result};
        call->crm_call_u.cublasSnrm2_v2 = a; /* every reduction arm: same members */
    }
}

/* The result arms of the dot and reduction rows are all {int err; u64 value;}: one
 * union member reads any of them (common initial sequence). */
static cublasStatus_t crm__rcall_reply(const crm_reply *reply, uint64_t *value)
{
    *value = reply->crm_reply_u.cublasSdot_v2.value;
    return (cublasStatus_t)reply->crm_reply_u.cublasSdot_v2.err;
}

static cublasStatus_t crm__result_call(cublasHandle_t handle, const crm__rcall *r, int trivial)
{
    crm_blas_state st;
    crm_call call;
    crm_reply reply;
    uint64_t value = 0;
    cublasStatus_t rc = crm_blas_get(handle, &st);
    if (rc != CUBLAS_STATUS_SUCCESS)
        return rc;
    if (r->result == NULL)
        return CUBLAS_STATUS_INVALID_VALUE;
    memset(&call, 0, sizeof call);
    if (st.pmode == CUBLAS_POINTER_MODE_DEVICE) {
        crm__rcall_fill(&call, &st, r, CRM_BLAS_DEV(r->result));
        return crm_blas_async(&call);
    }
    if (trivial) { /* nothing to reduce: 0, without asking */
        crm_blas_put_result(r->result, 0, r->rsize);
        return CUBLAS_STATUS_SUCCESS;
    }
    crm__rcall_fill(&call, &st, r, 0);
    memset(&reply, 0, sizeof reply);
    if (crm_conn_exec(&call, &reply, 1) != cudaSuccess)
        return CUBLAS_STATUS_INTERNAL_ERROR;
    rc = crm__rcall_reply(&reply, &value);
    crm_conn_reply_free(&reply);
    if (rc == CUBLAS_STATUS_SUCCESS)
        crm_blas_put_result(r->result, value, r->rsize);
    return rc;
}

CRM_EXPORT cublasStatus_t cublasSdot_v2(cublasHandle_t handle, int n, const float *x, int incx, const float *y,
                                        int incy, float *result)
{
    crm__rcall r = {CRM_API_cublasSdot_v2, n, x, incx, y, incy, result, sizeof(float), 1};
    return crm__result_call(handle, &r, n <= 0);
}

CRM_EXPORT cublasStatus_t cublasDdot_v2(cublasHandle_t handle, int n, const double *x, int incx, const double *y,
                                        int incy, double *result)
{
    crm__rcall r = {CRM_API_cublasDdot_v2, n, x, incx, y, incy, result, sizeof(double), 1};
    return crm__result_call(handle, &r, n <= 0);
}

static cublasStatus_t crm__reduce(cublasHandle_t handle, int api, int n, const void *x, int incx, void *result,
                                  size_t rsize)
{
    crm__rcall r = {api, n, x, incx, NULL, 0, result, rsize, 0};
    return crm__result_call(handle, &r, n <= 0 || incx <= 0);
}

CRM_EXPORT cublasStatus_t cublasSnrm2_v2(cublasHandle_t handle, int n, const float *x, int incx, float *result)
{
    return crm__reduce(handle, CRM_API_cublasSnrm2_v2, n, x, incx, result, sizeof(float));
}

CRM_EXPORT cublasStatus_t cublasDnrm2_v2(cublasHandle_t handle, int n, const double *x, int incx, double *result)
{
    return crm__reduce(handle, CRM_API_cublasDnrm2_v2, n, x, incx, result, sizeof(double));
}

CRM_EXPORT cublasStatus_t cublasSasum_v2(cublasHandle_t handle, int n, const float *x, int incx, float *result)
{
    return crm__reduce(handle, CRM_API_cublasSasum_v2, n, x, incx, result, sizeof(float));
}

CRM_EXPORT cublasStatus_t cublasDasum_v2(cublasHandle_t handle, int n, const double *x, int incx, double *result)
{
    return crm__reduce(handle, CRM_API_cublasDasum_v2, n, x, incx, result, sizeof(double));
}

CRM_EXPORT cublasStatus_t cublasIsamax_v2(cublasHandle_t handle, int n, const float *x, int incx, int *result)
{
    return crm__reduce(handle, CRM_API_cublasIsamax_v2, n, x, incx, result, sizeof(int));
}

CRM_EXPORT cublasStatus_t cublasIdamax_v2(cublasHandle_t handle, int n, const double *x, int incx, int *result)
{
    return crm__reduce(handle, CRM_API_cublasIdamax_v2, n, x, incx, result, sizeof(int));
}
