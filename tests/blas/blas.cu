/* blas.cu -- self-checking cuBLAS program (v2 API): every remoted cuBLAS function
 * with host-checked results, in both pointer modes, plus the handle settings,
 * Set/Get Matrix/Vector (sync and async), status names and argument errors.
 * Prints `PASS blas` when everything matched. Run through the shim it exercises the
 * whole remoting path; run on a GPU it checks the same semantics on real cuBLAS. */
#include <cublas_v2.h>
#include <cuComplex.h>
#include <cuda_fp16.h>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <unistd.h>
#include "blas_check.h"


static void near(double got, double want, double tol, const char *what, int line)
{
    if (!(std::fabs(got - want) <= tol * (1.0 + std::fabs(want)))) {
        char e[64], g[64];
        snprintf(e, sizeof e, "%.9g", want);
        snprintf(g, sizeof g, "%.9g", got);
        ct_fail(__FILE__, line, what, e, g);
    }
}
#define NEAR(got, want, tol) near((got), (want), (tol), #got, __LINE__)

static unsigned rng = 12345;
static double rnd() { rng = rng * 1103515245u + 12345u; return ((rng >> 8) & 0xffff) / 32768.0 - 1.0; }

template <typename T> static std::vector<T> rand_vec(size_t n)
{
    std::vector<T> v(n);
    for (auto &x : v)
        x = (T)rnd();
    return v;
}

template <typename T> static T *to_dev(const std::vector<T> &h)
{
    T *d = nullptr;
    CT_OK(cudaMalloc(&d, h.size() * sizeof(T) + 8));
    CT_OK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}

/* Scalar in host memory or in device memory, by pointer mode. */
template <typename T> static const T *scal(cublasPointerMode_t pm, T v, T *host)
{
    *host = v;
    if (pm == CUBLAS_POINTER_MODE_HOST)
        return host;
    T *d = nullptr;
    CT_OK(cudaMalloc(&d, sizeof(T)));
    CT_OK(cudaMemcpy(d, host, sizeof(T), cudaMemcpyHostToDevice));
    return d;
}

static double op_at(const std::vector<double> &X, cublasOperation_t op, int ld, int i, int j)
{
    return op == CUBLAS_OP_N ? X[(size_t)j * ld + i] : X[(size_t)i * ld + j];
}

template <typename T> static std::vector<double> dbl(const std::vector<T> &v)
{
    return std::vector<double>(v.begin(), v.end());
}

static void test_handles(cublasHandle_t h)
{
    int v = 0;
    CB_OK(cublasGetVersion(h, &v));
    CT_TRUE(v >= 130000);
    CB_OK(cublasGetProperty(MAJOR_VERSION, &v));
    CT_EQ(v, CUBLAS_VER_MAJOR);
    cudaStream_t s, got;
    CT_OK(cudaStreamCreate(&s));
    CB_OK(cublasSetStream(h, s));
    CB_OK(cublasGetStream(h, &got));
    CT_TRUE(got == s);
    cublasMath_t m;
    CB_OK(cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH));
    CB_OK(cublasGetMathMode(h, &m));
    CT_EQ((int)m, (int)CUBLAS_TF32_TENSOR_OP_MATH);
    CB_OK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
    cublasPointerMode_t pm;
    CB_OK(cublasGetPointerMode(h, &pm));
    CT_EQ((int)pm, (int)CUBLAS_POINTER_MODE_HOST);
    void *ws = nullptr;
    CT_OK(cudaMalloc(&ws, 1 << 20));
    CB_OK(cublasSetWorkspace(h, ws, 1 << 20));
    CB_ST(cublasSetPointerMode(nullptr, CUBLAS_POINTER_MODE_HOST), CUBLAS_STATUS_NOT_INITIALIZED);
    CT_TRUE(std::strcmp(cublasGetStatusName(CUBLAS_STATUS_INVALID_VALUE), "CUBLAS_STATUS_INVALID_VALUE") == 0);
    CT_TRUE(std::strlen(cublasGetStatusString(CUBLAS_STATUS_NOT_SUPPORTED)) > 0);
    CB_OK(cublasSetStream(h, 0));
}

