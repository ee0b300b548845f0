/* blas_batch.cu -- self-checking program of cuBLAS's batched level 2 and strided
 * level 3 calls in all four precisions, each item against its own reference
 * computed here in double precision: gemvBatched (pointer arrays) and
 * gemvStridedBatched in S, D, C and Z, gemmStridedBatched in all four (S and D
 * also through GemmStridedBatchedEx), Cgemm3mStridedBatched, HgemmStridedBatched,
 * HgemmBatched and GemmBatchedEx, the mixed-precision gemv batches (HSH, HSS, TST,
 * TSS, both forms), with every operation, mixed-sign increments, a stride of 0
 * (one matrix for every item), padded strides, beta 0 over NaN-filled outputs and
 * both pointer modes, plus argument errors and an empty batch. Prints `PASS
 * blas_batch`; with `64`, the same through the calls' _64 twins (`PASS
 * blas_batch_64`); with `footprint` (through the shim only), strided operands whose
 * last item runs past their allocation, which the shim's server refuses (`PASS
 * blas_batch_footprint`). */
#include <cstring>
#include <limits>
#include <type_traits>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include "blas_ref.h"

typedef cublasOperation_t op_t;

/* The calls of one precision. GSB: gemmStridedBatched where cuBLAS has it for the
 * precision as a generated row (C and Z; S and D are the hand-written GEMM family). */
#define GEMV_B(T) cublasHandle_t h, op_t t, int m, int n, const T *a, const T *const A[], int lda, \
                  const T *const x[], int incx, const T *b, T *const y[], int incy, int count
#define GEMV_S(T) cublasHandle_t h, op_t t, int m, int n, const T *a, const T *A, int lda, long long sA, const T *x, \
                  int incx, long long sx, const T *b, T *y, int incy, long long sy, int count
#define GEMM_S(T) cublasHandle_t h, op_t ta, op_t tb, int m, int n, int k, const T *a, const T *A, int lda, \
                  long long sA, const T *B, int ldb, long long sB, const T *b, T *C, int ldc, long long sC, int count
