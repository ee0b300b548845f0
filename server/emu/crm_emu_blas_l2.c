/* crm_emu_blas_l2.c -- emulated cuBLAS geam and trsm (single and double) on OpenBLAS
 * and plain loops (gemv and ger are generated: protocol/cublas.api). beta == 0 means "do not read y / C": the output is
 * cleared before the product is added, so NaNs in it never propagate. */
#include "server/emu/crm_emu_blas.h"

#include <cblas.h>

typedef union crm__scalar {
    float f;
    double d;
    unsigned char raw[16];
} crm__scalar;

/* Checks each of n footprints (bytes[i] at p[i]) against device memory. */
static cublasStatus_t crm__dev_all(const void *const p[], const uint64_t bytes[], int n)
{
    for (int i = 0; i < n; i++)
        if (crm__blas_dev(p[i], bytes[i]) != CUBLAS_STATUS_SUCCESS)
            return CUBLAS_STATUS_INVALID_VALUE;
    return CUBLAS_STATUS_SUCCESS;
}

/* Reads alpha (and beta when b is not NULL) by the handle's pointer mode. */
static cublasStatus_t crm__scalars(cublasHandle_t h, const void *alpha, const void *beta, size_t elem, crm__scalar *a,
                                   crm__scalar *b)
{
    cublasStatus_t st = crm__blas_get_scalar(h, alpha, elem, a);
    if (st == CUBLAS_STATUS_SUCCESS && b != NULL)
        st = crm__blas_get_scalar(h, beta, elem, b);
    return st;
}

static int crm__is_zero(const crm__scalar *s, size_t elem)
{
    return elem == sizeof(float) ? s->f == 0.0f : s->d == 0.0;
}

/* Sets n elements of vector v (inc apart, any sign) to zero. */
static void crm__vec_zero(void *v, int n, int inc, size_t elem)
{
    size_t step = (size_t)(inc < 0 ? -(int64_t)inc : inc);
    for (int i = 0; i < n; i++) {
        if (elem == sizeof(float))
            ((float *)v)[(size_t)i * step] = 0.0f;
        else
            ((double *)v)[(size_t)i * step] = 0.0;
    }
}

static double crm__op_at(const void *X, int op, int ld, int i, int j, size_t elem)
{
    size_t at = op == CUBLAS_OP_N ? (size_t)j * (size_t)ld + (size_t)i : (size_t)i * (size_t)ld + (size_t)j;
    return elem == sizeof(float) ? ((const float *)X)[at] : ((const double *)X)[at];
}

/* C = alpha op(A) + beta op(B); a zero alpha (beta) leaves A (B) unread. */
static void crm__geam_run(int ta, int tb, int m, int n, double alpha, const void *A, int lda, double beta,
                          const void *B, int ldb, void *C, int ldc, size_t elem)
{
    for (int j = 0; j < n; j++) {
        for (int i = 0; i < m; i++) {
            double v = 0.0;
            if (alpha != 0.0)
                v += alpha * crm__op_at(A, ta, lda, i, j, elem);
            if (beta != 0.0)
                v += beta * crm__op_at(B, tb, ldb, i, j, elem);
            size_t at = (size_t)j * (size_t)ldc + (size_t)i;
            if (elem == sizeof(float))
                ((float *)C)[at] = (float)v;
            else
                ((double *)C)[at] = v;
        }
    }
}

