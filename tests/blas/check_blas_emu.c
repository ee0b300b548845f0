/* check_blas_emu.c -- unit tests of the emulated cuBLAS in libcudarem-emu.so: every
 * exported function against a naive double-precision reference on random data
 * (transposes, leading dimensions larger than the rows, strided and pointer
 * batches, alpha/beta blending with beta == 0 not reading the output, both pointer
 * modes, negative increments), the half/bfloat16 conversions, the argument rules
 * and the device-range checks.
 *
 * Emulated device memory is directly addressable, so the tests fill and read it in
 * place; "device" scalars live in cudaMalloc'd memory.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "tests/unit/crm_check.h"

/* __half is a C++ type: the emulator takes its bits. */
cublasStatus_t cublasHgemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                           int k, const uint16_t *alpha, const uint16_t *A, int lda, const uint16_t *B, int ldb,
                           const uint16_t *beta, uint16_t *C, int ldc);

#define CK_ST(call, want) ck_assert_int_eq((int)(call), (int)(want))
#define CK_OK(call) CK_ST(call, CUBLAS_STATUS_SUCCESS)

static const int ops[] = {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C};
static const int modes[] = {CUBLAS_POINTER_MODE_HOST, CUBLAS_POINTER_MODE_DEVICE};

static cublasHandle_t H;

static void setup(void)
{
    ck_assert_int_eq(cudaDeviceReset(), cudaSuccess);
    CK_OK(cublasCreate(&H));
}

static void teardown(void)
{
    CK_OK(cublasDestroy(H));
}

/* --- data ---------------------------------------------------------------------------------- */

static uint64_t rng = 88172645463325252ull;

static double rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / (double)(1ull << 53) * 2.0 - 1.0;
}

static void *dmalloc(size_t n)
{
    void *p = NULL;
    ck_assert_int_eq(cudaMalloc(&p, n ? n : 1), cudaSuccess);
    return p;
}

/* Reference half <-> float, written independently of the emulator (frexp/ldexp). */
static double half_value(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return (h & 0x8000) ? -v : v;
}

static uint16_t half_bits(double v) /* nearest, ties to even, by search over the grid */
{
    uint16_t sign = signbit(v) ? 0x8000 : 0, best = 0;
    double a = fabs(v), bestd = INFINITY;
    if (isnan(v))
        return 0x7e00;
    if (a >= 65520.0)
        return sign | 0x7c00;
    for (uint16_t h = 0; h < 0x7c00; h++) {
        double d = fabs(half_value(h) - a);
        if (d < bestd || (d == bestd && (h & 1) == 0 && (best & 1))) {
            bestd = d;
            best = h;
        }
    }
    return sign | best;
}

static double bf16_value(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Typed device buffers, read and written as doubles. */
typedef struct buf {
    int type;
    size_t count;
    void *p;
} buf;

static size_t tsize(int t)
{
    return t == CUDA_R_64F ? 8 : t == CUDA_R_32F ? 4 : 2;
}

static double get(const buf *b, size_t i)
{
    switch (b->type) {
    case CUDA_R_64F: return ((double *)b->p)[i];
    case CUDA_R_32F: return ((float *)b->p)[i];
    case CUDA_R_16F: return half_value(((uint16_t *)b->p)[i]);
    default: return bf16_value(((uint16_t *)b->p)[i]);
    }
}

static void set(buf *b, size_t i, double v)
{
    switch (b->type) {
    case CUDA_R_64F: ((double *)b->p)[i] = v; break;
    case CUDA_R_32F: ((float *)b->p)[i] = (float)v; break;
    case CUDA_R_16F: ((uint16_t *)b->p)[i] = half_bits(v); break;
    default: { /* truncation is fine for test data */
        float f = (float)v;
        uint32_t u;
        memcpy(&u, &f, 4);
        ((uint16_t *)b->p)[i] = (uint16_t)(u >> 16);
    }
    }
}

/* Random device buffer of count elements. */
static buf mkbuf(int type, size_t count)
{
    buf b = {type, count, dmalloc(count * tsize(type))};
    for (size_t i = 0; i < count; i++)
        set(&b, i, type == CUDA_R_16F ? (double)(int)(rnd() * 8) / 8 : rnd());
    return b;
}

static double *snapshot(const buf *b)
{
    double *s = malloc(b->count * sizeof *s);
    for (size_t i = 0; i < b->count; i++)
        s[i] = get(b, i);
    return s;
}

static void fill_nan(buf *b)
{
    for (size_t i = 0; i < b->count; i++)
        set(b, i, NAN);
}

static double tol_of(int type)
{
    return type == CUDA_R_64F ? 1e-10 : type == CUDA_R_32F ? 1e-4 : type == CUDA_R_16F ? 2e-2 : 5e-2;
}

static void close_to(double got, double want, double tol, const char *what)
{
    ck_assert_msg(fabs(got - want) <= tol * (1.0 + fabs(want)), "%s: got %.9g want %.9g", what, got, want);
}

/* A scalar of `type` at a host or device address by pointer mode. */
static void *scalar(int pmode, int type, double v, void *host_slot)
{
    buf b = {type, 1, pmode == CUBLAS_POINTER_MODE_DEVICE ? dmalloc(8) : host_slot};
    set(&b, 0, v);
    return b.p;
}

/* Element (i, j) of op(X) stored column-major with ld. */
static double op_at(const double *X, int op, int ld, int i, int j)
{
    return op == CUBLAS_OP_N ? X[(size_t)j * ld + i] : X[(size_t)i * ld + j];
}

/* want = alpha op(A) op(B) + beta C (C not read when beta == 0), m x n with ldc. */
static void ref_gemm(int ta, int tb, int m, int n, int k, double alpha, const double *A, int lda, const double *B,
                     int ldb, double beta, const double *C, int ldc, double *want)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double s = 0;
            for (int l = 0; l < k; l++)
                s += op_at(A, ta, lda, i, l) * op_at(B, tb, ldb, l, j);
            want[(size_t)j * ldc + i] = alpha * s + (beta == 0 ? 0 : beta * C[(size_t)j * ldc + i]);
        }
}

