/* crm_emu_blas_qr.c -- the emulated device's batched QR calls (geqrfBatched and
 * gelsBatched in all four types), for the generated rows 1417-1424 of
 * protocol/cublas.api: the generated code has checked the arguments, the pointer
 * arrays and every matrix and vector they hold; these run each item with LAPACK's
 * geqrf and gels from libopenblas. gels solves only what cuBLAS does (no transpose,
 * m >= n; the row answers NOT_SUPPORTED otherwise); an item whose R has a zero on
 * its diagonal gets that 1-based position in devInfoArray (when given) and is left
 * unsolved, as LAPACK leaves it. */
#include <stdlib.h>
#include "server/emu/crm_emu_blas.h"

/* LAPACK's Fortran entry points in libopenblas (every argument by reference; the
 * character argument's length travels last, as gfortran passes it). */
#define CRM__LAPACK_QR_DECL(P)                                                                                        \
    void P##geqrf_(const int *m, const int *n, void *a, const int *lda, void *tau, void *work, const int *lwork, \
                   int *info);                                                                                 \
    void P##gels_(const char *trans, const int *m, const int *n, const int *nrhs, void *a, const int *lda,     \
                  void *b, const int *ldb, void *work, const int *lwork, int *info, size_t trans_len);
CRM__LAPACK_QR_DECL(s)
CRM__LAPACK_QR_DECL(d)
CRM__LAPACK_QR_DECL(c)
CRM__LAPACK_QR_DECL(z)

typedef struct crm__qr_type {
    size_t elem;
    void (*geqrf)(const int *, const int *, void *, const int *, void *, void *, const int *, int *);
    void (*gels)(const char *, const int *, const int *, const int *, void *, const int *, void *, const int *, void *,
                 const int *, int *, size_t);
} crm__qr_type;

static const crm__qr_type crm__qr_s = {sizeof(float), sgeqrf_, sgels_};
static const crm__qr_type crm__qr_d = {sizeof(double), dgeqrf_, dgels_};
static const crm__qr_type crm__qr_c = {2 * sizeof(float), cgeqrf_, cgels_};
static const crm__qr_type crm__qr_z = {2 * sizeof(double), zgeqrf_, zgels_};

/* A work buffer of `elems` elements, the least LAPACK accepts (its unblocked path):
 * never a multiple of a matrix dimension a request could make huge while its
 * matrices stay small (m or nrhs 0). */
static void *crm__work(const crm__qr_type *t, int64_t elems, int *lwork)
{
    *lwork = (int)(elems > 0 ? elems : 1);
    return malloc((size_t)*lwork * t->elem);
}

static cublasStatus_t crm__geqrf(const crm__qr_type *t, int m, int n, void *const *A, int lda, void *const *tau,
                                 int batch)
{
    int lwork, info = 0;
    if (m == 0 || n == 0)
        return CUBLAS_STATUS_SUCCESS;
    void *work = crm__work(t, n, &lwork);
    if (work == NULL)
        return CUBLAS_STATUS_ALLOC_FAILED;
    double deadline = crm__blas_deadline();
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
    for (int b = 0; b < batch && st == CUBLAS_STATUS_SUCCESS; b++) {
        if (crm__blas_overdue(deadline))
            st = CUBLAS_STATUS_EXECUTION_FAILED;
        else
            t->geqrf(&m, &n, A[b], &lda, tau[b], work, &lwork, &info);
    }
    free(work);
    return st;
}

static cublasStatus_t crm__gels(const crm__qr_type *t, int m, int n, int nrhs, void *const *A, int lda,
                                void *const *C, int ldc, int *dev_info, int batch)
{
    int lwork;
    int solve = m > 0 && n > 0 && nrhs > 0; /* m >= n: the row's rule */
    void *work = crm__work(t, solve ? (int64_t)n + (n > nrhs ? n : nrhs) : 1, &lwork);
    if (work == NULL)
        return CUBLAS_STATUS_ALLOC_FAILED;
    double deadline = crm__blas_deadline();
    for (int b = 0; b < batch; b++) {
        int info = 0;
        if (crm__blas_overdue(deadline)) {
            free(work);
            return CUBLAS_STATUS_EXECUTION_FAILED;
        }
        if (solve)
            t->gels("N", &m, &n, &nrhs, A[b], &lda, C[b], &ldc, work, &lwork, &info, 1);
        if (dev_info != NULL)
            dev_info[b] = info;
    }
    free(work);
    return CUBLAS_STATUS_SUCCESS;
}

#define CRM__QR_ENTRIES(P, TYPE)                                                                               \
    cublasStatus_t crm_emu_##P##geqrf_batched(int m, int n, void *const *A, int lda, void *const *tau, int batch) \
    {                                                                                                          \
        return crm__geqrf(&TYPE, m, n, A, lda, tau, batch);                                                    \
    }                                                                                                          \
    cublasStatus_t crm_emu_##P##gels_batched(int trans, int m, int n, int nrhs, void *const *A, int lda,       \
                                             void *const *C, int ldc, int *dev_info, int batch)                \
    {                                                                                                          \
        (void)trans; /* no transpose: the row's rule */                                                        \
        return crm__gels(&TYPE, m, n, nrhs, A, lda, C, ldc, dev_info, batch);                                  \
    }
CRM__QR_ENTRIES(s, crm__qr_s)
CRM__QR_ENTRIES(d, crm__qr_d)
CRM__QR_ENTRIES(c, crm__qr_c)
CRM__QR_ENTRIES(z, crm__qr_z)