template <typename T> static void test_level1(cublasHandle_t h, cublasPointerMode_t pm)
{
    const bool sp = sizeof(T) == 4;
    const double tol = sp ? 1e-4 : 1e-10;
    CB_OK(cublasSetPointerMode(h, pm));
    const int incs[][2] = {{1, 1}, {2, 3}, {-1, 2}, {3, -2}};
    for (auto &inc : incs) {
        int n = 37, ix = inc[0], iy = inc[1];
        size_t lx = (size_t)(n - 1) * std::abs(ix) + 1, ly = (size_t)(n - 1) * std::abs(iy) + 1;
        auto hx = rand_vec<T>(lx), hy = rand_vec<T>(ly);
        T *x = to_dev(hx), *y = to_dev(hy), hs, *res_d = nullptr;
        CT_OK(cudaMalloc(&res_d, 16));
        auto at = [n](int inc, int i) { return inc >= 0 ? (size_t)i * inc : (size_t)(n - 1 - i) * (size_t)(-inc); };
        T alpha = (T)0.75;
        const T *al = scal(pm, alpha, &hs);
        /* axpy */
        if (sp) CB_OK(cublasSaxpy(h, n, (const float *)al, (const float *)x, ix, (float *)y, iy));
        else CB_OK(cublasDaxpy(h, n, (const double *)al, (const double *)x, ix, (double *)y, iy));
        auto y1 = from_dev(y, ly);
        for (int i = 0; i < n; i++)
            NEAR((double)y1[at(iy, i)], (double)hy[at(iy, i)] + alpha * (double)hx[at(ix, i)], tol);
        /* dot */
        double want = 0;
        for (int i = 0; i < n; i++)
            want += (double)hx[at(ix, i)] * (double)y1[at(iy, i)];
        T r = 0, *rp = pm == CUBLAS_POINTER_MODE_HOST ? &r : res_d;
        if (sp) CB_OK(cublasSdot(h, n, (const float *)x, ix, (const float *)y, iy, (float *)rp));
        else CB_OK(cublasDdot(h, n, (const double *)x, ix, (const double *)y, iy, (double *)rp));
        if (pm == CUBLAS_POINTER_MODE_DEVICE)
            CT_OK(cudaMemcpy(&r, res_d, sizeof r, cudaMemcpyDeviceToHost));
        NEAR((double)r, want, tol * 40);
        /* nrm2, asum, amax (positive increments only) */
        if (ix > 0) {
            double nrm = 0, asum = 0, best = -1;
            int amax = 0;
            for (int i = 0; i < n; i++) {
                double v = hx[at(ix, i)];
                nrm += v * v;
                asum += std::fabs(v);
                if (std::fabs(v) > best) { best = std::fabs(v); amax = i + 1; }
            }
            if (sp) CB_OK(cublasSnrm2(h, n, (const float *)x, ix, (float *)rp));
            else CB_OK(cublasDnrm2(h, n, (const double *)x, ix, (double *)rp));
            if (pm == CUBLAS_POINTER_MODE_DEVICE) CT_OK(cudaMemcpy(&r, res_d, sizeof r, cudaMemcpyDeviceToHost));
            NEAR((double)r, std::sqrt(nrm), tol * 10);
            if (sp) CB_OK(cublasSasum(h, n, (const float *)x, ix, (float *)rp));
            else CB_OK(cublasDasum(h, n, (const double *)x, ix, (double *)rp));
            if (pm == CUBLAS_POINTER_MODE_DEVICE) CT_OK(cudaMemcpy(&r, res_d, sizeof r, cudaMemcpyDeviceToHost));
            NEAR((double)r, asum, tol * 40);
            int ir = 0, *irp = pm == CUBLAS_POINTER_MODE_HOST ? &ir : (int *)res_d;
            if (sp) CB_OK(cublasIsamax(h, n, (const float *)x, ix, irp));
            else CB_OK(cublasIdamax(h, n, (const double *)x, ix, irp));
            if (pm == CUBLAS_POINTER_MODE_DEVICE) CT_OK(cudaMemcpy(&ir, res_d, sizeof ir, cudaMemcpyDeviceToHost));
            CT_EQ(ir, amax);
            /* scal */
            if (sp) CB_OK(cublasSscal(h, n, (const float *)al, (float *)x, ix));
            else CB_OK(cublasDscal(h, n, (const double *)al, (double *)x, ix));
            auto x1 = from_dev(x, lx);
            for (int i = 0; i < n; i++)
                NEAR((double)x1[at(ix, i)], alpha * (double)hx[at(ix, i)], tol);
        }
        /* copy */
        if (sp) CB_OK(cublasScopy(h, n, (const float *)x, ix, (float *)y, iy));
        else CB_OK(cublasDcopy(h, n, (const double *)x, ix, (double *)y, iy));
        auto x2 = from_dev(x, lx), y2 = from_dev(y, ly);
        for (int i = 0; i < n; i++)
            CT_TRUE(y2[at(iy, i)] == x2[at(ix, i)]);
        if (pm == CUBLAS_POINTER_MODE_DEVICE) CT_OK(cudaFree((void *)al));
        CT_OK(cudaFree(x));
        CT_OK(cudaFree(y));
        CT_OK(cudaFree(res_d));
    }
    /* nothing to reduce: result 0 */
    if (pm == CUBLAS_POINTER_MODE_HOST) {
        T r = 5;
        if (sp) CB_OK(cublasSnrm2(h, 0, nullptr, 1, (float *)&r));
        else CB_OK(cublasDnrm2(h, 0, nullptr, 1, (double *)&r));
        CT_TRUE(r == 0);
    }
    CB_OK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
}