/* Every element of C: the m x n result where computed, untouched elsewhere. */
static void check_c(const buf *C, const double *before, const double *want, int m, int n, int ldc, size_t off,
                    double tol)
{
    for (size_t e = 0; e < C->count; e++) {
        size_t rel = e - off;
        int inside = e >= off && rel < (size_t)ldc * n && (int)(rel % ldc) < m;
        if (inside)
            close_to(get(C, e), want[rel], tol, "C");
        else if (!isnan(before[e]) || !isnan(get(C, e)))
            ck_assert_msg(get(C, e) == before[e], "element %zu outside the result changed", e);
    }
}

/* --- handles ---------------------------------------------------------------------------------- */

START_TEST(test_handle_settings)
{
    cublasPointerMode_t pm;
    cublasMath_t math;
    cudaStream_t s, got;
    int v = 0;
    CK_ST(cublasDestroy(NULL), CUBLAS_STATUS_NOT_INITIALIZED);
    CK_ST(cublasCreate(NULL), CUBLAS_STATUS_INVALID_VALUE);
    CK_ST(cublasSetPointerMode(NULL, CUBLAS_POINTER_MODE_HOST), CUBLAS_STATUS_NOT_INITIALIZED);
    CK_OK(cublasGetVersion(H, &v));
    ck_assert_int_eq(v, CUBLAS_VERSION);
    CK_OK(cublasGetPointerMode(H, &pm));
    ck_assert_int_eq(pm, CUBLAS_POINTER_MODE_HOST);
    CK_OK(cublasSetPointerMode(H, CUBLAS_POINTER_MODE_DEVICE));
    CK_OK(cublasGetPointerMode(H, &pm));
    ck_assert_int_eq(pm, CUBLAS_POINTER_MODE_DEVICE);
    CK_ST(cublasSetPointerMode(H, (cublasPointerMode_t)7), CUBLAS_STATUS_INVALID_VALUE);
    CK_OK(cublasSetMathMode(H, CUBLAS_TF32_TENSOR_OP_MATH));
    CK_OK(cublasGetMathMode(H, &math));
    ck_assert_int_eq(math, CUBLAS_TF32_TENSOR_OP_MATH);
    CK_ST(cublasSetMathMode(H, (cublasMath_t)99), CUBLAS_STATUS_INVALID_VALUE);
    ck_assert_int_eq(cudaStreamCreate(&s), cudaSuccess);
    CK_OK(cublasSetStream(H, s));
    CK_OK(cublasGetStream(H, &got));
    ck_assert_ptr_eq(got, s);
    CK_ST(cublasSetStream(H, (cudaStream_t)(uintptr_t)0x1234), CUBLAS_STATUS_INVALID_VALUE);
    void *ws = dmalloc(4096);
    CK_OK(cublasSetWorkspace(H, ws, 4096));
    CK_ST(cublasSetWorkspace(H, &v, sizeof v), CUBLAS_STATUS_INVALID_VALUE); /* host memory */
    CK_ST(cublasSetWorkspace(H, ws, 8192), CUBLAS_STATUS_INVALID_VALUE);     /* past the end */
    CK_OK(cublasSetWorkspace(H, NULL, 0));
    cublasHandle_t h2;
    CK_OK(cublasCreate(&h2));
    CK_OK(cublasDestroy(h2));
    CK_ST(cublasDestroy(h2), CUBLAS_STATUS_NOT_INITIALIZED);
    CK_ST(cublasSgemm(h2, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, NULL, NULL, 1, NULL, 1, NULL, NULL, 1),
          CUBLAS_STATUS_NOT_INITIALIZED);
}
END_TEST

/* --- level 1 ---------------------------------------------------------------------------------- */

static const int incs[] = {1, 2, -1, -3};
static const int lens[] = {0, 1, 7, 33};

/* Memory index of logical element i of a vector of n with increment inc. */
static size_t vidx(int n, int inc, int i)
{
    return inc >= 0 ? (size_t)i * inc : (size_t)(n - 1 - i) * (size_t)(-inc);
}

static size_t vlen(int n, int inc)
{
    return n <= 0 ? 1 : (size_t)(n - 1) * (size_t)abs(inc) + 1;
}

