/* crm_emu_blas_gemm.c -- emulated cuBLAS GEMM family: Sgemm, Dgemm, Hgemm, GemmEx,
 * their strided-batched and pointer-array batched forms.
 *
 * One problem is described by crm__gemm (shape, data types, alpha/beta as double)
 * and run by crm__gemm_run: double data through cblas_dgemm, everything else
 * (float, half, bfloat16) through cblas_sgemm on float copies of the operands,
 * with C converted back only where the m x n result lies (gaps between columns
 * are never written). k == 0 or alpha == 0 leaves A and B unread; beta == 0
 * leaves C unread. Batched forms check every operand of every item before any
 * item runs, so a bad pointer changes nothing.
 */
#include "server/emu/crm_emu_blas.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>

/* One gemm problem after the argument rules. */
typedef struct crm__gemm {
    int ta, tb, m, n, k, lda, ldb, ldc;
    int atype, btype, ctype; /* CUDA_R_32F, CUDA_R_64F, CUDA_R_16F or CUDA_R_16BF */
    size_t scale;            /* bytes of alpha and beta */
    int scale_half;          /* 1 when they are __half */
    double alpha, beta;
    uint64_t bytes[3];       /* footprints of A, B, C */
} crm__gemm;

/* Checks the data types against the compute type; NOT_SUPPORTED for the
 * combinations the CPU does not emulate. */
