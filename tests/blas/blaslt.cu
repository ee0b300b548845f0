/* blaslt.cu -- self-checking cuBLASLt program: descriptors (create, set, get, the
 * size and attribute-id rules), the heuristic query, and cublasLtMatmul in float,
 * double and half with every epilogue the shim carries (bias, ReLU, GELU, their aux
 * outputs, their gradients, bias gradients), strided batches and device pointer
 * mode, each checked against a host reference. Through the shim it also checks
 * (cudaremGetStats) that descriptor calls, the heuristic query and the matmuls
 * cost no round trip. Prints `PASS blaslt` when everything matched; on a GPU it
 * checks the same semantics on NVIDIA's cuBLASLt. */
#include <cublasLt.h>
#include <cuda_fp16.h>
#include <dlfcn.h>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>
#include "../cuda/cuda_check.h"

#define LT_ST(call, expected)                                                                            \
    do {                                                                                                 \
        cublasStatus_t lt_e_ = (call), lt_x_ = (expected);                                               \
        if (lt_e_ != lt_x_)                                                                              \
            ct_fail(__FILE__, __LINE__, #call, cublasLtGetStatusName(lt_x_), cublasLtGetStatusName(lt_e_)); \
    } while (0)
#define LT_OK(call) LT_ST(call, CUBLAS_STATUS_SUCCESS)

static int near_fails;
static void near(double got, double want, double tol, const char *what, int line)
{
    if (!(std::fabs(got - want) <= tol * (1.0 + std::fabs(want)))) {
        if (++near_fails > 20)
            return;
        char e[64], g[64];
        snprintf(e, sizeof e, "%.9g", want);
        snprintf(g, sizeof g, "%.9g", got);
        ct_fail(__FILE__, line, what, e, g);
    }
}

static unsigned rng = 4242;
static double rnd() { rng = rng * 1103515245u + 12345u; return ((rng >> 8) & 0xffff) / 32768.0 - 1.0; }

static double gelu(double x) { return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }
static double dgelu(double x)
{
    double t = std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x));
    return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * 0.7978845608028654 * (1.0 + 3.0 * 0.044715 * x * x);
}

/* Element types: host values are doubles, device bytes are T. */
template <typename T> static T to_t(double v) { return (T)v; }
template <> __half to_t<__half>(double v) { return __float2half((float)v); }
template <typename T> static double of_t(T v) { return (double)v; }
template <> double of_t<__half>(__half v) { return (double)__half2float(v); }