START_TEST(test_level1)
{
    int type = (_i & 1) ? CUDA_R_64F : CUDA_R_32F, pmode = modes[_i >> 1];
    int sp = type == CUDA_R_32F;
    double tol = tol_of(type);
    unsigned char slot[2][8];
    CK_OK(cublasSetPointerMode(H, pmode));
    for (size_t a = 0; a < 4; a++)
        for (size_t b = 0; b < 4; b++)
            for (size_t l = 0; l < 4; l++) {
                int n = lens[l], ix = incs[a], iy = incs[b];
                buf x = mkbuf(type, vlen(n, ix)), y = mkbuf(type, vlen(n, iy));
                double *x0 = snapshot(&x), *y0 = snapshot(&y);
                double alpha = rnd();
                void *al = scalar(pmode, type, alpha, slot[0]);
                /* axpy */
                CK_OK(sp ? cublasSaxpy(H, n, al, x.p, ix, y.p, iy) : cublasDaxpy(H, n, al, x.p, ix, y.p, iy));
                for (int i = 0; i < n; i++)
                    close_to(get(&y, vidx(n, iy, i)), y0[vidx(n, iy, i)] + alpha * x0[vidx(n, ix, i)], tol, "axpy");
                /* dot */
                double dot = 0, want = 0;
                for (int i = 0; i < n; i++)
                    want += x0[vidx(n, ix, i)] * get(&y, vidx(n, iy, i));
                void *res = pmode == CUBLAS_POINTER_MODE_DEVICE ? dmalloc(8) : slot[1];
                CK_OK(sp ? cublasSdot(H, n, x.p, ix, y.p, iy, res) : cublasDdot(H, n, x.p, ix, y.p, iy, res));
                dot = sp ? *(float *)res : *(double *)res;
                close_to(dot, want, tol * (n + 1), "dot");
                /* copy */
                CK_OK(sp ? cublasScopy(H, n, x.p, ix, y.p, iy) : cublasDcopy(H, n, x.p, ix, y.p, iy));
                for (int i = 0; i < n; i++)
                    ck_assert(get(&y, vidx(n, iy, i)) == x0[vidx(n, ix, i)]);
                /* nrm2, asum, amax: nothing for incx <= 0 */
                double nrm = 0, asum = 0, best = -1;
                int amax = 0;
                for (int i = 0; ix > 0 && i < n; i++) {
                    double v = x0[vidx(n, ix, i)];
                    nrm += v * v;
                    asum += fabs(v);
                    if (fabs(v) > best) {
                        best = fabs(v);
                        amax = i + 1;
                    }
                }
                CK_OK(sp ? cublasSnrm2(H, n, x.p, ix, res) : cublasDnrm2(H, n, x.p, ix, res));
                close_to(sp ? *(float *)res : *(double *)res, sqrt(nrm), tol, "nrm2");
                CK_OK(sp ? cublasSasum(H, n, x.p, ix, res) : cublasDasum(H, n, x.p, ix, res));
                close_to(sp ? *(float *)res : *(double *)res, asum, tol * (n + 1), "asum");
                CK_OK(sp ? cublasIsamax(H, n, x.p, ix, res) : cublasIdamax(H, n, x.p, ix, res));
                ck_assert_int_eq(*(int *)res, amax);
                /* scal */
                CK_OK(sp ? cublasSscal(H, n, al, x.p, ix) : cublasDscal(H, n, al, x.p, ix));
                for (int i = 0; i < n; i++)
                    close_to(get(&x, vidx(n, ix, i)), ix > 0 ? alpha * x0[vidx(n, ix, i)] : x0[vidx(n, ix, i)],
                             tol, "scal");
                free(x0);
                free(y0);
            }
}
END_TEST

/* --- gemv, ger ------------------------------------------------------------------------------------ */

