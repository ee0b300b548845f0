/* crm_emu_blas_geam.c -- the emulated device's geam in S, D, C and Z (C = alpha op(A)
 * + beta op(B)), which CBLAS has not, with the signature the generated rows call it
 * by (protocol/cublas.api: CBLAS's order and transpose enums first). Plain loops in
 * double (complex) precision; a zero alpha (beta) leaves A (B) unread, as cuBLAS
 * promises, so it may be NULL then. C may be A or B (in place, with op N and the
 * same leading dimension: each element is read before it is written). */
#include <complex.h>
#include <cblas.h>
#include "server/emu/crm_emu_blas.h"

/* Element (i, j) of op(X), X of data type t with leading dimension ld. */
static double complex crm__op_elem(int t, const void *X, int op, int ld, int i, int j)
{
    size_t at = op == CblasNoTrans ? (size_t)j * (size_t)ld + (size_t)i : (size_t)i * (size_t)ld + (size_t)j;
    double complex v = crm__elem_get(t, X, at);
    return op == CblasConjTrans ? conj(v) : v;
}

static void crm__geam(int t, int ta, int tb, int m, int n, double complex alpha, const void *A, int lda,
                      double complex beta, const void *B, int ldb, void *C, int ldc)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double complex v = 0;
            if (alpha != 0)
                v += alpha * crm__op_elem(t, A, ta, lda, i, j);
            if (beta != 0)
                v += beta * crm__op_elem(t, B, tb, ldb, i, j);
            crm__elem_put(t, C, (size_t)j * (size_t)ldc + (size_t)i, v);
        }
}

void crm_emu_sgeam(int order, int ta, int tb, int m, int n, float alpha, const void *A, int lda, float beta,
                   const void *B, int ldb, void *C, int ldc)
{
    (void)order; /* column-major */
    crm__geam(CUDA_R_32F, ta, tb, m, n, alpha, A, lda, beta, B, ldb, C, ldc);
}

void crm_emu_dgeam(int order, int ta, int tb, int m, int n, double alpha, const void *A, int lda, double beta,
                   const void *B, int ldb, void *C, int ldc)
{
    (void)order;
    crm__geam(CUDA_R_64F, ta, tb, m, n, alpha, A, lda, beta, B, ldb, C, ldc);
}

void crm_emu_cgeam(int order, int ta, int tb, int m, int n, const void *alpha, const void *A, int lda,
                   const void *beta, const void *B, int ldb, void *C, int ldc)
{
    (void)order;
    crm__geam(CUDA_C_32F, ta, tb, m, n, crm__elem_get(CUDA_C_32F, alpha, 0), A, lda,
              crm__elem_get(CUDA_C_32F, beta, 0), B, ldb, C, ldc);
}

void crm_emu_zgeam(int order, int ta, int tb, int m, int n, const void *alpha, const void *A, int lda,
                   const void *beta, const void *B, int ldb, void *C, int ldc)
{
    (void)order;
    crm__geam(CUDA_C_64F, ta, tb, m, n, crm__elem_get(CUDA_C_64F, alpha, 0), A, lda,
              crm__elem_get(CUDA_C_64F, beta, 0), B, ldb, C, ldc);
}