template <typename T> static void *to_dev(const std::vector<double> &h)
{
    std::vector<T> t(h.size());
    for (size_t i = 0; i < h.size(); i++)
        t[i] = to_t<T>(h[i]);
    void *d = nullptr;
    CT_OK(cudaMalloc(&d, t.size() * sizeof(T) + 16));
    CT_OK(cudaMemcpy(d, t.data(), t.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}

template <typename T> static std::vector<double> from_dev(const void *d, size_t n)
{
    std::vector<T> t(n);
    CT_OK(cudaMemcpy(t.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
    std::vector<double> h(n);
    for (size_t i = 0; i < n; i++)
        h[i] = of_t<T>(t[i]);
    return h;
}

static std::vector<double> rand_vec(size_t n, double scale = 1.0)
{
    std::vector<double> v(n);
    for (auto &x : v)
        x = rnd() * scale;
    return v;
}

/* The values a device type holds (half rounds). */
template <typename T> static std::vector<double> rounded(std::vector<double> v)
{
    for (auto &x : v)
        x = of_t<T>(to_t<T>(x));
    return v;
}

struct Case {
    cublasLtEpilogue_t epi;
    int ta, tb, m, n, k, batch;
    double alpha, beta;
    bool device_scalars;
};

static bool has_bias(cublasLtEpilogue_t e) { return (e & CUBLASLT_EPILOGUE_BIAS) != 0; }
static bool has_bgrad(cublasLtEpilogue_t e)
{
    return e == CUBLASLT_EPILOGUE_DRELU_BGRAD || e == CUBLASLT_EPILOGUE_DGELU_BGRAD || e == CUBLASLT_EPILOGUE_BGRADA ||
           e == CUBLASLT_EPILOGUE_BGRADB;
}
static bool aux_bits(cublasLtEpilogue_t e) { return (e & 128) && (e & (2 | 8)); }

/* Runs one matmul of element type T (compute ct, scale st) and checks D, the aux
 * output and the bias gradient against a host reference. */
template <typename T>
static void run_case(cublasLtHandle_t lt, const Case &c, cudaDataType_t dt, cublasComputeType_t ct,
                     cudaDataType_t st, double tol, int line)
{
    const int m = c.m, n = c.n, k = c.k, B = c.batch;
    const int ar = c.ta == CUBLAS_OP_N ? m : k, ac = c.ta == CUBLAS_OP_N ? k : m;
    const int br = c.tb == CUBLAS_OP_N ? k : n, bc = c.tb == CUBLAS_OP_N ? n : k;
    const int lda = ar + 1, ldb = br + 2, ldc = m + 3, ldd = m + 1;
    const int64_t sa = (int64_t)lda * ac + 5, sb = (int64_t)ldb * bc, sc = (int64_t)ldc * n, sd = (int64_t)ldd * n + 7;
    const int aux_ld = aux_bits(c.epi) ? ((m + 127) / 128) * 128 : ((m + 7) / 8) * 8;
    const int64_t aux_stride = (int64_t)aux_ld * n, bias_len = c.epi == CUBLASLT_EPILOGUE_BGRADB ? n : m;
    const int64_t bias_stride = bias_len + 3;
    std::vector<double> A = rounded<T>(rand_vec(sa * B)), Bm = rounded<T>(rand_vec(sb * B)),
                        C = rounded<T>(rand_vec(sc * B)), D0 = rounded<T>(rand_vec(sd * B)),
                        bias = rounded<T>(rand_vec(bias_stride * B)), aux_in = rounded<T>(rand_vec(aux_stride * B, 2));
    std::vector<unsigned char> mask((size_t)(aux_stride * B + 7) / 8);
    for (auto &x : mask)
        x = (unsigned char)(rnd() * 256);
    void *dA = to_dev<T>(A), *dB = to_dev<T>(Bm), *dC = to_dev<T>(C), *dD = to_dev<T>(D0), *dbias = to_dev<T>(bias);
    void *daux = nullptr;
    if (aux_bits(c.epi)) {
        CT_OK(cudaMalloc(&daux, mask.size() + 16));
        CT_OK(cudaMemcpy(daux, mask.data(), mask.size(), cudaMemcpyHostToDevice));
    } else {
        daux = to_dev<T>(aux_in);
    }

    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, lc, ld;
    LT_OK(cublasLtMatmulDescCreate(&op, ct, st));
    int32_t ta = c.ta, tb = c.tb, pm = c.device_scalars ? CUBLASLT_POINTER_MODE_DEVICE : CUBLASLT_POINTER_MODE_HOST;
    uint32_t epi = c.epi;
    LT_OK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    LT_OK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    LT_OK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_POINTER_MODE, &pm, sizeof pm));
    LT_OK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    if (has_bias(c.epi) || has_bgrad(c.epi)) {
        LT_OK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &dbias, sizeof dbias));
        LT_OK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, &bias_stride,
                                             sizeof bias_stride));
    }
    if (c.epi & 128) {
        int64_t ald = aux_ld, astr = aux_stride;
        LT_OK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &daux, sizeof daux));
        LT_OK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &ald, sizeof ald));
        LT_OK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, &astr, sizeof astr));
    }
    LT_OK(cublasLtMatrixLayoutCreate(&la, dt, ar, ac, lda));
    LT_OK(cublasLtMatrixLayoutCreate(&lb, dt, br, bc, ldb));
    LT_OK(cublasLtMatrixLayoutCreate(&lc, dt, m, n, ldc));
    LT_OK(cublasLtMatrixLayoutCreate(&ld, dt, m, n, ldd));
    const int64_t strides[4] = {sa, sb, sc, sd};
    cublasLtMatrixLayout_t ls[4] = {la, lb, lc, ld};
    for (int i = 0; i < 4 && B > 1; i++) {
        int32_t bc32 = B;
        LT_OK(cublasLtMatrixLayoutSetAttribute(ls[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &bc32, sizeof bc32));
        LT_OK(cublasLtMatrixLayoutSetAttribute(ls[i], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &strides[i],
                                               sizeof strides[i]));
    }
    cublasLtMatmulPreference_t pref;
    LT_OK(cublasLtMatmulPreferenceCreate(&pref));
    uint64_t ws_max = 1 << 20;
    LT_OK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_max,
                                               sizeof ws_max));
    cublasLtMatmulHeuristicResult_t heur[4];
    int found = 0;
    LT_OK(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, ld, pref, 4, heur, &found));
    if (found < 1) {
        ct_fail(__FILE__, line, "heuristic found", ">= 1", "0");
        return;
    }
    void *ws = nullptr;
    if (heur[0].workspaceSize > 0)
        CT_OK(cudaMalloc(&ws, heur[0].workspaceSize));

    float fa = (float)c.alpha, fb = (float)c.beta;
    double da = c.alpha, db = c.beta;
    const void *pa = st == CUDA_R_64F ? (const void *)&da : (const void *)&fa;
    const void *pb = st == CUDA_R_64F ? (const void *)&db : (const void *)&fb;
    void *dscal = nullptr;
    if (c.device_scalars) {
        CT_OK(cudaMalloc(&dscal, 16));
        CT_OK(cudaMemcpy(dscal, pa, 8, cudaMemcpyHostToDevice));
        CT_OK(cudaMemcpy((char *)dscal + 8, pb, 8, cudaMemcpyHostToDevice));
        pa = dscal;
        pb = (char *)dscal + 8;
    }
    LT_OK(cublasLtMatmul(lt, op, pa, dA, la, dB, lb, pb, dC, lc, dD, ld, &heur[0].algo, ws, heur[0].workspaceSize,
                         0));
    CT_OK(cudaDeviceSynchronize());

    std::vector<double> D = from_dev<T>(dD, sd * B), gbias = from_dev<T>(dbias, bias_stride * B);
    std::vector<double> gaux;
    std::vector<unsigned char> gmask(mask.size());
    if (aux_bits(c.epi))
        CT_OK(cudaMemcpy(gmask.data(), daux, mask.size(), cudaMemcpyDeviceToHost));
    else
        gaux = from_dev<T>(daux, aux_stride * B);
    for (int b = 0; b < B; b++) {
        std::vector<double> rb(m > n ? m : n, 0.0);
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++) {
                double acc = 0;
                for (int l = 0; l < k; l++) {
                    double x = c.ta == CUBLAS_OP_N ? A[b * sa + i + (int64_t)l * lda] : A[b * sa + l + (int64_t)i * lda];
                    double y = c.tb == CUBLAS_OP_N ? Bm[b * sb + l + (int64_t)j * ldb] : Bm[b * sb + j + (int64_t)l * ldb];
                    acc += x * y;
                }
                double v = c.alpha * acc + c.beta * C[b * sc + i + (int64_t)j * ldc];
                if (has_bias(c.epi))
                    v += bias[b * bias_stride + i];
                int64_t ai = b * aux_stride + i + (int64_t)j * aux_ld;
                if (c.epi & CUBLASLT_EPILOGUE_RELU) {
                    if (c.epi & 128) {
                        int bit = (gmask[ai / 8] >> (ai % 8)) & 1;
                        near(bit, v > 0 ? 1 : 0, 0, "relu mask bit", line);
                    }
                    v = v > 0 ? v : 0;
                } else if (c.epi & CUBLASLT_EPILOGUE_GELU) {
                    if (c.epi & 128)
                        near(gaux[ai], v, tol, "gelu aux", line);
                    v = gelu(v);
                } else if (c.epi == CUBLASLT_EPILOGUE_DRELU || c.epi == CUBLASLT_EPILOGUE_DRELU_BGRAD) {
                    v = ((mask[ai / 8] >> (ai % 8)) & 1) ? v : 0;
                } else if (c.epi == CUBLASLT_EPILOGUE_DGELU || c.epi == CUBLASLT_EPILOGUE_DGELU_BGRAD) {
                    v *= dgelu(aux_in[ai]);
                }
                near(D[b * sd + i + (int64_t)j * ldd], v, tol, "D", line);
                rb[i] += v;
            }
        if (c.epi == CUBLASLT_EPILOGUE_BGRADA || c.epi == CUBLASLT_EPILOGUE_BGRADB) {
            for (int r = 0; r < bias_len; r++) {
                rb[r] = 0;
                for (int l = 0; l < k; l++)
                    rb[r] += c.epi == CUBLASLT_EPILOGUE_BGRADA
                                 ? (c.ta == CUBLAS_OP_N ? A[b * sa + r + (int64_t)l * lda] : A[b * sa + l + (int64_t)r * lda])
                                 : (c.tb == CUBLAS_OP_N ? Bm[b * sb + l + (int64_t)r * ldb] : Bm[b * sb + r + (int64_t)l * ldb]);
            }
        }
        for (int r = 0; r < bias_len; r++)
            near(gbias[b * bias_stride + r], has_bgrad(c.epi) ? rb[r] : bias[b * bias_stride + r], tol * k,
                 "bias / bias gradient", line);
        for (int j = 0; j < n; j++) /* the gaps between D's columns are untouched */
            for (int i = m; i < ldd; i++)
                near(D[b * sd + i + (int64_t)j * ldd], D0[b * sd + i + (int64_t)j * ldd], 0, "D gap", line);
    }
    LT_OK(cublasLtMatmulPreferenceDestroy(pref));
    for (auto l : ls)
        LT_OK(cublasLtMatrixLayoutDestroy(l));
    LT_OK(cublasLtMatmulDescDestroy(op));
    for (void *p : {dA, dB, dC, dD, dbias, daux, ws, dscal})
        if (p)
            CT_OK(cudaFree(p));
}

