/* crm_blas_gemm64.c -- the shim's _64 forms of the hand-written GEMM family (Sgemm,
 * Dgemm, Hgemm, SgemmEx, GemmEx and their strided and pointer-array batches), and
 * the half-precision batches HgemmBatched and HgemmStridedBatched.
 *
 * The family travels with 32-bit integers, one wire form for every data type
 * (server/crm_h_blas_l3.c): a _64 call whose integers all fit in int is its 32-bit
 * call; one beyond int (a dimension or leading dimension past 2^31) answers
 * CUBLAS_STATUS_NOT_SUPPORTED. The half batches are GemmBatchedEx and
 * GemmStridedBatchedEx with half data computing in half, as Hgemm runs as GemmEx. */
#include "interpose/crm_blas.h"
#include "interpose/crm_export.h"

#define CRM__NARROW(...)                                  \
    do {                                                  \
        if (!CRM_BLAS_FIT_INT(__VA_ARGS__))               \
            return CUBLAS_STATUS_NOT_SUPPORTED;           \
    } while (0)

/* __half values as their uint16_t bits (cublas_api.h declares the H calls for C++
 * only; same ABI). */
typedef uint16_t crm__half;

CRM_EXPORT cublasStatus_t cublasSgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                            int64_t m, int64_t n, int64_t k, const float *alpha, const float *A,
                                            int64_t lda, const float *B, int64_t ldb, const float *beta, float *C,
                                            int64_t ldc)
{
    CRM__NARROW(m, n, k, lda, ldb, ldc);
    return cublasSgemm_v2(handle, transa, transb, (int)m, (int)n, (int)k, alpha, A, (int)lda, B, (int)ldb, beta, C,
                          (int)ldc);
}

CRM_EXPORT cublasStatus_t cublasDgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                            int64_t m, int64_t n, int64_t k, const double *alpha, const double *A,
                                            int64_t lda, const double *B, int64_t ldb, const double *beta, double *C,
                                            int64_t ldc)
{
    CRM__NARROW(m, n, k, lda, ldb, ldc);
    return cublasDgemm_v2(handle, transa, transb, (int)m, (int)n, (int)k, alpha, A, (int)lda, B, (int)ldb, beta, C,
                          (int)ldc);
}

CRM_EXPORT cublasStatus_t cublasHgemm_64(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                         int64_t m, int64_t n, int64_t k, const crm__half *alpha, const crm__half *A,
                                         int64_t lda, const crm__half *B, int64_t ldb, const crm__half *beta,
                                         crm__half *C, int64_t ldc);
CRM_EXPORT cublasStatus_t cublasHgemm_64(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                         int64_t m, int64_t n, int64_t k, const crm__half *alpha, const crm__half *A,
                                         int64_t lda, const crm__half *B, int64_t ldb, const crm__half *beta,
                                         crm__half *C, int64_t ldc)
{
    CRM__NARROW(m, n, k, lda, ldb, ldc);
    return cublasGemmEx(handle, transa, transb, (int)m, (int)n, (int)k, alpha, A, CUDA_R_16F, (int)lda, B, CUDA_R_16F,
                        (int)ldb, beta, C, CUDA_R_16F, (int)ldc, CUBLAS_COMPUTE_16F, CUBLAS_GEMM_DEFAULT);
}

CRM_EXPORT cublasStatus_t cublasSgemmEx_64(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                           int64_t m, int64_t n, int64_t k, const float *alpha, const void *A,
                                           cudaDataType Atype, int64_t lda, const void *B, cudaDataType Btype,
                                           int64_t ldb, const float *beta, void *C, cudaDataType Ctype, int64_t ldc)
{
    CRM__NARROW(m, n, k, lda, ldb, ldc);
    return cublasSgemmEx(handle, transa, transb, (int)m, (int)n, (int)k, alpha, A, Atype, (int)lda, B, Btype,
                         (int)ldb, beta, C, Ctype, (int)ldc);
}

