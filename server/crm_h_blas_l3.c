/* crm_h_blas_l3.c -- handlers of the hand-written cuBLAS level 3 calls: the GEMM
 * family (plain, Ex, strided batched, pointer-array batched).
 *
 * Each handler applies cuBLAS's argument rules (protocol/cublas_shape.h), decodes
 * alpha/beta by pointer mode, checks the exact footprint of every operand against
 * the session's allocations (every item of a batch; the pointers of a batched call
 * read from device memory and copied into server-owned memory first), and only then
 * calls the backend. Hgemm runs as GemmEx with half data and half compute. */
#include "server/crm_h_blas.h"

#define CRM__P(a) ((void *)(uintptr_t)(a))

/* --- the GEMM family ---------------------------------------------------------------------- */

/* One GEMM-family request as it arrived, and what the checks derived from it. */
typedef struct crm__gemm {
    cublasHandle_t h;
    int pmode, ta, tb, m, n, k, lda, ldb, ldc;
    int atype, btype, ctype, compute, algo;
    uint64_t alpha_w, beta_w;  /* scalar words from the wire */
    crm_hblas_scalar alpha, beta;
    size_t elem[3];            /* element bytes of A, B, C */
    uint64_t bytes[3];         /* footprints of one A, B, C */
} crm__gemm;

/* Everything but the operands' addresses: handle, argument rules, types, scalars,
 * footprints. *quick = 1 when there is nothing to compute (m or n is 0). */