/* Attribute rules: exact sizes, known ids, Get's size query. */
static void check_descriptors()
{
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t l;
    cublasLtMatmulPreference_t pref;
    size_t written = 0;
    int32_t v32 = CUBLAS_OP_T, got32 = 0;
    int64_t v64 = 0;
    LT_OK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    LT_OK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &v32, sizeof v32));
    LT_OK(cublasLtMatmulDescGetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &got32, sizeof got32, &written));
    near(got32, CUBLAS_OP_T, 0, "TRANSA read back", __LINE__);
    near((double)written, sizeof got32, 0, "TRANSA size written", __LINE__);
    LT_OK(cublasLtMatmulDescGetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, nullptr, 0, &written));
    near((double)written, sizeof(void *), 0, "BIAS_POINTER size", __LINE__);
    LT_ST(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &v64, sizeof v64),
          CUBLAS_STATUS_INVALID_VALUE);
    LT_ST(cublasLtMatmulDescSetAttribute(op, (cublasLtMatmulDescAttributes_t)9999, &v32, sizeof v32),
          CUBLAS_STATUS_INVALID_VALUE);
    LT_ST(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, nullptr, sizeof v32),
          CUBLAS_STATUS_INVALID_VALUE);
    uint32_t epi = 0;
    LT_OK(cublasLtMatmulDescGetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi, &written));
    near(epi, CUBLASLT_EPILOGUE_DEFAULT, 0, "default epilogue", __LINE__);
    LT_OK(cublasLtMatmulDescDestroy(op));

    LT_OK(cublasLtMatrixLayoutCreate(&l, CUDA_R_32F, 7, 5, 9));
    uint64_t rows = 0;
    LT_OK(cublasLtMatrixLayoutGetAttribute(l, CUBLASLT_MATRIX_LAYOUT_ROWS, &rows, sizeof rows, &written));
    near((double)rows, 7, 0, "layout rows", __LINE__);
    LT_OK(cublasLtMatrixLayoutGetAttribute(l, CUBLASLT_MATRIX_LAYOUT_LD, &v64, sizeof v64, &written));
    near((double)v64, 9, 0, "layout ld", __LINE__);
    LT_ST(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_ROWS, &v32, sizeof v32),
          CUBLAS_STATUS_INVALID_VALUE);
    LT_OK(cublasLtMatrixLayoutDestroy(l));

    /* a layout initialised in the program's own memory */
    cublasLtMatrixLayoutOpaque_t own;
    LT_OK(cublasLtMatrixLayoutInit(&own, CUDA_R_64F, 3, 4, 3));
    int32_t type = 0;
    LT_OK(cublasLtMatrixLayoutGetAttribute(&own, CUBLASLT_MATRIX_LAYOUT_TYPE, &type, sizeof type, &written));
    near(type, CUDA_R_64F, 0, "own layout type", __LINE__);

    LT_OK(cublasLtMatmulPreferenceCreate(&pref));
    uint64_t ws = 4096, got_ws = 0;
    LT_OK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    LT_OK(cublasLtMatmulPreferenceGetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &got_ws, sizeof got_ws,
                                               &written));
    near((double)got_ws, 4096, 0, "preference workspace", __LINE__);
    LT_OK(cublasLtMatmulPreferenceDestroy(pref));
    if (std::string(cublasLtGetStatusName(CUBLAS_STATUS_NOT_SUPPORTED)) != "CUBLAS_STATUS_NOT_SUPPORTED")
        ct_fail(__FILE__, __LINE__, "cublasLtGetStatusName", "CUBLAS_STATUS_NOT_SUPPORTED",
                cublasLtGetStatusName(CUBLAS_STATUS_NOT_SUPPORTED));
    if (cublasLtGetVersion() < 130000)
        ct_fail(__FILE__, __LINE__, "cublasLtGetVersion", ">= 130000", "less");
}