CRM_EXPORT cublasStatus_t cublasGemmEx_64(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                          int64_t m, int64_t n, int64_t k, const void *alpha, const void *A,
                                          cudaDataType Atype, int64_t lda, const void *B, cudaDataType Btype,
                                          int64_t ldb, const void *beta, void *C, cudaDataType Ctype, int64_t ldc,
                                          cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
    CRM__NARROW(m, n, k, lda, ldb, ldc);
    return cublasGemmEx(handle, transa, transb, (int)m, (int)n, (int)k, alpha, A, Atype, (int)lda, B, Btype,
                        (int)ldb, beta, C, Ctype, (int)ldc, computeType, algo);
}

/* --- strided batches ------------------------------------------------------------------------- */

CRM_EXPORT cublasStatus_t cublasSgemmStridedBatched_64(cublasHandle_t handle, cublasOperation_t transa,
                                                       cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                                       const float *alpha, const float *A, int64_t lda,
                                                       long long int strideA, const float *B, int64_t ldb,
                                                       long long int strideB, const float *beta, float *C,
                                                       int64_t ldc, long long int strideC, int64_t batchCount)
{
    CRM__NARROW(m, n, k, lda, ldb, ldc, batchCount);
    return cublasSgemmStridedBatched(handle, transa, transb, (int)m, (int)n, (int)k, alpha, A, (int)lda, strideA, B,
                                     (int)ldb, strideB, beta, C, (int)ldc, strideC, (int)batchCount);
}

CRM_EXPORT cublasStatus_t cublasDgemmStridedBatched_64(cublasHandle_t handle, cublasOperation_t transa,
                                                       cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                                       const double *alpha, const double *A, int64_t lda,
                                                       long long int strideA, const double *B, int64_t ldb,
                                                       long long int strideB, const double *beta, double *C,
                                                       int64_t ldc, long long int strideC, int64_t batchCount)
{
    CRM__NARROW(m, n, k, lda, ldb, ldc, batchCount);
    return cublasDgemmStridedBatched(handle, transa, transb, (int)m, (int)n, (int)k, alpha, A, (int)lda, strideA, B,
                                     (int)ldb, strideB, beta, C, (int)ldc, strideC, (int)batchCount);
}

CRM_EXPORT cublasStatus_t cublasGemmStridedBatchedEx_64(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
    const void *alpha, const void *A, cudaDataType Atype, int64_t lda, long long int strideA, const void *B,
    cudaDataType Btype, int64_t ldb, long long int strideB, const void *beta, void *C, cudaDataType Ctype, int64_t ldc,
    long long int strideC, int64_t batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
    CRM__NARROW(m, n, k, lda, ldb, ldc, batchCount);
    return cublasGemmStridedBatchedEx(handle, transa, transb, (int)m, (int)n, (int)k, alpha, A, Atype, (int)lda,
                                      strideA, B, Btype, (int)ldb, strideB, beta, C, Ctype, (int)ldc, strideC,
                                      (int)batchCount, computeType, algo);
}

#define CRM__HGEMM_STRIDED_ARGS(I)                                                                              \
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, I m, I n, I k,                  \
        const crm__half *alpha, const crm__half *A, I lda, long long int strideA, const crm__half *B, I ldb,   \
        long long int strideB, const crm__half *beta, crm__half *C, I ldc, long long int strideC, I batchCount
CRM_EXPORT cublasStatus_t cublasHgemmStridedBatched(CRM__HGEMM_STRIDED_ARGS(int));
CRM_EXPORT cublasStatus_t cublasHgemmStridedBatched(CRM__HGEMM_STRIDED_ARGS(int))
{
    return cublasGemmStridedBatchedEx(handle, transa, transb, m, n, k, alpha, A, CUDA_R_16F, lda, strideA, B,
                                      CUDA_R_16F, ldb, strideB, beta, C, CUDA_R_16F, ldc, strideC, batchCount,
                                      CUBLAS_COMPUTE_16F, CUBLAS_GEMM_DEFAULT);
}