template <typename T> static void test_level2(cublasHandle_t h, cublasPointerMode_t pm)
{
    const bool sp = sizeof(T) == 4;
    const double tol = sp ? 1e-4 : 1e-10;
    CB_OK(cublasSetPointerMode(h, pm));
    for (cublasOperation_t op : {CUBLAS_OP_N, CUBLAS_OP_T}) {
        int m = 9, n = 6, lda = 11, ix = op == CUBLAS_OP_N ? 2 : -1, iy = -2;
        int lx = op == CUBLAS_OP_N ? n : m, ly = op == CUBLAS_OP_N ? m : n;
        auto hA = rand_vec<T>((size_t)lda * n), hx = rand_vec<T>((size_t)(lx - 1) * std::abs(ix) + 1),
             hy = rand_vec<T>((size_t)(ly - 1) * std::abs(iy) + 1);
        T *A = to_dev(hA), *x = to_dev(hx), *y = to_dev(hy), sa, sb;
        T alpha = (T)1.25, beta = (T)-0.5;
        const T *al = scal(pm, alpha, &sa), *be = scal(pm, beta, &sb);
        if (sp) CB_OK(cublasSgemv(h, op, m, n, (const float *)al, (const float *)A, lda, (const float *)x, ix,
                                  (const float *)be, (float *)y, iy));
        else CB_OK(cublasDgemv(h, op, m, n, (const double *)al, (const double *)A, lda, (const double *)x, ix,
                               (const double *)be, (double *)y, iy));
        auto y1 = from_dev(y, hy.size());
        auto A0 = dbl(hA);
        for (int i = 0; i < ly; i++) {
            double s = 0;
            for (int l = 0; l < lx; l++) {
                size_t xi = ix >= 0 ? (size_t)l * ix : (size_t)(lx - 1 - l) * -ix;
                s += op_at(A0, op, lda, i, l) * (double)hx[xi];
            }
            size_t yi = (size_t)(ly - 1 - i) * -iy;
            NEAR((double)y1[yi], alpha * s + beta * (double)hy[yi], tol * 10);
        }
        /* ger with x of m (inc ix as 1) and y of n */
        auto gx = rand_vec<T>(m), gy = rand_vec<T>(n);
        T *dx = to_dev(gx), *dy = to_dev(gy);
        if (sp) CB_OK(cublasSger(h, m, n, (const float *)al, (const float *)dx, 1, (const float *)dy, 1, (float *)A, lda));
        else CB_OK(cublasDger(h, m, n, (const double *)al, (const double *)dx, 1, (const double *)dy, 1, (double *)A, lda));
        auto A1 = from_dev(A, hA.size());
        for (int j = 0; j < n; j++)
            for (int i = 0; i < lda; i++)
                NEAR((double)A1[(size_t)j * lda + i],
                     (double)hA[(size_t)j * lda + i] + (i < m ? alpha * (double)gx[i] * (double)gy[j] : 0), tol);
        CT_OK(cudaFree(A)); CT_OK(cudaFree(x)); CT_OK(cudaFree(y)); CT_OK(cudaFree(dx)); CT_OK(cudaFree(dy));
    }
    CB_ST(sp ? cublasSgemv(h, CUBLAS_OP_N, 2, 2, nullptr, nullptr, 2, nullptr, 0, nullptr, nullptr, 1)
             : cublasDgemv(h, CUBLAS_OP_N, 2, 2, nullptr, nullptr, 2, nullptr, 0, nullptr, nullptr, 1),
          CUBLAS_STATUS_INVALID_VALUE);
    CB_OK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
}

/* Reference: want = alpha op(A) op(B) + beta C for one item. */
static void ref_gemm(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, double alpha,
                     const std::vector<double> &A, size_t oa, int lda, const std::vector<double> &B, size_t ob, int ldb,
                     double beta, const std::vector<double> &C, size_t oc, int ldc, std::vector<double> &want)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double s = 0;
            for (int l = 0; l < k; l++)
                s += (ta == CUBLAS_OP_N ? A[oa + (size_t)l * lda + i] : A[oa + (size_t)i * lda + l]) *
                     (tb == CUBLAS_OP_N ? B[ob + (size_t)j * ldb + l] : B[ob + (size_t)l * ldb + j]);
            want[oc + (size_t)j * ldc + i] = alpha * s + (beta == 0 ? 0 : beta * C[oc + (size_t)j * ldc + i]);
        }
}

enum gemm_kind { SGEMM, DGEMM, GEMMEX_F, SSTRIDED, DSTRIDED, STRIDED_EX, SBATCHED, BATCHED_EX };

