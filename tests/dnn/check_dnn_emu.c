/* check_dnn_emu.c -- unit tests of the emulated device's cuDNN (libcudarem-emu.so,
 * linked directly): descriptor validation, and every compute function against
 * reference code on random data in NCHW, NHWC and padded (strided) layouts, float
 * and double, with alpha/beta blending (beta == 0 must not read the output, which
 * is pre-filled with NaN then). Forward passes are compared with direct loops
 * written here; backward passes with central finite differences of the forward
 * pass in double (an independent check of the gradient formulas).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <cudnn.h>

#include "tests/unit/crm_check.h"

#define CK_DNN(call, want) ck_assert_int_eq((int)(call), (int)(want))
#define CK_DOK(call) CK_DNN(call, CUDNN_STATUS_SUCCESS)

enum layout { NCHW, NHWC, PADDED };

/* A 4-d or 5-d tensor in emulated device memory (directly addressable here). */
typedef struct tens {
    cudnnTensorDescriptor_t d;
    int dtype, nb, dims[5], strides[5];
    void *p;
} tens;

static cudnnHandle_t h;
static unsigned rng = 12345;

static double rnd(void)
{
    rng = rng * 1103515245u + 12345u;
    return ((rng >> 8) & 0xffff) / 32768.0 - 1.0;
}

static void setup(void)
{
    CK_DOK(cudnnCreate(&h));
}

static void teardown(void)
{
    CK_DOK(cudnnDestroy(h));
}

static size_t esize(int dtype)
{
    return dtype == CUDNN_DATA_DOUBLE ? 8 : 4;
}

/* Strides of `lay` for dims; PADDED leaves a gap after every row and image. */
static void strides_of(enum layout lay, int nb, const int *dims, int *st)
{
    int s = 1;
    if (lay == NHWC) {
        st[1] = 1;
        s = dims[1];
        for (int i = nb - 1; i >= 2; i--) {
            st[i] = s;
            s *= dims[i];
        }
        st[0] = s;
        return;
    }
    for (int i = nb - 1; i >= 0; i--) {
        st[i] = s;
        s = s * dims[i] + (lay == PADDED && i >= nb - 2 ? 3 : 0);
    }
}

static size_t footprint(const tens *t)
{
    size_t last = 0;
    for (int i = 0; i < t->nb; i++)
        last += (size_t)(t->dims[i] - 1) * t->strides[i];
    return (last + 1) * esize(t->dtype);
}

static int64_t off(const tens *t, const int *idx)
{
    int64_t o = 0;
    for (int i = 0; i < t->nb; i++)
        o += (int64_t)idx[i] * t->strides[i];
    return o;
}

static double get(const tens *t, const int *idx)
{
    return t->dtype == CUDNN_DATA_DOUBLE ? ((double *)t->p)[off(t, idx)] : ((float *)t->p)[off(t, idx)];
}

static void put(const tens *t, const int *idx, double v)
{
    if (t->dtype == CUDNN_DATA_DOUBLE)
        ((double *)t->p)[off(t, idx)] = v;
    else
        ((float *)t->p)[off(t, idx)] = (float)v;
}

static int next(int nb, const int *dims, int *idx)
{
    for (int i = nb - 1; i >= 0; i--) {
        if (++idx[i] < dims[i])
            return 1;
        idx[i] = 0;
    }
    return 0;
}

static int64_t count(const tens *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->nb; i++)
        n *= t->dims[i];
    return n;
}

/* Dense row-major index, for host copies. */
static int64_t dense(const tens *t, const int *idx)
{
    int64_t o = 0;
    for (int i = 0; i < t->nb; i++)
        o = o * t->dims[i] + idx[i];
    return o;
}

/* Makes a tensor with random contents (memory all NaN first, so gaps are NaN too). */
static tens mk(int dtype, enum layout lay, int nb, const int *dims)
{
    tens t = {.dtype = dtype, .nb = nb};
    memcpy(t.dims, dims, sizeof(int) * nb);
    strides_of(lay, nb, dims, t.strides);
    CK_DOK(cudnnCreateTensorDescriptor(&t.d));
    CK_DOK(cudnnSetTensorNdDescriptor(t.d, dtype, nb, t.dims, t.strides));
    ck_assert_int_eq(cudaMalloc(&t.p, footprint(&t)), cudaSuccess);
    memset(t.p, 0xff, footprint(&t));
    int idx[5] = {0};
    do
        put(&t, idx, rnd());
    while (next(nb, dims, idx));
    return t;
}

static tens mk4(int dtype, enum layout lay, int n, int c, int hh, int w)
{
    const int dims[4] = {n, c, hh, w};
    return mk(dtype, lay, 4, dims);
}

static void rm(tens *t)
{
    cudnnDestroyTensorDescriptor(t->d);
    cudaFree(t->p);
}

/* Host copy of the values (dense). */
static double *snap(const tens *t)
{
    double *v = malloc(sizeof *v * (size_t)count(t));
    int idx[5] = {0};
    do
        v[dense(t, idx)] = get(t, idx);
    while (next(t->nb, t->dims, idx));
    return v;
}

/* Fills every element with NaN (checks that beta == 0 does not read the output). */
static void nanfill(const tens *t)
{
    int idx[5] = {0};
    do
        put(t, idx, NAN);
    while (next(t->nb, t->dims, idx));
}

static double tol(int dtype)
{
    return dtype == CUDNN_DATA_DOUBLE ? 1e-9 : 2e-4;
}

/* Every element of t equals alpha * want + beta * old (old may be NULL when beta == 0). */
static void expect(const tens *t, const double *want, const double *old, double alpha, double beta, double scale)
{
    int idx[5] = {0};
    do {
        int64_t i = dense(t, idx);
        double e = alpha * want[i] + (beta != 0 ? beta * old[i] : 0), g = get(t, idx);
        ck_assert_msg(fabs(g - e) <= tol(t->dtype) * (1 + fabs(e)) * scale, "element %lld: got %g want %g",
                      (long long)i, g, e);
    } while (next(t->nb, t->dims, idx));
}

/* --- descriptors --- */

