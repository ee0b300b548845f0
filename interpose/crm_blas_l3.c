/* crm_blas_l3.c -- the shim's hand-written cuBLAS level 3: the GEMM family (the
 * generated rows of protocol/cublas.api are in crm_blas_gen.c). Each
 * call applies cuBLAS's argument rules here (so argument errors are returned
 * synchronously), returns at once when there is nothing to compute,
 * passes alpha/beta by the handle's pointer mode, and is sent asynchronously. The
 * S and D forms of a call share their wire arguments (common initial sequence of
 * the union arms), so one arm is filled for both. */
#include <string.h>
#include "crm_client_gen.h"
#include "client/crm_handles.h"
#include "interpose/crm_blas.h"
#include "interpose/crm_export.h"

/* The scalar words of alpha (and of beta when b is not NULL). */
static cublasStatus_t crm__scalars(const crm_blas_state *st, const void *alpha, const void *beta, size_t size,
                                   uint64_t *a, uint64_t *b)
{
    cublasStatus_t rc = crm_blas_word(st->pmode, alpha, size, a);
    if (rc == CUBLAS_STATUS_SUCCESS && b != NULL)
        rc = crm_blas_word(st->pmode, beta, size, b);
    return rc;
}

/* --- the GEMM family ------------------------------------------------------------------------- */

/* The common part of every GEMM-family call: handle state, argument rules, batch
 * count, scalar words. *quick = 1 when there is nothing to compute. */
static cublasStatus_t crm__gemm_begin(cublasHandle_t handle, crm_blas_state *st, int ta, int tb, int m, int n, int k,
                                      int lda, int ldb, int ldc, int batch, const void *alpha, const void *beta,
                                      size_t scale, uint64_t *a, uint64_t *b, int *quick)
{
    cublasStatus_t rc = crm_blas_get(handle, st);
    *quick = 0;
    if (rc == CUBLAS_STATUS_SUCCESS)
        rc = crm_blas_gemm_check(ta, tb, m, n, k, lda, ldb, ldc);
    if (rc == CUBLAS_STATUS_SUCCESS && batch < 0)
        rc = CUBLAS_STATUS_INVALID_VALUE;
    if (rc == CUBLAS_STATUS_SUCCESS && scale == 0)
        rc = CUBLAS_STATUS_NOT_SUPPORTED; /* unknown compute type */
    if (rc != CUBLAS_STATUS_SUCCESS)
        return rc;
    if (m == 0 || n == 0 || batch == 0) {
        *quick = 1;
        return CUBLAS_STATUS_SUCCESS;
    }
    return crm__scalars(st, alpha, beta, scale, a, b);
}

static cublasStatus_t crm__gemm(cublasHandle_t handle, int api, int ta, int tb, int m, int n, int k,
                                const void *alpha, const void *A, int lda, const void *B, int ldb, const void *beta,
                                void *C, int ldc, size_t scale)
{
    crm_blas_state st;
    uint64_t a, b;
    int quick;
    cublasStatus_t rc = crm__gemm_begin(handle, &st, ta, tb, m, n, k, lda, ldb, ldc, 1, alpha, beta, scale, &a, &b,
                                        &quick);
    if (rc != CUBLAS_STATUS_SUCCESS || quick)
        return rc;
    crm_call call = {.api = api}; /* Sgemm, Dgemm and Hgemm arms: same members */
    call.crm_call_u.cublasSgemm_v2 = (crm_args_cublasSgemm_v2){
        st.id, st.pmode, ta, tb, m, n, k, a, CRM_BLAS_DEV(A), lda, CRM_BLAS_DEV(B), ldb, b, CRM_BLAS_DEV(C), ldc};
    return crm_blas_work(&call, crm_stream_wire(st.stream, CRM_PTDS_OFF));
}

CRM_EXPORT cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                         int m, int n, int k, const float *alpha, const float *A, int lda,
                                         const float *B, int ldb, const float *beta, float *C, int ldc)
{
    return crm__gemm(handle, CRM_API_cublasSgemm_v2, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc,
                     sizeof(float));
}

CRM_EXPORT cublasStatus_t cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                         int m, int n, int k, const double *alpha, const double *A, int lda,
                                         const double *B, int ldb, const double *beta, double *C, int ldc)
{
    return crm__gemm(handle, CRM_API_cublasDgemm_v2, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc,
                     sizeof(double));
}

/* cublas_api.h declares Hgemm for C++ only: in C the __half values are their
 * uint16_t bits, passed by pointer (same ABI), and the prototype is written here. */
CRM_EXPORT cublasStatus_t cublasHgemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                      int n, int k, const uint16_t *alpha, const uint16_t *A, int lda,
                                      const uint16_t *B, int ldb, const uint16_t *beta, uint16_t *C,
                                      int ldc);