START_TEST(test_gemv_ger)
{
    int type = (_i & 1) ? CUDA_R_64F : CUDA_R_32F, pmode = modes[_i >> 1], sp = type == CUDA_R_32F;
    unsigned char slot[2][8];
    CK_OK(cublasSetPointerMode(H, pmode));
    for (int t = 0; t < 3; t++)
        for (int c = 0; c < 4; c++) {
            int m = 5 + c, n = 3 + 2 * c, lda = m + c, ix = incs[c], iy = incs[3 - c];
            int lx = ops[t] == CUBLAS_OP_N ? n : m, ly = ops[t] == CUBLAS_OP_N ? m : n;
            buf A = mkbuf(type, (size_t)lda * n), x = mkbuf(type, vlen(lx, ix)), y = mkbuf(type, vlen(ly, iy));
            double alpha = rnd(), beta = c == 1 ? 0.0 : rnd();
            if (beta == 0)
                fill_nan(&y);
            double *A0 = snapshot(&A), *x0 = snapshot(&x), *y0 = snapshot(&y);
            void *al = scalar(pmode, type, alpha, slot[0]), *be = scalar(pmode, type, beta, slot[1]);
            CK_OK(sp ? cublasSgemv(H, ops[t], m, n, al, A.p, lda, x.p, ix, be, y.p, iy)
                     : cublasDgemv(H, ops[t], m, n, al, A.p, lda, x.p, ix, be, y.p, iy));
            for (int i = 0; i < ly; i++) {
                double s = 0;
                for (int l = 0; l < lx; l++)
                    s += (ops[t] == CUBLAS_OP_N ? A0[(size_t)l * lda + i] : A0[(size_t)i * lda + l]) *
                         x0[vidx(lx, ix, l)];
                double want = alpha * s + (beta == 0 ? 0 : beta * y0[vidx(ly, iy, i)]);
                close_to(get(&y, vidx(ly, iy, i)), want, tol_of(type) * 10, "gemv");
            }
            /* ger: A += alpha x y^T with x of m and y of n */
            buf gx = mkbuf(type, vlen(m, ix)), gy = mkbuf(type, vlen(n, iy));
            double *gx0 = snapshot(&gx), *gy0 = snapshot(&gy);
            CK_OK(sp ? cublasSger(H, m, n, al, gx.p, ix, gy.p, iy, A.p, lda)
                     : cublasDger(H, m, n, al, gx.p, ix, gy.p, iy, A.p, lda));
            for (int j = 0; j < n; j++)
                for (int i = 0; i < lda; i++) {
                    double want = A0[(size_t)j * lda + i] + (i < m ? alpha * gx0[vidx(m, ix, i)] * gy0[vidx(n, iy, j)] : 0);
                    close_to(get(&A, (size_t)j * lda + i), want, tol_of(type), "ger");
                }
            free(A0);
            free(x0);
            free(y0);
            free(gx0);
            free(gy0);
        }
    CK_ST(sp ? cublasSgemv(H, CUBLAS_OP_N, 2, 2, NULL, NULL, 2, NULL, 0, NULL, NULL, 1)
             : cublasDgemv(H, CUBLAS_OP_N, 2, 2, NULL, NULL, 2, NULL, 0, NULL, NULL, 1),
          CUBLAS_STATUS_INVALID_VALUE); /* incx == 0 */
    CK_ST(cublasSger(H, 3, 2, NULL, NULL, 1, NULL, 1, NULL, 2), CUBLAS_STATUS_INVALID_VALUE); /* lda < m */
}
END_TEST

/* --- the GEMM family --------------------------------------------------------------------------------- */

enum variant { PLAIN, EX, STRIDED, STRIDED_EX, BATCHED, BATCHED_EX };

typedef struct gcase {
    int atype, ctype, compute;
    enum variant v;
} gcase;

/* Runs one gemm of the variant on buffers holding `batch` items at strides. */
static cublasStatus_t run_gemm(const gcase *g, int ta, int tb, int m, int n, int k, const void *al, buf *A, int lda,
                               long long sa, buf *B, int ldb, long long sb, const void *be, buf *C, int ldc,
                               long long sc, int batch)
{
    int at = g->atype, ct = g->ctype;
    if (g->v == PLAIN) {
        if (at == CUDA_R_32F)
            return cublasSgemm(H, ta, tb, m, n, k, al, A->p, lda, B->p, ldb, be, C->p, ldc);
        if (at == CUDA_R_64F)
            return cublasDgemm(H, ta, tb, m, n, k, al, A->p, lda, B->p, ldb, be, C->p, ldc);
        return cublasHgemm(H, ta, tb, m, n, k, al, A->p, lda, B->p, ldb, be, C->p, ldc);
    }
    if (g->v == EX)
        return cublasGemmEx(H, ta, tb, m, n, k, al, A->p, at, lda, B->p, at, ldb, be, C->p, ct, ldc, g->compute,
                            CUBLAS_GEMM_DEFAULT);
    if (g->v == STRIDED && at == CUDA_R_32F)
        return cublasSgemmStridedBatched(H, ta, tb, m, n, k, al, A->p, lda, sa, B->p, ldb, sb, be, C->p, ldc, sc,
                                         batch);
    if (g->v == STRIDED)
        return cublasDgemmStridedBatched(H, ta, tb, m, n, k, al, A->p, lda, sa, B->p, ldb, sb, be, C->p, ldc, sc,
                                         batch);
    if (g->v == STRIDED_EX)
        return cublasGemmStridedBatchedEx(H, ta, tb, m, n, k, al, A->p, at, lda, sa, B->p, at, ldb, sb, be, C->p, ct,
                                          ldc, sc, batch, g->compute, CUBLAS_GEMM_DEFAULT);
    /* pointer arrays in device memory */
    void **arr = dmalloc(3 * (size_t)(batch ? batch : 1) * sizeof(void *));
    for (int i = 0; i < batch; i++) {
        arr[i] = (char *)A->p + (size_t)(i * sa) * tsize(at);
        arr[batch + i] = (char *)B->p + (size_t)(i * sb) * tsize(at);
        arr[2 * batch + i] = (char *)C->p + (size_t)(i * sc) * tsize(ct);
    }
    if (g->v == BATCHED)
        return cublasSgemmBatched(H, ta, tb, m, n, k, al, (const float *const *)arr, lda,
                                  (const float *const *)(arr + batch), ldb, be, (float *const *)(arr + 2 * batch), ldc,
                                  batch);
    return cublasGemmBatchedEx(H, ta, tb, m, n, k, al, (const void *const *)arr, at, lda,
                               (const void *const *)(arr + batch), at, ldb, be, arr + 2 * batch, ct, ldc, batch,
                               g->compute, CUBLAS_GEMM_DEFAULT);
}

