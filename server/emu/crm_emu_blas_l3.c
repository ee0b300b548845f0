/* crm_emu_blas_l3.c -- the emulated device's level 3 calls whose cuBLAS form CBLAS
 * lacks, with the signature the generated rows call them by (protocol/cublas.api:
 * CBLAS's order and enums first): trmm, which cuBLAS writes out of place (C =
 * alpha op(A) B; CBLAS's works in place, so B is first copied into C), and dgmm
 * (C = A diag(x) or diag(x) A), syrkx and herkx, which CBLAS has not. */
#include <stdlib.h>
#include <string.h>
#include <cblas.h>
#include "server/emu/crm_emu_blas.h"

/* Copies the m x n matrix B (leading dimension ldb) into C (ldc); nothing when they
 * are the same memory, which cuBLAS allows with ldb == ldc. */
static void crm__copy_mat(const void *B, int ldb, void *C, int ldc, int m, int n, size_t elem)
{
    if (B == C)
        return;
    for (int j = 0; j < n; j++)
        memmove((char *)C + (size_t)j * (size_t)ldc * elem, (const char *)B + (size_t)j * (size_t)ldb * elem,
                (size_t)m * elem);
}

#define CRM__TRMM(NAME, CBLAS, T, ALPHA_T, ALPHA_ARG)                                                          \
    void NAME(int order, int side, int uplo, int trans, int diag, int m, int n, ALPHA_T alpha, const void *A,    \
              int lda, const void *B, int ldb, void *C, int ldc)                                               \
    {                                                                                                          \
        crm__copy_mat(B, ldb, C, ldc, m, n, sizeof(T));                                                        \
        CBLAS((CBLAS_ORDER)order, (CBLAS_SIDE)side, (CBLAS_UPLO)uplo, (CBLAS_TRANSPOSE)trans, (CBLAS_DIAG)diag, m, \
              n, ALPHA_ARG, A, lda, C, ldc);                                                                   \
    }

CRM__TRMM(crm_emu_strmm, cblas_strmm, float, float, alpha)
CRM__TRMM(crm_emu_dtrmm, cblas_dtrmm, double, double, alpha)
CRM__TRMM(crm_emu_ctrmm, cblas_ctrmm, cuComplex, const void *, alpha)
CRM__TRMM(crm_emu_ztrmm, cblas_ztrmm, cuDoubleComplex, const void *, alpha)

#define CRM__DGMM(NAME, T, MUL)                                                                                \
    void NAME(int order, int side, int m, int n, const void *A, int lda, const void *x, int incx, void *C,       \
              int ldc)                                                                                         \
    {                                                                                                          \
        const T *a = A, *v = x;                                                                                \
        T *c = C;                                                                                              \
        (void)order;                                                                                           \
        for (int j = 0; j < n; j++)                                                                            \
            for (int i = 0; i < m; i++) {                                                                      \
                T s = side == CblasLeft ? v[crm__blas_at(i, m, incx)] : v[crm__blas_at(j, n, incx)];           \
                T e = a[i + (size_t)j * (size_t)lda];                                                          \
                c[i + (size_t)j * (size_t)ldc] = MUL(e, s);                                                    \
            }                                                                                                  \
    }

#define CRM__REAL_MUL(a, b) ((a) * (b))
#define CRM__CMUL(a, b) ((__typeof__(a)){(a).x * (b).x - (a).y * (b).y, (a).x * (b).y + (a).y * (b).x})

CRM__DGMM(crm_emu_sdgmm, float, CRM__REAL_MUL)
CRM__DGMM(crm_emu_ddgmm, double, CRM__REAL_MUL)
CRM__DGMM(crm_emu_cdgmm, cuComplex, CRM__CMUL)
CRM__DGMM(crm_emu_zdgmm, cuDoubleComplex, CRM__CMUL)

/* syrkx and herkx: the triangle uplo of C becomes alpha op(A) op(B)^T (herkx:
 * ^H) + beta C. The product goes to a scratch n x n matrix through CBLAS's gemm;
 * beta 0 never reads C; herkx keeps C's diagonal real. */