static cublasStatus_t crm__gemm_types(crm__gemm *g, int compute)
{
    int a = g->atype, c = g->ctype;
    if (g->btype != a)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    switch (compute) {
    case CUBLAS_COMPUTE_64F: case CUBLAS_COMPUTE_64F_PEDANTIC: case CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT:
        g->scale = 8;
        return a == CUDA_R_64F && c == CUDA_R_64F ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
    case CUBLAS_COMPUTE_16F: case CUBLAS_COMPUTE_16F_PEDANTIC:
        g->scale = 2;
        g->scale_half = 1;
        return a == CUDA_R_16F && c == CUDA_R_16F ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
    case CUBLAS_COMPUTE_32F: case CUBLAS_COMPUTE_32F_PEDANTIC: case CUBLAS_COMPUTE_32F_FAST_16F:
    case CUBLAS_COMPUTE_32F_FAST_16BF: case CUBLAS_COMPUTE_32F_FAST_TF32: case CUBLAS_COMPUTE_32F_EMULATED_16BFX9:
        g->scale = 4;
        if (a == CUDA_R_32F)
            return c == CUDA_R_32F ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
        if (a == CUDA_R_16F || a == CUDA_R_16BF)
            return c == a || c == CUDA_R_32F ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
        return CUBLAS_STATUS_NOT_SUPPORTED;
    default:
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
}

/* Argument rules, data types and footprints; SUCCESS with g filled. */
static cublasStatus_t crm__gemm_prepare(crm__gemm *g, int compute)
{
    cublasStatus_t st = crm_blas_gemm_check(g->ta, g->tb, g->m, g->n, g->k, g->lda, g->ldb, g->ldc);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = crm__gemm_types(g, compute);
    if (st == CUBLAS_STATUS_SUCCESS &&
        crm_blas_gemm_bytes(g->ta, g->tb, g->m, g->n, g->k, g->lda, g->ldb, g->ldc, crm_blas_type_size(g->atype),
                            crm_blas_type_size(g->btype), crm_blas_type_size(g->ctype), g->bytes) != 0)
        st = CUBLAS_STATUS_INVALID_VALUE;
    return st;
}

/* Reads alpha and beta by the handle's pointer mode. */
static cublasStatus_t crm__gemm_scalars(cublasHandle_t h, crm__gemm *g, const void *alpha, const void *beta)
{
    unsigned char a[16], b[16];
    cublasStatus_t st = crm__blas_get_scalar(h, alpha, g->scale, a);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = crm__blas_get_scalar(h, beta, g->scale, b);
    if (st == CUBLAS_STATUS_SUCCESS) {
        g->alpha = crm__scale_value(a, g->scale, g->scale_half);
        g->beta = crm__scale_value(b, g->scale, g->scale_half);
    }
    return st;
}

/* Checks the operands of one item against device memory. */
static cublasStatus_t crm__gemm_operands(const crm__gemm *g, const void *A, const void *B, const void *C)
{
    if (crm__blas_dev(A, g->bytes[0]) != CUBLAS_STATUS_SUCCESS || crm__blas_dev(B, g->bytes[1]) != CUBLAS_STATUS_SUCCESS ||
        crm__blas_dev(C, g->bytes[2]) != CUBLAS_STATUS_SUCCESS)
        return CUBLAS_STATUS_INVALID_VALUE;
    return CUBLAS_STATUS_SUCCESS;
}

/* Elements of the half, bfloat16 and float operands, in float. */
static float crm__load(int type, const void *p, size_t i)
{
    return (float)crm__elem_real(type, p, i);
}

static void crm__store(int type, void *p, size_t i, float v)
{
    crm__elem_put_real(type, p, i, v);
}

/* A float copy of `bytes` of operand X of type t (the operand itself when float);
 * *owned is what to free. NULL when memory runs out. */
static const float *crm__as_float(int type, const void *X, uint64_t bytes, float **owned)
{
    *owned = NULL;
    if (type == CUDA_R_32F)
        return X;
    size_t count = (size_t)(bytes / crm_blas_type_size(type));
    float *f = malloc((count ? count : 1) * sizeof *f);
    for (size_t i = 0; f != NULL && i < count; i++)
        f[i] = crm__load(type, X, i);
    *owned = f;
    return f;
}

/* C = beta C on the m x n result only; beta == 0 clears without reading. */
static void crm__scale_c(const crm__gemm *g, void *C)
{
    for (int j = 0; j < g->n; j++) {
        for (int i = 0; i < g->m; i++) {
            size_t at = (size_t)j * (size_t)g->ldc + (size_t)i;
            if (g->ctype == CUDA_R_64F)
                ((double *)C)[at] = g->beta == 0.0 ? 0.0 : g->beta * ((double *)C)[at];
            else
                crm__store(g->ctype, C, at, g->beta == 0.0 ? 0.0f : (float)g->beta * crm__load(g->ctype, C, at));
        }
    }
}

/* The float path: A and B as float, C through a dense m x n float buffer unless float. */
static cublasStatus_t crm__gemm_float(const crm__gemm *g, const void *A, const void *B, void *C)
{
    float *ownA, *ownB, *cf = NULL;
    const float *af = crm__as_float(g->atype, A, g->bytes[0], &ownA);
    const float *bf = crm__as_float(g->btype, B, g->bytes[1], &ownB);
    int ldc = g->ldc;
    cublasStatus_t st = af != NULL && bf != NULL ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
    if (st == CUBLAS_STATUS_SUCCESS && g->ctype != CUDA_R_32F) {
        cf = malloc((size_t)g->m * (size_t)g->n * sizeof *cf);
        ldc = g->m;
        for (int j = 0; cf != NULL && j < g->n; j++)
            for (int i = 0; i < g->m; i++)
                cf[(size_t)j * (size_t)g->m + i] = crm__load(g->ctype, C, (size_t)j * (size_t)g->ldc + (size_t)i);
        if (cf == NULL)
            st = CUBLAS_STATUS_ALLOC_FAILED;
    }
    if (st == CUBLAS_STATUS_SUCCESS) {
        float *out = cf != NULL ? cf : C;
        cblas_sgemm(CblasColMajor, crm__blas_trans(g->ta), crm__blas_trans(g->tb), g->m, g->n, g->k,
                    (float)g->alpha, af, g->lda, bf, g->ldb, (float)g->beta, out, ldc);
        for (int j = 0; cf != NULL && j < g->n; j++)
            for (int i = 0; i < g->m; i++)
                crm__store(g->ctype, C, (size_t)j * (size_t)g->ldc + (size_t)i, cf[(size_t)j * (size_t)g->m + i]);
    }
    free(ownA);
    free(ownB);
    free(cf);
    return st;
}

/* Runs one checked item. */
static cublasStatus_t crm__gemm_run(const crm__gemm *g, const void *A, const void *B, void *C)
{
    if (g->k == 0 || g->alpha == 0.0) {
        crm__scale_c(g, C);
        return CUBLAS_STATUS_SUCCESS;
    }
    if (g->beta == 0.0)
        crm__scale_c(g, C); /* clear: C must not be read */
    if (g->ctype == CUDA_R_64F) {
        cblas_dgemm(CblasColMajor, crm__blas_trans(g->ta), crm__blas_trans(g->tb), g->m, g->n, g->k, g->alpha, A,
                    g->lda, B, g->ldb, g->beta, C, g->ldc);
        return CUBLAS_STATUS_SUCCESS;
    }
    return crm__gemm_float(g, A, B, C);
}

/* A single gemm of any supported types. */
static cublasStatus_t crm__gemm_one(cublasHandle_t h, crm__gemm *g, int compute, const void *alpha, const void *A,
                                    const void *B, const void *beta, void *C)
{
    cublasStatus_t st = crm__blas_begin(h);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    if ((st = crm__gemm_prepare(g, compute)) != CUBLAS_STATUS_SUCCESS || g->m == 0 || g->n == 0)
        return crm__blas_end(st);
    if ((st = crm__gemm_scalars(h, g, alpha, beta)) == CUBLAS_STATUS_SUCCESS &&
        (st = crm__gemm_operands(g, A, B, C)) == CUBLAS_STATUS_SUCCESS)
        st = crm__gemm_run(g, A, B, C);
    return crm__blas_end(st);
}

#define CRM__GEMM_INIT(TA, TB, M, N, K, LDA, LDB, LDC, AT, BT, CT)                                      \
    {.ta = (TA), .tb = (TB), .m = (M), .n = (N), .k = (K), .lda = (LDA), .ldb = (LDB), .ldc = (LDC),   \
     .atype = (AT), .btype = (BT), .ctype = (CT)}

CRM_EXPORT cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                         int m, int n, int k, const float *alpha, const float *A, int lda,
                                         const float *B, int ldb, const float *beta, float *C, int ldc)
{
    crm__gemm g = CRM__GEMM_INIT(transa, transb, m, n, k, lda, ldb, ldc, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F);
    return crm__gemm_one(handle, &g, CUBLAS_COMPUTE_32F, alpha, A, B, beta, C);
}