/* float/double GEMM family with padded lds, batches of 3 with gaps, beta 0 on NaN C. */
template <typename T> static void test_gemm(cublasHandle_t h, cublasPointerMode_t pm, gemm_kind kind)
{
    const double tol = sizeof(T) == 4 ? 1e-4 : 1e-10;
    CB_OK(cublasSetPointerMode(h, pm));
    const cublasOperation_t ops[] = {CUBLAS_OP_N, CUBLAS_OP_T};
    cudaDataType dt = sizeof(T) == 4 ? CUDA_R_32F : CUDA_R_64F;
    cublasComputeType_t ct = sizeof(T) == 4 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_64F;
    bool batched = kind >= SSTRIDED;
    int batch = batched ? 3 : 1;
    for (auto ta : ops)
        for (auto tb : ops)
            for (int bz = 0; bz < 2; bz++) {
                int m = 7, n = 5, k = 6;
                int ra = ta == CUBLAS_OP_N ? m : k, ca = ta == CUBLAS_OP_N ? k : m;
                int rb = tb == CUBLAS_OP_N ? k : n, cb = tb == CUBLAS_OP_N ? n : k;
                int lda = ra + 1, ldb = rb + 2, ldc = m + 3;
                long long sa = (long long)lda * ca + 3, sb = (long long)ldb * cb + 1, sc = (long long)ldc * n + 2;
                auto hA = rand_vec<T>((size_t)sa * batch), hB = rand_vec<T>((size_t)sb * batch),
                     hC = rand_vec<T>((size_t)sc * batch);
                if (bz)
                    for (auto &c : hC) c = (T)NAN;
                T *A = to_dev(hA), *B = to_dev(hB), *C = to_dev(hC), s1, s2;
                T alpha = (T)0.5, beta = bz ? (T)0 : (T)1.5;
                const T *al = scal(pm, alpha, &s1), *be = scal(pm, beta, &s2);
                T **arr = nullptr;
                if (kind == SBATCHED || kind == BATCHED_EX) {
                    std::vector<T *> ptrs(3 * batch);
                    for (int i = 0; i < batch; i++) {
                        ptrs[i] = A + i * sa;
                        ptrs[batch + i] = B + i * sb;
                        ptrs[2 * batch + i] = C + i * sc;
                    }
                    arr = to_dev(ptrs);
                }
                switch (kind) {
                case SGEMM:
                    CB_OK(cublasSgemm(h, ta, tb, m, n, k, (const float *)al, (const float *)A, lda, (const float *)B, ldb,
                                      (const float *)be, (float *)C, ldc));
                    break;
                case DGEMM:
                    CB_OK(cublasDgemm(h, ta, tb, m, n, k, (const double *)al, (const double *)A, lda,
                                      (const double *)B, ldb, (const double *)be, (double *)C, ldc));
                    break;
                case GEMMEX_F:
                    CB_OK(cublasGemmEx(h, ta, tb, m, n, k, al, A, dt, lda, B, dt, ldb, be, C, dt, ldc, ct,
                                       CUBLAS_GEMM_DEFAULT));
                    break;
                case SSTRIDED:
                    CB_OK(cublasSgemmStridedBatched(h, ta, tb, m, n, k, (const float *)al, (const float *)A, lda, sa,
                                                    (const float *)B, ldb, sb, (const float *)be, (float *)C, ldc, sc,
                                                    batch));
                    break;
                case DSTRIDED:
                    CB_OK(cublasDgemmStridedBatched(h, ta, tb, m, n, k, (const double *)al, (const double *)A, lda, sa,
                                                    (const double *)B, ldb, sb, (const double *)be, (double *)C, ldc,
                                                    sc, batch));
                    break;
                case STRIDED_EX:
                    CB_OK(cublasGemmStridedBatchedEx(h, ta, tb, m, n, k, al, A, dt, lda, sa, B, dt, ldb, sb, be, C, dt,
                                                     ldc, sc, batch, ct, CUBLAS_GEMM_DEFAULT));
                    break;
                case SBATCHED:
                    CB_OK(cublasSgemmBatched(h, ta, tb, m, n, k, (const float *)al, (const float *const *)arr, lda,
                                             (const float *const *)(arr + batch), ldb, (const float *)be,
                                             (float *const *)(arr + 2 * batch), ldc, batch));
                    break;
                case BATCHED_EX:
                    CB_OK(cublasGemmBatchedEx(h, ta, tb, m, n, k, al, (const void *const *)arr, dt, lda,
                                              (const void *const *)(arr + batch), dt, ldb, be,
                                              (void *const *)(arr + 2 * batch), dt, ldc, batch, ct,
                                              CUBLAS_GEMM_DEFAULT));
                    break;
                }
                auto got = from_dev(C, hC.size());
                auto want = dbl(hC);
                auto A0 = dbl(hA), B0 = dbl(hB), C0 = dbl(hC);
                for (int i = 0; i < batch; i++)
                    ref_gemm(ta, tb, m, n, k, alpha, A0, i * sa, lda, B0, i * sb, ldb, beta, C0, i * sc, ldc, want);
                for (size_t e = 0; e < got.size(); e++) {
                    if (std::isnan(want[e]))
                        CT_TRUE(std::isnan((double)got[e])); /* untouched gap */
                    else
                        NEAR((double)got[e], want[e], tol * 10);
                }
                if (pm == CUBLAS_POINTER_MODE_DEVICE) { CT_OK(cudaFree((void *)al)); CT_OK(cudaFree((void *)be)); }
                if (arr) CT_OK(cudaFree(arr));
                CT_OK(cudaFree(A)); CT_OK(cudaFree(B)); CT_OK(cudaFree(C));
            }
    CB_OK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
}

