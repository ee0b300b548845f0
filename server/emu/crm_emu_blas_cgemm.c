/* crm_emu_blas_cgemm.c -- complex matrix products of the emulated device:
 * cublasGemmEx with complex float or double operands (what CuPy's complex matmul
 * calls), through cblas_cgemm/cblas_zgemm, op(X) conjugate-transposed when
 * CUBLAS_OP_C asks (cublasCgemm and cublasZgemm are rows of protocol/cublas.api). A zero beta leaves C unread, as
 * cuBLAS promises (C is cleared first, so a NaN there does not survive). */
#include "server/emu/crm_emu_blas.h"

#include <cblas.h>
#include <string.h>

#include "protocol/cublas_shape.h"

static CBLAS_TRANSPOSE crm__op(int op)
{
    return op == CUBLAS_OP_N ? CblasNoTrans : op == CUBLAS_OP_C ? CblasConjTrans : CblasTrans;
}

/* The compute types a complex product of element type `type` accepts. */
static int crm__compute_ok(int type, int compute)
{
    switch (compute) {
    case CUBLAS_COMPUTE_32F: case CUBLAS_COMPUTE_32F_PEDANTIC: case CUBLAS_COMPUTE_32F_FAST_16F:
    case CUBLAS_COMPUTE_32F_FAST_16BF: case CUBLAS_COMPUTE_32F_FAST_TF32:
        return type == CUDA_C_32F;
    case CUBLAS_COMPUTE_64F: case CUBLAS_COMPUTE_64F_PEDANTIC:
        return type == CUDA_C_64F;
    default:
        return 0;
    }
}

/* Clears the m x n matrix C (leading dimension ldc) of elements of `size` bytes. */
static void crm__clear(void *C, int m, int n, int ldc, size_t size)
{
    for (int j = 0; j < n; j++)
        memset((char *)C + (size_t)j * (size_t)ldc * size, 0, (size_t)m * size);
}

cublasStatus_t crm__emu_gemm_complex(cublasHandle_t h, int ta, int tb, int m, int n, int k, const void *alpha,
                                     const void *A, int atype, int lda, const void *B, int btype, int ldb,
                                     const void *beta, void *C, int ctype, int ldc, int compute)
{
    unsigned char a[16], b[16], zero[16] = {0};
    uint64_t bytes[3];
    cublasStatus_t st = crm__blas_begin(h);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    size_t e = crm_blas_type_size(ctype);
    if ((st = crm_blas_gemm_check(ta, tb, m, n, k, lda, ldb, ldc)) != CUBLAS_STATUS_SUCCESS)
        return crm__blas_end(st);
    if (atype != ctype || btype != ctype || !crm__compute_ok(ctype, compute))
        return crm__blas_end(CUBLAS_STATUS_NOT_SUPPORTED);
    if (crm_blas_gemm_bytes(ta, tb, m, n, k, lda, ldb, ldc, e, e, e, bytes) != 0)
        return crm__blas_end(CUBLAS_STATUS_INVALID_VALUE);
    if (m == 0 || n == 0)
        return crm__blas_end(CUBLAS_STATUS_SUCCESS);
    if ((st = crm__blas_get_scalar(h, alpha, e, a)) != CUBLAS_STATUS_SUCCESS ||
        (st = crm__blas_get_scalar(h, beta, e, b)) != CUBLAS_STATUS_SUCCESS)
        return crm__blas_end(st);
    if (crm__blas_dev(C, bytes[2]) != CUBLAS_STATUS_SUCCESS ||
        (k > 0 && (crm__blas_dev(A, bytes[0]) != CUBLAS_STATUS_SUCCESS ||
                   crm__blas_dev(B, bytes[1]) != CUBLAS_STATUS_SUCCESS)))
        return crm__blas_end(CUBLAS_STATUS_INVALID_VALUE);
    if (memcmp(b, zero, e) == 0)
        crm__clear(C, m, n, ldc, e);
    if (ctype == CUDA_C_32F)
        cblas_cgemm(CblasColMajor, crm__op(ta), crm__op(tb), m, n, k, a, A, lda, B, ldb, b, C, ldc);
    else
        cblas_zgemm(CblasColMajor, crm__op(ta), crm__op(tb), m, n, k, a, A, lda, B, ldb, b, C, ldc);
    return crm__blas_end(CUBLAS_STATUS_SUCCESS);
}