static cublasStatus_t crm__gemm_prepare(crm_session *s, uint64_t handle, int have, crm__gemm *g, int *quick)
{
    size_t scale = crm_blas_scale_size(g->compute, g->ctype);
    cublasStatus_t st = crm_hblas_begin(s, handle, g->pmode, have, &g->h);
    *quick = 0;
    if (st == CUBLAS_STATUS_SUCCESS)
        st = crm_blas_gemm_check(g->ta, g->tb, g->m, g->n, g->k, g->lda, g->ldb, g->ldc);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    g->elem[0] = crm_blas_type_size(g->atype);
    g->elem[1] = crm_blas_type_size(g->btype);
    g->elem[2] = crm_blas_type_size(g->ctype);
    if (g->elem[0] == 0 || g->elem[1] == 0 || g->elem[2] == 0 || scale == 0)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    if (g->m == 0 || g->n == 0) {
        *quick = 1;
        return CUBLAS_STATUS_SUCCESS;
    }
    if ((st = crm_hblas_scalar_in(s, g->pmode, g->alpha_w, scale, &g->alpha)) != CUBLAS_STATUS_SUCCESS ||
        (st = crm_hblas_scalar_in(s, g->pmode, g->beta_w, scale, &g->beta)) != CUBLAS_STATUS_SUCCESS)
        return st;
    if (crm_blas_gemm_bytes(g->ta, g->tb, g->m, g->n, g->k, g->lda, g->ldb, g->ldc, g->elem[0], g->elem[1],
                            g->elem[2], g->bytes) != 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    return CUBLAS_STATUS_SUCCESS;
}

/* A single product: operand checks, then the backend (Ex form for every type). */
static cublasStatus_t crm__gemm_single(crm_session *s, crm__gemm *g, uint64_t A, uint64_t B, uint64_t C, int plain)
{
    const uint64_t addr[3] = {A, B, C};
    if (crm_hblas_regions(s, addr, g->bytes, 3) != CUBLAS_STATUS_SUCCESS)
        return CUBLAS_STATUS_INVALID_VALUE;
    void *a = crm_hblas_ptr(&g->alpha), *b = crm_hblas_ptr(&g->beta);
    if (plain && g->ctype == CUDA_R_32F)
        return crm_rt.cublasSgemm_v2(g->h, g->ta, g->tb, g->m, g->n, g->k, a, CRM__P(A), g->lda, CRM__P(B), g->ldb, b,
                                     CRM__P(C), g->ldc);
    if (plain && g->ctype == CUDA_R_64F)
        return crm_rt.cublasDgemm_v2(g->h, g->ta, g->tb, g->m, g->n, g->k, a, CRM__P(A), g->lda, CRM__P(B), g->ldb, b,
                                     CRM__P(C), g->ldc);
    return crm_rt.cublasGemmEx(g->h, g->ta, g->tb, g->m, g->n, g->k, a, CRM__P(A), g->atype, g->lda, CRM__P(B),
                               g->btype, g->ldb, b, CRM__P(C), g->ctype, g->ldc, g->compute, g->algo);
}

#define CRM__GEMM(PM, TA, TB, M, N, K, AL, LDA, LDB, BE, LDC, AT, BT, CT, CO, ALG)                             \
    {.pmode = (PM), .ta = (TA), .tb = (TB), .m = (M), .n = (N), .k = (K), .alpha_w = (AL), .lda = (LDA),        \
     .ldb = (LDB), .beta_w = (BE), .ldc = (LDC), .atype = (AT), .btype = (BT), .ctype = (CT), .compute = (CO), \
     .algo = (ALG)}

cublasStatus_t crm_srv_cublasSgemm_v2(crm_session *s, uint64_t handle, int pmode, int transa, int transb, int m, int n,
                                      int k, uint64_t alpha, uint64_t A, int lda, uint64_t B, int ldb, uint64_t beta,
                                      uint64_t C, int ldc)
{
    int quick;
    crm__gemm g = CRM__GEMM(pmode, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc, CUDA_R_32F, CUDA_R_32F,
                            CUDA_R_32F, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    cublasStatus_t st = crm__gemm_prepare(s, handle, crm_rt.cublasSgemm_v2 != NULL, &g, &quick);
    return st != CUBLAS_STATUS_SUCCESS || quick ? st : crm__gemm_single(s, &g, A, B, C, 1);
}

cublasStatus_t crm_srv_cublasDgemm_v2(crm_session *s, uint64_t handle, int pmode, int transa, int transb, int m, int n,
                                      int k, uint64_t alpha, uint64_t A, int lda, uint64_t B, int ldb, uint64_t beta,
                                      uint64_t C, int ldc)
{
    int quick;
    crm__gemm g = CRM__GEMM(pmode, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc, CUDA_R_64F, CUDA_R_64F,
                            CUDA_R_64F, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT);
    cublasStatus_t st = crm__gemm_prepare(s, handle, crm_rt.cublasDgemm_v2 != NULL, &g, &quick);
    return st != CUBLAS_STATUS_SUCCESS || quick ? st : crm__gemm_single(s, &g, A, B, C, 1);
}

cublasStatus_t crm_srv_cublasHgemm(crm_session *s, uint64_t handle, int pmode, int transa, int transb, int m, int n,
                                   int k, uint64_t alpha, uint64_t A, int lda, uint64_t B, int ldb, uint64_t beta,
                                   uint64_t C, int ldc)
{
    int quick;
    crm__gemm g = CRM__GEMM(pmode, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc, CUDA_R_16F, CUDA_R_16F,
                            CUDA_R_16F, CUBLAS_COMPUTE_16F, CUBLAS_GEMM_DEFAULT);
    cublasStatus_t st = crm__gemm_prepare(s, handle, crm_rt.cublasGemmEx != NULL, &g, &quick);
    return st != CUBLAS_STATUS_SUCCESS || quick ? st : crm__gemm_single(s, &g, A, B, C, 0);
}

cublasStatus_t crm_srv_cublasGemmEx(crm_session *s, uint64_t handle, int pmode, int transa, int transb, int m, int n,
                                    int k, uint64_t alpha, uint64_t A, int Atype, int lda, uint64_t B, int Btype,
                                    int ldb, uint64_t beta, uint64_t C, int Ctype, int ldc, int computeType, int algo)
{
    int quick;
    crm__gemm g = CRM__GEMM(pmode, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc, Atype, Btype, Ctype,
                            computeType, algo);
    cublasStatus_t st = crm__gemm_prepare(s, handle, crm_rt.cublasGemmEx != NULL, &g, &quick);
    return st != CUBLAS_STATUS_SUCCESS || quick ? st : crm__gemm_single(s, &g, A, B, C, 0);
}

/* Strided batches: every item of each operand must lie in the session's memory. */
static cublasStatus_t crm__gemm_strided(crm_session *s, crm__gemm *g, int plain, uint64_t A, int64_t sa, uint64_t B,
                                        int64_t sb, uint64_t C, int64_t sc, int batch)
{
    if (crm_hblas_strided(s, A, g->bytes[0], sa, batch, g->elem[0]) != CUBLAS_STATUS_SUCCESS ||
        crm_hblas_strided(s, B, g->bytes[1], sb, batch, g->elem[1]) != CUBLAS_STATUS_SUCCESS ||
        crm_hblas_strided(s, C, g->bytes[2], sc, batch, g->elem[2]) != CUBLAS_STATUS_SUCCESS)
        return CUBLAS_STATUS_INVALID_VALUE;
    void *a = crm_hblas_ptr(&g->alpha), *b = crm_hblas_ptr(&g->beta);
    if (plain && g->ctype == CUDA_R_32F)
        return crm_rt.cublasSgemmStridedBatched(g->h, g->ta, g->tb, g->m, g->n, g->k, a, CRM__P(A), g->lda, sa,
                                                CRM__P(B), g->ldb, sb, b, CRM__P(C), g->ldc, sc, batch);
    if (plain && g->ctype == CUDA_R_64F)
        return crm_rt.cublasDgemmStridedBatched(g->h, g->ta, g->tb, g->m, g->n, g->k, a, CRM__P(A), g->lda, sa,
                                                CRM__P(B), g->ldb, sb, b, CRM__P(C), g->ldc, sc, batch);
    return crm_rt.cublasGemmStridedBatchedEx(g->h, g->ta, g->tb, g->m, g->n, g->k, a, CRM__P(A), g->atype, g->lda, sa,
                                             CRM__P(B), g->btype, g->ldb, sb, b, CRM__P(C), g->ctype, g->ldc, sc,
                                             batch, g->compute, g->algo);
}

/* plain: the S/D forms, else the Ex form. */
static cublasStatus_t crm__gemm_strided_call(crm_session *s, uint64_t handle, int have, crm__gemm *g, int plain,
                                             uint64_t A, int64_t sa, uint64_t B, int64_t sb, uint64_t C, int64_t sc,
                                             int batch)
{
    int quick;
    cublasStatus_t st = crm__gemm_prepare(s, handle, have, g, &quick);
    if (st == CUBLAS_STATUS_SUCCESS && batch < 0)
        st = CUBLAS_STATUS_INVALID_VALUE;
    if (st != CUBLAS_STATUS_SUCCESS || quick || batch == 0)
        return st;
    return crm__gemm_strided(s, g, plain, A, sa, B, sb, C, sc, batch);
}

cublasStatus_t crm_srv_cublasSgemmStridedBatched(crm_session *s, uint64_t handle, int pmode, int transa, int transb,
                                                 int m, int n, int k, uint64_t alpha, uint64_t A, int lda,
                                                 int64_t strideA, uint64_t B, int ldb, int64_t strideB, uint64_t beta,
                                                 uint64_t C, int ldc, int64_t strideC, int batchCount)
{
    crm__gemm g = CRM__GEMM(pmode, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc, CUDA_R_32F, CUDA_R_32F,
                            CUDA_R_32F, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    return crm__gemm_strided_call(s, handle, crm_rt.cublasSgemmStridedBatched != NULL, &g, 1, A, strideA, B,
                                  strideB, C, strideC, batchCount);
}

cublasStatus_t crm_srv_cublasDgemmStridedBatched(crm_session *s, uint64_t handle, int pmode, int transa, int transb,
                                                 int m, int n, int k, uint64_t alpha, uint64_t A, int lda,
                                                 int64_t strideA, uint64_t B, int ldb, int64_t strideB, uint64_t beta,
                                                 uint64_t C, int ldc, int64_t strideC, int batchCount)
{
    crm__gemm g = CRM__GEMM(pmode, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc, CUDA_R_64F, CUDA_R_64F,
                            CUDA_R_64F, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT);
    return crm__gemm_strided_call(s, handle, crm_rt.cublasDgemmStridedBatched != NULL, &g, 1, A, strideA, B,
                                  strideB, C, strideC, batchCount);
}

cublasStatus_t crm_srv_cublasGemmStridedBatchedEx(crm_session *s, uint64_t handle, int pmode, int transa, int transb,
                                                  int m, int n, int k, uint64_t alpha, uint64_t A, int Atype, int lda,
                                                  int64_t strideA, uint64_t B, int Btype, int ldb, int64_t strideB,
                                                  uint64_t beta, uint64_t C, int Ctype, int ldc, int64_t strideC,
                                                  int batchCount, int computeType, int algo)
{
    crm__gemm g = CRM__GEMM(pmode, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc, Atype, Btype, Ctype,
                            computeType, algo);
    return crm__gemm_strided_call(s, handle, crm_rt.cublasGemmStridedBatchedEx != NULL, &g, 0, A, strideA,
                                  B, strideB, C, strideC, batchCount);
}

/* Pointer-array batches: the arrays are read, checked and copied by the server. */
static cublasStatus_t crm__gemm_batched(crm_session *s, uint64_t handle, int have, crm__gemm *g, int plain,
                                        uint64_t Aarray, uint64_t Barray, uint64_t Carray, int batch)
{
    int quick;
    crm_hblas_arrays arr;
    cublasStatus_t st = crm__gemm_prepare(s, handle, have, g, &quick);
    if (st == CUBLAS_STATUS_SUCCESS && batch < 0)
        st = CUBLAS_STATUS_INVALID_VALUE;
    if (st != CUBLAS_STATUS_SUCCESS || quick || batch == 0)
        return st;
    const uint64_t addr[3] = {Aarray, Barray, Carray};
    if ((st = crm_hblas_ptr_arrays(s, g->h, 3, addr, g->bytes, batch, &arr)) != CUBLAS_STATUS_SUCCESS)
        return st;
    void *a = crm_hblas_ptr(&g->alpha), *b = crm_hblas_ptr(&g->beta);
    if (plain)
        st = crm_rt.cublasSgemmBatched(g->h, g->ta, g->tb, g->m, g->n, g->k, a, (const float *const *)arr.out[0],
                                       g->lda, (const float *const *)arr.out[1], g->ldb, b,
                                       (float *const *)arr.out[2], g->ldc, batch);
    else
        st = crm_rt.cublasGemmBatchedEx(g->h, g->ta, g->tb, g->m, g->n, g->k, a, (const void *const *)arr.out[0],
                                        g->atype, g->lda, (const void *const *)arr.out[1], g->btype, g->ldb, b,
                                        (void *const *)arr.out[2], g->ctype, g->ldc, batch, g->compute, g->algo);
    crm_hblas_ptr_arrays_free(&arr);
    return st;
}

cublasStatus_t crm_srv_cublasSgemmBatched(crm_session *s, uint64_t handle, int pmode, int transa, int transb, int m,
                                          int n, int k, uint64_t alpha, uint64_t Aarray, int lda, uint64_t Barray,
                                          int ldb, uint64_t beta, uint64_t Carray, int ldc, int batchCount)
{
    crm__gemm g = CRM__GEMM(pmode, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc, CUDA_R_32F, CUDA_R_32F,
                            CUDA_R_32F, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    return crm__gemm_batched(s, handle, crm_rt.cublasSgemmBatched != NULL, &g, 1, Aarray, Barray, Carray,
                             batchCount);
}

cublasStatus_t crm_srv_cublasGemmBatchedEx(crm_session *s, uint64_t handle, int pmode, int transa, int transb, int m,
                                           int n, int k, uint64_t alpha, uint64_t Aarray, int Atype, int lda,
                                           uint64_t Barray, int Btype, int ldb, uint64_t beta, uint64_t Carray,
                                           int Ctype, int ldc, int batchCount, int computeType, int algo)
{
    crm__gemm g = CRM__GEMM(pmode, transa, transb, m, n, k, alpha, lda, ldb, beta, ldc, Atype, Btype, Ctype,
                            computeType, algo);
    return crm__gemm_batched(s, handle, crm_rt.cublasGemmBatchedEx != NULL, &g, 0, Aarray, Barray, Carray,
                             batchCount);
}