START_TEST(test_tensor_descriptor_rules)
{
    cudnnTensorDescriptor_t t;
    cudnnDataType_t dt;
    int n, c, hh, w, ns, cs, hs, ws, nb, dims[8], st[8];
    size_t size;
    CK_DOK(cudnnCreateTensorDescriptor(&t));
    CK_DNN(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 0, 3, 4, 5), CUDNN_STATUS_BAD_PARAM);
    CK_DNN(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, -3, 4, 5), CUDNN_STATUS_BAD_PARAM);
    CK_DNN(cudnnSetTensor4dDescriptor(t, (cudnnTensorFormat_t)7, CUDNN_DATA_FLOAT, 2, 3, 4, 5), CUDNN_STATUS_BAD_PARAM);
    CK_DNN(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, (cudnnDataType_t)99, 2, 3, 4, 5), CUDNN_STATUS_BAD_PARAM);
    CK_DNN(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW_VECT_C, CUDNN_DATA_INT8x4, 2, 4, 4, 5),
           CUDNN_STATUS_NOT_SUPPORTED);
    CK_DNN(cudnnGetTensor4dDescriptor(t, &dt, &n, &c, &hh, &w, &ns, &cs, &hs, &ws), CUDNN_STATUS_BAD_PARAM);
    CK_DOK(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NHWC, CUDNN_DATA_DOUBLE, 2, 3, 4, 5));
    CK_DOK(cudnnGetTensor4dDescriptor(t, &dt, &n, &c, &hh, &w, &ns, &cs, &hs, &ws));
    ck_assert(dt == CUDNN_DATA_DOUBLE && n == 2 && c == 3 && hh == 4 && w == 5);
    ck_assert(ns == 60 && cs == 1 && hs == 15 && ws == 3);
    CK_DOK(cudnnGetTensorSizeInBytes(t, &size));
    ck_assert_uint_eq(size, 2 * 3 * 4 * 5 * 8);
    /* A failed Set leaves the descriptor as it was. */
    CK_DNN(cudnnSetTensor4dDescriptorEx(t, CUDNN_DATA_FLOAT, 2, 3, 4, 5, 60, 20, 5, -1), CUDNN_STATUS_BAD_PARAM);
    CK_DOK(cudnnGetTensorNdDescriptor(t, 8, &dt, &nb, dims, st));
    ck_assert(nb == 4 && dt == CUDNN_DATA_DOUBLE && st[1] == 1);
    const int d9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1}, s9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    CK_DNN(cudnnSetTensorNdDescriptor(t, CUDNN_DATA_FLOAT, 9, d9, s9), CUDNN_STATUS_NOT_SUPPORTED);
    CK_DNN(cudnnSetTensorNdDescriptor(t, CUDNN_DATA_FLOAT, 2, d9, s9), CUDNN_STATUS_BAD_PARAM);
    const int big[4] = {65536, 65536, 1, 1}, bs[4] = {65536, 1, 1, 1};
    CK_DNN(cudnnSetTensorNdDescriptor(t, CUDNN_DATA_FLOAT, 4, big, bs), CUDNN_STATUS_NOT_SUPPORTED);
    CK_DOK(cudnnSetTensor4dDescriptorEx(t, CUDNN_DATA_FLOAT, 2, 3, 4, 5, 100, 30, 7, 1));
    CK_DOK(cudnnGetTensorSizeInBytes(t, &size));
    ck_assert_uint_eq(size, (100 + 2 * 30 + 3 * 7 + 4 + 1) * 4);
    CK_DNN(cudnnSetTensor4dDescriptor(NULL, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, 1, 1), CUDNN_STATUS_BAD_PARAM);
    CK_DOK(cudnnDestroyTensorDescriptor(t));
}
END_TEST