#define CRM__KX_COMBINE(NAME, R)                                                                               \
    static void NAME(int uplo, int n, int parts, const R *t, R *c, int ldc, R br, R bi, int herm)              \
    {                                                                                                          \
        for (int j = 0; j < n; j++)                                                                            \
            for (int i = uplo == CblasUpper ? 0 : j; i <= (uplo == CblasUpper ? j : n - 1); i++) {              \
                const R *tv = t + ((size_t)i + (size_t)j * (size_t)n) * (size_t)parts;                         \
                R *cv = c + ((size_t)i + (size_t)j * (size_t)ldc) * (size_t)parts;                             \
                R re = tv[0], im = parts == 2 ? tv[1] : 0;                                                     \
                if (br != 0 || bi != 0) {                                                                      \
                    re += br * cv[0] - (parts == 2 ? bi * cv[1] : 0);                                          \
                    im += parts == 2 ? br * cv[1] + bi * cv[0] : 0;                                            \
                }                                                                                              \
                cv[0] = re;                                                                                    \
                if (parts == 2)                                                                                \
                    cv[1] = herm && i == j ? 0 : im;                                                           \
            }                                                                                                  \
    }
CRM__KX_COMBINE(crm__kx_combine_f, float)
CRM__KX_COMBINE(crm__kx_combine_d, double)

/* The second operand's operation: op(B)^T, or ^H for herkx. */
static int crm__kx_opb(int trans, int herm)
{
    if (trans != CblasNoTrans)
        return CblasNoTrans;
    return herm ? CblasConjTrans : CblasTrans;
}

#define CRM__KX(NAME, R, PARTS, HERM, COMBINE, GEMM_CALL, ALPHA_T, BETA_T, BR, BI)                             \
    cublasStatus_t NAME(int order, int uplo, int trans, int n, int k, ALPHA_T alpha, const void *A, int lda,  \
                        const void *B, int ldb, BETA_T beta, void *C, int ldc)                                 \
    {                                                                                                          \
        R *t = calloc((size_t)n * (size_t)n * PARTS, sizeof(R)), zero[2] = {0, 0};                             \
        if (t == NULL)                                                                                         \
            return CUBLAS_STATUS_ALLOC_FAILED;                                                                 \
        (void)zero;                                                                                            \
        GEMM_CALL;                                                                                             \
        COMBINE(uplo, n, PARTS, t, C, ldc, BR, BI, HERM);                                                      \
        free(t);                                                                                               \
        return CUBLAS_STATUS_SUCCESS;                                                                          \
    }

#define CRM__KX_GEMM(G, ALPHA, ZERO, HERM)                                                                     \
    G((CBLAS_ORDER)order, (CBLAS_TRANSPOSE)trans, (CBLAS_TRANSPOSE)crm__kx_opb(trans, HERM), n, n, k, ALPHA, A, lda, \
      B, ldb, ZERO, t, n)

CRM__KX(crm_emu_ssyrkx, float, 1, 0, crm__kx_combine_f, CRM__KX_GEMM(cblas_sgemm, alpha, 0.0f, 0), float, float,
        beta, 0)
CRM__KX(crm_emu_dsyrkx, double, 1, 0, crm__kx_combine_d, CRM__KX_GEMM(cblas_dgemm, alpha, 0.0, 0), double, double,
        beta, 0)
CRM__KX(crm_emu_csyrkx, float, 2, 0, crm__kx_combine_f, CRM__KX_GEMM(cblas_cgemm, alpha, zero, 0), const void *,
        const void *, ((const float *)beta)[0], ((const float *)beta)[1])
CRM__KX(crm_emu_zsyrkx, double, 2, 0, crm__kx_combine_d, CRM__KX_GEMM(cblas_zgemm, alpha, zero, 0), const void *,
        const void *, ((const double *)beta)[0], ((const double *)beta)[1])
CRM__KX(crm_emu_cherkx, float, 2, 1, crm__kx_combine_f, CRM__KX_GEMM(cblas_cgemm, alpha, zero, 1), const void *,
        float, beta, 0)
CRM__KX(crm_emu_zherkx, double, 2, 1, crm__kx_combine_d, CRM__KX_GEMM(cblas_zgemm, alpha, zero, 1), const void *,
        double, beta, 0)
