/* check_blaslt_emu.c -- unit tests of the emulated cuBLASLt in libcudarem-emu.so:
 * cublasLtMatmul with every epilogue (bias, ReLU, GELU, their aux outputs, DRELU,
 * DGELU, the bias gradients, BGRADA/BGRADB) in float, double and half with float
 * compute, with transposes, leading dimensions larger than the rows, strided
 * batches and both pointer modes, against a naive double-precision reference;
 * the descriptor rules (attribute sizes and ids, Get's size query, Init in the
 * program's memory); and the argument, type and device-range checks, after which
 * nothing was written.
 *
 * Emulated device memory is directly addressable, so the tests fill and read it in
 * place.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "tests/unit/crm_check.h"

#define CK_ST(call, want) ck_assert_int_eq((int)(call), (int)(want))
#define CK_OK(call) CK_ST(call, CUBLAS_STATUS_SUCCESS)

static cublasLtHandle_t H;

static void setup(void)
{
    ck_assert_int_eq(cudaDeviceReset(), cudaSuccess);
    CK_OK(cublasLtCreate(&H));
}

static void teardown(void)
{
    CK_OK(cublasLtDestroy(H));
}

static uint64_t rng = 88172645463325252ull;

/* Multiples of 1/64 in [-2, 2): exact in half, float and double. */
static double rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)((int64_t)(rng >> 11) % 128) / 64.0;
}

static void *dmalloc(size_t n)
{
    void *p = NULL;
    ck_assert_int_eq(cudaMalloc(&p, n ? n : 1), cudaSuccess);
    return p;
}

/* Exact half encoding of the values above (normal numbers and zero only). */
static uint16_t half_bits(double v)
{
    if (v == 0)
        return 0;
    int e;
    double f = frexp(fabs(v), &e); /* v = f * 2^e, f in [0.5, 1) */
    uint16_t m = (uint16_t)((f * 2.0 - 1.0) * 1024.0);
    return (uint16_t)((v < 0 ? 0x8000 : 0) | ((e - 1 + 15) << 10) | m);
}

static double half_value(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25);
    return (h & 0x8000) ? -v : v;
}

static size_t esize(int t)
{
    return t == CUDA_R_64F ? 8 : t == CUDA_R_32F ? 4 : 2;
}

static double ld_el(int t, const void *p, size_t i)
{
    return t == CUDA_R_64F ? ((const double *)p)[i]
           : t == CUDA_R_32F ? ((const float *)p)[i] : half_value(((const uint16_t *)p)[i]);
}

static void st_el(int t, void *p, size_t i, double v)
{
    if (t == CUDA_R_64F)
        ((double *)p)[i] = v;
    else if (t == CUDA_R_32F)
        ((float *)p)[i] = (float)v;
    else
        ((uint16_t *)p)[i] = half_bits(v);
}

static void *dfill(int t, size_t n)
{
    void *p = dmalloc(n * esize(t));
    for (size_t i = 0; i < n; i++)
        st_el(t, p, i, rnd());
    return p;
}