/* Hgemm, GemmEx and SgemmEx with half data (16F in, 16F or 32F out). */
static void test_half(cublasHandle_t h)
{
    int m = 8, n = 4, k = 6, lda = 9, ldb = 7, ldc = 10;
    std::vector<__half> hA((size_t)lda * k), hB((size_t)ldb * n), hC((size_t)ldc * n);
    std::vector<double> A0(hA.size()), B0(hB.size()), C0(hC.size());
    for (size_t i = 0; i < hA.size(); i++) { A0[i] = (int)(rnd() * 8) / 8.0; hA[i] = __double2half(A0[i]); }
    for (size_t i = 0; i < hB.size(); i++) { B0[i] = (int)(rnd() * 8) / 8.0; hB[i] = __double2half(B0[i]); }
    for (size_t i = 0; i < hC.size(); i++) { C0[i] = (int)(rnd() * 8) / 8.0; hC[i] = __double2half(C0[i]); }
    __half *A = to_dev(hA), *B = to_dev(hB), *C = to_dev(hC);
    __half ha = __double2half(0.5), hb = __double2half(-1.0);
    CB_OK(cublasHgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &ha, A, lda, B, ldb, &hb, C, ldc));
    std::vector<double> want(C0);
    ref_gemm(CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, 0.5, A0, 0, lda, B0, 0, ldb, -1.0, C0, 0, ldc, want);
    auto got = from_dev(C, hC.size());
    for (size_t e = 0; e < got.size(); e++)
        NEAR((double)__half2float(got[e]), want[e], 1e-2);
    /* GemmEx: half in, float out, float compute; op(A) = A^T of a k x m store */
    std::vector<float> fC((size_t)ldc * n, 0.0f);
    float *dC = to_dev(fC), fa = 2.0f, fb = 0.0f;
    CB_OK(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, 6, n, 6, &fa, A, CUDA_R_16F, lda, B, CUDA_R_16F, ldb, &fb, dC,
                       CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    std::vector<double> want2((size_t)ldc * n, 0.0), zero((size_t)ldc * n, 0.0);
    ref_gemm(CUBLAS_OP_T, CUBLAS_OP_N, 6, n, 6, 2.0, A0, 0, lda, B0, 0, ldb, 0.0, zero, 0, ldc, want2);
    auto got2 = from_dev(dC, fC.size());
    for (size_t e = 0; e < got2.size(); e++)
        NEAR((double)got2[e], want2[e], 1e-3);
    /* SgemmEx (GemmEx computing in float): half in, half out, float scalars */
    float sa = 0.5f, sb = -1.0f;
    CT_OK(cudaMemcpy(C, hC.data(), hC.size() * sizeof(__half), cudaMemcpyHostToDevice));
    CB_OK(cublasSgemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &sa, A, CUDA_R_16F, lda, B, CUDA_R_16F, ldb, &sb, C,
                        CUDA_R_16F, ldc));
    auto got3 = from_dev(C, hC.size());
    for (size_t e = 0; e < got3.size(); e++)
        NEAR((double)__half2float(got3[e]), want[e], 1e-2);
    CB_ST(cublasSgemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &sa, A, CUDA_R_16F, lda, B, CUDA_R_16F, ldb, &sb, C,
                        CUDA_R_64F, ldc), CUBLAS_STATUS_NOT_SUPPORTED);
    CT_OK(cudaFree(A)); CT_OK(cudaFree(B)); CT_OK(cudaFree(C)); CT_OK(cudaFree(dC));
}

template <typename T> static void test_geam_trsm(cublasHandle_t h, cublasPointerMode_t pm)
{
    const bool sp = sizeof(T) == 4;
    const double tol = sp ? 1e-4 : 1e-10;
    CB_OK(cublasSetPointerMode(h, pm));
    /* geam: C = alpha A^T + beta B */
    int m = 6, n = 4, lda = n + 1, ldb = m + 2, ldc = m + 1;
    auto hA = rand_vec<T>((size_t)lda * m), hB = rand_vec<T>((size_t)ldb * n), hC = rand_vec<T>((size_t)ldc * n);
    T *A = to_dev(hA), *B = to_dev(hB), *C = to_dev(hC), s1, s2;
    T alpha = (T)2, beta = (T)-1;
    const T *al = scal(pm, alpha, &s1), *be = scal(pm, beta, &s2);
    if (sp) CB_OK(cublasSgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, (const float *)al, (const float *)A, lda,
                              (const float *)be, (const float *)B, ldb, (float *)C, ldc));
    else CB_OK(cublasDgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, (const double *)al, (const double *)A, lda,
                           (const double *)be, (const double *)B, ldb, (double *)C, ldc));
    auto got = from_dev(C, hC.size());
    for (int j = 0; j < n; j++)
        for (int i = 0; i < ldc; i++)
            NEAR((double)got[(size_t)j * ldc + i],
                 i < m ? alpha * (double)hA[(size_t)i * lda + j] + beta * (double)hB[(size_t)j * ldb + i]
                       : (double)hC[(size_t)j * ldc + i], tol);
    /* trsm: lower, non-unit, left: solve A X = alpha B, check A X */
    int tm = 5, tn = 3, tlda = 6, tldb = 7;
    auto tA = rand_vec<T>((size_t)tlda * tm), tB = rand_vec<T>((size_t)tldb * tn);
    for (int i = 0; i < tm; i++) tA[(size_t)i * tlda + i] = (T)(4 + i);
    T *dA = to_dev(tA), *dB = to_dev(tB);
    if (sp) CB_OK(cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, tm, tn,
                              (const float *)al, (const float *)dA, tlda, (float *)dB, tldb));
    else CB_OK(cublasDtrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, tm, tn,
                           (const double *)al, (const double *)dA, tlda, (double *)dB, tldb));
    auto X = from_dev(dB, tB.size());
    for (int j = 0; j < tn; j++)
        for (int i = 0; i < tm; i++) {
            double s = 0;
            for (int l = 0; l <= i; l++)
                s += (double)tA[(size_t)l * tlda + i] * (double)X[(size_t)j * tldb + l];
            NEAR(s, alpha * (double)tB[(size_t)j * tldb + i], tol * 10);
        }
    if (pm == CUBLAS_POINTER_MODE_DEVICE) { CT_OK(cudaFree((void *)al)); CT_OK(cudaFree((void *)be)); }
    CT_OK(cudaFree(A)); CT_OK(cudaFree(B)); CT_OK(cudaFree(C)); CT_OK(cudaFree(dA)); CT_OK(cudaFree(dB));
    CB_OK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
}