CRM_EXPORT cublasStatus_t cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                         int m, int n, int k, const double *alpha, const double *A, int lda,
                                         const double *B, int ldb, const double *beta, double *C, int ldc)
{
    crm__gemm g = CRM__GEMM_INIT(transa, transb, m, n, k, lda, ldb, ldc, CUDA_R_64F, CUDA_R_64F, CUDA_R_64F);
    return crm__gemm_one(handle, &g, CUBLAS_COMPUTE_64F, alpha, A, B, beta, C);
}

/* __half is a C++ type: in C its values are their uint16_t bits (same ABI). */
CRM_EXPORT cublasStatus_t cublasHgemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                      int n, int k, const uint16_t *alpha, const uint16_t *A, int lda,
                                      const uint16_t *B, int ldb, const uint16_t *beta, uint16_t *C, int ldc);
CRM_EXPORT cublasStatus_t cublasHgemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                      int n, int k, const uint16_t *alpha, const uint16_t *A, int lda,
                                      const uint16_t *B, int ldb, const uint16_t *beta, uint16_t *C, int ldc)
{
    crm__gemm g = CRM__GEMM_INIT(transa, transb, m, n, k, lda, ldb, ldc, CUDA_R_16F, CUDA_R_16F, CUDA_R_16F);
    return crm__gemm_one(handle, &g, CUBLAS_COMPUTE_16F, alpha, A, B, beta, C);
}