START_TEST(test_filter_conv_pool_descriptor_rules)
{
    cudnnFilterDescriptor_t f;
    cudnnConvolutionDescriptor_t cv;
    cudnnPoolingDescriptor_t p;
    cudnnTensorDescriptor_t x;
    int n, c, hh, w, g;
    cudnnMathType_t m;
    CK_DOK(cudnnCreateFilterDescriptor(&f));
    CK_DNN(cudnnSetFilter4dDescriptor(f, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, 0, 3, 3), CUDNN_STATUS_BAD_PARAM);
    CK_DOK(cudnnSetFilter4dDescriptor(f, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 8, 2, 3, 3));
    CK_DOK(cudnnCreateConvolutionDescriptor(&cv));
    CK_DOK(cudnnGetConvolutionGroupCount(cv, &g));
    ck_assert_int_eq(g, 1);
    CK_DNN(cudnnSetConvolution2dDescriptor(cv, -1, 0, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
           CUDNN_STATUS_BAD_PARAM);
    CK_DNN(cudnnSetConvolution2dDescriptor(cv, 0, 0, 0, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
           CUDNN_STATUS_BAD_PARAM);
    CK_DNN(cudnnSetConvolution2dDescriptor(cv, 0, 0, 1, 1, 1, 1, (cudnnConvolutionMode_t)5, CUDNN_DATA_FLOAT),
           CUDNN_STATUS_BAD_PARAM);
    CK_DOK(cudnnSetConvolution2dDescriptor(cv, 1, 2, 2, 1, 1, 2, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CK_DNN(cudnnSetConvolutionGroupCount(cv, 0), CUDNN_STATUS_BAD_PARAM);
    CK_DOK(cudnnSetConvolutionGroupCount(cv, 2));
    CK_DNN(cudnnSetConvolutionMathType(cv, (cudnnMathType_t)9), CUDNN_STATUS_BAD_PARAM);
    CK_DOK(cudnnSetConvolutionMathType(cv, CUDNN_TENSOR_OP_MATH));
    CK_DOK(cudnnGetConvolutionMathType(cv, &m));
    ck_assert_int_eq(m, CUDNN_TENSOR_OP_MATH);
    CK_DOK(cudnnCreateTensorDescriptor(&x));
    CK_DOK(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 4, 9, 10));
    CK_DOK(cudnnGetConvolution2dForwardOutputDim(cv, x, f, &n, &c, &hh, &w));
    /* h: 1 + (9 + 2 - 3) / 2 = 5; w: 1 + (10 + 4 - 5) / 1 = 10 */
    ck_assert(n == 2 && c == 8 && hh == 5 && w == 10);
    CK_DOK(cudnnSetConvolutionGroupCount(cv, 1)); /* C 4 != 2 * 1 */
    CK_DNN(cudnnGetConvolution2dForwardOutputDim(cv, x, f, &n, &c, &hh, &w), CUDNN_STATUS_BAD_PARAM);
    CK_DOK(cudnnCreatePoolingDescriptor(&p));
    CK_DNN(cudnnSetPooling2dDescriptor(p, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 0, 2, 0, 0, 2, 2),
           CUDNN_STATUS_BAD_PARAM);
    CK_DOK(cudnnSetPooling2dDescriptor(p, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 3, 2, 1, 0, 2, 2));
    CK_DOK(cudnnGetPooling2dForwardOutputDim(p, x, &n, &c, &hh, &w));
    ck_assert(n == 2 && c == 4 && hh == 5 && w == 5);
    cudnnActivationDescriptor_t a;
    CK_DOK(cudnnCreateActivationDescriptor(&a));
    CK_DNN(cudnnSetActivationDescriptor(a, (cudnnActivationMode_t)42, CUDNN_NOT_PROPAGATE_NAN, 0), CUDNN_STATUS_BAD_PARAM);
    cudnnOpTensorDescriptor_t o;
    CK_DOK(cudnnCreateOpTensorDescriptor(&o));
    CK_DNN(cudnnSetOpTensorDescriptor(o, (cudnnOpTensorOp_t)6, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN),
           CUDNN_STATUS_BAD_PARAM);
    ck_assert_str_eq(cudnnGetErrorString(CUDNN_STATUS_BAD_PARAM), "CUDNN_STATUS_BAD_PARAM");
    ck_assert_uint_eq(cudnnGetVersion(), CUDNN_VERSION);
    cudnnDestroyOpTensorDescriptor(o);
    cudnnDestroyActivationDescriptor(a);
    cudnnDestroyPoolingDescriptor(p);
    cudnnDestroyTensorDescriptor(x);
    cudnnDestroyConvolutionDescriptor(cv);
    cudnnDestroyFilterDescriptor(f);
}
END_TEST

/* --- convolutions --- */

/* One configuration: layout, data type, groups, padding, stride, dilation, mode. */
typedef struct conv_cfg {
    enum layout lay;
    int dtype, groups, pad, stride, dil, mode;
} conv_cfg;

static const conv_cfg conv_cfgs[] = {
    {NCHW, CUDNN_DATA_FLOAT, 1, 0, 1, 1, CUDNN_CROSS_CORRELATION},
    {NHWC, CUDNN_DATA_FLOAT, 2, 1, 2, 1, CUDNN_CONVOLUTION},
    {PADDED, CUDNN_DATA_DOUBLE, 1, 2, 1, 2, CUDNN_CROSS_CORRELATION},
    {NCHW, CUDNN_DATA_DOUBLE, 2, 1, 1, 1, CUDNN_CONVOLUTION},
    {NHWC, CUDNN_DATA_DOUBLE, 1, 1, 2, 2, CUDNN_CROSS_CORRELATION},
};

typedef struct conv_t {
    tens x, y;
    cudnnFilterDescriptor_t fd;
    cudnnConvolutionDescriptor_t cd;
    void *w;
    int k, c, r, s;
    conv_cfg cfg;
} conv_t;

static double wget(const conv_t *p, int k, int c, int r, int s)
{
    size_t i = (((size_t)k * p->c + c) * p->r + r) * p->s + s;
    return p->cfg.dtype == CUDNN_DATA_DOUBLE ? ((double *)p->w)[i] : ((float *)p->w)[i];
}

static void conv_make(conv_t *p, const conv_cfg *cfg)
{
    memset(p, 0, sizeof *p);
    p->cfg = *cfg;
    p->k = 4, p->c = 4 / cfg->groups, p->r = 3, p->s = 2;
    p->x = mk4(cfg->dtype, cfg->lay, 2, 4, 7, 6);
    CK_DOK(cudnnCreateFilterDescriptor(&p->fd));
    CK_DOK(cudnnSetFilter4dDescriptor(p->fd, cfg->dtype, CUDNN_TENSOR_NCHW, p->k, p->c, p->r, p->s));
    size_t wn = (size_t)p->k * p->c * p->r * p->s;
    ck_assert_int_eq(cudaMalloc(&p->w, wn * esize(cfg->dtype)), cudaSuccess);
    for (size_t i = 0; i < wn; i++) {
        if (cfg->dtype == CUDNN_DATA_DOUBLE)
            ((double *)p->w)[i] = rnd();
        else
            ((float *)p->w)[i] = (float)rnd();
    }
    CK_DOK(cudnnCreateConvolutionDescriptor(&p->cd));
    CK_DOK(cudnnSetConvolution2dDescriptor(p->cd, cfg->pad, cfg->pad, cfg->stride, cfg->stride, cfg->dil, cfg->dil,
                                           cfg->mode, cfg->dtype));
    CK_DOK(cudnnSetConvolutionGroupCount(p->cd, cfg->groups));
    int n, k, hh, w;
    CK_DOK(cudnnGetConvolution2dForwardOutputDim(p->cd, p->x.d, p->fd, &n, &k, &hh, &w));
    p->y = mk4(cfg->dtype, cfg->lay, n, k, hh, w);
}

static void conv_free(conv_t *p)
{
    rm(&p->x);
    rm(&p->y);
    cudaFree(p->w);
    cudnnDestroyFilterDescriptor(p->fd);
    cudnnDestroyConvolutionDescriptor(p->cd);
}

/* Reference forward value at y[n][k][oh][ow], straight from the definition. */
static double conv_ref(const conv_t *p, const double *x, int n, int k, int oh, int ow)
{
    int kg = p->k / p->cfg.groups, g = k / kg;
    double acc = 0;
    for (int c = 0; c < p->c; c++)
        for (int r = 0; r < p->r; r++)
            for (int s = 0; s < p->s; s++) {
                int ih = oh * p->cfg.stride - p->cfg.pad + r * p->cfg.dil;
                int iw = ow * p->cfg.stride - p->cfg.pad + s * p->cfg.dil;
                if (ih < 0 || ih >= p->x.dims[2] || iw < 0 || iw >= p->x.dims[3])
                    continue;
                int fr = p->cfg.mode == CUDNN_CONVOLUTION ? p->r - 1 - r : r;
                int fs = p->cfg.mode == CUDNN_CONVOLUTION ? p->s - 1 - s : s;
                int ci = g * p->c + c;
                acc += x[((n * 4 + ci) * p->x.dims[2] + ih) * p->x.dims[3] + iw] * wget(p, k, c, fr, fs);
            }
    return acc;
}

START_TEST(test_conv_forward_matches_reference)
{
    conv_t p;
    conv_make(&p, &conv_cfgs[_i]);
    double *x = snap(&p.x), *old = snap(&p.y), *want = malloc(sizeof *want * (size_t)count(&p.y));
    int idx[4] = {0};
    do
        want[dense(&p.y, idx)] = conv_ref(&p, x, idx[0], idx[1], idx[2], idx[3]);
    while (next(4, p.y.dims, idx));
    int perf_n;
    cudnnConvolutionFwdAlgoPerf_t perf[8];
    CK_DOK(cudnnGetConvolutionForwardAlgorithm_v7(h, p.x.d, p.fd, p.cd, p.y.d, 8, &perf_n, perf));
    ck_assert(perf_n == 8 && perf[0].status == CUDNN_STATUS_SUCCESS && perf[0].memory == 0);
    size_t ws = 1;
    CK_DOK(cudnnGetConvolutionForwardWorkspaceSize(h, p.x.d, p.fd, p.cd, p.y.d, perf[0].algo, &ws));
    ck_assert_uint_eq(ws, 0);
    int dbl = p.cfg.dtype == CUDNN_DATA_DOUBLE;
    double ad = 0.7, bd = 0.3;
    float af = 0.7f, bf = 0.3f;
    CK_DOK(cudnnConvolutionForward(h, dbl ? (void *)&ad : (void *)&af, p.x.d, p.x.p, p.fd, p.w, p.cd, perf[0].algo,
                                   NULL, 0, dbl ? (void *)&bd : (void *)&bf, p.y.d, p.y.p));
    expect(&p.y, want, old, dbl ? ad : af, dbl ? bd : bf, 1);
    /* beta == 0: the output is not read (it holds NaN). */
    nanfill(&p.y);
    double zd = 0, od = 1;
    float zf = 0, of = 1;
    CK_DOK(cudnnConvolutionForward(h, dbl ? (void *)&od : (void *)&of, p.x.d, p.x.p, p.fd, p.w, p.cd,
                                   CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0,
                                   dbl ? (void *)&zd : (void *)&zf, p.y.d, p.y.p));
    expect(&p.y, want, NULL, 1, 0, 1);
    /* FFT applies with unit strides and dilations and a filter (3x2) wider than the
     * padding, and then computes the same; Winograd needs a 3x3 filter. */
    int fft = p.cfg.stride == 1 && p.cfg.dil == 1 && p.cfg.pad < 2;
    CK_DNN(cudnnConvolutionForward(h, dbl ? (void *)&od : (void *)&of, p.x.d, p.x.p, p.fd, p.w, p.cd,
                                   CUDNN_CONVOLUTION_FWD_ALGO_FFT, NULL, 0, dbl ? (void *)&zd : (void *)&zf, p.y.d,
                                   p.y.p), fft ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_NOT_SUPPORTED);
    if (fft)
        expect(&p.y, want, NULL, 1, 0, 1);
    CK_DNN(cudnnConvolutionForward(h, &od, p.x.d, p.x.p, p.fd, p.w, p.cd, CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD, NULL, 0,
                                   &zd, p.y.d, p.y.p), CUDNN_STATUS_NOT_SUPPORTED);
    free(x), free(old), free(want);
    conv_free(&p);
}
END_TEST

/* L(x, w) = sum(g * conv(x, w)) for a fixed g: dL/dx is backward data of g and
 * dL/dw backward filter of g, checked against central differences. */
static double conv_loss(conv_t *p, const double *g)
{
    double one = 1, zero = 0, s = 0;
    CK_DOK(cudnnConvolutionForward(h, &one, p->x.d, p->x.p, p->fd, p->w, p->cd, 0, NULL, 0, &zero, p->y.d, p->y.p));
    int idx[4] = {0};
    do
        s += g[dense(&p->y, idx)] * get(&p->y, idx);
    while (next(4, p->y.dims, idx));
    return s;
}

START_TEST(test_conv_backward_matches_finite_differences)
{
    conv_cfg cfg = conv_cfgs[_i];
    cfg.dtype = CUDNN_DATA_DOUBLE; /* differences need double */
    conv_t p;
    conv_make(&p, &cfg);
    tens dy = mk4(cfg.dtype, cfg.lay, p.y.dims[0], p.y.dims[1], p.y.dims[2], p.y.dims[3]);
    tens dx = mk4(cfg.dtype, cfg.lay == NCHW ? NHWC : NCHW, 2, 4, 7, 6);
    tens db = mk4(cfg.dtype, NCHW, 1, 4, 1, 1);
    double *g = snap(&dy), *old = snap(&dx), *oldb = snap(&db), a = 0.5, b = 0.25, eps = 1e-6;
    size_t wn = (size_t)p.k * p.c * p.r * p.s;
    double *dw;
    ck_assert_int_eq(cudaMalloc((void **)&dw, wn * 8), cudaSuccess);
    double *oldw = malloc(wn * 8), *want = malloc(sizeof *want * (size_t)count(&p.x));
    for (size_t i = 0; i < wn; i++)
        dw[i] = oldw[i] = rnd();
    CK_DOK(cudnnConvolutionBackwardData(h, &a, p.fd, p.w, dy.d, dy.p, p.cd, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, NULL, 0,
                                        &b, dx.d, dx.p));
    CK_DOK(cudnnConvolutionBackwardFilter(h, &a, p.x.d, p.x.p, dy.d, dy.p, p.cd, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0,
                                          NULL, 0, &b, p.fd, dw));
    CK_DOK(cudnnConvolutionBackwardBias(h, &a, dy.d, dy.p, &b, db.d, db.p));
    int idx[4] = {0};
    do {
        double v = get(&p.x, idx);
        put(&p.x, idx, v + eps);
        double lp = conv_loss(&p, g);
        put(&p.x, idx, v - eps);
        double lm = conv_loss(&p, g);
        put(&p.x, idx, v);
        want[dense(&p.x, idx)] = (lp - lm) / (2 * eps);
    } while (next(4, p.x.dims, idx));
    expect(&dx, want, old, a, b, 1e4);
    for (size_t i = 0; i < wn; i++) {
        double v = ((double *)p.w)[i];
        ((double *)p.w)[i] = v + eps;
        double lp = conv_loss(&p, g);
        ((double *)p.w)[i] = v - eps;
        double lm = conv_loss(&p, g);
        ((double *)p.w)[i] = v;
        double e = a * (lp - lm) / (2 * eps) + b * oldw[i];
        ck_assert_msg(fabs(dw[i] - e) < 1e-5 * (1 + fabs(e)), "dw[%zu] %g want %g", i, dw[i], e);
    }
    for (int k = 0; k < 4; k++) {
        double s = 0;
        int j[4] = {0};
        do
            s += j[1] == k ? g[dense(&dy, j)] : 0;
        while (next(4, dy.dims, j));
        int bi[4] = {0, k, 0, 0};
        ck_assert(fabs(get(&db, bi) - (a * s + b * oldb[k])) < 1e-9);
    }
    free(g), free(old), free(oldb), free(oldw), free(want);
    cudaFree(dw);
    rm(&dy), rm(&dx), rm(&db);
    conv_free(&p);
}
END_TEST

START_TEST(test_conv_shape_errors)
{
    conv_t p;
    conv_make(&p, &conv_cfgs[0]);
    tens bad = mk4(CUDNN_DATA_FLOAT, NCHW, 2, 4, 3, 3);
    float one = 1, zero = 0;
    CK_DNN(cudnnConvolutionForward(h, &one, p.x.d, p.x.p, p.fd, p.w, p.cd, 0, NULL, 0, &zero, bad.d, bad.p),
           CUDNN_STATUS_BAD_PARAM);
    CK_DNN(cudnnConvolutionForward(NULL, &one, p.x.d, p.x.p, p.fd, p.w, p.cd, 0, NULL, 0, &zero, p.y.d, p.y.p),
           CUDNN_STATUS_BAD_PARAM);
    CK_DNN(cudnnConvolutionForward(h, NULL, p.x.d, p.x.p, p.fd, p.w, p.cd, 0, NULL, 0, &zero, p.y.d, p.y.p),
           CUDNN_STATUS_BAD_PARAM);
    /* Memory outside every allocation. */
    int stack;
    CK_DNN(cudnnConvolutionForward(h, &one, p.x.d, &stack, p.fd, p.w, p.cd, 0, NULL, 0, &zero, p.y.d, p.y.p),
           CUDNN_STATUS_EXECUTION_FAILED);
    rm(&bad);
    conv_free(&p);
}
END_TEST

/* --- element-wise operations --- */

START_TEST(test_activation_forward_and_backward)
{
    static const int modes[] = {CUDNN_ACTIVATION_SIGMOID, CUDNN_ACTIVATION_RELU, CUDNN_ACTIVATION_TANH,
                                CUDNN_ACTIVATION_CLIPPED_RELU, CUDNN_ACTIVATION_ELU, CUDNN_ACTIVATION_IDENTITY,
                                CUDNN_ACTIVATION_SWISH};
    int mode = modes[_i];
    cudnnActivationDescriptor_t ad;
    CK_DOK(cudnnCreateActivationDescriptor(&ad));
    CK_DOK(cudnnSetActivationDescriptor(ad, mode, CUDNN_NOT_PROPAGATE_NAN, 0.4));
    const int dims[4] = {2, 3, 4, 5};
    tens x = mk(CUDNN_DATA_DOUBLE, NCHW, 4, dims), y = mk(CUDNN_DATA_DOUBLE, NHWC, 4, dims);
    tens dy = mk(CUDNN_DATA_DOUBLE, PADDED, 4, dims), dx = mk(CUDNN_DATA_DOUBLE, NHWC, 4, dims);
    double *xv = snap(&x), *old = snap(&y), *want = malloc(sizeof *want * 120), a = 0.9, b = 0.2;
    for (int i = 0; i < 120; i++) {
        double v = xv[i];
        switch (mode) {
        case CUDNN_ACTIVATION_SIGMOID: want[i] = 1 / (1 + exp(-v)); break;
        case CUDNN_ACTIVATION_RELU: want[i] = fmax(v, 0); break;
        case CUDNN_ACTIVATION_TANH: want[i] = tanh(v); break;
        case CUDNN_ACTIVATION_CLIPPED_RELU: want[i] = fmin(fmax(v, 0), 0.4); break;
        case CUDNN_ACTIVATION_ELU: want[i] = v > 0 ? v : 0.4 * (exp(v) - 1); break;
        case CUDNN_ACTIVATION_SWISH: want[i] = v / (1 + exp(-v)); break;
        default: want[i] = v;
        }
    }
    CK_DOK(cudnnActivationForward(h, ad, &a, x.d, x.p, &b, y.d, y.p));
    expect(&y, want, old, a, b, 1);
    /* Backward against differences of f (y = f(x) with alpha 1, beta 0). */
    double one = 1, zero = 0, eps = 1e-6;
    CK_DOK(cudnnActivationForward(h, ad, &one, x.d, x.p, &zero, y.d, y.p));
    double *g = snap(&dy), *oldx = snap(&dx), *yv = snap(&y);
    CK_DOK(cudnnActivationBackward(h, ad, &a, y.d, y.p, dy.d, dy.p, x.d, x.p, &b, dx.d, dx.p));
    for (int i = 0; i < 120; i++) {
        double f1, f0, v = xv[i];
        switch (mode) {
        case CUDNN_ACTIVATION_SIGMOID: f1 = 1 / (1 + exp(-(v + eps))), f0 = 1 / (1 + exp(-(v - eps))); break;
        case CUDNN_ACTIVATION_RELU: f1 = fmax(v + eps, 0), f0 = fmax(v - eps, 0); break;
        case CUDNN_ACTIVATION_TANH: f1 = tanh(v + eps), f0 = tanh(v - eps); break;
        case CUDNN_ACTIVATION_CLIPPED_RELU: f1 = fmin(fmax(v + eps, 0), .4), f0 = fmin(fmax(v - eps, 0), .4); break;
        case CUDNN_ACTIVATION_ELU: f1 = v + eps > 0 ? v + eps : .4 * (exp(v + eps) - 1);
            f0 = v - eps > 0 ? v - eps : .4 * (exp(v - eps) - 1); break;
        case CUDNN_ACTIVATION_SWISH: f1 = (v + eps) / (1 + exp(-(v + eps))), f0 = (v - eps) / (1 + exp(-(v - eps)));
            break;
        default: f1 = v + eps, f0 = v - eps;
        }
        want[i] = g[i] * (f1 - f0) / (2 * eps);
    }
    expect(&dx, want, oldx, a, b, 1e4);
    free(xv), free(old), free(want), free(g), free(oldx), free(yv);
    rm(&x), rm(&y), rm(&dy), rm(&dx);
    cudnnDestroyActivationDescriptor(ad);
}
END_TEST

START_TEST(test_softmax_forward_and_backward)
{
    int algo = _i % 3, mode = _i / 3;
    const int dims[4] = {2, 4, 3, 2};
    tens x = mk(CUDNN_DATA_DOUBLE, NHWC, 4, dims), y = mk(CUDNN_DATA_DOUBLE, NCHW, 4, dims);
    tens dy = mk(CUDNN_DATA_DOUBLE, PADDED, 4, dims), dx = mk(CUDNN_DATA_DOUBLE, NCHW, 4, dims);
    double *xv = snap(&x), want[48], one = 1, zero = 0, eps = 1e-6;
    /* Reference: groups are n (instance) or (n, h, w) (channel). */
    for (int i = 0; i < 48; i++) {
        int n = i / 24, c = (i / 6) % 4, hw = i % 6;
        double mx = -1e300, s = 0;
        for (int j = 0; j < 48; j++) {
            int nj = j / 24, hwj = j % 6;
            if (nj == n && (mode == CUDNN_SOFTMAX_MODE_INSTANCE || hwj == hw)) {
                mx = fmax(mx, xv[j]);
                s += 0;
            }
        }
        for (int j = 0; j < 48; j++)
            if (j / 24 == n && (mode == CUDNN_SOFTMAX_MODE_INSTANCE || j % 6 == hw))
                s += exp(xv[j] - mx);
        want[i] = algo == CUDNN_SOFTMAX_LOG ? xv[i] - mx - log(s) : exp(xv[i] - mx) / s;
        (void)c;
    }
    nanfill(&y);
    CK_DOK(cudnnSoftmaxForward(h, algo, mode, &one, x.d, x.p, &zero, y.d, y.p));
    expect(&y, want, NULL, 1, 0, 1);
    /* Backward: d/dx sum(g * softmax(x)) by differences of the forward pass. */
    double *g = snap(&dy), *old = snap(&dx), a = 0.6, b = 0.5;
    CK_DOK(cudnnSoftmaxBackward(h, algo, mode, &a, y.d, y.p, dy.d, dy.p, &b, dx.d, dx.p));
    tens yt = mk(CUDNN_DATA_DOUBLE, NCHW, 4, dims);
    int idx[4] = {0};
    do {
        double v = get(&x, idx), l[2];
        for (int sgn = 0; sgn < 2; sgn++) {
            put(&x, idx, v + (sgn ? -eps : eps));
            CK_DOK(cudnnSoftmaxForward(h, algo, mode, &one, x.d, x.p, &zero, yt.d, yt.p));
            double *yv = snap(&yt);
            l[sgn] = 0;
            for (int i = 0; i < 48; i++)
                l[sgn] += g[i] * yv[i];
            free(yv);
        }
        put(&x, idx, v);
        want[dense(&x, idx)] = (l[0] - l[1]) / (2 * eps);
    } while (next(4, dims, idx));
    expect(&dx, want, old, a, b, 1e4);
    free(xv), free(g), free(old);
    rm(&x), rm(&y), rm(&dy), rm(&dx), rm(&yt);
}
END_TEST

START_TEST(test_pooling_forward_and_backward)
{
    static const int modes[] = {CUDNN_POOLING_MAX, CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING,
                                CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING};
    int mode = modes[_i % 3], dtype = _i < 3 ? CUDNN_DATA_FLOAT : CUDNN_DATA_DOUBLE;
    cudnnPoolingDescriptor_t pd;
    CK_DOK(cudnnCreatePoolingDescriptor(&pd));
    CK_DOK(cudnnSetPooling2dDescriptor(pd, mode, CUDNN_NOT_PROPAGATE_NAN, 3, 2, 1, 1, 2, 2));
    tens x = mk4(dtype, NHWC, 2, 3, 7, 6);
    int n, c, hh, w;
    CK_DOK(cudnnGetPooling2dForwardOutputDim(pd, x.d, &n, &c, &hh, &w));
    ck_assert(hh == 4 && w == 4);
    tens y = mk4(dtype, PADDED, n, c, hh, w);
    double *xv = snap(&x), *old = snap(&y), *want = malloc(sizeof *want * (size_t)count(&y));
    int idx[4] = {0};
    do {
        double mx = -1e300, s = 0;
        int cnt = 0;
        for (int r = 0; r < 3; r++)
            for (int q = 0; q < 2; q++) {
                int ih = idx[2] * 2 - 1 + r, iw = idx[3] * 2 - 1 + q;
                if (ih < 0 || ih >= 7 || iw < 0 || iw >= 6)
                    continue;
                double v = xv[((idx[0] * 3 + idx[1]) * 7 + ih) * 6 + iw];
                mx = fmax(mx, v), s += v, cnt++;
            }
        want[dense(&y, idx)] = mode == CUDNN_POOLING_MAX ? mx
                               : mode == CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING ? s / 6 : s / cnt;
    } while (next(4, y.dims, idx));
    double ad = 1.5, bd = -0.5;
    float af = 1.5f, bf = -0.5f;
    int dbl = dtype == CUDNN_DATA_DOUBLE;
    CK_DOK(cudnnPoolingForward(h, pd, dbl ? (void *)&ad : (void *)&af, x.d, x.p, dbl ? (void *)&bd : (void *)&bf,
                               y.d, y.p));
    expect(&y, want, old, 1.5, -0.5, 1);
    if (dbl) { /* backward by differences (random data: no ties) */
        double one = 1, zero = 0, eps = 1e-7;
        CK_DOK(cudnnPoolingForward(h, pd, &one, x.d, x.p, &zero, y.d, y.p));
        tens dy = mk4(dtype, NCHW, n, c, hh, w), dx = mk4(dtype, PADDED, 2, 3, 7, 6), yt = mk4(dtype, NCHW, n, c, hh, w);
        double *g = snap(&dy), *oldx = snap(&dx), *wx = malloc(sizeof *wx * (size_t)count(&x));
        CK_DOK(cudnnPoolingBackward(h, pd, &ad, y.d, y.p, dy.d, dy.p, x.d, x.p, &bd, dx.d, dx.p));
        int j[4] = {0};
        do {
            double v = get(&x, j), l[2];
            for (int sgn = 0; sgn < 2; sgn++) {
                put(&x, j, v + (sgn ? -eps : eps));
                CK_DOK(cudnnPoolingForward(h, pd, &one, x.d, x.p, &zero, yt.d, yt.p));
                double *yv = snap(&yt);
                l[sgn] = 0;
                for (int i = 0; i < count(&yt); i++)
                    l[sgn] += g[i] * yv[i];
                free(yv);
            }
            put(&x, j, v);
            wx[dense(&x, j)] = (l[0] - l[1]) / (2 * eps);
        } while (next(4, x.dims, j));
        expect(&dx, wx, oldx, ad, bd, 1e5);
        free(g), free(oldx), free(wx);
        rm(&dy), rm(&dx), rm(&yt);
    }
    free(xv), free(old), free(want);
    rm(&x), rm(&y);
    cudnnDestroyPoolingDescriptor(pd);
}
END_TEST

START_TEST(test_tensor_ops)
{
    const int cd[4] = {2, 3, 4, 5}, bd[4] = {1, 3, 1, 5};
    tens A = mk(CUDNN_DATA_FLOAT, NHWC, 4, cd), B = mk(CUDNN_DATA_FLOAT, NCHW, 4, bd), C = mk(CUDNN_DATA_FLOAT, PADDED, 4, cd);
    int k[4] = {0};
    do /* A >= 0 keeps the square roots real */
        put(&A, k, fabs(get(&A, k)));
    while (next(4, cd, k));
    double *av = snap(&A), *bv = snap(&B), *old = snap(&C), want[120];
    float a1 = 0.5f, a2 = -2.0f, be = 0.25f;
    cudnnOpTensorDescriptor_t od;
    CK_DOK(cudnnCreateOpTensorDescriptor(&od));
    for (int op = CUDNN_OP_TENSOR_ADD; op <= CUDNN_OP_TENSOR_NOT; op++) {
        CK_DOK(cudnnSetOpTensorDescriptor(od, op, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN));
        int idx[4] = {0};
        do {
            int i = (int)dense(&C, idx), bi = (idx[1] * 5 + idx[3]);
            double x = a1 * av[i], y = a2 * bv[bi];
            want[i] = op == CUDNN_OP_TENSOR_ADD ? x + y : op == CUDNN_OP_TENSOR_MUL ? x * y
                    : op == CUDNN_OP_TENSOR_MIN ? fmin(x, y) : op == CUDNN_OP_TENSOR_MAX ? fmax(x, y)
                    : op == CUDNN_OP_TENSOR_SQRT ? sqrt(x) : 1 - x;
        } while (next(4, cd, idx));
        double *o = snap(&C);
        CK_DOK(cudnnOpTensor(h, od, &a1, A.d, A.p, &a2, B.d, B.p, &be, C.d, C.p));
        expect(&C, want, o, 1, be, 1);
        free(o);
    }
    /* AddTensor with a broadcast bias, Set, Scale, Transform NHWC -> padded NCHW. */
    double *o = snap(&C);
    int idx[4] = {0};
    do
        want[dense(&C, idx)] = bv[idx[1] * 5 + idx[3]];
    while (next(4, cd, idx));
    CK_DOK(cudnnAddTensor(h, &a1, B.d, B.p, &be, C.d, C.p));
    expect(&C, want, o, a1, be, 1);
    float v = 3.0f, sc = -0.5f;
    CK_DOK(cudnnSetTensor(h, C.d, C.p, &v));
    for (int i = 0; i < 120; i++)
        want[i] = 3.0;
    expect(&C, want, NULL, 1, 0, 1);
    CK_DOK(cudnnScaleTensor(h, C.d, C.p, &sc));
    expect(&C, want, NULL, -0.5, 0, 1);
    free(o);
    o = snap(&C);
    double *an = snap(&A);
    CK_DOK(cudnnTransformTensor(h, &a1, A.d, A.p, &be, C.d, C.p));
    expect(&C, an, o, a1, be, 1);
    free(o), free(an), free(av), free(bv), free(old);
    cudnnDestroyOpTensorDescriptor(od);
    rm(&A), rm(&B), rm(&C);
}
END_TEST

/* --- batch normalisation --- */

START_TEST(test_batchnorm_training_inference_backward)
{
    int mode = _i ? CUDNN_BATCHNORM_PER_ACTIVATION : CUDNN_BATCHNORM_SPATIAL;
    const int dims[4] = {3, 2, 3, 2};
    tens x = mk(CUDNN_DATA_DOUBLE, NHWC, 4, dims), y = mk(CUDNN_DATA_DOUBLE, NCHW, 4, dims);
    cudnnTensorDescriptor_t bd;
    CK_DOK(cudnnCreateTensorDescriptor(&bd));
    CK_DOK(cudnnDeriveBNTensorDescriptor(bd, x.d, mode));
    int pn[4], ps[4], nb;
    cudnnDataType_t dt;
    CK_DOK(cudnnGetTensorNdDescriptor(bd, 4, &dt, &nb, pn, ps));
    tens sc = mk(CUDNN_DATA_DOUBLE, NCHW, 4, pn), bi = mk(CUDNN_DATA_DOUBLE, NCHW, 4, pn);
    tens rm_ = mk(CUDNN_DATA_DOUBLE, NCHW, 4, pn), rv = mk(CUDNN_DATA_DOUBLE, NCHW, 4, pn);
    tens sm = mk(CUDNN_DATA_DOUBLE, NCHW, 4, pn), si = mk(CUDNN_DATA_DOUBLE, NCHW, 4, pn);
    int slots = (int)count(&sc), m = 36 / slots;
    double *xv = snap(&x), *s = snap(&sc), *b = snap(&bi), *rm0 = snap(&rm_), *rv0 = snap(&rv);
    double mean[12] = {0}, var[12] = {0}, want[36], one = 1, zero = 0, eps = 1e-3, f = 0.1;
    /* slot of dense index i (n, c, h, w) */
#define SLOT(i) (mode == CUDNN_BATCHNORM_SPATIAL ? ((i) / 6) % 2 : (i) % 12)
    for (int i = 0; i < 36; i++)
        mean[SLOT(i)] += xv[i] / m;
    for (int i = 0; i < 36; i++)
        var[SLOT(i)] += (xv[i] - mean[SLOT(i)]) * (xv[i] - mean[SLOT(i)]) / m;
    for (int i = 0; i < 36; i++)
        want[i] = s[SLOT(i)] * (xv[i] - mean[SLOT(i)]) / sqrt(var[SLOT(i)] + eps) + b[SLOT(i)];
    nanfill(&y);
    CK_DOK(cudnnBatchNormalizationForwardTraining(h, mode, &one, &zero, x.d, x.p, y.d, y.p, bd, sc.p, bi.p, f, rm_.p,
                                                  rv.p, eps, sm.p, si.p));
    expect(&y, want, NULL, 1, 0, 1);
    double wm[12] = {0}, wv[12] = {0}, ws[12] = {0}, wi[12] = {0};
    for (int k = 0; k < slots; k++) {
        wm[k] = (1 - f) * rm0[k] + f * mean[k];
        wv[k] = (1 - f) * rv0[k] + f * var[k] * m / (m - 1);
        ws[k] = mean[k];
        wi[k] = 1 / sqrt(var[k] + eps);
    }
    expect(&rm_, wm, NULL, 1, 0, 1);
    expect(&rv, wv, NULL, 1, 0, 1);
    expect(&sm, ws, NULL, 1, 0, 1);
    expect(&si, wi, NULL, 1, 0, 1);
    /* Inference with the batch statistics as estimates gives the same y. */
    for (int k = 0; k < slots; k++) {
        int j[4] = {0, mode == CUDNN_BATCHNORM_SPATIAL ? k : k / 6, mode == CUDNN_BATCHNORM_SPATIAL ? 0 : (k / 2) % 3,
                    mode == CUDNN_BATCHNORM_SPATIAL ? 0 : k % 2};
        put(&rm_, j, mean[k]);
        put(&rv, j, var[k]);
    }
    double *oldy = snap(&y), a = 0.5, be = 0.5;
    CK_DOK(cudnnBatchNormalizationForwardInference(h, mode, &a, &be, x.d, x.p, y.d, y.p, bd, sc.p, bi.p, rm_.p, rv.p,
                                                   eps));
    expect(&y, want, oldy, a, be, 1);
    /* Backward against differences of the training forward pass (saved stats and not). */
    tens dy = mk(CUDNN_DATA_DOUBLE, PADDED, 4, dims), dx = mk(CUDNN_DATA_DOUBLE, NHWC, 4, dims);
    tens ds = mk(CUDNN_DATA_DOUBLE, NCHW, 4, pn), db = mk(CUDNN_DATA_DOUBLE, NCHW, 4, pn);
    double *g = snap(&dy), *oldx = snap(&dx), *olds = snap(&ds), *oldb = snap(&db), h2 = 1e-6;
    CK_DOK(cudnnBatchNormalizationBackward(h, mode, &a, &be, &one, &zero, x.d, x.p, dy.d, dy.p, dx.d, dx.p, bd, sc.p,
                                           ds.p, db.p, eps, _i ? NULL : sm.p, _i ? NULL : si.p));
    double wx[36], wsd[12] = {0}, wbd[12] = {0};
    int idx[4] = {0};
    do {
        double v = get(&x, idx), l[2];
        for (int sgn = 0; sgn < 2; sgn++) {
            put(&x, idx, v + (sgn ? -h2 : h2));
            CK_DOK(cudnnBatchNormalizationForwardTraining(h, mode, &one, &zero, x.d, x.p, y.d, y.p, bd, sc.p, bi.p, f,
                                                          NULL, NULL, eps, NULL, NULL));
            double *yv = snap(&y);
            l[sgn] = 0;
            for (int i = 0; i < 36; i++)
                l[sgn] += g[i] * yv[i];
            free(yv);
        }
        put(&x, idx, v);
        wx[dense(&x, idx)] = (l[0] - l[1]) / (2 * h2);
    } while (next(4, dims, idx));
    expect(&dx, wx, oldx, a, be, 1e4);
    for (int i = 0; i < 36; i++) {
        wsd[SLOT(i)] += g[i] * (xv[i] - mean[SLOT(i)]) / sqrt(var[SLOT(i)] + eps);
        wbd[SLOT(i)] += g[i];
    }
    expect(&ds, wsd, NULL, 1, 0, 1);
    expect(&db, wbd, NULL, 1, 0, 1);
#undef SLOT
    free(xv), free(s), free(b), free(rm0), free(rv0), free(oldy), free(g), free(oldx), free(olds), free(oldb);
    rm(&x), rm(&y), rm(&sc), rm(&bi), rm(&rm_), rm(&rv), rm(&sm), rm(&si), rm(&dy), rm(&dx), rm(&ds), rm(&db);
    cudnnDestroyTensorDescriptor(bd);
}
END_TEST

/* The rules of the dropout, spatial transformer and CTC loss descriptors, and of
 * the CTC loss's host arrays (common/crm_dnn_*_desc.h, shared with the shim). */
START_TEST(test_dropout_st_ctc_rules)
{
    cudnnDropoutDescriptor_t dd;
    float rate;
    void *states;
    unsigned long long seed;
    CK_DOK(cudnnCreateDropoutDescriptor(&dd));
    CK_DNN(cudnnSetDropoutDescriptor(dd, h, 1.5f, NULL, 0, 1), CUDNN_STATUS_BAD_PARAM);
    CK_DNN(cudnnSetDropoutDescriptor(dd, h, NAN, NULL, 0, 1), CUDNN_STATUS_BAD_PARAM);
    CK_DNN(cudnnRestoreDropoutDescriptor(dd, h, 0.5f, (void *)16, 0, 1), CUDNN_STATUS_BAD_PARAM); /* no bytes */
    CK_DNN(cudnnSetDropoutDescriptor(dd, NULL, 0.5f, NULL, 0, 1), CUDNN_STATUS_BAD_PARAM);       /* no handle */
    CK_DOK(cudnnSetDropoutDescriptor(dd, h, 0.25f, NULL, 0, 9)); /* the rate alone */
    CK_DOK(cudnnGetDropoutDescriptor(dd, h, &rate, &states, &seed));
    ck_assert(rate == 0.25f && states == NULL && seed == 9);
    CK_DOK(cudnnDestroyDropoutDescriptor(dd));

    cudnnSpatialTransformerDescriptor_t sd;
    const int dims[5] = {2, 3, 4, 5, 1};
    CK_DOK(cudnnCreateSpatialTransformerDescriptor(&sd));
    CK_DNN(cudnnSetSpatialTransformerNdDescriptor(sd, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 5, dims),
           CUDNN_STATUS_BAD_PARAM);
    CK_DNN(cudnnSetSpatialTransformerNdDescriptor(sd, (cudnnSamplerType_t)1, CUDNN_DATA_FLOAT, 4, dims),
           CUDNN_STATUS_BAD_PARAM);
    CK_DNN(cudnnSetSpatialTransformerNdDescriptor(sd, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_INT8, 4, dims),
           CUDNN_STATUS_NOT_SUPPORTED);
    CK_DNN(cudnnSpatialTfGridGeneratorForward(h, sd, NULL, NULL), CUDNN_STATUS_BAD_PARAM); /* never set */
    CK_DOK(cudnnSetSpatialTransformerNdDescriptor(sd, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_DOUBLE, 4, dims));
    CK_DOK(cudnnDestroySpatialTransformerDescriptor(sd));

    cudnnCTCLossDescriptor_t cd;
    cudnnDataType_t dt;
    cudnnLossNormalizationMode_t norm;
    cudnnCTCGradMode_t gm;
    int maxl;
    CK_DOK(cudnnCreateCTCLossDescriptor(&cd));
    CK_DOK(cudnnGetCTCLossDescriptor_v9(cd, &dt, &norm, &gm, &maxl)); /* Create's defaults */
    ck_assert(dt == CUDNN_DATA_FLOAT && norm == CUDNN_LOSS_NORMALIZATION_NONE && gm == CUDNN_CTC_ZERO_OOB_GRADIENTS);
    CK_DNN(cudnnSetCTCLossDescriptor(cd, CUDNN_DATA_DOUBLE), CUDNN_STATUS_NOT_SUPPORTED);
    CK_DNN(cudnnSetCTCLossDescriptor_v9(cd, CUDNN_DATA_FLOAT, (cudnnLossNormalizationMode_t)2,
                                        CUDNN_CTC_ZERO_OOB_GRADIENTS, 8), CUDNN_STATUS_BAD_PARAM);
    CK_DNN(cudnnSetCTCLossDescriptor_v9(cd, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_SOFTMAX,
                                        CUDNN_CTC_ZERO_OOB_GRADIENTS, 0), CUDNN_STATUS_BAD_PARAM);
    /* T = 3 steps, N = 2 sequences, A = 4 symbols */
    cudnnTensorDescriptor_t pd;
    const int pdims[3] = {3, 2, 4}, pstr[3] = {8, 4, 1};
    size_t ws;
    CK_DOK(cudnnCreateTensorDescriptor(&pd));
    CK_DOK(cudnnSetTensorNdDescriptor(pd, CUDNN_DATA_FLOAT, 3, pdims, pstr));
    const int lens[2] = {1, 2}, ins[2] = {3, 2}, ok[3] = {1, 2, 3}, blank[3] = {1, 0, 3}, big[3] = {1, 2, 4};
    const int long_in[2] = {3, 4}, long_label[2] = {257, 0};
    CK_DOK(cudnnGetCTCLossWorkspaceSize(h, pd, pd, ok, lens, ins, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, cd, &ws));
    CK_DNN(cudnnGetCTCLossWorkspaceSize(h, pd, pd, blank, lens, ins, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, cd, &ws),
           CUDNN_STATUS_BAD_PARAM); /* the blank among the labels */
    CK_DNN(cudnnGetCTCLossWorkspaceSize(h, pd, pd, big, lens, ins, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, cd, &ws),
           CUDNN_STATUS_BAD_PARAM); /* a label past the alphabet */
    CK_DNN(cudnnGetCTCLossWorkspaceSize(h, pd, pd, ok, lens, long_in, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, cd, &ws),
           CUDNN_STATUS_BAD_PARAM); /* an input longer than T */
    CK_DNN(cudnnGetCTCLossWorkspaceSize(h, pd, pd, ok, long_label, ins, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, cd, &ws),
           CUDNN_STATUS_BAD_PARAM); /* more labels than cuDNN takes */
    CK_DOK(cudnnDestroyTensorDescriptor(pd));
    CK_DOK(cudnnDestroyCTCLossDescriptor(cd));
}
END_TEST

static Suite *crm_dnn_emu_suite(void)
{
    Suite *s = suite_create("dnn_emu");
    TCase *d = tcase_create("descriptors");
    tcase_add_checked_fixture(d, setup, teardown);
    tcase_add_test(d, test_tensor_descriptor_rules);
    tcase_add_test(d, test_filter_conv_pool_descriptor_rules);
    tcase_add_test(d, test_dropout_st_ctc_rules);
    suite_add_tcase(s, d);
    TCase *c = tcase_create("compute");
    tcase_add_checked_fixture(c, setup, teardown);
    tcase_set_timeout(c, 120);
    int nconv = (int)(sizeof conv_cfgs / sizeof conv_cfgs[0]);
    tcase_add_loop_test(c, test_conv_forward_matches_reference, 0, nconv);
    tcase_add_loop_test(c, test_conv_backward_matches_finite_differences, 0, nconv);
    tcase_add_test(c, test_conv_shape_errors);
    tcase_add_loop_test(c, test_activation_forward_and_backward, 0, 7);
    tcase_add_loop_test(c, test_softmax_forward_and_backward, 0, 6);
    tcase_add_loop_test(c, test_pooling_forward_and_backward, 0, 6);
    tcase_add_test(c, test_tensor_ops);
    tcase_add_loop_test(c, test_batchnorm_training_inference_backward, 0, 2);
    suite_add_tcase(s, c);
    return s;
}

CRM_CHECK_MAIN(crm_dnn_emu_suite)