/* Set/Get Matrix/Vector with leading dimensions and increments, sync and async;
 * wide: through their _64 forms. */
#define CP(fn, ...) (wide ? fn##_64(__VA_ARGS__) : fn(__VA_ARGS__))
static void test_copies(bool wide)
{
    int rows = 5, cols = 4, lda = 7, ldb = 6;
    auto hA = rand_vec<float>((size_t)lda * cols);
    float *d = nullptr;
    CT_OK(cudaMalloc(&d, (size_t)ldb * cols * sizeof(float)));
    CT_OK(cudaMemset(d, 0, (size_t)ldb * cols * sizeof(float)));
    CB_OK(CP(cublasSetMatrix, rows, cols, sizeof(float), hA.data(), lda, d, ldb));
    std::vector<float> back((size_t)lda * cols, -7.0f);
    CB_OK(CP(cublasGetMatrix, rows, cols, sizeof(float), d, ldb, back.data(), lda));
    for (int j = 0; j < cols; j++)
        for (int i = 0; i < lda; i++)
            CT_TRUE(back[(size_t)j * lda + i] == (i < rows ? hA[(size_t)j * lda + i] : -7.0f));
    auto dev = from_dev(d, (size_t)ldb * cols);
    for (int j = 0; j < cols; j++)
        for (int i = rows; i < ldb; i++)
            CT_TRUE(dev[(size_t)j * ldb + i] == 0.0f);
    cudaStream_t s;
    CT_OK(cudaStreamCreate(&s));
    std::vector<double> hv(20), vb(20, -1.0);
    for (int i = 0; i < 20; i++) hv[i] = i;
    double *dv = nullptr;
    CT_OK(cudaMalloc(&dv, 30 * sizeof(double)));
    CB_OK(CP(cublasSetVectorAsync, 10, sizeof(double), hv.data(), 2, dv, 3, s));
    CB_OK(CP(cublasGetVectorAsync, 10, sizeof(double), dv, 3, vb.data(), 1, s));
    CT_OK(cudaStreamSynchronize(s));
    for (int i = 0; i < 10; i++) CT_TRUE(vb[i] == 2.0 * i);
    CB_OK(CP(cublasSetVector, 20, sizeof(double), hv.data(), 1, dv, 1));
    CB_OK(CP(cublasGetVector, 20, sizeof(double), dv, 1, vb.data(), 1));
    for (int i = 0; i < 20; i++) CT_TRUE(vb[i] == hv[i]);
    CB_OK(CP(cublasSetMatrixAsync, rows, cols, sizeof(float), hA.data(), lda, d, ldb, s));
    CB_OK(CP(cublasGetMatrixAsync, rows, cols, sizeof(float), d, ldb, back.data(), lda, s));
    CT_OK(cudaStreamSynchronize(s));
    CT_TRUE(back[0] == hA[0]);
    CB_ST(CP(cublasSetMatrix, rows, cols, sizeof(float), hA.data(), 3, d, ldb), CUBLAS_STATUS_INVALID_VALUE);
    CB_ST(CP(cublasSetVector, 4, 0, hv.data(), 1, dv, 1), CUBLAS_STATUS_INVALID_VALUE);
    CB_ST(CP(cublasGetVector, 4, sizeof(double), dv, 0, vb.data(), 1), CUBLAS_STATUS_INVALID_VALUE);
    if (wide) /* a row of more bytes than size_t holds */
        CT_TRUE(cublasSetMatrix_64(rows, cols, (int64_t)1 << 62, hA.data(), lda, d, ldb) != CUBLAS_STATUS_SUCCESS);
    CT_OK(cudaFree(d)); CT_OK(cudaFree(dv)); CT_OK(cudaStreamDestroy(s));
}

/* The atomics mode and SM count target a handle keeps (a GEMM runs under both), the
 * runtime version cuBLAS was built for, and the refusals of bad settings. */
static void test_settings(cublasHandle_t h)
{
    cublasAtomicsMode_t am = CUBLAS_ATOMICS_NOT_ALLOWED;
    int sms = -1;
    CB_OK(cublasGetAtomicsMode(h, &am));
    CT_EQ((int)am, (int)CUBLAS_ATOMICS_NOT_ALLOWED);
    CB_OK(cublasSetAtomicsMode(h, CUBLAS_ATOMICS_ALLOWED));
    CB_OK(cublasGetAtomicsMode(h, &am));
    CT_EQ((int)am, (int)CUBLAS_ATOMICS_ALLOWED);
    CB_ST(cublasSetAtomicsMode(h, (cublasAtomicsMode_t)7), CUBLAS_STATUS_INVALID_VALUE);
    CB_OK(cublasGetSmCountTarget(h, &sms));
    CT_EQ(sms, 0);
    CB_OK(cublasSetSmCountTarget(h, 1));
    CB_OK(cublasGetSmCountTarget(h, &sms));
    CT_EQ(sms, 1);
    CB_ST(cublasSetSmCountTarget(h, -1), CUBLAS_STATUS_INVALID_VALUE);
    CB_ST(cublasGetSmCountTarget(h, nullptr), CUBLAS_STATUS_INVALID_VALUE);
    float one = 1, zero = 0, *A = to_dev(std::vector<float>(4, 2.0f)), *C = to_dev(std::vector<float>(4, 0.0f));
    CB_OK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, A, 2, A, 2, &zero, C, 2));
    std::vector<float> c = from_dev(C, 4);
    for (float v : c)
        CT_TRUE(v == 8.0f);
    CB_OK(cublasSetAtomicsMode(h, CUBLAS_ATOMICS_NOT_ALLOWED));
    CB_OK(cublasSetSmCountTarget(h, 0));
    CT_TRUE(cublasGetCudartVersion() >= 13000);
    CT_OK(cudaFree(A));
    CT_OK(cudaFree(C));
}