template <typename T> struct fnsb;
#define FNSB(T, P)                                                                                               \
    template <> struct fnsb<T> {                                                                                 \
        static cublasStatus_t gemv_batched(GEMV_B(T))                                                            \
        { return V64(cublas##P##gemvBatched, h, t, m, n, a, A, lda, x, incx, b, y, incy, count); }                  \
        static cublasStatus_t gemv_strided(GEMV_S(T))                                                            \
        { return V64(cublas##P##gemvStridedBatched, h, t, m, n, a, A, lda, sA, x, incx, sx, b, y, incy, sy, count); } \
    };
FNSB(float, S)
FNSB(double, D)
FNSB(cuComplex, C)
FNSB(cuDoubleComplex, Z)

static cublasStatus_t gemm_strided(GEMM_S(cuComplex), bool three_m)
{
    if (three_m)
        return V64(cublasCgemm3mStridedBatched, h, ta, tb, m, n, k, a, A, lda, sA, B, ldb, sB, b, C, ldc, sC, count);
    return V64(cublasCgemmStridedBatched, h, ta, tb, m, n, k, a, A, lda, sA, B, ldb, sB, b, C, ldc, sC, count);
}
static cublasStatus_t gemm_strided(GEMM_S(cuDoubleComplex), bool)
{
    return V64(cublasZgemmStridedBatched, h, ta, tb, m, n, k, a, A, lda, sA, B, ldb, sB, b, C, ldc, sC, count);
}
/* S and D: the hand-written GEMM family's strided call, or (ex) GemmStridedBatchedEx. */
template <typename T>
static cublasStatus_t gemm_strided_sd(GEMM_S(T), bool ex, cudaDataType type, cublasComputeType_t compute)
{
    if (ex)
        return V64(cublasGemmStridedBatchedEx, h, ta, tb, m, n, k, a, A, type, lda, sA, B, type, ldb, sB, b, C, type,
                   ldc, sC, count, compute, CUBLAS_GEMM_DEFAULT);
    if constexpr (std::is_same<T, float>::value)
        return V64(cublasSgemmStridedBatched, h, ta, tb, m, n, k, a, A, lda, sA, B, ldb, sB, b, C, ldc, sC, count);
    else
        return V64(cublasDgemmStridedBatched, h, ta, tb, m, n, k, a, A, lda, sA, B, ldb, sB, b, C, ldc, sC, count);
}
static cublasStatus_t gemm_strided(GEMM_S(float), bool ex)
{
    return gemm_strided_sd(h, ta, tb, m, n, k, a, A, lda, sA, B, ldb, sB, b, C, ldc, sC, count, ex, CUDA_R_32F,
                           CUBLAS_COMPUTE_32F);
}
static cublasStatus_t gemm_strided(GEMM_S(double), bool ex)
{
    return gemm_strided_sd(h, ta, tb, m, n, k, a, A, lda, sA, B, ldb, sB, b, C, ldc, sC, count, ex, CUDA_R_64F,
                           CUBLAS_COMPUTE_64F);
}

static const op_t OPS[] = {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C};
static const cublasPointerMode_t MODES[] = {CUBLAS_POINTER_MODE_HOST, CUBLAS_POINTER_MODE_DEVICE};
static const int COUNT = 3;


/* Element (i, j) of op(M) for M column-major at a with leading dimension ld. */
template <typename T> static cd op_at(const T *a, int ld, op_t op, int i, int j)
{
    if (op == CUBLAS_OP_N)
        return get(a[i + (size_t)j * ld]);
    cd v = get(a[j + (size_t)i * ld]);
    return op == CUBLAS_OP_C ? std::conj(v) : v;
}

/* y = alpha op(A) x + beta y for one item (A m x n, lda), y's elements strided
 * (NaN y read as 0 when beta is 0), checked against got; the elements between
 * y's strided ones must be left as they were. */
template <typename T>
static void check_gemv(op_t t, int m, int n, cd alpha, const T *A, int lda, const T *x, strided sx, cd beta,
                       const T *y0, const T *got, strided sy, int line)
{
    int rows = t == CUBLAS_OP_N ? m : n, cols = t == CUBLAS_OP_N ? n : m;
    std::vector<bool> touched(sy.len(), false);
    for (int i = 0; i < rows; i++) {
        cd acc = 0;
        for (int j = 0; j < cols; j++)
            acc += op_at(A, lda, t, i, j) * get(x[sx.at(j)]);
        cd want = alpha * acc + (beta == 0.0 ? cd(0) : beta * get(y0[sy.at(i)]));
        near(get(got[sy.at(i)]), want, tol<T>() * (cols + 1), "gemv item y", line);
        touched[sy.at(i)] = true;
    }
    for (size_t e = 0; e < sy.len(); e++)
        if (!touched[e] && std::memcmp(&got[e], &y0[e], sizeof(T)) != 0)
            ct_fail(__FILE__, line, "gemv: element between y's", "untouched", "changed");
}

/* The batch's items as host vectors, their device copies and the device array of
 * their addresses. */
template <typename T> struct items {
    std::vector<std::vector<T>> host;
    std::vector<T *> dev;
    T **arr = nullptr;
    items(int count, size_t len, bool nan)
    {
        for (int b = 0; b < count; b++) {
            host.push_back(rand_vec<T>(len));
            if (nan)
                for (auto &e : host.back())
                    e = put<T>(nan_cd());
            dev.push_back(to_dev(host.back()));
        }
        arr = to_dev(std::vector<T *>(dev.begin(), dev.end()));
    }
    ~items()
    {
        for (T *d : dev)
            cudaFree(d);
        cudaFree(arr);
    }
};

template <typename T> static void gemv_batched(cublasHandle_t h, cublasPointerMode_t pm, op_t t, cd beta)
{
    const int m = 4, n = 3, lda = m + 2;
    strided sx{t == CUBLAS_OP_N ? n : m, 2}, sy{t == CUBLAS_OP_N ? m : n, -1};
    items<T> A(COUNT, (size_t)lda * n, false), x(COUNT, sx.len(), false), y(COUNT, sy.len(), beta == 0.0);
    scalar<T> alpha(put<T>(cd(0.75, -0.5))), b(put<T>(beta));
    CB_OK(cublasSetPointerMode(h, pm));
    CB_OK(fnsb<T>::gemv_batched(h, t, m, n, alpha.at(pm), A.arr, lda, x.arr, sx.inc, b.at(pm), y.arr, sy.inc, COUNT));
    for (int i = 0; i < COUNT; i++) {
        std::vector<T> got = from_dev(y.dev[i], sy.len());
        check_gemv(t, m, n, get(alpha.host), A.host[i].data(), lda, x.host[i].data(), sx, beta, y.host[i].data(),
                   got.data(), sy, __LINE__);
    }
}

/* A strided operand: count items of `one` elements, each stride elements after the
 * one before (stride 0: one item for all). */
template <typename T> struct sbatch {
    long long stride;
    std::vector<T> host;
    T *dev;
    sbatch(size_t one, long long stride_, bool nan) : stride(stride_)
    {
        host = rand_vec<T>(one + (size_t)stride * (COUNT - 1));
        if (nan)
            for (auto &e : host)
                e = put<T>(nan_cd());
        dev = to_dev(host);
    }
    ~sbatch() { cudaFree(dev); }
    const T *item(const std::vector<T> &v, int b) const { return v.data() + (size_t)stride * b; }
};

template <typename T> static void gemv_strided(cublasHandle_t h, cublasPointerMode_t pm, op_t t, cd beta, bool shared_a)
{
    const int m = 3, n = 5, lda = m + 1;
    strided sx{t == CUBLAS_OP_N ? n : m, -2}, sy{t == CUBLAS_OP_N ? m : n, 3};
    sbatch<T> A((size_t)lda * n, shared_a ? 0 : (long long)lda * n + 3, false), x(sx.len(), (long long)sx.len() + 1, false),
        y(sy.len(), (long long)sy.len(), beta == 0.0);
    scalar<T> alpha(put<T>(cd(-1.25, 0.5))), b(put<T>(beta));
    CB_OK(cublasSetPointerMode(h, pm));
    CB_OK(fnsb<T>::gemv_strided(h, t, m, n, alpha.at(pm), A.dev, lda, A.stride, x.dev, sx.inc, x.stride, b.at(pm),
                                y.dev, sy.inc, y.stride, COUNT));
    std::vector<T> got = from_dev(y.dev, y.host.size());
    for (int i = 0; i < COUNT; i++)
        check_gemv(t, m, n, get(alpha.host), A.item(A.host, i), lda, x.item(x.host, i), sx, beta, y.item(y.host, i),
                   y.item(got, i), sy, __LINE__);
}

/* C = alpha op(A) op(B) + beta C for each item of a strided batch (alt: Cgemm3m for
 * C, GemmStridedBatchedEx for S and D). */
template <typename T>
static void gemm_strided_case(cublasHandle_t h, cublasPointerMode_t pm, op_t ta, op_t tb, cd beta, bool alt,
                              bool shared_b)
{
    const int m = 3, n = 4, k = 2, lda = (ta == CUBLAS_OP_N ? m : k) + 1, ldb = (tb == CUBLAS_OP_N ? k : n) + 2,
              ldc = m + 1;
    sbatch<T> A((size_t)lda * (ta == CUBLAS_OP_N ? k : m), (long long)lda * 5, false),
        B((size_t)ldb * (tb == CUBLAS_OP_N ? n : k), shared_b ? 0 : (long long)ldb * 4 + 1, false),
        C((size_t)ldc * n, (long long)ldc * n, beta == 0.0);
    scalar<T> alpha(put<T>(cd(0.5, 1.5))), b(put<T>(beta));
    CB_OK(cublasSetPointerMode(h, pm));
    CB_OK(gemm_strided(h, ta, tb, m, n, k, alpha.at(pm), A.dev, lda, A.stride, B.dev, ldb, B.stride, b.at(pm), C.dev,
                       ldc, C.stride, COUNT, alt));
    std::vector<T> got = from_dev(C.dev, C.host.size());
    for (int it = 0; it < COUNT; it++)
        for (int j = 0; j < n; j++)
            for (int i = 0; i < ldc; i++) {
                const T *g = C.item(got, it) + i + (size_t)j * ldc, *c0 = C.item(C.host, it) + i + (size_t)j * ldc;
                if (i >= m) { /* padding between columns: untouched */
                    if (std::memcmp(g, c0, sizeof(T)) != 0)
                        ct_fail(__FILE__, __LINE__, "gemm strided padding", "untouched", "changed");
                    continue;
                }
                cd acc = 0;
                for (int l = 0; l < k; l++)
                    acc += op_at(A.item(A.host, it), lda, ta, i, l) * op_at(B.item(B.host, it), ldb, tb, l, j);
                cd want = get(alpha.host) * acc + (beta == 0.0 ? cd(0) : get(b.host) * get(*c0));
                near(get(*g), want, tol<T>() * (k + 2), "gemm strided item C", __LINE__);
            }
}

/* Argument errors cuBLAS answers at once, and an empty batch that touches nothing. */
template <typename T> static void errors(cublasHandle_t h)
{
    items<T> A(1, 16, false), x(1, 4, false), y(1, 4, false);
    sbatch<T> S(16, 0, false);
    T one = put<T>(1.0);
    CB_OK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
    CB_ST(fnsb<T>::gemv_batched(h, CUBLAS_OP_N, 2, 2, &one, A.arr, 2, x.arr, 1, &one, y.arr, 1, -1),
          CUBLAS_STATUS_INVALID_VALUE);
    CB_ST(fnsb<T>::gemv_batched(h, CUBLAS_OP_N, 3, 2, &one, A.arr, 2, x.arr, 1, &one, y.arr, 1, 1),
          CUBLAS_STATUS_INVALID_VALUE); /* lda < m */
    CB_ST(fnsb<T>::gemv_batched(h, (op_t)7, 2, 2, &one, A.arr, 2, x.arr, 1, &one, y.arr, 1, 1),
          CUBLAS_STATUS_INVALID_VALUE);
    CB_ST(fnsb<T>::gemv_strided(h, CUBLAS_OP_N, 2, 2, &one, S.dev, 2, 0, S.dev, 0, 4, &one, S.dev, 1, 4, 1),
          CUBLAS_STATUS_INVALID_VALUE); /* incx 0 */
    CB_ST(fnsb<T>::gemv_strided(h, CUBLAS_OP_N, -1, 2, &one, S.dev, 2, 0, S.dev, 1, 4, &one, S.dev, 1, 4, 1),
          CUBLAS_STATUS_INVALID_VALUE);
    /* an empty batch: success, and y is untouched */
    std::vector<T> before = from_dev(y.dev[0], 4);
    CB_OK(fnsb<T>::gemv_batched(h, CUBLAS_OP_N, 2, 2, &one, A.arr, 2, x.arr, 1, &one, y.arr, 1, 0));
    CB_OK(fnsb<T>::gemv_strided(h, CUBLAS_OP_N, 2, 2, &one, S.dev, 2, 0, S.dev, 1, 4, &one, y.dev[0], 1, 4, 0));
    CT_OK(cudaDeviceSynchronize());
    if (std::memcmp(before.data(), from_dev(y.dev[0], 4).data(), 4 * sizeof(T)) != 0)
        ct_fail(__FILE__, __LINE__, "empty batch", "y untouched", "y changed");
}

template <typename T> static void run(cublasHandle_t h)
{
    for (auto pm : MODES)
        for (op_t t : OPS) {
            gemv_batched<T>(h, pm, t, 0.5);
            gemv_strided<T>(h, pm, t, -2.0, false);
        }
    gemv_batched<T>(h, CUBLAS_POINTER_MODE_DEVICE, CUBLAS_OP_T, 0.0);
    gemv_strided<T>(h, CUBLAS_POINTER_MODE_HOST, CUBLAS_OP_N, 0.0, true);
    errors<T>(h);
    CB_OK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
}

template <typename T> static void run_gemm(cublasHandle_t h, bool alt)
{
    for (auto pm : MODES)
        for (op_t ta : OPS)
            for (op_t tb : OPS)
                gemm_strided_case<T>(h, pm, ta, tb, cd(0.25, -1), alt, false);
    gemm_strided_case<T>(h, CUBLAS_POINTER_MODE_DEVICE, CUBLAS_OP_N, CUBLAS_OP_T, 0.0, alt, true);
    T one = put<T>(1.0);
    sbatch<T> S(64, 0, false);
    CB_ST(gemm_strided(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, S.dev, 2, 0, S.dev, 2, 0, &one, S.dev, 1, 0, 1,
                       alt),
          CUBLAS_STATUS_INVALID_VALUE); /* ldc < m */
    CB_ST(gemm_strided(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, S.dev, 2, 0, S.dev, 2, 0, &one, S.dev, 2, 4, -3,
                       alt),
          CUBLAS_STATUS_INVALID_VALUE);
    CB_OK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
}

/* HgemmStridedBatched and HgemmBatched (half data computing in half) and
 * GemmBatchedEx in float: C = 0.5 A B - C for each item, against a float reference
 * of the same inputs. */
template <typename E, typename Call>
static void small_batch(Call call, float eps, int line)
{
    const int m = 3, n = 2, k = 4;
    std::vector<E> A(COUNT * m * k), B(COUNT * k * n), C(COUNT * m * n);
    for (auto *v : {&A, &B, &C})
        for (auto &e : *v)
            e = (E)(float)rnd();
    E *dA = to_dev(A), *dB = to_dev(B), *dC = to_dev(C);
    std::vector<E *> arr = {dA, dA + m * k, dA + 2 * m * k, dB, dB + k * n, dB + 2 * k * n, dC, dC + m * n,
                            dC + 2 * m * n};
    E **dArr = to_dev(arr);
    CB_OK(call(m, n, k, dA, dB, dC, (const E *const *)dArr, (const E *const *)dArr + COUNT, dArr + 2 * COUNT));
    std::vector<E> got = from_dev(dC, C.size());
    for (int b = 0; b < COUNT; b++)
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++) {
                float acc = 0;
                for (int l = 0; l < k; l++)
                    acc += (float)A[b * m * k + i + l * m] * (float)B[b * k * n + l + j * k];
                size_t at = b * m * n + i + j * m;
                near(cd((float)got[at]), cd(0.5f * acc - (float)C[at]), eps, "small batch item C", line);
            }
    CT_OK(cudaFree(dA));
    CT_OK(cudaFree(dB));
    CT_OK(cudaFree(dC));
    CT_OK(cudaFree(dArr));
}

static void half_and_ex_batches(cublasHandle_t h)
{
    CB_OK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
    const __half ha = __float2half(0.5f), hb = __float2half(-1.0f);
    const float fa = 0.5f, fb = -1.0f;
    const op_t N = CUBLAS_OP_N;
    small_batch<__half>([&](int m, int n, int k, __half *A, __half *B, __half *C, const __half *const *, const __half *const *,
                            __half *const *) {
        return V64(cublasHgemmStridedBatched, h, N, N, m, n, k, &ha, A, m, m * k, B, k, k * n, &hb, C, m, m * n, COUNT);
    }, 2e-2f, __LINE__);
    small_batch<__half>([&](int m, int n, int k, __half *, __half *, __half *, const __half *const *Aa,
                            const __half *const *Ba, __half *const *Ca) {
        return V64(cublasHgemmBatched, h, N, N, m, n, k, &ha, Aa, m, Ba, k, &hb, Ca, m, COUNT);
    }, 2e-2f, __LINE__);
    small_batch<float>([&](int m, int n, int k, float *, float *, float *, const float *const *Aa,
                           const float *const *Ba, float *const *Ca) {
        return V64(cublasGemmBatchedEx, h, N, N, m, n, k, &fa, (const void *const *)Aa, CUDA_R_32F, m,
                   (const void *const *)Ba, CUDA_R_32F, k, &fb, (void *const *)Ca, CUDA_R_32F, m, COUNT,
                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    }, 1e-5f, __LINE__);
}

/* A mixed-precision gemv batch, y = 2 op(A) x - y for each item (In: A and x; Out:
 * y), with padded leading dimension, increments 2 and 3 and both forms (call's
 * `strided`), against a double reference of the same inputs. */
template <typename In, typename Out, typename Call>
static void mixed_gemv(Call call, op_t t, float eps, int line)
{
    const int m = 3, n = 4, lda = 5, incx = 2, incy = 3;
    const int xlen = t == CUBLAS_OP_N ? n : m, ylen = t == CUBLAS_OP_N ? m : n;
    const int sa = lda * n, sx = xlen * incx, sy = ylen * incy;
    std::vector<In> A(COUNT * sa), x(COUNT * sx);
    std::vector<Out> y(COUNT * sy);
    for (auto &e : A)
        e = (In)(float)rnd();
    for (auto &e : x)
        e = (In)(float)rnd();
    for (auto &e : y)
        e = (Out)(float)rnd();
    for (int strided = 0; strided < 2; strided++) {
        In *dA = to_dev(A), *dx = to_dev(x);
        Out *dy = to_dev(y);
        std::vector<const In *> ins;
        std::vector<Out *> outs;
        for (int b = 0; b < COUNT; b++)
            ins.push_back(dA + b * sa), outs.push_back(dy + b * sy);
        for (int b = 0; b < COUNT; b++)
            ins.push_back(dx + b * sx);
        const In **dIn = to_dev(ins);
        Out **dOut = to_dev(outs);
        CB_OK(call(strided, dA, dx, dy, dIn, dIn + COUNT, dOut, m, n, lda, incx, incy, sa, sx, sy));
        std::vector<Out> got = from_dev(dy, y.size());
        for (int b = 0; b < COUNT; b++)
            for (int i = 0; i < ylen; i++) {
                double acc = 0;
                for (int j = 0; j < xlen; j++) {
                    double a = (float)A[b * sa + (t == CUBLAS_OP_N ? i + j * lda : j + i * lda)];
                    acc += a * (float)x[b * sx + j * incx];
                }
                size_t at = b * sy + i * incy;
                near(cd((float)got[at]), cd(2 * acc - (float)y[at]), eps, "mixed gemv batch item y", line);
            }
        for (void *p : {(void *)dA, (void *)dx, (void *)dy, (void *)dIn, (void *)dOut})
            CT_OK(cudaFree(p));
    }
}

#define MIXED_GEMV(NAME, IN, OUT)                                                                                \
    [&](int strided, IN *A, IN *x, OUT *y, const IN *const *Aa, const IN *const *xa, OUT *const *ya, int m, int n, \
        int lda, int incx, int incy, long long sa, long long sx, long long sy) {                                \
        return strided ? V64(cublas##NAME##gemvStridedBatched, h, t, m, n, &two, A, lda, sa, x, incx, sx, &minus,  \
                             y, incy, sy, COUNT)                                                                 \
                       : V64(cublas##NAME##gemvBatched, h, t, m, n, &two, Aa, lda, xa, incx, &minus, ya, incy,   \
                             COUNT);                                                                             \
    }

static void mixed_gemv_batches(cublasHandle_t h)
{
    const float two = 2, minus = -1;
    CB_OK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
    for (op_t t : {CUBLAS_OP_N, CUBLAS_OP_T}) {
        mixed_gemv<__half, __half>(MIXED_GEMV(HSH, __half, __half), t, 2e-2f, __LINE__);
        mixed_gemv<__half, float>(MIXED_GEMV(HSS, __half, float), t, 1e-5f, __LINE__);
        mixed_gemv<__nv_bfloat16, __nv_bfloat16>(MIXED_GEMV(TST, __nv_bfloat16, __nv_bfloat16), t, 5e-2f, __LINE__);
        mixed_gemv<__nv_bfloat16, float>(MIXED_GEMV(TSS, __nv_bfloat16, float), t, 1e-5f, __LINE__);
    }
    __half *d;
    CT_OK(cudaMalloc((void **)&d, 64 * sizeof(__half)));
    const op_t N = CUBLAS_OP_N;
    CB_ST(V64(cublasHSHgemvStridedBatched, h, N, 2, 2, &two, d, 2, 4, d, 0, 2, &minus, d, 1, 2, 2),
          CUBLAS_STATUS_INVALID_VALUE); /* incx 0 */
    CB_ST(V64(cublasHSHgemvStridedBatched, h, N, 2, 2, &two, d, 1, 4, d, 1, 2, &minus, d, 1, 2, 2),
          CUBLAS_STATUS_INVALID_VALUE); /* lda < m */
    CB_ST(V64(cublasHSHgemvStridedBatched, h, N, 2, 2, &two, d + 8, 2, 4, d + 16, -1, 2, &minus, d, 1, 2, 2),
          CUBLAS_STATUS_NOT_SUPPORTED); /* a GEMM cannot walk x backwards */
    CT_OK(cudaFree(d));
}

/* Through the shim only: the last item of a strided operand past its allocation. */
template <typename T> static void footprint(cublasHandle_t h)
{
    T one = put<T>(1.0);
    sbatch<T> S(16, 0, false); /* 16 elements */
    CB_OK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
    REFUSED(fnsb<T>::gemv_strided(h, CUBLAS_OP_N, 2, 2, &one, S.dev, 2, 0, S.dev, 1, 0, &one, S.dev + 8, 1, 4, 3));
    REFUSED(fnsb<T>::gemv_strided(h, CUBLAS_OP_N, 2, 2, &one, S.dev, 2, 7, S.dev, 1, 0, &one, S.dev, 1, 0, 3));
    items<T> A(2, 4, false), x(2, 2, false), y(2, 1, false); /* y's items one element: too short */
    REFUSED(fnsb<T>::gemv_batched(h, CUBLAS_OP_N, 2, 2, &one, A.arr, 2, x.arr, 1, &one, y.arr, 1, 2));
    REFUSED(fnsb<T>::gemv_batched(h, CUBLAS_OP_N, 2, 2, &one, A.arr, 2, x.arr, 1, &one, y.arr, 1, 3)); /* array */
}

int main(int argc, char **argv)
{
    if (argc > 1 && std::strcmp(argv[1], "footprint") == 0)
        return blas_main("blas_batch_footprint", [](cublasHandle_t h, auto t) {
            typedef typename decltype(t)::type T;
            footprint<T>(h);
            if constexpr (std::is_same<T, float>::value) { /* beyond int: the GEMM family travels in 32 bits */
                float one = 1;
                sbatch<float> S(16, 0, false);
                CB_ST(cublasSgemm_v2_64(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, S.dev, 2, S.dev, 2, &one, S.dev,
                                        (int64_t)1 << 32),
                      CUBLAS_STATUS_NOT_SUPPORTED);
            }
            if constexpr (std::is_same<T, cuComplex>::value) { /* C past its allocation */
                cuComplex one = make_cuComplex(1, 0);
                sbatch<cuComplex> S(16, 0, false);
                REFUSED(gemm_strided(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, S.dev, 2, 0, S.dev, 2, 0, &one,
                                     S.dev, 2, 14, 2, false));
            }
        });
    blas_use64 = argc > 1 && std::strcmp(argv[1], "64") == 0;
    return blas_main(blas_use64 ? "blas_batch_64" : "blas_batch", [](cublasHandle_t h, auto t) {
        typedef typename decltype(t)::type T;
        run<T>(h);
        run_gemm<T>(h, false);
        if constexpr (!std::is_same<T, cuDoubleComplex>::value) /* Zgemm3m has no strided batch */
            run_gemm<T>(h, true);
        if constexpr (std::is_same<T, float>::value) {
            half_and_ex_batches(h);
            mixed_gemv_batches(h);
        }
    });
}