CRM_EXPORT cublasStatus_t cublasHgemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                      int n, int k, const uint16_t *alpha, const uint16_t *A, int lda,
                                      const uint16_t *B, int ldb, const uint16_t *beta, uint16_t *C,
                                      int ldc)
{
    return crm__gemm(handle, CRM_API_cublasHgemm, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, 2);
}

CRM_EXPORT cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                       int n, int k, const void *alpha, const void *A, cudaDataType Atype, int lda,
                                       const void *B, cudaDataType Btype, int ldb, const void *beta, void *C,
                                       cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                                       cublasGemmAlgo_t algo)
{
    crm_blas_state st;
    uint64_t a, b;
    int quick;
    /* double complex scalars do not fit GemmEx's scalar words: the same product as Zgemm's row */
    if (Atype == CUDA_C_64F && Btype == CUDA_C_64F && Ctype == CUDA_C_64F &&
        (computeType == CUBLAS_COMPUTE_64F || computeType == CUBLAS_COMPUTE_64F_PEDANTIC))
        return cublasZgemm_v2(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    cublasStatus_t rc = crm__gemm_begin(handle, &st, transa, transb, m, n, k, lda, ldb, ldc, 1, alpha, beta,
                                        crm_blas_scale_size(computeType, Ctype), &a, &b, &quick);
    if (rc != CUBLAS_STATUS_SUCCESS || quick)
        return rc;
    crm_call call = {.api = CRM_API_cublasGemmEx};
    call.crm_call_u.cublasGemmEx = (crm_args_cublasGemmEx){
        st.id, st.pmode, transa, transb, m, n, k, a, CRM_BLAS_DEV(A), Atype, lda, CRM_BLAS_DEV(B), Btype, ldb,
        b, CRM_BLAS_DEV(C), Ctype, ldc, computeType, algo};
    return crm_blas_work(&call, crm_stream_wire(st.stream, CRM_PTDS_OFF));
}

/* cuBLAS defines SgemmEx as GemmEx computing in float, so it travels as GemmEx. Its
 * types: A and B alike, and of C's type (half, bfloat16 or float), or, for float C,
 * 8-bit integers, half or bfloat16; others are NOT_SUPPORTED, as cuBLAS answers. */
CRM_EXPORT cublasStatus_t cublasSgemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                        int m, int n, int k, const float *alpha, const void *A, cudaDataType Atype,
                                        int lda, const void *B, cudaDataType Btype, int ldb, const float *beta,
                                        void *C, cudaDataType Ctype, int ldc)
{
    int c_ok = Ctype == CUDA_R_16F || Ctype == CUDA_R_16BF || Ctype == CUDA_R_32F;
    int a_ok = Atype == Ctype ||
               (Ctype == CUDA_R_32F && (Atype == CUDA_R_8I || Atype == CUDA_R_16F || Atype == CUDA_R_16BF));
    if (!c_ok || !a_ok || Btype != Atype)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    return cublasGemmEx(handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc,
                        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

static cublasStatus_t crm__gemm_strided(cublasHandle_t handle, int api, int ta, int tb, int m, int n, int k,
                                        const void *alpha, const void *A, int lda, long long sa, const void *B,
                                        int ldb, long long sb, const void *beta, void *C, int ldc, long long sc,
                                        int batch, size_t elem)
{
    crm_blas_state st;
    uint64_t a, b;
    int quick;
    cublasStatus_t rc = crm__gemm_begin(handle, &st, ta, tb, m, n, k, lda, ldb, ldc, batch, alpha, beta, elem, &a,
                                        &b, &quick);
    if (rc != CUBLAS_STATUS_SUCCESS || quick)
        return rc;
    crm_call call = {.api = api}; /* S and D arms: same members */
    call.crm_call_u.cublasSgemmStridedBatched = (crm_args_cublasSgemmStridedBatched){
        st.id, st.pmode, ta, tb, m, n, k, a, CRM_BLAS_DEV(A), lda, sa, CRM_BLAS_DEV(B), ldb, sb, b,
        CRM_BLAS_DEV(C), ldc, sc, batch};
    return crm_blas_work(&call, crm_stream_wire(st.stream, CRM_PTDS_OFF));
}

CRM_EXPORT cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                                    cublasOperation_t transb, int m, int n, int k, const float *alpha,
                                                    const float *A, int lda, long long int strideA, const float *B,
                                                    int ldb, long long int strideB, const float *beta, float *C,
                                                    int ldc, long long int strideC, int batchCount)
{
    return crm__gemm_strided(handle, CRM_API_cublasSgemmStridedBatched, transa, transb, m, n, k, alpha, A, lda,
                             strideA, B, ldb, strideB, beta, C, ldc, strideC, batchCount, sizeof(float));
}

CRM_EXPORT cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                                    cublasOperation_t transb, int m, int n, int k, const double *alpha,
                                                    const double *A, int lda, long long int strideA, const double *B,
                                                    int ldb, long long int strideB, const double *beta, double *C,
                                                    int ldc, long long int strideC, int batchCount)
{
    return crm__gemm_strided(handle, CRM_API_cublasDgemmStridedBatched, transa, transb, m, n, k, alpha, A, lda,
                             strideA, B, ldb, strideB, beta, C, ldc, strideC, batchCount, sizeof(double));
}