static void test_errors(cublasHandle_t h)
{
    float one = 1, zero = 0, *A = nullptr;
    CT_OK(cudaMalloc(&A, 64 * sizeof(float)));
    CB_ST(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, -1, 2, 2, &one, A, 2, A, 2, &zero, A, 2),
          CUBLAS_STATUS_INVALID_VALUE);
    CB_ST(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 2, 2, &one, A, 2, A, 2, &zero, A, 4),
          CUBLAS_STATUS_INVALID_VALUE); /* lda < m */
    CB_ST(cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, A, 2, 4, A, 2, 4, &zero, A, 2, 4, -1),
          CUBLAS_STATUS_INVALID_VALUE);
    CB_OK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 0, 2, 2, &one, nullptr, 1, nullptr, 2, &zero, nullptr, 1));
    CT_OK(cudaDeviceSynchronize());
    CT_OK(cudaFree(A));
}


static void test_footprint(cublasHandle_t h)
{
    float one = 1, zero = 0, *A = nullptr, *P = nullptr, host[16];
    CT_OK(cudaMalloc(&A, 64 * sizeof(float)));
    CT_OK(cudaMalloc(&P, 4 * sizeof(float)));
    REFUSED(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, A, 4, A, 4, &zero, A + 60, 4));
    REFUSED(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, host, 4, A, 4, &zero, A, 4));
    REFUSED(cublasSaxpy(h, 40, &one, A, 2, A, 1));
    REFUSED(cublasSgemv(h, CUBLAS_OP_T, 8, 8, &one, A, 8, A, 1, &zero, A, -10));
    REFUSED(cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, A, 2, 16, A, 2, 16, &zero, A, 2, 16,
                                      5));
    float **arr = nullptr;
    CT_OK(cudaMalloc(&arr, 3 * sizeof(float *)));
    float *ptrs[3] = {A, host, A + 32};
    CT_OK(cudaMemcpy(arr, ptrs, sizeof ptrs, cudaMemcpyHostToDevice));
    REFUSED(cublasSgemmBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, (const float *const *)arr, 2,
                               (const float *const *)arr + 1, 2, &zero, arr + 2, 2, 1));
    REFUSED(cublasSgemmBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, (const float *const *)arr, 2,
                               (const float *const *)arr, 2, &zero, arr, 2, 3000));
    CB_OK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE));
    REFUSED(cublasSscal(h, 4, P + 4, A, 1)); /* device alpha past its allocation */
    float *res = P + 3;
    CB_OK(cublasSdot(h, 4, A, 1, A, 1, res));
    CT_OK(cudaDeviceSynchronize());
    REFUSED(cublasSdot(h, 4, A, 1, A, 1, P + 4));
    CB_OK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
    REFUSED(cublasSetWorkspace(h, P, 1 << 20));
    /* still working */
    std::vector<float> ones(64, 1.0f), out(16);
    CT_OK(cudaMemcpy(A, ones.data(), 64 * sizeof(float), cudaMemcpyHostToDevice));
    CB_OK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, A, 4, A + 16, 4, &zero, A + 32, 4));
    CT_OK(cudaMemcpy(out.data(), A + 32, 16 * sizeof(float), cudaMemcpyDeviceToHost));
    for (float v : out) CT_TRUE(v == 4.0f);
    CT_OK(cudaFree(arr)); CT_OK(cudaFree(A)); CT_OK(cudaFree(P));
}

/* cuBLAS's logger: a configured file and the callback see each call by name. */
static std::vector<std::string> logged;
static void log_sink(const char *msg) { logged.push_back(msg); }

static void test_logger(cublasHandle_t h)
{
    char path[] = "/tmp/blas_log_XXXXXX";
    int fd = mkstemp(path);
    CT_TRUE(fd >= 0);
    close(fd);
    cublasLogCallback cb = log_sink;
    CB_OK(cublasSetLoggerCallback(log_sink));
    CB_OK(cublasGetLoggerCallback(&cb));
    CT_TRUE(cb == log_sink);
    CB_ST(cublasGetLoggerCallback(nullptr), CUBLAS_STATUS_INVALID_VALUE);
    CB_OK(cublasLoggerConfigure(1, 0, 0, path));
    std::vector<float> hx(4, 1.0f);
    float *x = to_dev(hx), two = 2.0f;
    CB_OK(cublasSscal(h, 4, &two, x, 1));
    CB_OK(cublasLoggerConfigure(0, 0, 0, nullptr)); /* off: nothing more is logged */
    CB_OK(cublasSscal(h, 4, &two, x, 1));
    CT_TRUE(logged.size() == 1 && logged[0].find("cublasSscal_v2") != std::string::npos);
    FILE *f = fopen(path, "r");
    char line[256] = "";
    CT_TRUE(f != nullptr && fgets(line, sizeof line, f) != nullptr);
    CT_TRUE(std::strstr(line, "cublasSscal_v2") != nullptr && fgets(line, sizeof line, f) == nullptr);
    if (f) fclose(f);
    unlink(path);
    CB_OK(cublasSetLoggerCallback(nullptr));
    CT_OK(cudaFree(x));
}

