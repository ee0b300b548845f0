/* crm_blas_copy.c -- cublasSet/GetMatrix and cublasSet/GetVector, their Async
 * forms and the _64 forms of all eight (the same copies, 64-bit integers), as 2D copies of the runtime (cudaMemcpy2D[Async], so its bulk path): a
 * matrix is `cols` rows of rows*elemSize bytes, lda/ldb elements apart; a vector is
 * n rows of elemSize bytes, incx/incy elements apart (one packed row when both are
 * dense). cuBLAS status codes: INVALID_VALUE for bad arguments, MAPPING_ERROR when
 * the copy fails. */
#include <stdint.h>
#include <cuda_runtime_api.h>
#include "interpose/crm_blas.h"
#include "interpose/crm_export.h"

/* One host<->device copy of `height` rows of `width` bytes. */
typedef struct crm__blas_copy {
    const void *src;
    size_t spitch;
    void *dst;
    size_t dpitch;
    size_t width;
    size_t height;
} crm__blas_copy;

/* Runs the copy through the runtime's 2D copy (and its bulk path); dense rows
 * travel as one row. */
static cublasStatus_t crm__run(crm__blas_copy *c, enum cudaMemcpyKind kind, cudaStream_t stream, int async)
{
    if (c->spitch == c->width && c->dpitch == c->width && c->height > 1) {
        c->width *= c->height;
        c->spitch = c->dpitch = c->width;
        c->height = 1;
    }
    cudaError_t err = async ? cudaMemcpy2DAsync(c->dst, c->dpitch, c->src, c->spitch, c->width, c->height, kind, stream)
                            : cudaMemcpy2D(c->dst, c->dpitch, c->src, c->spitch, c->width, c->height, kind);
    return err == cudaSuccess ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_MAPPING_ERROR;
}

/* The row pitches and width of a copy, in bytes; INVALID_VALUE when one overflows. */
static cublasStatus_t crm__bytes(int64_t elem, int64_t spitch, int64_t dpitch, int64_t width, crm__blas_copy *c)
{
    uint64_t s, d, w;
    if (__builtin_mul_overflow((uint64_t)spitch, (uint64_t)elem, &s) ||
        __builtin_mul_overflow((uint64_t)dpitch, (uint64_t)elem, &d) ||
        __builtin_mul_overflow((uint64_t)width, (uint64_t)elem, &w) || s > SIZE_MAX || d > SIZE_MAX || w > SIZE_MAX)
        return CUBLAS_STATUS_INVALID_VALUE;
    c->spitch = (size_t)s;
    c->dpitch = (size_t)d;
    c->width = (size_t)w;
    return CUBLAS_STATUS_SUCCESS;
}

/* The copy of a matrix; *empty when there is nothing to copy. */
static cublasStatus_t crm__matrix(int64_t rows, int64_t cols, int64_t elemSize, const void *A, int64_t lda, void *B,
                                  int64_t ldb, crm__blas_copy *c, int *empty)
{
    if (rows < 0 || cols < 0 || elemSize <= 0 || lda <= 0 || ldb <= 0 || lda < rows || ldb < rows ||
        (uint64_t)cols > SIZE_MAX)
        return CUBLAS_STATUS_INVALID_VALUE;
    *empty = rows == 0 || cols == 0;
    if (!*empty && (A == NULL || B == NULL))
        return CUBLAS_STATUS_INVALID_VALUE;
    *c = (crm__blas_copy){.src = A, .dst = B, .height = (size_t)cols};
    return crm__bytes(elemSize, lda, ldb, rows, c);
}

/* The copy of a vector; *empty when there is nothing to copy. */
static cublasStatus_t crm__vector(int64_t n, int64_t elemSize, const void *x, int64_t incx, void *y, int64_t incy,
                                  crm__blas_copy *c, int *empty)
{
    if (n < 0 || elemSize <= 0 || incx <= 0 || incy <= 0 || (uint64_t)n > SIZE_MAX)
        return CUBLAS_STATUS_INVALID_VALUE;
    *empty = n == 0;
    if (!*empty && (x == NULL || y == NULL))
        return CUBLAS_STATUS_INVALID_VALUE;
    *c = (crm__blas_copy){.src = x, .dst = y, .height = (size_t)n};
    return crm__bytes(elemSize, incx, incy, 1, c);
}

static cublasStatus_t crm__set_matrix(int64_t rows, int64_t cols, int64_t elemSize, const void *A, int64_t lda,
                                      void *B, int64_t ldb, cudaStream_t stream, int async)
{
    crm__blas_copy c;
    int empty;
    cublasStatus_t rc = crm__matrix(rows, cols, elemSize, A, lda, B, ldb, &c, &empty);
    return rc != CUBLAS_STATUS_SUCCESS || empty ? rc : crm__run(&c, cudaMemcpyHostToDevice, stream, async);
}

static cublasStatus_t crm__get_matrix(int64_t rows, int64_t cols, int64_t elemSize, const void *A, int64_t lda,
                                      void *B, int64_t ldb, cudaStream_t stream, int async)
{
    crm__blas_copy c;
    int empty;
    cublasStatus_t rc = crm__matrix(rows, cols, elemSize, A, lda, B, ldb, &c, &empty);
    return rc != CUBLAS_STATUS_SUCCESS || empty ? rc : crm__run(&c, cudaMemcpyDeviceToHost, stream, async);
}