/* Argument errors come back at the call; a row-major layout is refused. */
static void check_errors(cublasLtHandle_t lt)
{
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t a, b, c, row;
    float one = 1, zero = 0;
    void *d = nullptr;
    CT_OK(cudaMalloc(&d, 4096));
    LT_OK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    LT_OK(cublasLtMatrixLayoutCreate(&a, CUDA_R_32F, 4, 3, 4));
    LT_OK(cublasLtMatrixLayoutCreate(&b, CUDA_R_32F, 5, 2, 5)); /* k mismatch: 3 vs 5 */
    LT_OK(cublasLtMatrixLayoutCreate(&c, CUDA_R_32F, 4, 2, 4));
    LT_ST(cublasLtMatmul(lt, op, &one, d, a, d, b, &zero, d, c, d, c, nullptr, nullptr, 0, 0),
          CUBLAS_STATUS_INVALID_VALUE);
    LT_OK(cublasLtMatrixLayoutCreate(&row, CUDA_R_32F, 3, 2, 2));
    int32_t order = CUBLASLT_ORDER_ROW;
    LT_OK(cublasLtMatrixLayoutSetAttribute(row, CUBLASLT_MATRIX_LAYOUT_ORDER, &order, sizeof order));
    cudaDeviceProp prop;
    CT_OK(cudaGetDeviceProperties(&prop, 0));
    if (std::strstr(prop.name, "cudarem") != nullptr) /* NVIDIA's cuBLASLt runs row-major */
        LT_ST(cublasLtMatmul(lt, op, &one, d, a, d, row, &zero, d, c, d, c, nullptr, nullptr, 0, 0),
              CUBLAS_STATUS_NOT_SUPPORTED);
    uint32_t epi = CUBLASLT_EPILOGUE_BIAS; /* no bias pointer */
    LT_OK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    LT_OK(cublasLtMatrixLayoutDestroy(b));
    LT_OK(cublasLtMatrixLayoutCreate(&b, CUDA_R_32F, 3, 2, 3));
    LT_ST(cublasLtMatmul(lt, op, &one, d, a, d, b, &zero, d, c, d, c, nullptr, nullptr, 0, 0),
          CUBLAS_STATUS_INVALID_VALUE);
    LT_ST(cublasLtMatmul(nullptr, op, &one, d, a, d, b, &zero, d, c, d, c, nullptr, nullptr, 0, 0),
          CUBLAS_STATUS_NOT_INITIALIZED);
    for (auto l : {a, b, c, row})
        LT_OK(cublasLtMatrixLayoutDestroy(l));
    LT_OK(cublasLtMatmulDescDestroy(op));
    CT_OK(cudaFree(d));
}

