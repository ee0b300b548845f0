/* crm_emu_blas_lu.c -- the emulated device's batched LU calls (getrfBatched,
 * getrsBatched, getriBatched, matinvBatched, all four types), for the generated
 * rows 1401-1416 of protocol/cublas.api: the generated code has checked the
 * arguments, the pointer arrays and every matrix they hold; these run each item
 * with LAPACK's getrf, getrs and getri from libopenblas.
 *
 * A NULL pivot array means no pivoting: getrf then runs the unpivoted elimination
 * below (LAPACK has none), and getrs and getri use the identity permutation. A zero
 * pivot leaves its column unscaled and is reported, as LAPACK's info does, as the
 * 1-based index of the first zero diagonal element of U. */
#include <complex.h>
#include <stdlib.h>
#include <string.h>
#include <cblas.h>
#include "server/emu/crm_emu_blas.h"

/* LAPACK's Fortran entry points in libopenblas (every argument by reference; the
 * character argument's length travels last, as gfortran passes it). */
#define CRM__LAPACK_DECL(P)                                                                                    \
    void P##getrf_(const int *m, const int *n, void *a, const int *lda, int *ipiv, int *info);                 \
    void P##getrs_(const char *trans, const int *n, const int *nrhs, const void *a, const int *lda,            \
                   const int *ipiv, void *b, const int *ldb, int *info, size_t trans_len);                      \
    void P##getri_(const int *n, void *a, const int *lda, const int *ipiv, void *work, const int *lwork, int *info);
CRM__LAPACK_DECL(s)
CRM__LAPACK_DECL(d)
CRM__LAPACK_DECL(c)
CRM__LAPACK_DECL(z)

/* Unpivoted LU in place (L unit lower, U upper); returns LAPACK's info. */
#define CRM__NOPIV(NAME, T)                                                                                    \
    static int NAME(int n, void *mat, int lda)                                                                 \
    {                                                                                                          \
        T *a = mat;                                                                                            \
        int info = 0;                                                                                          \
        for (int j = 0; j < n; j++) {                                                                          \
            T *col = a + (size_t)j * (size_t)lda, piv = col[j];                                                \
            if (piv == 0) {                                                                                    \
                info = info != 0 ? info : j + 1;                                                               \
                continue;                                                                                      \
            }                                                                                                  \
            for (int i = j + 1; i < n; i++)                                                                    \
                col[i] /= piv;                                                                                 \
            for (int k = j + 1; k < n; k++) {                                                                  \
                T *ck = a + (size_t)k * (size_t)lda, u = ck[j];                                                \
                for (int i = j + 1; i < n; i++)                                                                \
                    ck[i] -= col[i] * u;                                                                       \
            }                                                                                                  \
        }                                                                                                      \
        return info;                                                                                           \
    }
CRM__NOPIV(crm__nopiv_s, float)
CRM__NOPIV(crm__nopiv_d, double)
CRM__NOPIV(crm__nopiv_c, float complex)
CRM__NOPIV(crm__nopiv_z, double complex)

/* One element type's routines. */
typedef struct crm__lu_type {
    size_t elem;
    void (*getrf)(const int *, const int *, void *, const int *, int *, int *);
    void (*getrs)(const char *, const int *, const int *, const void *, const int *, const int *, void *,
                  const int *, int *, size_t);
    void (*getri)(const int *, void *, const int *, const int *, void *, const int *, int *);
    int (*nopiv)(int, void *, int);
} crm__lu_type;

static const crm__lu_type crm__lu_s = {sizeof(float), sgetrf_, sgetrs_, sgetri_, crm__nopiv_s};
static const crm__lu_type crm__lu_d = {sizeof(double), dgetrf_, dgetrs_, dgetri_, crm__nopiv_d};
static const crm__lu_type crm__lu_c = {2 * sizeof(float), cgetrf_, cgetrs_, cgetri_, crm__nopiv_c};
static const crm__lu_type crm__lu_z = {2 * sizeof(double), zgetrf_, zgetrs_, zgetri_, crm__nopiv_z};

/* The identity permutation of order n (LAPACK's 1-based pivots); NULL when out of
 * memory. */
static int *crm__identity(int n)
{
    int *p = malloc((size_t)(n > 0 ? n : 1) * sizeof *p);
    for (int i = 0; p != NULL && i < n; i++)
        p[i] = i + 1;
    return p;
}

/* Copies an n x n matrix between leading dimensions. */
static void crm__copy_square(const crm__lu_type *t, int n, const void *src, int lds, void *dst, int ldd)
{
    for (int j = 0; j < n; j++)
        memmove((char *)dst + (size_t)j * (size_t)ldd * t->elem, (const char *)src + (size_t)j * (size_t)lds * t->elem,
                (size_t)n * t->elem);
}

static cublasStatus_t crm__getrf(const crm__lu_type *t, int n, void *const *A, int lda, int *P, int *info,
                                 int batch)
{
    double deadline = crm__blas_deadline();
    for (int b = 0; b < batch; b++) {
        if (crm__blas_overdue(deadline))
            return CUBLAS_STATUS_EXECUTION_FAILED;
        if (P != NULL)
            t->getrf(&n, &n, A[b], &lda, P + (size_t)b * (size_t)n, &info[b]);
        else
            info[b] = t->nopiv(n, A[b], lda);
    }
    return CUBLAS_STATUS_SUCCESS;
}

