/* crm_emu_blas_csym.c -- the emulated device's complex symmetric (not Hermitian)
 * level 2 calls, which CBLAS has not: symv, syr and syr2 in C and Z, with the
 * signature the generated rows call them by (protocol/cublas.api: CBLAS's order and
 * triangle enums first, complex scalars by address). Plain loops in double complex
 * precision over the stored triangle of A; vectors in the reference BLAS's order. */
#include <complex.h>
#include <cblas.h>
#include "server/emu/crm_emu_blas.h"

/* Offset of element (i, j) of the symmetric matrix A, read from its stored triangle. */
static size_t crm__sym_at(int uplo, int lda, int i, int j)
{
    int stored = uplo == CblasUpper ? i <= j : i >= j;
    return stored ? (size_t)j * (size_t)lda + (size_t)i : (size_t)i * (size_t)lda + (size_t)j;
}

/* 1 when (i, j) lies in the triangle uplo names. */
static int crm__in_triangle(int uplo, int i, int j)
{
    return uplo == CblasUpper ? i <= j : i >= j;
}

/* y = alpha A x + beta y; a zero beta leaves y unread. */
static void crm__symv(int t, int uplo, int n, const void *alpha, const void *A, int lda, const void *x, int incx,
                      const void *beta, void *y, int incy)
{
    double complex a = crm__elem_get(t, alpha, 0), b = crm__elem_get(t, beta, 0);
    for (int i = 0; i < n; i++) {
        double complex acc = 0;
        for (int j = 0; j < n; j++)
            acc += crm__elem_get(t, A, crm__sym_at(uplo, lda, i, j)) * crm__elem_get(t, x, crm__blas_at(j, n, incx));
        size_t at = crm__blas_at(i, n, incy);
        crm__elem_put(t, y, at, a * acc + (b == 0 ? 0 : b * crm__elem_get(t, y, at)));
    }
}

/* A += alpha (x y^T + y x^T) on the stored triangle (two = 0: A += alpha x x^T). */
static void crm__syr(int t, int uplo, int n, const void *alpha, const void *x, int incx, const void *y, int incy,
                     int two, void *A, int lda)
{
    double complex a = crm__elem_get(t, alpha, 0);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            if (!crm__in_triangle(uplo, i, j))
                continue;
            double complex xi = crm__elem_get(t, x, crm__blas_at(i, n, incx));
            double complex xj = crm__elem_get(t, x, crm__blas_at(j, n, incx));
            double complex upd = xi * xj;
            if (two)
                upd = xi * crm__elem_get(t, y, crm__blas_at(j, n, incy)) +
                      crm__elem_get(t, y, crm__blas_at(i, n, incy)) * xj;
            size_t at = (size_t)j * (size_t)lda + (size_t)i;
            crm__elem_put(t, A, at, crm__elem_get(t, A, at) + a * upd);
        }
}

#define CRM__CSYM(P, TYPE)                                                                                   \
    void crm_emu_##P##symv(int order, int uplo, int n, const void *alpha, const void *A, int lda, const void *x, \
                           int incx, const void *beta, void *y, int incy)                                    \
    {                                                                                                         \
        (void)order; /* column-major */                                                                       \
        crm__symv(TYPE, uplo, n, alpha, A, lda, x, incx, beta, y, incy);                                      \
    }                                                                                                         \
    void crm_emu_##P##syr(int order, int uplo, int n, const void *alpha, const void *x, int incx, void *A,      \
                          int lda)                                                                            \
    {                                                                                                         \
        (void)order;                                                                                          \
        crm__syr(TYPE, uplo, n, alpha, x, incx, NULL, 0, 0, A, lda);                                          \
    }                                                                                                         \
    void crm_emu_##P##syr2(int order, int uplo, int n, const void *alpha, const void *x, int incx, const void *y, \
                           int incy, void *A, int lda)                                                        \
    {                                                                                                         \
        (void)order;                                                                                          \
        crm__syr(TYPE, uplo, n, alpha, x, incx, y, incy, 1, A, lda);                                          \
    }

CRM__CSYM(c, CUDA_C_32F)
CRM__CSYM(z, CUDA_C_64F)
