/* crm_emu_blas_rankk_ex.c -- the emulated device's complex Ex calls on 8-bit integer
 * or float data: CherkEx, Cherk3mEx, CsyrkEx, Csyrk3mEx, CgemmEx and Cgemm3mEx. Each
 * input (complex 8-bit integers or complex float, cuBLAS's two input types) is read
 * into a packed complex float copy of its storage, then OpenBLAS's cblas_cherk,
 * cblas_csyrk or cblas_cgemm updates C (complex float) in place. The 3m forms
 * compute the same product. */
#include <complex.h>
#include <stdlib.h>
#include <cblas.h>
#include "server/emu/crm_emu_blas.h"

/* Element (i, j) of a complex 8-bit integer or complex float matrix. */
static float complex crm__rankk_get(const void *a, int type, int lda, int i, int j)
{
    size_t at = (size_t)j * (size_t)lda + (size_t)i;
    if (type == CUDA_C_8I) {
        const int8_t *p = (const int8_t *)a + 2 * at;
        return (float)p[0] + (float)p[1] * I;
    }
    return ((const float complex *)a)[at];
}

/* A packed rows x cols copy of the stored A, complex float; NULL when out of memory. */
static float complex *crm__rankk_copy(const void *a, int type, int lda, int rows, int cols)
{
    float complex *c = malloc((size_t)(rows > 0 ? rows : 1) * (size_t)(cols > 0 ? cols : 1) * sizeof *c);
    for (int j = 0; c != NULL && j < cols; j++)
        for (int i = 0; i < rows; i++)
            c[(size_t)j * rows + i] = crm__rankk_get(a, type, lda, i, j);
    return c;
}

/* Stored A's rows and columns: n x k for NoTrans, k x n otherwise. */
static void crm__rankk_shape(int trans, int n, int k, int *rows, int *cols)
{
    *rows = trans == CblasNoTrans ? n : k;
    *cols = trans == CblasNoTrans ? k : n;
}

void crm_emu_cherk_ex(int order, int uplo, int trans, int n, int k, float alpha, const void *A, int Atype, int lda,
                      float beta, void *C, int Ctype, int ldc)
{
    int rows, cols;
    (void)Ctype; /* complex float: the row's rule */
    crm__rankk_shape(trans, n, k, &rows, &cols);
    float complex *a = crm__rankk_copy(A, Atype, lda, rows, cols);
    if (a == NULL)
        return;
    cblas_cherk((enum CBLAS_ORDER)order, (enum CBLAS_UPLO)uplo, (enum CBLAS_TRANSPOSE)trans, n, k, alpha, a,
                rows > 1 ? rows : 1, beta, C, ldc);
    free(a);
}

void crm_emu_csyrk_ex(int order, int uplo, int trans, int n, int k, const void *alpha, const void *A, int Atype,
                      int lda, const void *beta, void *C, int Ctype, int ldc)
{
    int rows, cols;
    (void)Ctype;
    crm__rankk_shape(trans, n, k, &rows, &cols);
    float complex *a = crm__rankk_copy(A, Atype, lda, rows, cols);
    if (a == NULL)
        return;
    cblas_csyrk((enum CBLAS_ORDER)order, (enum CBLAS_UPLO)uplo, (enum CBLAS_TRANSPOSE)trans, n, k, alpha, a,
                rows > 1 ? rows : 1, beta, C, ldc);
    free(a);
}

void crm_emu_cgemm_ex(int order, int transa, int transb, int m, int n, int k, const void *alpha, const void *A,
                      int Atype, int lda, const void *B, int Btype, int ldb, const void *beta, void *C, int Ctype,
                      int ldc)
{
    int ar, ac, br, bc;
    (void)Ctype;
    crm__rankk_shape(transa, m, k, &ar, &ac);
    crm__rankk_shape(transb, k, n, &br, &bc);
    float complex *a = crm__rankk_copy(A, Atype, lda, ar, ac), *b = crm__rankk_copy(B, Btype, ldb, br, bc);
    if (a != NULL && b != NULL)
        cblas_cgemm((enum CBLAS_ORDER)order, (enum CBLAS_TRANSPOSE)transa, (enum CBLAS_TRANSPOSE)transb, m, n, k,
                    alpha, a, ar > 1 ? ar : 1, b, br > 1 ? br : 1, beta, C, ldc);
    free(a);
    free(b);
}