static cublasStatus_t crm__set_vector(int64_t n, int64_t elemSize, const void *x, int64_t incx, void *y,
                                      int64_t incy, cudaStream_t stream, int async)
{
    crm__blas_copy c;
    int empty;
    cublasStatus_t rc = crm__vector(n, elemSize, x, incx, y, incy, &c, &empty);
    return rc != CUBLAS_STATUS_SUCCESS || empty ? rc : crm__run(&c, cudaMemcpyHostToDevice, stream, async);
}

static cublasStatus_t crm__get_vector(int64_t n, int64_t elemSize, const void *x, int64_t incx, void *y,
                                      int64_t incy, cudaStream_t stream, int async)
{
    crm__blas_copy c;
    int empty;
    cublasStatus_t rc = crm__vector(n, elemSize, x, incx, y, incy, &c, &empty);
    return rc != CUBLAS_STATUS_SUCCESS || empty ? rc : crm__run(&c, cudaMemcpyDeviceToHost, stream, async);
}

CRM_EXPORT cublasStatus_t cublasSetMatrix(int rows, int cols, int elemSize, const void *A, int lda, void *B, int ldb)
{
    return crm__set_matrix(rows, cols, elemSize, A, lda, B, ldb, 0, 0);
}

CRM_EXPORT cublasStatus_t cublasGetMatrix(int rows, int cols, int elemSize, const void *A, int lda, void *B, int ldb)
{
    return crm__get_matrix(rows, cols, elemSize, A, lda, B, ldb, 0, 0);
}

CRM_EXPORT cublasStatus_t cublasSetMatrixAsync(int rows, int cols, int elemSize, const void *A, int lda, void *B,
                                               int ldb, cudaStream_t stream)
{
    return crm__set_matrix(rows, cols, elemSize, A, lda, B, ldb, stream, 1);
}

CRM_EXPORT cublasStatus_t cublasGetMatrixAsync(int rows, int cols, int elemSize, const void *A, int lda, void *B,
                                               int ldb, cudaStream_t stream)
{
    return crm__get_matrix(rows, cols, elemSize, A, lda, B, ldb, stream, 1);
}

CRM_EXPORT cublasStatus_t cublasSetVector(int n, int elemSize, const void *x, int incx, void *devicePtr, int incy)
{
    return crm__set_vector(n, elemSize, x, incx, devicePtr, incy, 0, 0);
}

CRM_EXPORT cublasStatus_t cublasGetVector(int n, int elemSize, const void *x, int incx, void *y, int incy)
{
    return crm__get_vector(n, elemSize, x, incx, y, incy, 0, 0);
}

CRM_EXPORT cublasStatus_t cublasSetVectorAsync(int n, int elemSize, const void *hostPtr, int incx, void *devicePtr,
                                               int incy, cudaStream_t stream)
{
    return crm__set_vector(n, elemSize, hostPtr, incx, devicePtr, incy, stream, 1);
}

CRM_EXPORT cublasStatus_t cublasGetVectorAsync(int n, int elemSize, const void *devicePtr, int incx, void *hostPtr,
                                               int incy, cudaStream_t stream)
{
    return crm__get_vector(n, elemSize, devicePtr, incx, hostPtr, incy, stream, 1);
}

/* --- the _64 forms ---------------------------------------------------------------------- */

CRM_EXPORT cublasStatus_t cublasSetMatrix_64(int64_t rows, int64_t cols, int64_t elemSize, const void *A, int64_t lda,
                                             void *B, int64_t ldb)
{
    return crm__set_matrix(rows, cols, elemSize, A, lda, B, ldb, 0, 0);
}

CRM_EXPORT cublasStatus_t cublasGetMatrix_64(int64_t rows, int64_t cols, int64_t elemSize, const void *A, int64_t lda,
                                             void *B, int64_t ldb)
{
    return crm__get_matrix(rows, cols, elemSize, A, lda, B, ldb, 0, 0);
}

CRM_EXPORT cublasStatus_t cublasSetMatrixAsync_64(int64_t rows, int64_t cols, int64_t elemSize, const void *A,
                                                  int64_t lda, void *B, int64_t ldb, cudaStream_t stream)
{
    return crm__set_matrix(rows, cols, elemSize, A, lda, B, ldb, stream, 1);
}

CRM_EXPORT cublasStatus_t cublasGetMatrixAsync_64(int64_t rows, int64_t cols, int64_t elemSize, const void *A,
                                                  int64_t lda, void *B, int64_t ldb, cudaStream_t stream)
{
    return crm__get_matrix(rows, cols, elemSize, A, lda, B, ldb, stream, 1);
}

CRM_EXPORT cublasStatus_t cublasSetVector_64(int64_t n, int64_t elemSize, const void *x, int64_t incx,
                                             void *devicePtr, int64_t incy)
{
    return crm__set_vector(n, elemSize, x, incx, devicePtr, incy, 0, 0);
}

CRM_EXPORT cublasStatus_t cublasGetVector_64(int64_t n, int64_t elemSize, const void *x, int64_t incx, void *y,
                                             int64_t incy)
{
    return crm__get_vector(n, elemSize, x, incx, y, incy, 0, 0);
}

CRM_EXPORT cublasStatus_t cublasSetVectorAsync_64(int64_t n, int64_t elemSize, const void *hostPtr, int64_t incx,
                                                  void *devicePtr, int64_t incy, cudaStream_t stream)
{
    return crm__set_vector(n, elemSize, hostPtr, incx, devicePtr, incy, stream, 1);
}

CRM_EXPORT cublasStatus_t cublasGetVectorAsync_64(int64_t n, int64_t elemSize, const void *devicePtr, int64_t incx,
                                                  void *hostPtr, int64_t incy, cudaStream_t stream)
{
    return crm__get_vector(n, elemSize, devicePtr, incx, hostPtr, incy, stream, 1);
}