static cublasStatus_t crm__getrs(const crm__lu_type *t, int trans, int n, int nrhs, const void *const *A, int lda,
                                 const int *ipiv, void *const *B, int ldb, int batch)
{
    const char code = trans == CblasNoTrans ? 'N' : trans == CblasTrans ? 'T' : 'C';
    int *ident = ipiv == NULL ? crm__identity(n) : NULL, lapack_info = 0;
    double deadline = crm__blas_deadline();
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
    if (ipiv == NULL && ident == NULL)
        return CUBLAS_STATUS_ALLOC_FAILED;
    for (int b = 0; b < batch && n > 0 && nrhs > 0 && st == CUBLAS_STATUS_SUCCESS; b++) {
        if (crm__blas_overdue(deadline))
            st = CUBLAS_STATUS_EXECUTION_FAILED;
        else
            t->getrs(&code, &n, &nrhs, A[b], &lda, ipiv != NULL ? ipiv + (size_t)b * (size_t)n : ident, B[b], &ldb,
                     &lapack_info, 1);
    }
    free(ident);
    return st;
}

/* Inverse of the LU factors in C (already holding them), by LAPACK's getri. */
static void crm__invert(const crm__lu_type *t, int n, void *C, int ldc, const int *ipiv, void *work, int lwork,
                        int *info)
{
    *info = 0;
    if (n > 0)
        t->getri(&n, C, &ldc, ipiv, work, &lwork, info);
}

static cublasStatus_t crm__getri(const crm__lu_type *t, int n, const void *const *A, int lda, const int *P,
                                 void *const *C, int ldc, int *info, int batch)
{
    int lwork = 64 * (n > 0 ? n : 1);
    int *ident = P == NULL ? crm__identity(n) : NULL;
    void *work = malloc((size_t)lwork * t->elem);
    if (work == NULL || (P == NULL && ident == NULL)) {
        free(work);
        free(ident);
        return CUBLAS_STATUS_ALLOC_FAILED;
    }
    double deadline = crm__blas_deadline();
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
    for (int b = 0; b < batch && st == CUBLAS_STATUS_SUCCESS; b++) {
        if (crm__blas_overdue(deadline)) {
            st = CUBLAS_STATUS_EXECUTION_FAILED;
            break;
        }
        crm__copy_square(t, n, A[b], lda, C[b], ldc);
        crm__invert(t, n, C[b], ldc, P != NULL ? P + (size_t)b * (size_t)n : ident, work, lwork, &info[b]);
    }
    free(work);
    free(ident);
    return st;
}

/* n <= 32 (the row's rule): the pivots fit on the stack. */
static cublasStatus_t crm__matinv(const crm__lu_type *t, int n, const void *const *A, int lda, void *const *Ainv,
                                  int lda_inv, int *info, int batch)
{
    int ipiv[32], lwork = 64 * 32;
    void *work = malloc((size_t)lwork * t->elem);
    if (work == NULL)
        return CUBLAS_STATUS_ALLOC_FAILED;
    double deadline = crm__blas_deadline();
    for (int b = 0; b < batch; b++) {
        if (crm__blas_overdue(deadline)) {
            free(work);
            return CUBLAS_STATUS_EXECUTION_FAILED;
        }
        crm__copy_square(t, n, A[b], lda, Ainv[b], lda_inv);
        info[b] = 0;
        if (n > 0)
            t->getrf(&n, &n, Ainv[b], &lda_inv, ipiv, &info[b]);
        if (info[b] == 0)
            crm__invert(t, n, Ainv[b], lda_inv, ipiv, work, lwork, &info[b]);
    }
    free(work);
    return CUBLAS_STATUS_SUCCESS;
}

#define CRM__LU_ENTRIES(P, TYPE)                                                                               \
    cublasStatus_t crm_emu_##P##getrf_batched(int n, void *const *A, int lda, int *P_, int *info, int batch)    \
    {                                                                                                          \
        return crm__getrf(&TYPE, n, A, lda, P_, info, batch);                                                  \
    }                                                                                                          \
    cublasStatus_t crm_emu_##P##getrs_batched(int trans, int n, int nrhs, const void *const *A, int lda,        \
                                              const int *ipiv, void *const *B, int ldb, int batch)             \
    {                                                                                                          \
        return crm__getrs(&TYPE, trans, n, nrhs, A, lda, ipiv, B, ldb, batch);                                 \
    }                                                                                                          \
    cublasStatus_t crm_emu_##P##getri_batched(int n, const void *const *A, int lda, const int *P_,             \
                                              void *const *C, int ldc, int *info, int batch)                   \
    {                                                                                                          \
        return crm__getri(&TYPE, n, A, lda, P_, C, ldc, info, batch);                                          \
    }                                                                                                          \
    cublasStatus_t crm_emu_##P##matinv_batched(int n, const void *const *A, int lda, void *const *Ainv,        \
                                               int lda_inv, int *info, int batch)                              \
    {                                                                                                          \
        return crm__matinv(&TYPE, n, A, lda, Ainv, lda_inv, info, batch);                                      \
    }
CRM__LU_ENTRIES(s, crm__lu_s)
CRM__LU_ENTRIES(d, crm__lu_d)
CRM__LU_ENTRIES(c, crm__lu_c)
CRM__LU_ENTRIES(z, crm__lu_z)