typedef int (*stats_fn)(unsigned long long out[4]);

int main()
{
    cublasLtHandle_t lt;
    LT_OK(cublasLtCreate(&lt));
    stats_fn stats = (stats_fn)dlsym(RTLD_DEFAULT, "cudaremGetStats");
    unsigned long long before[4] = {0}, after[4] = {0};
    check_descriptors();
    check_errors(lt);

    const cublasLtEpilogue_t epis[] = {
        CUBLASLT_EPILOGUE_DEFAULT, CUBLASLT_EPILOGUE_BIAS, CUBLASLT_EPILOGUE_RELU, CUBLASLT_EPILOGUE_RELU_BIAS,
        CUBLASLT_EPILOGUE_GELU, CUBLASLT_EPILOGUE_GELU_BIAS, CUBLASLT_EPILOGUE_GELU_AUX, CUBLASLT_EPILOGUE_GELU_AUX_BIAS,
        CUBLASLT_EPILOGUE_RELU_AUX, CUBLASLT_EPILOGUE_RELU_AUX_BIAS, CUBLASLT_EPILOGUE_DGELU,
        CUBLASLT_EPILOGUE_DGELU_BGRAD, CUBLASLT_EPILOGUE_DRELU, CUBLASLT_EPILOGUE_DRELU_BGRAD,
        CUBLASLT_EPILOGUE_BGRADA, CUBLASLT_EPILOGUE_BGRADB};
    for (cublasLtEpilogue_t e : epis) {
        /* NVIDIA's cuBLASLt supports the gradient epilogues for certain transposes only */
        bool bgrada = e == CUBLASLT_EPILOGUE_BGRADA, bgradb = e == CUBLASLT_EPILOGUE_BGRADB;
        Case c = {e, bgradb ? CUBLAS_OP_N : CUBLAS_OP_T, bgrada ? CUBLAS_OP_T : CUBLAS_OP_N, 33, 17, 29, 1, 1.5,
                  (e & 128) || bgrada || bgradb ? 0.0 : 0.5, false};
        run_case<float>(lt, c, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F, 1e-4, __LINE__);
    }
    /* double, batched, device pointer mode, half with float compute (torch's) */
    run_case<double>(lt, {CUBLASLT_EPILOGUE_BIAS, CUBLAS_OP_N, CUBLAS_OP_T, 20, 11, 13, 3, -0.75, 0.25, true},
                     CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F, 1e-12, __LINE__);
    run_case<float>(lt, {CUBLASLT_EPILOGUE_GELU_AUX_BIAS, CUBLAS_OP_T, CUBLAS_OP_N, 16, 9, 8, 2, 1.0, 0.0, false},
                    CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F, 1e-4, __LINE__);
    run_case<__half>(lt, {CUBLASLT_EPILOGUE_RELU_BIAS, CUBLAS_OP_T, CUBLAS_OP_N, 24, 8, 16, 1, 1.0, 0.0, false},
                     CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F, 1e-2, __LINE__);
    run_case<__half>(lt, {CUBLASLT_EPILOGUE_GELU_BIAS, CUBLAS_OP_T, CUBLAS_OP_N, 24, 8, 16, 1, 1.0, 0.0, false},
                     CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F, 1e-2, __LINE__);

    /* Cost through the shim: descriptors, the heuristic query and the matmuls are
     * local or queued; only the final synchronisation travels. */
    if (stats != nullptr) {
        const int N = 3, M = 16;
        void *d = nullptr;
        CT_OK(cudaMalloc(&d, 3 * M * M * sizeof(float)));
        CT_OK(cudaDeviceSynchronize());
        stats(before);
        cublasLtMatmulDesc_t op;
        cublasLtMatrixLayout_t l;
        cublasLtMatmulPreference_t pref;
        cublasLtMatmulHeuristicResult_t h;
        int found = 0;
        float one = 1, zero = 0;
        uint32_t epi = CUBLASLT_EPILOGUE_RELU;
        LT_OK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
        LT_OK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
        LT_OK(cublasLtMatrixLayoutCreate(&l, CUDA_R_32F, M, M, M));
        LT_OK(cublasLtMatmulPreferenceCreate(&pref));
        LT_OK(cublasLtMatmulAlgoGetHeuristic(lt, op, l, l, l, l, pref, 1, &h, &found));
        float *f = (float *)d;
        for (int i = 0; i < N; i++)
            LT_OK(cublasLtMatmul(lt, op, &one, f, l, f + M * M, l, &zero, f + 2 * M * M, l, f + 2 * M * M, l, &h.algo,
                                 nullptr, 0, 0));
        LT_OK(cublasLtMatmulPreferenceDestroy(pref));
        LT_OK(cublasLtMatrixLayoutDestroy(l));
        LT_OK(cublasLtMatmulDescDestroy(op));
        stats(after);
        near((double)(after[0] - before[0]), 0, 0, "round trips of descriptors, heuristics and matmuls", __LINE__);
        CT_OK(cudaDeviceSynchronize());
        stats(after);
        near((double)(after[0] - before[0]), 1, 0, "round trips after the synchronisation", __LINE__);
        near((double)(after[1] - before[1]), N + 1, 0, "calls sent (matmuls + synchronise)", __LINE__);
        CT_OK(cudaFree(d));
    }
    LT_OK(cublasLtDestroy(lt));
    return ct_finish("blaslt");
}
