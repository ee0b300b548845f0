/* crm_blas_gemv_mixed.c -- the shim's mixed-precision batched gemv: cublasHSHgemv*,
 * HSS, TST and TSS (Batched and StridedBatched, and their _64 forms); cublas_api.h
 * declares them for C++ alone, with the C ABI, half and bfloat16 being 16-bit
 * values. H is half, T bfloat16, S float: A and x of the first type, the scalars
 * float, y of the last type.
 *
 * Each is one GEMM of the GEMM family (a GemmBatchedEx or GemmStridedBatchedEx
 * computing in float, interpose/crm_blas_l3.c), with y and x as rows:
 *
 *   y^T (1 x ylen, ld incy) = alpha x^T (1 x xlen, ld incx) op(A)^T + beta y^T
 *
 * where op(A)^T is A transposed for op N and A itself for T and C (real data). A
 * GEMM cannot walk a vector backwards, so a negative increment answers
 * CUBLAS_STATUS_NOT_SUPPORTED (logged once); a _64 value beyond int too, as for the
 * rest of the family (crm_blas_gemm64.c). */
#include "common/crm_log.h"
#include "interpose/crm_blas.h"
#include "interpose/crm_export.h"

static int crm__logged;

/* cuBLAS's argument rules for gemv (INVALID_VALUE), then what the GEMM form can do. */
static cublasStatus_t crm__gemv_args(cublasOperation_t t, int64_t m, int64_t n, int64_t lda, int64_t incx,
                                     int64_t incy, int64_t count)
{
    if ((t != CUBLAS_OP_N && t != CUBLAS_OP_T && t != CUBLAS_OP_C) || m < 0 || n < 0 || lda < (m > 1 ? m : 1) ||
        incx == 0 || incy == 0 || count < 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (incx < 0 || incy < 0) {
        if (!__atomic_exchange_n(&crm__logged, 1, __ATOMIC_RELAXED))
            crm_warn("mixed-precision gemv batches with a negative increment are not supported");
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    return CRM_BLAS_FIT_INT(m, n, lda, incx, incy, count) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
}

/* The GEMM's shape: B's operation and the lengths of y and x. */
#define CRM__GEMM_SHAPE(t, m, n) \
    (t) == CUBLAS_OP_N ? CUBLAS_OP_T : CUBLAS_OP_N, 1, (int)((t) == CUBLAS_OP_N ? (m) : (n)), \
        (int)((t) == CUBLAS_OP_N ? (n) : (m))

static cublasStatus_t crm__gemv_batched(cublasHandle_t h, cublasOperation_t t, int64_t m, int64_t n,
                                        const float *alpha, const void *const A[], int64_t lda, const void *const x[],
                                        int64_t incx, const float *beta, void *const y[], int64_t incy, int64_t count,
                                        cudaDataType in, cudaDataType out)
{
    cublasStatus_t st = crm__gemv_args(t, m, n, lda, incx, incy, count);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    return cublasGemmBatchedEx(h, CUBLAS_OP_N, CRM__GEMM_SHAPE(t, m, n), alpha, x, in, (int)incx, A, in, (int)lda,
                               beta, y, out, (int)incy, (int)count, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

static cublasStatus_t crm__gemv_strided(cublasHandle_t h, cublasOperation_t t, int64_t m, int64_t n,
                                        const float *alpha, const void *A, int64_t lda, long long sa, const void *x,
                                        int64_t incx, long long sx, const float *beta, void *y, int64_t incy,
                                        long long sy, int64_t count, cudaDataType in, cudaDataType out)
{
    cublasStatus_t st = crm__gemv_args(t, m, n, lda, incx, incy, count);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    return cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CRM__GEMM_SHAPE(t, m, n), alpha, x, in, (int)incx, sx, A, in,
                                      (int)lda, sa, beta, y, out, (int)incy, sy, (int)count, CUBLAS_COMPUTE_32F,
                                      CUBLAS_GEMM_DEFAULT);
}

/* One name's four exports: Batched and StridedBatched, with int64_t, and their
 * int forms calling them. */
#define CRM__GEMV_BATCHED_ARGS(I)                                                                                \
    cublasHandle_t handle, cublasOperation_t trans, I m, I n, const float *alpha, const uint16_t *const Aarray[], \
        I lda, const uint16_t *const xarray[], I incx, const float *beta, OUT_T *const yarray[], I incy,          \
        I batchCount
#define CRM__GEMV_STRIDED_ARGS(I)                                                                                  \
    cublasHandle_t handle, cublasOperation_t trans, I m, I n, const float *alpha, const uint16_t *A, I lda,        \
        long long int strideA, const uint16_t *x, I incx, long long int stridex, const float *beta, OUT_T *y, I incy, \
        long long int stridey, I batchCount
#define CRM__GEMV_MIXED(NAME, IN, OUT)                                                                          \
    CRM_EXPORT cublasStatus_t cublas##NAME##gemvBatched_64(CRM__GEMV_BATCHED_ARGS(int64_t));                   \
    CRM_EXPORT cublasStatus_t cublas##NAME##gemvBatched_64(CRM__GEMV_BATCHED_ARGS(int64_t))                    \
    {                                                                                                          \
        return crm__gemv_batched(handle, trans, m, n, alpha, (const void *const *)Aarray, lda,                 \
                                 (const void *const *)xarray, incx, beta, (void *const *)yarray, incy,         \
                                 batchCount, IN, OUT);                                                         \
    }                                                                                                          \
    CRM_EXPORT cublasStatus_t cublas##NAME##gemvBatched(CRM__GEMV_BATCHED_ARGS(int));                          \
    CRM_EXPORT cublasStatus_t cublas##NAME##gemvBatched(CRM__GEMV_BATCHED_ARGS(int))                           \
    {                                                                                                          \
        return cublas##NAME##gemvBatched_64(handle, trans, m, n, alpha, Aarray, lda, xarray, incx, beta,       \
                                            yarray, incy, batchCount);                                         \
    }                                                                                                          \
    CRM_EXPORT cublasStatus_t cublas##NAME##gemvStridedBatched_64(CRM__GEMV_STRIDED_ARGS(int64_t));            \
    CRM_EXPORT cublasStatus_t cublas##NAME##gemvStridedBatched_64(CRM__GEMV_STRIDED_ARGS(int64_t))             \
    {                                                                                                          \
        return crm__gemv_strided(handle, trans, m, n, alpha, A, lda, strideA, x, incx, stridex, beta, y, incy, \
                                 stridey, batchCount, IN, OUT);                                                \
    }                                                                                                          \
    CRM_EXPORT cublasStatus_t cublas##NAME##gemvStridedBatched(CRM__GEMV_STRIDED_ARGS(int));                   \
    CRM_EXPORT cublasStatus_t cublas##NAME##gemvStridedBatched(CRM__GEMV_STRIDED_ARGS(int))                    \
    {                                                                                                          \
        return cublas##NAME##gemvStridedBatched_64(handle, trans, m, n, alpha, A, lda, strideA, x, incx,       \
                                                   stridex, beta, y, incy, stridey, batchCount);               \
    }

#define OUT_T uint16_t
CRM__GEMV_MIXED(HSH, CUDA_R_16F, CUDA_R_16F)
CRM__GEMV_MIXED(TST, CUDA_R_16BF, CUDA_R_16BF)
#undef OUT_T
#define OUT_T float
CRM__GEMV_MIXED(HSS, CUDA_R_16F, CUDA_R_32F)
CRM__GEMV_MIXED(TSS, CUDA_R_16BF, CUDA_R_32F)
#undef OUT_T