CRM_EXPORT cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                       int n, int k, const void *alpha, const void *A, cudaDataType Atype, int lda,
                                       const void *B, cudaDataType Btype, int ldb, const void *beta, void *C,
                                       cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                                       cublasGemmAlgo_t algo)
{
    (void)algo; /* every algorithm computes the same product here */
    if (Ctype == CUDA_C_32F || Ctype == CUDA_C_64F) /* crm_emu_blas_cgemm.c */
        return crm__emu_gemm_complex(handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C,
                                     Ctype, ldc, computeType);
    crm__gemm g = CRM__GEMM_INIT(transa, transb, m, n, k, lda, ldb, ldc, Atype, Btype, Ctype);
    return crm__gemm_one(handle, &g, computeType, alpha, A, B, beta, C);
}

/* --- strided batches ------------------------------------------------------------------ */

static cublasStatus_t crm__gemm_strided(cublasHandle_t h, crm__gemm *g, int compute, const void *alpha,
                                        const void *A, long long sa, const void *B, long long sb, const void *beta,
                                        void *C, long long sc, int batch)
{
    cublasStatus_t st = crm__blas_begin(h);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    if ((st = crm__gemm_prepare(g, compute)) == CUBLAS_STATUS_SUCCESS && batch < 0)
        st = CUBLAS_STATUS_INVALID_VALUE;
    if (st != CUBLAS_STATUS_SUCCESS || g->m == 0 || g->n == 0 || batch == 0)
        return crm__blas_end(st);
    size_t ea = crm_blas_type_size(g->atype), eb = crm_blas_type_size(g->btype), ec = crm_blas_type_size(g->ctype);
    if ((st = crm__gemm_scalars(h, g, alpha, beta)) != CUBLAS_STATUS_SUCCESS)
        return crm__blas_end(st);
    if (crm__blas_strided(A, g->bytes[0], sa, batch, ea) != CUBLAS_STATUS_SUCCESS ||
        crm__blas_strided(B, g->bytes[1], sb, batch, eb) != CUBLAS_STATUS_SUCCESS ||
        crm__blas_strided(C, g->bytes[2], sc, batch, ec) != CUBLAS_STATUS_SUCCESS)
        return crm__blas_end(CUBLAS_STATUS_INVALID_VALUE);
    double deadline = crm__blas_deadline();
    for (int i = 0; i < batch && st == CUBLAS_STATUS_SUCCESS; i++) {
        if (crm__blas_overdue(deadline))
            return crm__blas_end(CUBLAS_STATUS_EXECUTION_FAILED);
        st = crm__gemm_run(g, (const char *)A + (ptrdiff_t)i * sa * (ptrdiff_t)ea,
                           (const char *)B + (ptrdiff_t)i * sb * (ptrdiff_t)eb,
                           (char *)C + (ptrdiff_t)i * sc * (ptrdiff_t)ec);
    }
    return crm__blas_end(st);
}

CRM_EXPORT cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                                    cublasOperation_t transb, int m, int n, int k, const float *alpha,
                                                    const float *A, int lda, long long int strideA, const float *B,
                                                    int ldb, long long int strideB, const float *beta, float *C,
                                                    int ldc, long long int strideC, int batchCount)
{
    crm__gemm g = CRM__GEMM_INIT(transa, transb, m, n, k, lda, ldb, ldc, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F);
    return crm__gemm_strided(handle, &g, CUBLAS_COMPUTE_32F, alpha, A, strideA, B, strideB, beta, C, strideC,
                             batchCount);
}

CRM_EXPORT cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                                    cublasOperation_t transb, int m, int n, int k, const double *alpha,
                                                    const double *A, int lda, long long int strideA, const double *B,
                                                    int ldb, long long int strideB, const double *beta, double *C,
                                                    int ldc, long long int strideC, int batchCount)
{
    crm__gemm g = CRM__GEMM_INIT(transa, transb, m, n, k, lda, ldb, ldc, CUDA_R_64F, CUDA_R_64F, CUDA_R_64F);
    return crm__gemm_strided(handle, &g, CUBLAS_COMPUTE_64F, alpha, A, strideA, B, strideB, beta, C, strideC,
                             batchCount);
}