static double gelu(double x)
{
    return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

static double dgelu(double x)
{
    double h = 1e-6;
    return (gelu(x + h) - gelu(x - h)) / (2 * h); /* independent of the emulator's formula */
}

static const cublasLtEpilogue_t epis[] = {
    CUBLASLT_EPILOGUE_DEFAULT,   CUBLASLT_EPILOGUE_RELU,          CUBLASLT_EPILOGUE_RELU_AUX,
    CUBLASLT_EPILOGUE_BIAS,      CUBLASLT_EPILOGUE_RELU_BIAS,     CUBLASLT_EPILOGUE_RELU_AUX_BIAS,
    CUBLASLT_EPILOGUE_DRELU,     CUBLASLT_EPILOGUE_DRELU_BGRAD,   CUBLASLT_EPILOGUE_GELU,
    CUBLASLT_EPILOGUE_GELU_AUX,  CUBLASLT_EPILOGUE_GELU_BIAS,     CUBLASLT_EPILOGUE_GELU_AUX_BIAS,
    CUBLASLT_EPILOGUE_DGELU,     CUBLASLT_EPILOGUE_DGELU_BGRAD,   CUBLASLT_EPILOGUE_BGRADA,
    CUBLASLT_EPILOGUE_BGRADB};
#define NEPIS ((int)(sizeof epis / sizeof epis[0]))

static int is_bits(uint32_t e) { return (e & 128) && (e & (2 | 8)); }
static int is_bgrad(uint32_t e)
{
    return e == CUBLASLT_EPILOGUE_DRELU_BGRAD || e == CUBLASLT_EPILOGUE_DGELU_BGRAD || e == CUBLASLT_EPILOGUE_BGRADA ||
           e == CUBLASLT_EPILOGUE_BGRADB;
}

/* One problem: type t (compute 64F for double, 32F otherwise), epilogue e. */
typedef struct lt_case {
    int t, ta, tb, m, n, k, batch, device_mode;
    uint32_t e;
    double alpha, beta;
} lt_case;

static void set_attr(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a, const void *v, size_t n)
{
    CK_OK(cublasLtMatmulDescSetAttribute(d, a, v, n));
}

static cublasLtMatrixLayout_t layout(int t, int rows, int cols, int ld, int batch, int64_t stride)
{
    cublasLtMatrixLayout_t l;
    CK_OK(cublasLtMatrixLayoutCreate(&l, (cudaDataType)t, (uint64_t)rows, (uint64_t)cols, ld));
    CK_OK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch));
    CK_OK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
    return l;
}