/* GemmEx on complex float and double (CuPy's complex matmul), op(B) conjugate-
 * transposed, in both pointer modes; a NaN in C is not read when beta is 0. */
template <typename T>
static void test_gemm_complex(cublasHandle_t h, cublasPointerMode_t pm)
{
    typedef std::complex<T> C;
    const int m = 5, n = 4, k = 3, lda = 6, ldb = 5, ldc = 7;
    cudaDataType dt = sizeof(T) == 4 ? CUDA_C_32F : CUDA_C_64F;
    cublasComputeType_t ct = sizeof(T) == 4 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_64F;
    std::vector<C> A((size_t)lda * k), B((size_t)ldb * k), Cm((size_t)ldc * n, C(NAN, 0));
    for (auto &v : A)
        v = C((T)rnd(), (T)rnd());
    for (auto &v : B)
        v = C((T)rnd(), (T)rnd());
    C alpha((T)1.5, (T)-0.5), beta(0, 0);
    C *dA, *dB, *dC, *dal, *dbe;
    CT_OK(cudaMalloc(&dA, A.size() * sizeof(C)));
    CT_OK(cudaMalloc(&dB, B.size() * sizeof(C)));
    CT_OK(cudaMalloc(&dC, Cm.size() * sizeof(C)));
    CT_OK(cudaMalloc(&dal, sizeof(C)));
    CT_OK(cudaMalloc(&dbe, sizeof(C)));
    CT_OK(cudaMemcpy(dA, A.data(), A.size() * sizeof(C), cudaMemcpyHostToDevice));
    CT_OK(cudaMemcpy(dB, B.data(), B.size() * sizeof(C), cudaMemcpyHostToDevice));
    CT_OK(cudaMemcpy(dC, Cm.data(), Cm.size() * sizeof(C), cudaMemcpyHostToDevice));
    CT_OK(cudaMemcpy(dal, &alpha, sizeof(C), cudaMemcpyHostToDevice));
    CT_OK(cudaMemcpy(dbe, &beta, sizeof(C), cudaMemcpyHostToDevice));
    CB_OK(cublasSetPointerMode(h, pm));
    bool dev = pm == CUBLAS_POINTER_MODE_DEVICE;
    CB_OK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_C, m, n, k, dev ? (void *)dal : (void *)&alpha, dA, dt, lda, dB,
                       dt, ldb, dev ? (void *)dbe : (void *)&beta, dC, dt, ldc, ct, CUBLAS_GEMM_DEFAULT));
    CB_OK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
    std::vector<C> got(Cm.size());
    CT_OK(cudaMemcpy(got.data(), dC, got.size() * sizeof(C), cudaMemcpyDeviceToHost));
    double tol = sizeof(T) == 4 ? 1e-5 : 1e-12;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            C want(0, 0);
            for (int l = 0; l < k; l++) /* B is n x k stored, op = conjugate transpose */
                want += A[(size_t)l * lda + i] * std::conj(B[(size_t)l * ldb + j]);
            want *= alpha;
            NEAR((double)got[(size_t)j * ldc + i].real(), (double)want.real(), tol);
            NEAR((double)got[(size_t)j * ldc + i].imag(), (double)want.imag(), tol);
        }
    CT_OK(cudaFree(dA));
    CT_OK(cudaFree(dB));
    CT_OK(cudaFree(dC));
    CT_OK(cudaFree(dal));
    CT_OK(cudaFree(dbe));
}

int main(int argc, char **argv)
{
    cublasHandle_t h;
    CB_OK(cublasCreate(&h));
    if (argc > 1 && std::strcmp(argv[1], "footprint") == 0) {
        test_footprint(h);
        CB_OK(cublasDestroy(h));
        return ct_finish("blas_footprint");
    }
    test_handles(h);
    for (cublasPointerMode_t pm : {CUBLAS_POINTER_MODE_HOST, CUBLAS_POINTER_MODE_DEVICE}) {
        test_level1<float>(h, pm);
        test_level1<double>(h, pm);
        test_level2<float>(h, pm);
        test_level2<double>(h, pm);
        test_gemm<float>(h, pm, SGEMM);
        test_gemm<double>(h, pm, DGEMM);
        test_gemm<float>(h, pm, GEMMEX_F);
        test_gemm<double>(h, pm, GEMMEX_F);
        test_gemm<float>(h, pm, SSTRIDED);
        test_gemm<double>(h, pm, DSTRIDED);
        test_gemm<float>(h, pm, STRIDED_EX);
        test_gemm<float>(h, pm, SBATCHED);
        test_gemm<float>(h, pm, BATCHED_EX);
        test_geam_trsm<float>(h, pm);
        test_geam_trsm<double>(h, pm);
        test_gemm_complex<float>(h, pm);
        test_gemm_complex<double>(h, pm);
    }
    test_half(h);
    test_logger(h);
    test_copies(false);
    test_copies(true);
    test_settings(h);
    test_errors(h);
    CT_OK(cudaDeviceSynchronize());
    CB_OK(cublasDestroy(h));
    return ct_finish("blas");
}
