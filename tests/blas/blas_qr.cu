/* blas_qr.cu -- self-checking program of cuBLAS's batched QR calls in all four
 * precisions, each item checked in double precision against what it must satisfy:
 * geqrfBatched (tall and wide matrices, padded leading dimension): Q R rebuilt from
 * the Householder vectors and tau equals the input; gelsBatched (least squares,
 * m >= n, no transpose): the residual is orthogonal to A's columns (A^H (A X - C) =
 * 0), the rows of C past n are left as LAPACK leaves them, and an item with a zero
 * column reports the position of R's zero diagonal in devInfoArray. Argument errors
 * set the host info to minus the bad parameter's position (handle not counted);
 * a transpose or m < n answers NOT_SUPPORTED. Prints `PASS blas_qr`. */
#include <cstring>
#include "blas_ref.h"

template <typename T> struct fnsq;
#define FNSQ(T, P)                                                                                               \
    template <> struct fnsq<T> {                                                                                 \
        static cublasStatus_t geqrf(cublasHandle_t h, int m, int n, T *const A[], int lda, T *const tau[],        \
                                    int *info, int count)                                                        \
        { return cublas##P##geqrfBatched(h, m, n, A, lda, tau, info, count); }                                      \
        static cublasStatus_t gels(cublasHandle_t h, cublasOperation_t t, int m, int n, int nrhs, T *const A[],   \
                                   int lda, T *const C[], int ldc, int *info, int *dev_info, int count)          \
        { return cublas##P##gelsBatched(h, t, m, n, nrhs, A, lda, C, ldc, info, dev_info, count); }                \
    };
FNSQ(float, S)
FNSQ(double, D)
FNSQ(cuComplex, C)
FNSQ(cuDoubleComplex, Z)

static const int COUNT = 3;

/* COUNT items of `len` elements each, on the device, and the array of their addresses. */
template <typename T> struct batch {
    std::vector<std::vector<T>> host;
    std::vector<T *> dev;
    T **arr;
    batch(size_t len)
    {
        for (int b = 0; b < COUNT; b++) {
            host.push_back(rand_vec<T>(len));
            dev.push_back(to_dev(host.back()));
        }
        arr = to_dev(dev);
    }
    ~batch()
    {
        for (T *d : dev)
            cudaFree(d);
        cudaFree(arr);
    }
    std::vector<T> got(int b) const { return from_dev(dev[b], host[b].size()); }
};

/* Q R of one geqrf result (m x n, leading dimension ld, tau of min(m, n)) compared
 * with the input A: Q = H_1 ... H_k, H_i = I - tau_i v_i v_i^H. */
template <typename T>
static void check_qr(int m, int n, int ld, const std::vector<T> &A, const std::vector<T> &F,
                     const std::vector<T> &tau, int line)
{
    int k = std::min(m, n);
    std::vector<cd> M((size_t)m * n); /* starts as R, each H_i applied from the last */
    for (int j = 0; j < n; j++)
        for (int i = 0; i <= std::min(j, m - 1); i++)
            M[i + (size_t)j * m] = get(F[i + (size_t)j * ld]);
    for (int r = k - 1; r >= 0; r--) {
        std::vector<cd> v(m, 0.0);
        v[r] = 1.0;
        for (int i = r + 1; i < m; i++)
            v[i] = get(F[i + (size_t)r * ld]);
        cd t = get(tau[r]);
        for (int j = 0; j < n; j++) { /* column j -= tau v (v^H column j) */
            cd dot = 0;
            for (int i = r; i < m; i++)
                dot += std::conj(v[i]) * M[i + (size_t)j * m];
            for (int i = r; i < m; i++)
                M[i + (size_t)j * m] -= t * v[i] * dot;
        }
    }
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            near(M[i + (size_t)j * m], get(A[i + (size_t)j * ld]), tol<T>() * 16, "Q R", line);
}

template <typename T> static void geqrfs(cublasHandle_t h)
{
    for (int shape = 0; shape < 2; shape++) {
        int m = shape == 0 ? 5 : 3, n = shape == 0 ? 3 : 4, lda = m + 2, info = 7;
        batch<T> A((size_t)lda * n), tau((size_t)std::min(m, n));
        CB_OK(fnsq<T>::geqrf(h, m, n, A.arr, lda, tau.arr, &info, COUNT));
        CT_EQ(info, 0);
        for (int b = 0; b < COUNT; b++)
            check_qr(m, n, lda, A.host[b], A.got(b), tau.got(b), __LINE__);
    }
    batch<T> A(16), tau(4);
    int info = 0;
    CB_ST(fnsq<T>::geqrf(h, -1, 2, A.arr, 4, tau.arr, &info, 1), CUBLAS_STATUS_INVALID_VALUE);
    CT_EQ(info, -1);
    CB_ST(fnsq<T>::geqrf(h, 4, 2, A.arr, 3, tau.arr, &info, 1), CUBLAS_STATUS_INVALID_VALUE); /* lda < m */
    CT_EQ(info, -4);
    CB_ST(fnsq<T>::geqrf(h, 4, 2, A.arr, 4, tau.arr, &info, -1), CUBLAS_STATUS_INVALID_VALUE);
    CT_EQ(info, -7);
}

template <typename T> static void gelss(cublasHandle_t h)
{
    const int m = 6, n = 3, nrhs = 2, lda = m + 1, ldc = m + 2;
    batch<T> A((size_t)lda * n), C((size_t)ldc * nrhs);
    for (int i = 0; i < m; i++) /* item 2: column 1 zero, so R(1, 1) is */
        A.host[2][i + (size_t)1 * lda] = put<T>(0.0);
    CT_OK(cudaMemcpy(A.dev[2], A.host[2].data(), A.host[2].size() * sizeof(T), cudaMemcpyHostToDevice));
    int info = 5, *dev_info = to_dev(std::vector<int>(COUNT, -9));
    CB_OK(fnsq<T>::gels(h, CUBLAS_OP_N, m, n, nrhs, A.arr, lda, C.arr, ldc, &info, dev_info, COUNT));
    CT_EQ(info, 0);
    std::vector<int> di = from_dev(dev_info, COUNT);
    CT_EQ(di[0], 0);
    CT_EQ(di[1], 0);
    CT_EQ(di[2], 2);
    for (int b = 0; b < 2; b++) {
        std::vector<T> X = C.got(b); /* X in rows 0..n-1 */
        for (int r = 0; r < nrhs; r++)
            for (int j = 0; j < n; j++) { /* column j of A, conjugated, against the residual */
                cd acc = 0, scale = 0;
                for (int i = 0; i < m; i++) {
                    cd ax = 0;
                    for (int l = 0; l < n; l++)
                        ax += get(A.host[b][i + (size_t)l * lda]) * get(X[l + (size_t)r * ldc]);
                    cd res = ax - get(C.host[b][i + (size_t)r * ldc]);
                    acc += std::conj(get(A.host[b][i + (size_t)j * lda])) * res;
                    scale += std::abs(get(C.host[b][i + (size_t)r * ldc]));
                }
                near(acc, 0.0, tol<T>() * 64 * (1.0 + std::abs(scale)), "A^H residual", __LINE__);
            }
    }
    CB_OK(fnsq<T>::gels(h, CUBLAS_OP_N, m, n, nrhs, A.arr, lda, C.arr, ldc, &info, nullptr, COUNT)); /* no devInfo */
    CB_ST(fnsq<T>::gels(h, CUBLAS_OP_T, m, n, nrhs, A.arr, lda, C.arr, ldc, &info, dev_info, COUNT),
          CUBLAS_STATUS_NOT_SUPPORTED);
    CB_ST(fnsq<T>::gels(h, CUBLAS_OP_N, 2, 3, nrhs, A.arr, lda, C.arr, ldc, &info, dev_info, COUNT),
          CUBLAS_STATUS_NOT_SUPPORTED); /* m < n */
    CB_ST(fnsq<T>::gels(h, CUBLAS_OP_N, m, n, nrhs, A.arr, m - 1, C.arr, ldc, &info, dev_info, COUNT),
          CUBLAS_STATUS_INVALID_VALUE);
    CT_EQ(info, -6);
    CB_ST(fnsq<T>::gels(h, CUBLAS_OP_N, m, n, -1, A.arr, lda, C.arr, ldc, &info, dev_info, COUNT),
          CUBLAS_STATUS_INVALID_VALUE);
    CT_EQ(info, -4);
    CT_OK(cudaFree(dev_info));
}

int main()
{
    return blas_main("blas_qr", [](cublasHandle_t h, auto t) {
        geqrfs<typename decltype(t)::type>(h);
        gelss<typename decltype(t)::type>(h);
    });
}