CRM_EXPORT cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                                     cublasOperation_t transb, int m, int n, int k, const void *alpha,
                                                     const void *A, cudaDataType Atype, int lda, long long int strideA,
                                                     const void *B, cudaDataType Btype, int ldb, long long int strideB,
                                                     const void *beta, void *C, cudaDataType Ctype, int ldc,
                                                     long long int strideC, int batchCount,
                                                     cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
    (void)algo;
    crm__gemm g = CRM__GEMM_INIT(transa, transb, m, n, k, lda, ldb, ldc, Atype, Btype, Ctype);
    return crm__gemm_strided(handle, &g, computeType, alpha, A, strideA, B, strideB, beta, C, strideC, batchCount);
}

/* --- batches of pointers ---------------------------------------------------------------- */

/* Checks the three device arrays of `batch` pointers and every pointer in them. */
static cublasStatus_t crm__gemm_arrays(const crm__gemm *g, const void *const *A, const void *const *B,
                                       void *const *C, int batch)
{
    uint64_t bytes = (uint64_t)batch * sizeof(void *);
    if (crm__blas_dev(A, bytes) != CUBLAS_STATUS_SUCCESS || crm__blas_dev(B, bytes) != CUBLAS_STATUS_SUCCESS ||
        crm__blas_dev(C, bytes) != CUBLAS_STATUS_SUCCESS)
        return CUBLAS_STATUS_INVALID_VALUE;
    for (int i = 0; i < batch; i++)
        if (crm__gemm_operands(g, A[i], B[i], C[i]) != CUBLAS_STATUS_SUCCESS)
            return CUBLAS_STATUS_INVALID_VALUE;
    return CUBLAS_STATUS_SUCCESS;
}

static cublasStatus_t crm__gemm_batched(cublasHandle_t h, crm__gemm *g, int compute, const void *alpha,
                                        const void *const *A, const void *const *B, const void *beta, void *const *C,
                                        int batch)
{
    cublasStatus_t st = crm__blas_begin(h);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    if ((st = crm__gemm_prepare(g, compute)) == CUBLAS_STATUS_SUCCESS && batch < 0)
        st = CUBLAS_STATUS_INVALID_VALUE;
    if (st != CUBLAS_STATUS_SUCCESS || g->m == 0 || g->n == 0 || batch == 0)
        return crm__blas_end(st);
    double deadline = crm__blas_deadline();
    if ((st = crm__gemm_scalars(h, g, alpha, beta)) == CUBLAS_STATUS_SUCCESS &&
        (st = crm__gemm_arrays(g, A, B, C, batch)) == CUBLAS_STATUS_SUCCESS)
        for (int i = 0; i < batch && st == CUBLAS_STATUS_SUCCESS; i++)
            st = crm__blas_overdue(deadline) ? CUBLAS_STATUS_EXECUTION_FAILED : crm__gemm_run(g, A[i], B[i], C[i]);
    return crm__blas_end(st);
}

CRM_EXPORT cublasStatus_t cublasSgemmBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                             int m, int n, int k, const float *alpha, const float *const Aarray[],
                                             int lda, const float *const Barray[], int ldb, const float *beta,
                                             float *const Carray[], int ldc, int batchCount)
{
    crm__gemm g = CRM__GEMM_INIT(transa, transb, m, n, k, lda, ldb, ldc, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F);
    return crm__gemm_batched(handle, &g, CUBLAS_COMPUTE_32F, alpha, (const void *const *)Aarray,
                             (const void *const *)Barray, beta, (void *const *)Carray, batchCount);
}

CRM_EXPORT cublasStatus_t cublasGemmBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                              cublasOperation_t transb, int m, int n, int k, const void *alpha,
                                              const void *const Aarray[], cudaDataType Atype, int lda,
                                              const void *const Barray[], cudaDataType Btype, int ldb,
                                              const void *beta, void *const Carray[], cudaDataType Ctype, int ldc,
                                              int batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
    (void)algo;
    crm__gemm g = CRM__GEMM_INIT(transa, transb, m, n, k, lda, ldb, ldc, Atype, Btype, Ctype);
    return crm__gemm_batched(handle, &g, computeType, alpha, Aarray, Barray, beta, Carray, batchCount);
}
