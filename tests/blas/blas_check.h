/* blas_check.h -- check macros of the self-checking cuBLAS programs (blas.cu,
 * blas_l1/2/3.cu), beside tests/cuda/cuda_check.h's: a call's cuBLAS status, an
 * operand the shim's server must refuse, and device memory read back. */
#ifndef BLAS_CHECK_H
#define BLAS_CHECK_H

#include <cublas_v2.h>
#include <vector>
#include "../cuda/cuda_check.h"

#define CB_ST(call, expected)                                                                          \
    do {                                                                                               \
        cublasStatus_t cb_e_ = (call), cb_x_ = (expected);                                             \
        if (cb_e_ != cb_x_)                                                                            \
            ct_fail(__FILE__, __LINE__, #call, cublasGetStatusName(cb_x_), cublasGetStatusName(cb_e_)); \
    } while (0)
#define CB_OK(call) CB_ST(call, CUBLAS_STATUS_SUCCESS)

/* Through the shim only (on a GPU these would be out-of-bounds accesses): the server
 * refuses operands outside the program's allocations, reported now or at the next
 * synchronising call, and the session keeps working. */
static inline void expect_refused(cublasStatus_t st, int line)
{
    cudaError_t e = cudaDeviceSynchronize();
    if (!(st == CUBLAS_STATUS_INVALID_VALUE || (st == CUBLAS_STATUS_SUCCESS && e != cudaSuccess)))
        ct_fail(__FILE__, line, "refused", "INVALID_VALUE or a sync error", cublasGetStatusName(st));
    (void)cudaGetLastError();
}
#define REFUSED(call) expect_refused((call), __LINE__)

/* n elements of device memory at d, copied back. */
template <typename T> static std::vector<T> from_dev(const T *d, size_t n)
{
    std::vector<T> h(n);
    CT_OK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
}

#endif