static void run(const lt_case *c)
{
    const int t = c->t, m = c->m, n = c->n, k = c->k, B = c->batch;
    const int ar = c->ta == CUBLAS_OP_N ? m : k, ac = c->ta == CUBLAS_OP_N ? k : m;
    const int br = c->tb == CUBLAS_OP_N ? k : n, bc = c->tb == CUBLAS_OP_N ? n : k;
    const int lda = ar + 2, ldb = br + 1, ldc = m + 1, ldd = m + 3;
    const int64_t sa = (int64_t)lda * ac, sb = (int64_t)ldb * bc + 3, sc = (int64_t)ldc * n, sd = (int64_t)ldd * n;
    const int bits = is_bits(c->e), blen = c->e == CUBLASLT_EPILOGUE_BGRADB ? n : m;
    const int64_t aux_ld = bits ? 128 * ((m + 127) / 128) : 8 * ((m + 7) / 8), aux_stride = aux_ld * n;
    const int64_t bias_stride = blen + 1;
    const int scale = t == CUDA_R_64F ? CUDA_R_64F : CUDA_R_32F;
    void *A = dfill(t, (size_t)(sa * B)), *Bm = dfill(t, (size_t)(sb * B)), *C = dfill(t, (size_t)(sc * B));
    void *D = dfill(t, (size_t)(sd * B)), *bias = dfill(t, (size_t)(bias_stride * B));
    void *aux = bits ? dmalloc((size_t)(aux_stride * B + 7) / 8) : dfill(t, (size_t)(aux_stride * B));
    size_t nbias = (size_t)(bias_stride * B) * esize(t), nd = (size_t)(sd * B) * esize(t);
    size_t naux = bits ? (size_t)(aux_stride * B + 7) / 8 : (size_t)(aux_stride * B) * esize(t);
    if (bits)
        for (size_t i = 0; i < naux; i++)
            ((unsigned char *)aux)[i] = (unsigned char)(rng = rng * 6364136223846793005ull + 1, rng >> 56);
    void *D0 = malloc(nd), *bias0 = malloc(nbias), *aux0 = malloc(naux);
    memcpy(D0, D, nd);
    memcpy(bias0, bias, nbias);
    memcpy(aux0, aux, naux);

    cublasLtMatmulDesc_t op;
    CK_OK(cublasLtMatmulDescCreate(&op, t == CUDA_R_64F ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F, (cudaDataType)scale));
    int32_t ta = c->ta, tb = c->tb, pm = c->device_mode ? CUBLASLT_POINTER_MODE_DEVICE : CUBLASLT_POINTER_MODE_HOST;
    set_attr(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
    set_attr(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
    set_attr(op, CUBLASLT_MATMUL_DESC_POINTER_MODE, &pm, sizeof pm);
    set_attr(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &c->e, sizeof c->e);
    set_attr(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias);
    set_attr(op, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, &bias_stride, sizeof bias_stride);
    set_attr(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof aux);
    set_attr(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &aux_ld, sizeof aux_ld);
    set_attr(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, &aux_stride, sizeof aux_stride);
    cublasLtMatrixLayout_t la = layout(t, ar, ac, lda, B, sa), lb = layout(t, br, bc, ldb, B, sb),
                           lc = layout(t, m, n, ldc, B, sc), ldl = layout(t, m, n, ldd, B, sd);
    double a64 = c->alpha, b64 = c->beta;
    float a32 = (float)c->alpha, b32 = (float)c->beta;
    const void *pa = scale == CUDA_R_64F ? (const void *)&a64 : (const void *)&a32;
    const void *pb = scale == CUDA_R_64F ? (const void *)&b64 : (const void *)&b32;
    void *dscal = NULL;
    if (c->device_mode) {
        dscal = dmalloc(16);
        memcpy(dscal, pa, 8);
        memcpy((char *)dscal + 8, pb, 8);
        pa = dscal;
        pb = (char *)dscal + 8;
    }
    CK_OK(cublasLtMatmul(H, op, pa, A, la, Bm, lb, pb, C, lc, D, ldl, NULL, NULL, 0, NULL));

    double tol = t == CUDA_R_16F ? 2e-2 : t == CUDA_R_32F ? 1e-4 : 1e-12;
    double *rb = calloc((size_t)(m > n ? m : n), sizeof *rb);
    for (int b = 0; b < B; b++) {
        memset(rb, 0, (size_t)(m > n ? m : n) * sizeof *rb);
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++) {
                double acc = 0;
                for (int l = 0; l < k; l++)
                    acc += ld_el(t, A, (size_t)(b * sa + (c->ta == CUBLAS_OP_N ? i + l * lda : l + i * lda))) *
                           ld_el(t, Bm, (size_t)(b * sb + (c->tb == CUBLAS_OP_N ? l + j * ldb : j + l * ldb)));
                double v = c->alpha * acc + c->beta * ld_el(t, C, (size_t)(b * sc + i + j * ldc));
                if (c->e & CUBLASLT_EPILOGUE_BIAS)
                    v += ld_el(t, bias0, (size_t)(b * bias_stride + i));
                int64_t ai = b * aux_stride + i + (int64_t)j * aux_ld;
                if (c->e & CUBLASLT_EPILOGUE_RELU) {
                    if (c->e & 128)
                        ck_assert_int_eq((((unsigned char *)aux)[ai / 8] >> (ai % 8)) & 1, v > 0);
                    v = v > 0 ? v : 0;
                } else if (c->e & CUBLASLT_EPILOGUE_GELU) {
                    if (c->e & 128)
                        ck_assert_msg(fabs(ld_el(t, aux, (size_t)ai) - v) <= tol * (1 + fabs(v)), "gelu aux");
                    v = gelu(v);
                } else if (c->e == CUBLASLT_EPILOGUE_DRELU || c->e == CUBLASLT_EPILOGUE_DRELU_BGRAD) {
                    v = (((unsigned char *)aux0)[ai / 8] >> (ai % 8)) & 1 ? v : 0;
                } else if (c->e == CUBLASLT_EPILOGUE_DGELU || c->e == CUBLASLT_EPILOGUE_DGELU_BGRAD) {
                    v *= dgelu(ld_el(t, aux0, (size_t)ai));
                }
                double got = ld_el(t, D, (size_t)(b * sd + i + j * ldd));
                ck_assert_msg(fabs(got - v) <= (tol + 1e-6) * (1 + fabs(v)), "epilogue %u D(%d,%d) batch %d: %g vs %g",
                              c->e, i, j, b, got, v);
                rb[i] += v;
            }
        if (c->e == CUBLASLT_EPILOGUE_BGRADA || c->e == CUBLASLT_EPILOGUE_BGRADB)
            for (int r = 0; r < blen; r++) {
                rb[r] = 0;
                for (int l = 0; l < k; l++)
                    rb[r] += c->e == CUBLASLT_EPILOGUE_BGRADA
                                 ? ld_el(t, A, (size_t)(b * sa + (c->ta == CUBLAS_OP_N ? r + l * lda : l + r * lda)))
                                 : ld_el(t, Bm, (size_t)(b * sb + (c->tb == CUBLAS_OP_N ? l + r * ldb : r + l * ldb)));
            }
        for (int r = 0; r < bias_stride; r++) {
            size_t bi = (size_t)(b * bias_stride + r);
            double want = is_bgrad(c->e) && r < blen ? rb[r] : ld_el(t, bias0, bi);
            ck_assert_msg(fabs(ld_el(t, bias, bi) - want) <= (tol + 1e-6) * k * (1 + fabs(want)),
                          "epilogue %u bias[%d] batch %d: %g vs %g", c->e, r, b, ld_el(t, bias, bi), want);
        }
        for (int j = 0; j < n; j++) /* the gaps between D's columns are untouched */
            for (int i = m; i < ldd; i++)
                ck_assert(ld_el(t, D, (size_t)(b * sd + i + j * ldd)) == ld_el(t, D0, (size_t)(b * sd + i + j * ldd)));
    }
    if (!(c->e & 128) || c->e == CUBLASLT_EPILOGUE_DRELU || c->e == CUBLASLT_EPILOGUE_DRELU_BGRAD ||
        c->e == CUBLASLT_EPILOGUE_DGELU || c->e == CUBLASLT_EPILOGUE_DGELU_BGRAD)
        ck_assert_msg(memcmp(aux, aux0, naux) == 0, "epilogue %u wrote its aux input", c->e);
    free(rb);
    free(D0);
    free(bias0);
    free(aux0);
    CK_OK(cublasLtMatrixLayoutDestroy(la));
    CK_OK(cublasLtMatrixLayoutDestroy(lb));
    CK_OK(cublasLtMatrixLayoutDestroy(lc));
    CK_OK(cublasLtMatrixLayoutDestroy(ldl));
    CK_OK(cublasLtMatmulDescDestroy(op));
    void *ptrs[] = {A, Bm, C, D, bias, aux, dscal};
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++)
        if (ptrs[i] != NULL)
            ck_assert_int_eq(cudaFree(ptrs[i]), cudaSuccess);
}

