/* crm_emu_blas_l3.c -- the emulated device's level 3 calls whose cuBLAS form CBLAS
 * lacks, with the signature the generated rows call them by (protocol/cublas.api:
 * CBLAS's order and enums first): trmm, which cuBLAS writes out of place (C =
 * alpha op(A) B; CBLAS's works in place, so B is first copied into C), and dgmm
 * (C = A diag(x) or diag(x) A), which CBLAS has not. */
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

/* Offset, in elements, of the i-th of n elements inc apart from the lowest one. */
static size_t crm__at(int i, int n, int inc)
{
    return inc >= 0 ? (size_t)i * (size_t)inc : (size_t)(n - 1 - i) * (size_t)(-(int64_t)inc);
}

#define CRM__DGMM(NAME, T, MUL)                                                                                \
    void NAME(int order, int side, int m, int n, const void *A, int lda, const void *x, int incx, void *C,       \
              int ldc)                                                                                         \
    {                                                                                                          \
        const T *a = A, *v = x;                                                                                \
        T *c = C;                                                                                              \
        (void)order;                                                                                           \
        for (int j = 0; j < n; j++)                                                                            \
            for (int i = 0; i < m; i++) {                                                                      \
                T s = side == CblasLeft ? v[crm__at(i, m, incx)] : v[crm__at(j, n, incx)];                     \
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