CRM_EXPORT cublasStatus_t cublasHgemmStridedBatched_64(CRM__HGEMM_STRIDED_ARGS(int64_t));
CRM_EXPORT cublasStatus_t cublasHgemmStridedBatched_64(CRM__HGEMM_STRIDED_ARGS(int64_t))
{
    CRM__NARROW(m, n, k, lda, ldb, ldc, batchCount);
    return cublasHgemmStridedBatched(handle, transa, transb, (int)m, (int)n, (int)k, alpha, A, (int)lda, strideA, B,
                                     (int)ldb, strideB, beta, C, (int)ldc, strideC, (int)batchCount);
}

/* --- pointer-array batches ----------------------------------------------------------------- */

CRM_EXPORT cublasStatus_t cublasSgemmBatched_64(cublasHandle_t handle, cublasOperation_t transa,
                                                cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                                const float *alpha, const float *const Aarray[], int64_t lda,
                                                const float *const Barray[], int64_t ldb, const float *beta,
                                                float *const Carray[], int64_t ldc, int64_t batchCount)
{
    CRM__NARROW(m, n, k, lda, ldb, ldc, batchCount);
    return cublasSgemmBatched(handle, transa, transb, (int)m, (int)n, (int)k, alpha, Aarray, (int)lda, Barray,
                              (int)ldb, beta, Carray, (int)ldc, (int)batchCount);
}

CRM_EXPORT cublasStatus_t cublasGemmBatchedEx_64(cublasHandle_t handle, cublasOperation_t transa,
                                                 cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                                 const void *alpha, const void *const Aarray[], cudaDataType Atype,
                                                 int64_t lda, const void *const Barray[], cudaDataType Btype,
                                                 int64_t ldb, const void *beta, void *const Carray[],
                                                 cudaDataType Ctype, int64_t ldc, int64_t batchCount,
                                                 cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
    CRM__NARROW(m, n, k, lda, ldb, ldc, batchCount);
    return cublasGemmBatchedEx(handle, transa, transb, (int)m, (int)n, (int)k, alpha, Aarray, Atype, (int)lda, Barray,
                               Btype, (int)ldb, beta, Carray, Ctype, (int)ldc, (int)batchCount, computeType, algo);
}

#define CRM__HGEMM_BATCHED_ARGS(I)                                                                              \
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, I m, I n, I k,                  \
        const crm__half *alpha, const crm__half *const Aarray[], I lda, const crm__half *const Barray[], I ldb, \
        const crm__half *beta, crm__half *const Carray[], I ldc, I batchCount
CRM_EXPORT cublasStatus_t cublasHgemmBatched(CRM__HGEMM_BATCHED_ARGS(int));
CRM_EXPORT cublasStatus_t cublasHgemmBatched(CRM__HGEMM_BATCHED_ARGS(int))
{
    return cublasGemmBatchedEx(handle, transa, transb, m, n, k, alpha, (const void *const *)Aarray, CUDA_R_16F, lda,
                               (const void *const *)Barray, CUDA_R_16F, ldb, beta, (void *const *)Carray, CUDA_R_16F,
                               ldc, batchCount, CUBLAS_COMPUTE_16F, CUBLAS_GEMM_DEFAULT);
}

CRM_EXPORT cublasStatus_t cublasHgemmBatched_64(CRM__HGEMM_BATCHED_ARGS(int64_t));
CRM_EXPORT cublasStatus_t cublasHgemmBatched_64(CRM__HGEMM_BATCHED_ARGS(int64_t))
{
    CRM__NARROW(m, n, k, lda, ldb, ldc, batchCount);
    return cublasHgemmBatched(handle, transa, transb, (int)m, (int)n, (int)k, alpha, Aarray, (int)lda, Barray,
                              (int)ldb, beta, Carray, (int)ldc, (int)batchCount);
}