CRM_EXPORT cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                                     cublasOperation_t transb, int m, int n, int k, const void *alpha,
                                                     const void *A, cudaDataType Atype, int lda, long long int strideA,
                                                     const void *B, cudaDataType Btype, int ldb, long long int strideB,
                                                     const void *beta, void *C, cudaDataType Ctype, int ldc,
                                                     long long int strideC, int batchCount,
                                                     cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
    crm_blas_state st;
    uint64_t a, b;
    int quick;
    cublasStatus_t rc = crm__gemm_begin(handle, &st, transa, transb, m, n, k, lda, ldb, ldc, batchCount, alpha, beta,
                                        crm_blas_scale_size(computeType, Ctype), &a, &b, &quick);
    if (rc != CUBLAS_STATUS_SUCCESS || quick)
        return rc;
    crm_call call = {.api = CRM_API_cublasGemmStridedBatchedEx};
    call.crm_call_u.cublasGemmStridedBatchedEx = (crm_args_cublasGemmStridedBatchedEx){
        st.id, st.pmode, transa, transb, m, n, k, a, CRM_BLAS_DEV(A), Atype, lda, strideA, CRM_BLAS_DEV(B),
        Btype, ldb, strideB, b, CRM_BLAS_DEV(C), Ctype, ldc, strideC, batchCount, computeType, algo};
    return crm_blas_work(&call, crm_stream_wire(st.stream, CRM_PTDS_OFF));
}

CRM_EXPORT cublasStatus_t cublasSgemmBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                             int m, int n, int k, const float *alpha, const float *const Aarray[],
                                             int lda, const float *const Barray[], int ldb, const float *beta,
                                             float *const Carray[], int ldc, int batchCount)
{
    crm_blas_state st;
    uint64_t a, b;
    int quick;
    cublasStatus_t rc = crm__gemm_begin(handle, &st, transa, transb, m, n, k, lda, ldb, ldc, batchCount, alpha, beta,
                                        sizeof(float), &a, &b, &quick);
    if (rc != CUBLAS_STATUS_SUCCESS || quick)
        return rc;
    crm_call call = {.api = CRM_API_cublasSgemmBatched};
    call.crm_call_u.cublasSgemmBatched = (crm_args_cublasSgemmBatched){
        st.id, st.pmode, transa, transb, m, n, k, a, CRM_BLAS_DEV(Aarray), lda, CRM_BLAS_DEV(Barray), ldb, b,
        CRM_BLAS_DEV(Carray), ldc, batchCount};
    return crm_blas_work(&call, crm_stream_wire(st.stream, CRM_PTDS_OFF));
}

CRM_EXPORT cublasStatus_t cublasGemmBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                              cublasOperation_t transb, int m, int n, int k, const void *alpha,
                                              const void *const Aarray[], cudaDataType Atype, int lda,
                                              const void *const Barray[], cudaDataType Btype, int ldb,
                                              const void *beta, void *const Carray[], cudaDataType Ctype, int ldc,
                                              int batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
    crm_blas_state st;
    uint64_t a, b;
    int quick;
    cublasStatus_t rc = crm__gemm_begin(handle, &st, transa, transb, m, n, k, lda, ldb, ldc, batchCount, alpha, beta,
                                        crm_blas_scale_size(computeType, Ctype), &a, &b, &quick);
    if (rc != CUBLAS_STATUS_SUCCESS || quick)
        return rc;
    crm_call call = {.api = CRM_API_cublasGemmBatchedEx};
    call.crm_call_u.cublasGemmBatchedEx = (crm_args_cublasGemmBatchedEx){
        st.id, st.pmode, transa, transb, m, n, k, a, CRM_BLAS_DEV(Aarray), Atype, lda, CRM_BLAS_DEV(Barray), Btype,
        ldb, b, CRM_BLAS_DEV(Carray), Ctype, ldc, batchCount, computeType, algo};
    return crm_blas_work(&call, crm_stream_wire(st.stream, CRM_PTDS_OFF));
}