/* Every epilogue in float, with each transpose pair; beta 0 for the aux forms. */
START_TEST(test_epilogues_float)
{
    uint32_t e = epis[_i / 4];
    int ta = _i % 2 ? CUBLAS_OP_T : CUBLAS_OP_N, tb = (_i / 2) % 2 ? CUBLAS_OP_T : CUBLAS_OP_N;
    lt_case c = {CUDA_R_32F, ta, tb, 19, 13, 11, 1, 0, e, 1.25, (e & 128) ? 0.0 : -0.5};
    run(&c);
}
END_TEST

/* Double, strided batches, device pointer mode. */
START_TEST(test_epilogues_double_batched)
{
    lt_case c = {CUDA_R_64F, CUBLAS_OP_T, CUBLAS_OP_N, 10, 7, 9, 3, _i % 2, epis[_i / 2], -0.75, 0.25};
    run(&c);
}
END_TEST

/* Half data with float compute (torch's default for half). */
START_TEST(test_epilogues_half)
{
    lt_case c = {CUDA_R_16F, CUBLAS_OP_T, CUBLAS_OP_N, 12, 6, 8, 1, 0, epis[_i], 1.0, 0.0};
    run(&c);
}
END_TEST

START_TEST(test_descriptor_rules)
{
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t l;
    cublasLtMatmulPreference_t pref;
    int32_t v32 = CUBLAS_OP_T, bad = 7;
    int64_t v64 = 5;
    size_t w = 0;
    CK_OK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    CK_ST(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &v64, sizeof v64), CUBLAS_STATUS_INVALID_VALUE);
    CK_ST(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &bad, sizeof bad), CUBLAS_STATUS_INVALID_VALUE);
    CK_ST(cublasLtMatmulDescSetAttribute(op, (cublasLtMatmulDescAttributes_t)16, &v32, sizeof v32),
          CUBLAS_STATUS_INVALID_VALUE);
    CK_OK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &v32, sizeof v32));
    CK_OK(cublasLtMatmulDescGetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, NULL, 0, &w));
    ck_assert_uint_eq(w, sizeof(int64_t));
    CK_ST(cublasLtMatmulDescGetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, NULL, 0, NULL),
          CUBLAS_STATUS_INVALID_VALUE);
    int32_t scale = 0;
    CK_OK(cublasLtMatmulDescGetAttribute(op, CUBLASLT_MATMUL_DESC_SCALE_TYPE, &scale, sizeof scale, &w));
    ck_assert_int_eq(scale, CUDA_R_32F);
    CK_OK(cublasLtMatmulDescDestroy(op));
    CK_OK(cublasLtMatmulDescDestroy(NULL));

    cublasLtMatmulDescOpaque_t own;
    CK_ST(cublasLtMatmulDescInit_internal(&own, 8, CUBLAS_COMPUTE_32F, CUDA_R_32F), CUBLAS_STATUS_ALLOC_FAILED);
    CK_OK(cublasLtMatmulDescInit(&own, CUBLAS_COMPUTE_64F, CUDA_R_64F));
    CK_OK(cublasLtMatmulDescGetAttribute(&own, CUBLASLT_MATMUL_DESC_SCALE_TYPE, &scale, sizeof scale, &w));
    ck_assert_int_eq(scale, CUDA_R_64F);

    CK_OK(cublasLtMatrixLayoutCreate(&l, CUDA_R_32F, 4, 3, 4));
    CK_ST(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_ORDER, &bad, sizeof bad),
          CUBLAS_STATUS_INVALID_VALUE);
    CK_ST(cublasLtMatrixLayoutSetAttribute(l, (cublasLtMatrixLayoutAttribute_t)42, &v32, sizeof v32),
          CUBLAS_STATUS_INVALID_VALUE);
    int32_t batch = 0;
    CK_OK(cublasLtMatrixLayoutGetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch, &w));
    ck_assert_int_eq(batch, 1);
    CK_OK(cublasLtMatrixLayoutDestroy(l));

    CK_OK(cublasLtMatmulPreferenceCreate(&pref));
    uint32_t align = 0;
    CK_OK(cublasLtMatmulPreferenceGetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align, sizeof align,
                                               &w));
    ck_assert_uint_eq(align, 256);
    CK_ST(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &align, sizeof align),
          CUBLAS_STATUS_INVALID_VALUE);
    CK_OK(cublasLtMatmulPreferenceDestroy(pref));
}
END_TEST