static int scale_type(const gcase *g)
{
    if (g->compute == CUBLAS_COMPUTE_16F)
        return CUDA_R_16F;
    return g->compute == CUBLAS_COMPUTE_64F ? CUDA_R_64F : CUDA_R_32F;
}

/* One shape of one case: m, n, k, padded lds, batch items with gaps (and a shared
 * A for strided forms when k is odd: stride 0). */
static void gemm_shape(const gcase *g, int pmode, int ta, int tb, int m, int n, int k, int beta_zero)
{
    int batched = g->v >= STRIDED, batch = batched ? 3 : 1;
    int ra = ta == CUBLAS_OP_N ? m : k, ca = ta == CUBLAS_OP_N ? k : m;
    int rb = tb == CUBLAS_OP_N ? k : n, cb = tb == CUBLAS_OP_N ? n : k;
    int lda = ra + 2, ldb = rb + 1, ldc = m + 3;
    long long sa = (batched && (k & 1)) ? 0 : (long long)lda * ca + 5, sb = (long long)ldb * cb + 2,
              sc = (long long)ldc * n + 4;
    buf A = mkbuf(g->atype, (size_t)sa * (batch - 1) + (size_t)lda * ca + 1);
    buf B = mkbuf(g->atype, (size_t)sb * (batch - 1) + (size_t)ldb * cb + 1);
    buf C = mkbuf(g->ctype, (size_t)sc * (batch - 1) + (size_t)ldc * n + 1);
    if (beta_zero)
        fill_nan(&C);
    double *A0 = snapshot(&A), *B0 = snapshot(&B), *C0 = snapshot(&C);
    double alpha = g->atype == CUDA_R_16F ? 0.5 : rnd(), beta = beta_zero ? 0 : (g->atype == CUDA_R_16F ? -2 : rnd());
    unsigned char slot[2][8];
    int st = scale_type(g);
    void *al = scalar(pmode, st, alpha, slot[0]), *be = scalar(pmode, st, beta, slot[1]);
    CK_OK(run_gemm(g, ta, tb, m, n, k, al, &A, lda, sa, &B, ldb, sb, be, &C, ldc, sc, batch));
    double *want = malloc(((size_t)ldc * n + 1) * sizeof *want);
    for (int i = 0; i < batch; i++) {
        ref_gemm(ta, tb, m, n, k, alpha, A0 + (size_t)i * sa, lda, B0 + (size_t)i * sb, ldb, beta,
                 C0 + (size_t)i * sc, ldc, want);
        double *before = C0; /* check item i only: shift the view */
        buf view = {C.type, (size_t)ldc * n, (char *)C.p + (size_t)i * sc * tsize(C.type)};
        check_c(&view, before + (size_t)i * sc, want, m, n, ldc, 0, tol_of(g->ctype) * (k + 1));
    }
    free(want);
    free(A0);
    free(B0);
    free(C0);
}

static const gcase gcases[] = {
    {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, PLAIN},
    {CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, PLAIN},
    {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_16F, PLAIN}, /* Hgemm */
    {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, EX},
    {CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, EX},
    {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, EX},
    {CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F, EX},
    {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_16F, EX},
    {CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, EX},
    {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, EX},
    {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, STRIDED},
    {CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, STRIDED},
    {CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F, STRIDED_EX},
    {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, BATCHED},
    {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, BATCHED_EX},
};
#define NGCASES ((int)(sizeof gcases / sizeof gcases[0]))

START_TEST(test_gemm_family)
{
    const gcase *g = &gcases[_i / 2];
    int pmode = modes[_i % 2];
    CK_OK(cublasSetPointerMode(H, pmode));
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            gemm_shape(g, pmode, ops[a], ops[b], 4 + a, 3 + b, 5 + a + b, 0);
    gemm_shape(g, pmode, CUBLAS_OP_N, CUBLAS_OP_T, 6, 5, 4, 1); /* beta 0: C not read */
    gemm_shape(g, pmode, CUBLAS_OP_T, CUBLAS_OP_N, 3, 4, 0, 0); /* k 0: C = beta C */
    gemm_shape(g, pmode, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, 0);
}
END_TEST