static cublasStatus_t crm__geam(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                const void *alpha, const void *A, int lda, const void *beta, const void *B, int ldb,
                                void *C, int ldc, size_t elem)
{
    crm__scalar a, b;
    uint64_t bytes[3];
    cublasStatus_t st = crm__blas_begin(h);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    st = crm_blas_geam_check(ta, tb, m, n, (uintptr_t)A, lda, (uintptr_t)B, ldb, (uintptr_t)C, ldc);
    if (st != CUBLAS_STATUS_SUCCESS || m == 0 || n == 0)
        return crm__blas_end(st);
    if ((st = crm__scalars(h, alpha, beta, elem, &a, &b)) != CUBLAS_STATUS_SUCCESS)
        return crm__blas_end(st);
    if (crm_blas_geam_bytes(ta, tb, m, n, lda, ldb, ldc, elem, bytes) != 0)
        return crm__blas_end(CUBLAS_STATUS_INVALID_VALUE);
    double av = elem == sizeof(float) ? a.f : a.d, bv = elem == sizeof(float) ? b.f : b.d;
    if (av == 0.0)
        bytes[0] = 0; /* not read */
    if (bv == 0.0)
        bytes[1] = 0;
    const void *ptrs[3] = {A, B, C};
    if (crm__dev_all(ptrs, bytes, 3) != CUBLAS_STATUS_SUCCESS)
        return crm__blas_end(CUBLAS_STATUS_INVALID_VALUE);
    crm__geam_run(ta, tb, m, n, av, A, lda, bv, B, ldb, C, ldc, elem);
    return crm__blas_end(CUBLAS_STATUS_SUCCESS);
}

CRM_EXPORT cublasStatus_t cublasSgeam(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                      int n, const float *alpha, const float *A, int lda, const float *beta,
                                      const float *B, int ldb, float *C, int ldc)
{
    return crm__geam(handle, transa, transb, m, n, alpha, A, lda, beta, B, ldb, C, ldc, sizeof(float));
}

CRM_EXPORT cublasStatus_t cublasDgeam(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                      int n, const double *alpha, const double *A, int lda, const double *beta,
                                      const double *B, int ldb, double *C, int ldc)
{
    return crm__geam(handle, transa, transb, m, n, alpha, A, lda, beta, B, ldb, C, ldc, sizeof(double));
}

static cublasStatus_t crm__trsm(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo,
                                cublasOperation_t trans, cublasDiagType_t diag, int m, int n, const void *alpha,
                                const void *A, int lda, void *B, int ldb, size_t elem)
{
    crm__scalar a;
    uint64_t bytes[2];
    cublasStatus_t st = crm__blas_begin(h);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    if ((st = crm_blas_trsm_check(side, uplo, trans, diag, m, n, lda, ldb)) != CUBLAS_STATUS_SUCCESS || m == 0 ||
        n == 0)
        return crm__blas_end(st);
    if ((st = crm__scalars(h, alpha, NULL, elem, &a, NULL)) != CUBLAS_STATUS_SUCCESS)
        return crm__blas_end(st);
    const void *ptrs[2] = {A, B};
    if (crm_blas_trsm_bytes(side, m, n, lda, ldb, elem, bytes) != 0 ||
        crm__dev_all(ptrs, bytes, 2) != CUBLAS_STATUS_SUCCESS)
        return crm__blas_end(CUBLAS_STATUS_INVALID_VALUE);
    enum CBLAS_SIDE cs = side == CUBLAS_SIDE_LEFT ? CblasLeft : CblasRight;
    enum CBLAS_UPLO cu = uplo == CUBLAS_FILL_MODE_LOWER ? CblasLower : CblasUpper;
    enum CBLAS_DIAG cd = diag == CUBLAS_DIAG_UNIT ? CblasUnit : CblasNonUnit;
    if (elem == sizeof(float))
        cblas_strsm(CblasColMajor, cs, cu, crm__blas_trans(trans), cd, m, n, a.f, A, lda, B, ldb);
    else
        cblas_dtrsm(CblasColMajor, cs, cu, crm__blas_trans(trans), cd, m, n, a.d, A, lda, B, ldb);
    return crm__blas_end(CUBLAS_STATUS_SUCCESS);
}

CRM_EXPORT cublasStatus_t cublasStrsm_v2(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,
                                         cublasOperation_t trans, cublasDiagType_t diag, int m, int n,
                                         const float *alpha, const float *A, int lda, float *B, int ldb)
{
    return crm__trsm(handle, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb, sizeof(float));
}

CRM_EXPORT cublasStatus_t cublasDtrsm_v2(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,
                                         cublasOperation_t trans, cublasDiagType_t diag, int m, int n,
                                         const double *alpha, const double *A, int lda, double *B, int ldb)
{
    return crm__trsm(handle, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb, sizeof(double));
}