/* Refusals leave every output as it was. */
START_TEST(test_matmul_errors)
{
    const int m = 4, n = 3, k = 2;
    float *A = dfill(CUDA_R_32F, 64), *D = dfill(CUDA_R_32F, 64), saved[64], one = 1, zero = 0, host[64];
    memcpy(saved, D, sizeof saved);
    cublasLtMatmulDesc_t op;
    CK_OK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasLtMatrixLayout_t la = layout(CUDA_R_32F, m, k, m, 1, 0), lb = layout(CUDA_R_32F, k, n, k, 1, 0),
                           ld = layout(CUDA_R_32F, m, n, m, 1, 0), big = layout(CUDA_R_32F, m, n, 40, 1, 0),
                           d64 = layout(CUDA_R_64F, m, n, m, 1, 0);
    /* a host pointer, and a range running past the allocation */
    CK_ST(cublasLtMatmul(H, op, &one, host, la, A, lb, &zero, D, ld, D, ld, NULL, NULL, 0, NULL),
          CUBLAS_STATUS_INVALID_VALUE);
    CK_ST(cublasLtMatmul(H, op, &one, A, la, A, lb, &zero, D, big, D, big, NULL, NULL, 0, NULL),
          CUBLAS_STATUS_INVALID_VALUE);
    /* float operands, double output with float compute */
    CK_ST(cublasLtMatmul(H, op, &one, A, la, A, lb, &zero, D, d64, D, d64, NULL, NULL, 0, NULL),
          CUBLAS_STATUS_NOT_SUPPORTED);
    /* a shape that does not agree */
    CK_ST(cublasLtMatmul(H, op, &one, A, la, A, la, &zero, D, ld, D, ld, NULL, NULL, 0, NULL),
          CUBLAS_STATUS_INVALID_VALUE);
    /* GELU_AUX without an aux buffer, then with an ld that is no multiple of 8 */
    uint32_t e = CUBLASLT_EPILOGUE_GELU_AUX;
    int64_t ald = 5;
    CK_OK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof e));
    CK_ST(cublasLtMatmul(H, op, &one, A, la, A, lb, &zero, D, ld, D, ld, NULL, NULL, 0, NULL),
          CUBLAS_STATUS_INVALID_VALUE);
    CK_OK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &A, sizeof A));
    CK_OK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &ald, sizeof ald));
    CK_ST(cublasLtMatmul(H, op, &one, A, la, A, lb, &zero, D, ld, D, ld, NULL, NULL, 0, NULL),
          CUBLAS_STATUS_INVALID_VALUE);
    /* row-major: valid for cuBLASLt, not carried by cudarem */
    int32_t order = CUBLASLT_ORDER_ROW;
    e = CUBLASLT_EPILOGUE_DEFAULT;
    CK_OK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof e));
    CK_OK(cublasLtMatrixLayoutSetAttribute(la, CUBLASLT_MATRIX_LAYOUT_ORDER, &order, sizeof order));
    CK_ST(cublasLtMatmul(H, op, &one, A, la, A, lb, &zero, D, ld, D, ld, NULL, NULL, 0, NULL),
          CUBLAS_STATUS_NOT_SUPPORTED);
    /* an unknown handle */
    CK_ST(cublasLtMatmul((cublasLtHandle_t)(uintptr_t)0x1234, op, &one, A, la, A, lb, &zero, D, ld, D, ld, NULL, NULL,
                         0, NULL),
          CUBLAS_STATUS_NOT_INITIALIZED);
    ck_assert(memcmp(saved, D, sizeof saved) == 0);
    cublasLtMatrixLayout_t ls[] = {la, lb, ld, big, d64};
    for (size_t i = 0; i < sizeof ls / sizeof ls[0]; i++)
        CK_OK(cublasLtMatrixLayoutDestroy(ls[i]));
    CK_OK(cublasLtMatmulDescDestroy(op));
    ck_assert_int_eq(cudaFree(A), cudaSuccess);
    ck_assert_int_eq(cudaFree(D), cudaSuccess);
}
END_TEST

static Suite *blaslt_emu_suite(void)
{
    Suite *s = suite_create("blaslt_emu");
    TCase *t = tcase_create("blaslt");
    tcase_set_timeout(t, 60);
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_loop_test(t, test_epilogues_float, 0, 4 * NEPIS);
    tcase_add_loop_test(t, test_epilogues_double_batched, 0, 2 * NEPIS);
    tcase_add_loop_test(t, test_epilogues_half, 0, NEPIS);
    tcase_add_test(t, test_descriptor_rules);
    tcase_add_test(t, test_matmul_errors);
    suite_add_tcase(s, t);
    return s;
}

CRM_CHECK_MAIN(blaslt_emu_suite)