START_TEST(test_gemm_errors)
{
    float one = 1, zero = 0;
    buf A = mkbuf(CUDA_R_32F, 16), B = mkbuf(CUDA_R_32F, 16), C = mkbuf(CUDA_R_32F, 16);
    float host[16];
    CK_ST(cublasSgemm(H, CUBLAS_OP_N, CUBLAS_OP_N, -1, 2, 2, &one, A.p, 2, B.p, 2, &zero, C.p, 2),
          CUBLAS_STATUS_INVALID_VALUE);
    CK_ST(cublasSgemm(H, CUBLAS_OP_N, CUBLAS_OP_N, 3, 2, 2, &one, A.p, 2, B.p, 2, &zero, C.p, 3),
          CUBLAS_STATUS_INVALID_VALUE); /* lda < m */
    CK_ST(cublasSgemm(H, CUBLAS_OP_T, CUBLAS_OP_N, 2, 2, 3, &one, A.p, 2, B.p, 3, &zero, C.p, 2),
          CUBLAS_STATUS_INVALID_VALUE); /* lda < k for op T */
    CK_ST(cublasSgemm(H, (cublasOperation_t)9, CUBLAS_OP_N, 2, 2, 2, &one, A.p, 2, B.p, 2, &zero, C.p, 2),
          CUBLAS_STATUS_INVALID_VALUE);
    CK_ST(cublasSgemm(H, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, NULL, A.p, 2, B.p, 2, &zero, C.p, 2),
          CUBLAS_STATUS_INVALID_VALUE);
    /* operands outside device memory: host memory, one element past the end */
    CK_ST(cublasSgemm(H, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, host, 2, B.p, 2, &zero, C.p, 2),
          CUBLAS_STATUS_INVALID_VALUE);
    CK_ST(cublasSgemm(H, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, A.p, 4, (float *)B.p + 1, 4, &zero, C.p, 4),
          CUBLAS_STATUS_INVALID_VALUE);
    CK_OK(cublasSgemm(H, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, A.p, 4, B.p, 4, &zero, C.p, 4));
    CK_OK(cublasSgemm(H, CUBLAS_OP_N, CUBLAS_OP_N, 0, 4, 4, NULL, NULL, 4, NULL, 4, NULL, NULL, 4)); /* nothing */
    /* device pointer mode with host scalars */
    CK_OK(cublasSetPointerMode(H, CUBLAS_POINTER_MODE_DEVICE));
    CK_ST(cublasSgemm(H, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, A.p, 2, B.p, 2, &zero, C.p, 2),
          CUBLAS_STATUS_INVALID_VALUE);
    CK_OK(cublasSetPointerMode(H, CUBLAS_POINTER_MODE_HOST));
    /* strided: the last item reaches past the allocation */
    CK_ST(cublasSgemmStridedBatched(H, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, A.p, 2, 4, B.p, 2, 4, &zero, C.p, 2,
                                    4, 5),
          CUBLAS_STATUS_INVALID_VALUE);
    CK_ST(cublasSgemmStridedBatched(H, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, A.p, 2, 4, B.p, 2, 4, &zero, C.p, 2,
                                    4, -1),
          CUBLAS_STATUS_INVALID_VALUE);
    /* pointer array holding a host pointer */
    void **arr = dmalloc(3 * sizeof(void *));
    arr[0] = A.p;
    arr[1] = host;
    arr[2] = C.p;
    CK_ST(cublasSgemmBatched(H, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, (const float *const *)arr, 2,
                             (const float *const *)arr + 1, 2, &zero, (float *const *)arr + 2, 2, 1),
          CUBLAS_STATUS_INVALID_VALUE);
    /* unsupported type combinations */
    CK_ST(cublasGemmEx(H, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, A.p, CUDA_R_32F, 2, B.p, CUDA_R_16F, 2, &zero, C.p,
                       CUDA_R_32F, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
          CUBLAS_STATUS_NOT_SUPPORTED);
    CK_ST(cublasGemmEx(H, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, A.p, CUDA_R_8I, 2, B.p, CUDA_R_8I, 2, &zero, C.p,
                       CUDA_R_32I, 2, CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT),
          CUBLAS_STATUS_NOT_SUPPORTED);
}
END_TEST

/* Half conversion edge cases through Ex: C (half) = alpha (float) * 1 * 1. */
START_TEST(test_half_rounding)
{
    static const struct {
        float alpha;
        uint16_t want;
    } cases[] = {
        {1.0f + 0x1p-11f, 0x3c00},         /* tie: to even (1.0) */
        {1.0f + 3 * 0x1p-11f, 0x3c02},     /* tie: to even (1 + 2^-9) */
        {1.0f + 0x1p-11f + 0x1p-20f, 0x3c01},
        {65504.0f, 0x7bff},
        {65520.0f, 0x7c00},                /* rounds to infinity */
        {70000.0f, 0x7c00},
        {-2.0f, 0xc000},
        {0x1p-14f, 0x0400},                /* smallest normal */
        {0x1p-20f, 0x0010},                /* subnormal */
        {3 * 0x1p-26f, 0x0001},            /* 0.75 ulp: up */
        {0x1p-25f, 0x0000},                /* 0.5 ulp: tie to even 0 */
        {0x1p-25f + 0x1p-30f, 0x0001},
        {-0.5f, 0xb800},
    };
    uint16_t *one = dmalloc(2 * sizeof *one), *c = dmalloc(sizeof *c);
    one[0] = one[1] = 0x3c00;
    float zero = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CK_OK(cublasGemmEx(H, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &cases[i].alpha, one, CUDA_R_16F, 1, one + 1,
                           CUDA_R_16F, 1, &zero, c, CUDA_R_16F, 1, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        ck_assert_msg(*c == cases[i].want, "alpha %a: got 0x%04x want 0x%04x", (double)cases[i].alpha, *c,
                      cases[i].want);
    }
    float inf = INFINITY, nan_v = NAN;
    CK_OK(cublasGemmEx(H, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &nan_v, one, CUDA_R_16F, 1, one + 1, CUDA_R_16F, 1, &zero,
                       c, CUDA_R_16F, 1, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    ck_assert((*c & 0x7c00) == 0x7c00 && (*c & 0x3ff) != 0);
    CK_OK(cublasGemmEx(H, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &inf, one, CUDA_R_16F, 1, one + 1, CUDA_R_16F, 1, &zero,
                       c, CUDA_R_16F, 1, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    ck_assert_int_eq(*c, 0x7c00);
    /* every half value survives half -> float -> half: C = 1 * A * 1 */
    uint16_t *a = dmalloc(sizeof *a);
    float fone = 1;
    for (uint32_t h = 0; h < 0x10000; h += 7) {
        if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff))
            continue; /* NaN payloads are not preserved bit for bit */
        *a = (uint16_t)h;
        CK_OK(cublasGemmEx(H, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &fone, a, CUDA_R_16F, 1, one, CUDA_R_16F, 1, &zero, c,
                           CUDA_R_16F, 1, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        ck_assert_msg(*c == h, "0x%04x came back as 0x%04x", h, *c);
    }
}
END_TEST

/* --- geam, trsm ------------------------------------------------------------------------------------------ */

START_TEST(test_geam)
{
    int type = (_i & 1) ? CUDA_R_64F : CUDA_R_32F, pmode = modes[_i >> 1], sp = type == CUDA_R_32F;
    unsigned char slot[2][8];
    CK_OK(cublasSetPointerMode(H, pmode));
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            int m = 4 + a, n = 3 + b, lda = (ops[a] == CUBLAS_OP_N ? m : n) + 1, ldb = (ops[b] == CUBLAS_OP_N ? m : n) + 2,
                ldc = m + 1;
            buf A = mkbuf(type, (size_t)lda * (ops[a] == CUBLAS_OP_N ? n : m));
            buf B = mkbuf(type, (size_t)ldb * (ops[b] == CUBLAS_OP_N ? n : m)), C = mkbuf(type, (size_t)ldc * n);
            double *A0 = snapshot(&A), *B0 = snapshot(&B), *C0 = snapshot(&C);
            double alpha = rnd(), beta = rnd();
            void *al = scalar(pmode, type, alpha, slot[0]), *be = scalar(pmode, type, beta, slot[1]);
            CK_OK(sp ? cublasSgeam(H, ops[a], ops[b], m, n, al, A.p, lda, be, B.p, ldb, C.p, ldc)
                     : cublasDgeam(H, ops[a], ops[b], m, n, al, A.p, lda, be, B.p, ldb, C.p, ldc));
            double *want = malloc((size_t)ldc * n * sizeof *want);
            for (int j = 0; j < n; j++)
                for (int i = 0; i < m; i++)
                    want[(size_t)j * ldc + i] = alpha * op_at(A0, ops[a], lda, i, j) + beta * op_at(B0, ops[b], ldb, i, j);
            check_c(&C, C0, want, m, n, ldc, 0, tol_of(type));
            free(want);
            free(A0);
            free(B0);
            free(C0);
        }
    /* in place C = alpha C + beta B needs N and ldc == lda; B unread when beta == 0 */
    buf C = mkbuf(type, 20), B = mkbuf(type, 20);
    void *al = scalar(pmode, type, 2.0, slot[0]), *be = scalar(pmode, type, 0.0, slot[1]);
    double c0 = get(&C, 0);
    CK_OK(sp ? cublasSgeam(H, CUBLAS_OP_N, CUBLAS_OP_N, 4, 5, al, C.p, 4, be, B.p, 4, C.p, 4)
             : cublasDgeam(H, CUBLAS_OP_N, CUBLAS_OP_N, 4, 5, al, C.p, 4, be, B.p, 4, C.p, 4));
    close_to(get(&C, 0), 2 * c0, tol_of(type), "geam in place");
    CK_ST(sp ? cublasSgeam(H, CUBLAS_OP_T, CUBLAS_OP_N, 4, 4, al, C.p, 4, be, B.p, 4, C.p, 4)
             : cublasDgeam(H, CUBLAS_OP_T, CUBLAS_OP_N, 4, 4, al, C.p, 4, be, B.p, 4, C.p, 4),
          CUBLAS_STATUS_INVALID_VALUE);
    if (pmode == CUBLAS_POINTER_MODE_HOST)
        CK_OK(sp ? cublasSgeam(H, CUBLAS_OP_N, CUBLAS_OP_N, 4, 5, al, C.p, 4, be, NULL, 4, B.p, 4)
                 : cublasDgeam(H, CUBLAS_OP_N, CUBLAS_OP_N, 4, 5, al, C.p, 4, be, NULL, 4, B.p, 4));
}
END_TEST

START_TEST(test_trsm)
{
    int type = (_i & 1) ? CUDA_R_64F : CUDA_R_32F, pmode = modes[_i >> 1], sp = type == CUDA_R_32F;
    unsigned char slot[8];
    CK_OK(cublasSetPointerMode(H, pmode));
    for (int c = 0; c < 16; c++) {
        int side = c & 1 ? CUBLAS_SIDE_RIGHT : CUBLAS_SIDE_LEFT, uplo = c & 2 ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
        int trans = c & 4 ? CUBLAS_OP_T : CUBLAS_OP_N, diag = c & 8 ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT;
        int m = 5, n = 4, order = side == CUBLAS_SIDE_LEFT ? m : n, lda = order + 2, ldb = m + 1;
        buf A = mkbuf(type, (size_t)lda * order), B = mkbuf(type, (size_t)ldb * n);
        for (int i = 0; i < order; i++)
            set(&A, (size_t)i * lda + i, 4.0 + rnd()); /* well conditioned */
        double *A0 = snapshot(&A), *B0 = snapshot(&B), alpha = 1.5;
        void *al = scalar(pmode, type, alpha, slot);
        CK_OK(sp ? cublasStrsm(H, side, uplo, trans, diag, m, n, al, A.p, lda, B.p, ldb)
                 : cublasDtrsm(H, side, uplo, trans, diag, m, n, al, A.p, lda, B.p, ldb));
        /* the triangle actually used, as a dense matrix T; check op(T) X = alpha B (or X op(T)) */
        double *T = calloc((size_t)order * order, sizeof *T);
        for (int j = 0; j < order; j++)
            for (int i = 0; i < order; i++)
                if (i == j)
                    T[(size_t)j * order + i] = diag == CUBLAS_DIAG_UNIT ? 1 : A0[(size_t)j * lda + i];
                else if ((uplo == CUBLAS_FILL_MODE_LOWER) == (i > j))
                    T[(size_t)j * order + i] = A0[(size_t)j * lda + i];
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++) {
                double s = 0;
                for (int l = 0; l < order; l++)
                    s += side == CUBLAS_SIDE_LEFT ? op_at(T, trans, order, i, l) * get(&B, (size_t)j * ldb + l)
                                                  : get(&B, (size_t)l * ldb + i) * op_at(T, trans, order, l, j);
                close_to(s, alpha * B0[(size_t)j * ldb + i], tol_of(type) * 10, "trsm");
            }
        free(T);
        free(A0);
        free(B0);
    }
    CK_ST(cublasStrsm(H, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT, 4, 2, NULL, NULL, 3,
                      NULL, 4),
          CUBLAS_STATUS_INVALID_VALUE); /* lda < m */
}
END_TEST

/* The watchdog over a batch's items: at stride 0 a batch of 2^30 products fits in one
 * small allocation; with a 0.05 s limit (CUDAREM_EMU_KERNEL_TIMEOUT) the call stops
 * with EXECUTION_FAILED instead of running for hours, through the hand-written GEMM
 * family and a generated row alike; a small batch still runs. */
START_TEST(test_batch_watchdog)
{
    const int big = 1 << 30;
    float one = 1, *A = dmalloc(16 * sizeof(float));
    cuComplex cone = {1, 0}, *Z = dmalloc(16 * sizeof(cuComplex));
    ck_assert_int_eq(setenv("CUDAREM_EMU_KERNEL_TIMEOUT", "0.05", 1), 0);
    CK_OK(cublasSetPointerMode(H, CUBLAS_POINTER_MODE_HOST));
    CK_ST(cublasSgemmStridedBatched(H, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, A, 2, 0, A, 2, 0, &one, A, 2, 0, big),
          CUBLAS_STATUS_EXECUTION_FAILED);
    CK_ST(cublasCgemmStridedBatched(H, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &cone, Z, 2, 0, Z, 2, 0, &cone, Z, 2, 0,
                                    big),
          CUBLAS_STATUS_EXECUTION_FAILED);
    CK_OK(cublasCgemmStridedBatched(H, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &cone, Z, 2, 0, Z, 2, 0, &cone, Z, 2, 4, 3));
    ck_assert_int_eq(unsetenv("CUDAREM_EMU_KERNEL_TIMEOUT"), 0);
    ck_assert_int_eq(cudaFree(A), cudaSuccess);
    ck_assert_int_eq(cudaFree(Z), cudaSuccess);
}
END_TEST

static Suite *blas_emu_suite(void)
{
    Suite *s = suite_create("blas_emu");
    TCase *t = tcase_create("blas");
    tcase_set_timeout(t, 120);
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, test_handle_settings);
    tcase_add_loop_test(t, test_level1, 0, 4);
    tcase_add_loop_test(t, test_gemv_ger, 0, 4);
    tcase_add_loop_test(t, test_gemm_family, 0, 2 * NGCASES);
    tcase_add_test(t, test_gemm_errors);
    tcase_add_test(t, test_half_rounding);
    tcase_add_loop_test(t, test_geam, 0, 4);
    tcase_add_loop_test(t, test_trsm, 0, 4);
    tcase_add_test(t, test_batch_watchdog);
    suite_add_tcase(s, t);
    return s;
}

CRM_CHECK_MAIN(blas_emu_suite)
