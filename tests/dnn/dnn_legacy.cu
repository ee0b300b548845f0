// dnn_legacy.cu -- self-checking program for cuDNN's legacy calls beyond the
// network of dnn_net.cu: local response normalisation (the LRN descriptor's rules,
// forward against the formula, backward against finite differences of the host
// forward), the fused convolution + bias + activation, the algorithm searches that
// run on the caller's data (Find*AlgorithmEx), tensor reductions, and half data.
// Built like an application (-lcudnn); prints "PASS dnn_legacy".
#include <cstdlib>
#include "dnn_check.h"

struct lrn_params {
    unsigned n;
    double alpha, beta, k;
};

// Host LRN across channels, cuDNN's definition (cudnn_ops.h): window of channel c
// from c - floor((n-1)/2) to c + n-1-floor((n-1)/2), clipped.
static vec ref_lrn(const lrn_params &p, const tensor &t, const vec &x)
{
    int behind = (int)(p.n - 1) / 2, ahead = (int)p.n - 1 - behind;
    vec y(x.size());
    for (int n = 0; n < t.n; n++)
        for (int c = 0; c < t.c; c++)
            for (int i = 0; i < t.h; i++)
                for (int j = 0; j < t.w; j++) {
                    double sum = 0;
                    for (int q = c - behind; q <= c + ahead; q++)
                        if (q >= 0 && q < t.c)
                            sum += x[t.at(n, q, i, j)] * x[t.at(n, q, i, j)];
                    double s = p.k + p.alpha / p.n * sum;
                    y[t.at(n, c, i, j)] = x[t.at(n, c, i, j)] * std::pow(s, -p.beta);
                }
    return y;
}

// d(sum of dy * lrn(x)) / dx by central differences of the host forward.
static vec numeric_lrn_grad(const lrn_params &p, const tensor &t, const vec &dy)
{
    vec g(t.size()), x = t.host;
    const double h = 1e-5;
    for (size_t e = 0; e < x.size(); e++) {
        double keep = x[e], up = 0, down = 0;
        x[e] = keep + h;
        vec yu = ref_lrn(p, t, x);
        x[e] = keep - h;
        vec yd = ref_lrn(p, t, x);
        x[e] = keep;
        for (size_t i = 0; i < x.size(); i++) {
            up += dy[i] * yu[i];
            down += dy[i] * yd[i];
        }
        g[e] = (up - down) / (2 * h);
    }
    return g;
}

static void lrn_descriptor()
{
    cudnnLRNDescriptor_t l;
    unsigned n;
    double a, b, k;
    CT_DOK(cudnnCreateLRNDescriptor(&l));
    CT_DOK(cudnnGetLRNDescriptor(l, &n, &a, &b, &k));
    CT_TRUE(n == 5 && a == 1e-4 && b == 0.75 && k == 2.0); // cuDNN's documented defaults
    CT_DNN(cudnnSetLRNDescriptor(l, 0, 1e-4, 0.75, 2.0), CUDNN_STATUS_BAD_PARAM);
    CT_DNN(cudnnSetLRNDescriptor(l, CUDNN_LRN_MAX_N + 1, 1e-4, 0.75, 2.0), CUDNN_STATUS_BAD_PARAM);
    CT_DNN(cudnnSetLRNDescriptor(l, 5, 1e-4, 0.75, 1e-6), CUDNN_STATUS_BAD_PARAM);
    CT_DNN(cudnnSetLRNDescriptor(l, 5, 1e-4, 0.001, 2.0), CUDNN_STATUS_BAD_PARAM);
    CT_DOK(cudnnGetLRNDescriptor(l, &n, &a, &b, &k));
    CT_TRUE(n == 5 && b == 0.75); // a refused Set changes nothing
    CT_DOK(cudnnSetLRNDescriptor(l, 3, 0.5, 0.6, 1.5));
    CT_DOK(cudnnGetLRNDescriptor(l, &n, &a, &b, &k));
    CT_TRUE(n == 3 && a == 0.5 && b == 0.6 && k == 1.5);
    CT_DNN(cudnnGetLRNDescriptor(l, nullptr, &a, &b, &k), CUDNN_STATUS_BAD_PARAM);
    CT_DOK(cudnnDestroyLRNDescriptor(l));
}

// Forward and backward for one window width (odd and even widths place the window
// differently), with alpha/beta blending into an output that holds values.
static void lrn_pass(cudnnHandle_t h, const lrn_params &p)
{
    const float one = 1, zero = 0, two = 2, half = 0.5f;
    tensor x = make(2, 7, 3, 2, true), y = make(2, 7, 3, 2, true), dy = make(2, 7, 3, 2, true),
           dx = make(2, 7, 3, 2, false);
    cudnnLRNDescriptor_t l;
    CT_DOK(cudnnCreateLRNDescriptor(&l));
    CT_DOK(cudnnSetLRNDescriptor(l, p.n, p.alpha, p.beta, p.k));
    vec want = ref_lrn(p, x, x.host), old = y.host;
    CT_DOK(cudnnLRNCrossChannelForward(h, l, CUDNN_LRN_CROSS_CHANNEL_DIM1, &two, x.d, x.dev, &half, y.d, y.dev));
    vec blended(want.size());
    for (size_t i = 0; i < want.size(); i++)
        blended[i] = 2 * want[i] + 0.5 * old[i];
    check("lrn forward, blended", y, blended);
    CT_DOK(cudnnLRNCrossChannelForward(h, l, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, x.d, x.dev, &zero, y.d, y.dev));
    check("lrn forward", y, want);
    CT_DOK(cudnnLRNCrossChannelBackward(h, l, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, y.d, y.dev, dy.d, dy.dev, x.d,
                                        x.dev, &zero, dx.d, dx.dev));
    check("lrn backward", dx, numeric_lrn_grad(p, x, dy.host));
    CT_DOK(cudnnDestroyLRNDescriptor(l));
    for (tensor *t : {&x, &y, &dy, &dx})
        release(*t);
}

static void lrn_refusals(cudnnHandle_t h)
{
    const float one = 1, zero = 0;
    tensor x = make(1, 4, 2, 2, true), y = make(1, 4, 2, 2, false), small = make(1, 3, 2, 2, false);
    cudnnLRNDescriptor_t l;
    CT_DOK(cudnnCreateLRNDescriptor(&l));
    expect_refused("lrn mode", cudnnLRNCrossChannelForward(h, l, (cudnnLRNMode_t)1, &one, x.d, x.dev, &zero, y.d,
                                                           y.dev), CUDNN_STATUS_BAD_PARAM);
    expect_refused("lrn shapes", cudnnLRNCrossChannelForward(h, l, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, x.d, x.dev,
                                                             &zero, small.d, small.dev), CUDNN_STATUS_BAD_PARAM);
    CT_DNN(cudnnLRNCrossChannelForward(h, nullptr, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, x.d, x.dev, &zero, y.d, y.dev),
           CUDNN_STATUS_BAD_PARAM);
    CT_DOK(cudnnDestroyLRNDescriptor(l));
    for (tensor *t : {&x, &y, &small})
        release(*t);
}

// The Ex searches run each algorithm on the caller's data: results come sorted by
// time among the usable ones, the inputs are left as they were, and the fastest
// algorithm then computes the right result (forward against the host reference;
// the backward passes at least run with their first choice).
static void find_ex(cudnnHandle_t h)
{
    const int N = 2, C = 2, H = 4, W = 4, K = 3, R = 3;
    const float one = 1, zero = 0;
    tensor x = make(N, C, H, W, true), y = make(N, K, H, W, false), dy = make(N, K, H, W, true),
           dx = make(N, C, H, W, false);
    cudnnFilterDescriptor_t fd;
    cudnnConvolutionDescriptor_t cd;
    CT_DOK(cudnnCreateFilterDescriptor(&fd));
    CT_DOK(cudnnSetFilter4dDescriptor(fd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, K, C, R, R));
    CT_DOK(cudnnCreateConvolutionDescriptor(&cd));
    CT_DOK(cudnnSetConvolution2dDescriptor(cd, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    vec wv((size_t)K * C * R * R);
    for (auto &v : wv)
        v = rnd();
    std::vector<float> wf(wv.begin(), wv.end());
    float *w, *dw;
    CT_OK(cudaMalloc((void **)&w, wf.size() * sizeof(float)));
    CT_OK(cudaMalloc((void **)&dw, wf.size() * sizeof(float)));
    CT_OK(cudaMemcpy(w, wf.data(), wf.size() * sizeof(float), cudaMemcpyHostToDevice));
    const size_t ws_size = 1 << 20;
    void *ws;
    CT_OK(cudaMalloc(&ws, ws_size));
    cudnnConvolutionFwdAlgoPerf_t fp[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int n = 0;
    CT_DOK(cudnnFindConvolutionForwardAlgorithmEx(h, x.d, x.dev, fd, w, cd, y.d, y.dev,
                                                  CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &n, fp, ws, ws_size));
    CT_TRUE(n >= 1 && fp[0].status == CUDNN_STATUS_SUCCESS && fp[0].time >= 0);
    for (int i = 1; i < n; i++)
        if (fp[i].status == CUDNN_STATUS_SUCCESS)
            CT_TRUE(fp[i - 1].status == CUDNN_STATUS_SUCCESS && fp[i - 1].time <= fp[i].time);
    check("find Ex leaves x", x, x.host);
    CT_DOK(cudnnConvolutionForward(h, &one, x.d, x.dev, fd, w, cd, fp[0].algo, ws, ws_size, &zero, y.d, y.dev));
    check("forward with the fastest algorithm", y, ref_conv(x, wv, K, R));
    cudnnConvolutionBwdDataAlgoPerf_t bp[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    CT_DOK(cudnnFindConvolutionBackwardDataAlgorithmEx(h, fd, w, dy.d, dy.dev, cd, dx.d, dx.dev, 2, &n, bp, ws,
                                                       ws_size));
    CT_TRUE(n >= 1 && n <= 2 && bp[0].status == CUDNN_STATUS_SUCCESS);
    CT_DOK(cudnnConvolutionBackwardData(h, &one, fd, w, dy.d, dy.dev, cd, bp[0].algo, ws, ws_size, &zero, dx.d,
                                        dx.dev));
    cudnnConvolutionBwdFilterAlgoPerf_t wp[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    CT_DOK(cudnnFindConvolutionBackwardFilterAlgorithmEx(h, x.d, x.dev, dy.d, dy.dev, cd, fd, dw,
                                                         CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &n, wp, ws, ws_size));
    CT_TRUE(n >= 1 && wp[0].status == CUDNN_STATUS_SUCCESS);
    check("find Ex leaves dy", dy, dy.host);
    CT_DNN(cudnnFindConvolutionForwardAlgorithmEx(h, x.d, x.dev, fd, w, cd, y.d, y.dev, 0, &n, fp, ws, ws_size),
           CUDNN_STATUS_BAD_PARAM);
    for (void *p : {(void *)w, (void *)dw, ws})
        CT_OK(cudaFree(p));
    CT_DOK(cudnnDestroyFilterDescriptor(fd));
    CT_DOK(cudnnDestroyConvolutionDescriptor(cd));
    for (tensor *t : {&x, &y, &dy, &dx})
        release(*t);
}

// y = relu(alpha1 * conv(x) + alpha2 * z + bias), z in y's memory (cuDNN allows it).
static void conv_bias_act(cudnnHandle_t h)
{
    const int N = 2, C = 3, H = 5, W = 5, K = 4, R = 3;
    const float a1 = 0.75f, a2 = -0.5f, zero = 0;
    tensor x = make(N, C, H, W, true), y = make(N, K, H, W, true), b = make(1, K, 1, 1, true);
    cudnnFilterDescriptor_t fd;
    cudnnConvolutionDescriptor_t cd;
    cudnnActivationDescriptor_t ad;
    CT_DOK(cudnnCreateFilterDescriptor(&fd));
    CT_DOK(cudnnSetFilter4dDescriptor(fd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, K, C, R, R));
    CT_DOK(cudnnCreateConvolutionDescriptor(&cd));
    CT_DOK(cudnnSetConvolution2dDescriptor(cd, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CT_DOK(cudnnCreateActivationDescriptor(&ad));
    CT_DOK(cudnnSetActivationDescriptor(ad, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
    vec wv((size_t)K * C * R * R);
    for (auto &v : wv)
        v = rnd();
    std::vector<float> wf(wv.begin(), wv.end());
    float *w;
    CT_OK(cudaMalloc((void **)&w, wf.size() * sizeof(float)));
    CT_OK(cudaMemcpy(w, wf.data(), wf.size() * sizeof(float), cudaMemcpyHostToDevice));
    vec conv = ref_conv(x, wv, K, R), want(y.size());
    for (size_t i = 0; i < want.size(); i++) {
        double v = a1 * conv[i] + a2 * y.host[i] + b.host[(i / (H * W)) % K];
        want[i] = v > 0 ? v : 0;
    }
    cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    size_t ws_size = 0;
    void *ws = nullptr;
    CT_DOK(cudnnGetConvolutionForwardWorkspaceSize(h, x.d, fd, cd, y.d, algo, &ws_size));
    if (ws_size)
        CT_OK(cudaMalloc(&ws, ws_size));
    CT_DOK(cudnnConvolutionBiasActivationForward(h, &a1, x.d, x.dev, fd, w, cd, algo, ws, ws_size, &a2, y.d, y.dev,
                                                 b.d, b.dev, ad, y.d, y.dev));
    check("conv + bias + relu, z aliasing y", y, want);

    // TANH is not among the fused activations; a bias of the wrong shape is refused
    CT_DOK(cudnnSetActivationDescriptor(ad, CUDNN_ACTIVATION_TANH, CUDNN_NOT_PROPAGATE_NAN, 0.0));
    expect_refused("tanh", cudnnConvolutionBiasActivationForward(h, &a1, x.d, x.dev, fd, w, cd, algo, ws, ws_size,
                                                                 &zero, y.d, y.dev, b.d, b.dev, ad, y.d, y.dev),
                   CUDNN_STATUS_NOT_SUPPORTED);
    CT_DOK(cudnnSetActivationDescriptor(ad, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
    expect_refused("bias shape", cudnnConvolutionBiasActivationForward(h, &a1, x.d, x.dev, fd, w, cd, algo, ws,
                                                                       ws_size, &zero, y.d, y.dev, x.d, x.dev, ad,
                                                                       y.d, y.dev),
                   CUDNN_STATUS_BAD_PARAM);
    if (ws)
        CT_OK(cudaFree(ws));
    CT_OK(cudaFree(w));
    CT_DOK(cudnnDestroyFilterDescriptor(fd));
    CT_DOK(cudnnDestroyConvolutionDescriptor(cd));
    CT_DOK(cudnnDestroyActivationDescriptor(ad));
    for (tensor *t : {&x, &y, &b})
        release(*t);
}

// Host reduction of a (NCHW) onto c's shape: each c size is a's or 1. Positions are
// row-major over the reduced dimensions, as cuDNN's flattened indices count.
struct reduced {
    vec value;
    std::vector<int> at;
};

static reduced ref_reduce(cudnnReduceTensorOp_t op, const tensor &a, const int *cd)
{
    const int ad[4] = {a.n, a.c, a.h, a.w};
    int span[4], count = 1;
    for (int i = 0; i < 4; i++)
        count *= span[i] = cd[i] == ad[i] ? 1 : ad[i];
    reduced r{vec((size_t)cd[0] * cd[1] * cd[2] * cd[3]), std::vector<int>((size_t)cd[0] * cd[1] * cd[2] * cd[3])};
    for (size_t e = 0; e < r.value.size(); e++) {
        int ci[4] = {(int)(e / (cd[1] * cd[2] * cd[3])), (int)(e / (cd[2] * cd[3]) % cd[1]),
                     (int)(e / cd[3] % cd[2]), (int)(e % cd[3])};
        double acc = op == CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS ? 1 : op == CUDNN_REDUCE_TENSOR_MIN ? 1e300
                     : op == CUDNN_REDUCE_TENSOR_MAX ? -1e300 : 0;
        int best = 0;
        for (int k = 0; k < count; k++) {
            int ri[4] = {k / (span[1] * span[2] * span[3]), k / (span[2] * span[3]) % span[1], k / span[3] % span[2],
                         k % span[3]};
            double v = a.host[a.at(ci[0] + ri[0], ci[1] + ri[1], ci[2] + ri[2], ci[3] + ri[3])];
            switch (op) {
            case CUDNN_REDUCE_TENSOR_ADD: case CUDNN_REDUCE_TENSOR_AVG: acc += v; break;
            case CUDNN_REDUCE_TENSOR_NORM1: acc += std::fabs(v); break;
            case CUDNN_REDUCE_TENSOR_NORM2: acc += v * v; break;
            case CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS: acc *= v != 0 ? v : 1; break;
            case CUDNN_REDUCE_TENSOR_MIN: if (v < acc) acc = v, best = k; break;
            case CUDNN_REDUCE_TENSOR_MAX: if (v > acc) acc = v, best = k; break;
            default: if (std::fabs(v) > acc) acc = std::fabs(v), best = k; break; // AMAX
            }
        }
        r.value[e] = op == CUDNN_REDUCE_TENSOR_AVG ? acc / count : op == CUDNN_REDUCE_TENSOR_NORM2 ? std::sqrt(acc) : acc;
        r.at[e] = best;
    }
    return r;
}

// One reduction of a onto shape cd through cuDNN, values (and positions where the
// operation has them) against the host's.
static void reduce_case(cudnnHandle_t h, cudnnReduceTensorOp_t op, const tensor &a, const int *cd, bool indices)
{
    const float one = 1, zero = 0, two = 2, half = 0.5f;
    tensor c = make(cd[0], cd[1], cd[2], cd[3], true);
    cudnnReduceTensorDescriptor_t rd;
    CT_DOK(cudnnCreateReduceTensorDescriptor(&rd));
    CT_DOK(cudnnSetReduceTensorDescriptor(rd, op, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN,
                                          indices ? CUDNN_REDUCE_TENSOR_FLATTENED_INDICES
                                                  : CUDNN_REDUCE_TENSOR_NO_INDICES,
                                          CUDNN_32BIT_INDICES));
    size_t isize = 1, wsize = 1;
    CT_DOK(cudnnGetReductionIndicesSize(h, rd, a.d, c.d, &isize));
    CT_DOK(cudnnGetReductionWorkspaceSize(h, rd, a.d, c.d, &wsize));
    bool extreme = op == CUDNN_REDUCE_TENSOR_MIN || op == CUDNN_REDUCE_TENSOR_MAX || op == CUDNN_REDUCE_TENSOR_AMAX;
    CT_TRUE(isize == (indices && extreme ? c.size() * sizeof(int) : 0));
    void *ip = nullptr, *wp = nullptr;
    if (isize)
        CT_OK(cudaMalloc(&ip, isize));
    if (wsize)
        CT_OK(cudaMalloc(&wp, wsize));
    reduced want = ref_reduce(op, a, cd);
    vec blended(c.size());
    for (size_t i = 0; i < c.size(); i++)
        blended[i] = 2 * want.value[i] + 0.5 * c.host[i];
    CT_DOK(cudnnReduceTensor(h, rd, ip, isize, wp, wsize, &two, a.d, a.dev, &half, c.d, c.dev));
    check("reduction, blended", c, blended);
    CT_DOK(cudnnReduceTensor(h, rd, ip, isize, wp, wsize, &one, a.d, a.dev, &zero, c.d, c.dev));
    check("reduction", c, want.value);
    if (isize) {
        std::vector<int> got(c.size());
        CT_OK(cudaMemcpy(got.data(), ip, isize, cudaMemcpyDeviceToHost));
        CT_TRUE(got == want.at);
        CT_OK(cudaFree(ip));
    }
    if (wp)
        CT_OK(cudaFree(wp));
    CT_DOK(cudnnDestroyReduceTensorDescriptor(rd));
    release(c);
}

// A NaN decides MAX with PROPAGATE_NAN and is passed over without it.
static void reduce_nan(cudnnHandle_t h)
{
    const float one = 1, zero = 0, nan = NAN;
    tensor a = make(1, 1, 2, 3, true), c = make(1, 1, 2, 1, false);
    CT_OK(cudaMemcpy(a.dev + 1, &nan, sizeof nan, cudaMemcpyHostToDevice));
    cudnnReduceTensorDescriptor_t rd;
    CT_DOK(cudnnCreateReduceTensorDescriptor(&rd));
    for (cudnnNanPropagation_t p : {CUDNN_PROPAGATE_NAN, CUDNN_NOT_PROPAGATE_NAN}) {
        CT_DOK(cudnnSetReduceTensorDescriptor(rd, CUDNN_REDUCE_TENSOR_MAX, CUDNN_DATA_FLOAT, p,
                                              CUDNN_REDUCE_TENSOR_NO_INDICES, CUDNN_32BIT_INDICES));
        CT_DOK(cudnnReduceTensor(h, rd, nullptr, 0, nullptr, 0, &one, a.d, a.dev, &zero, c.d, c.dev));
        vec got = fetch(c);
        double rest = std::fmax(a.host[0], a.host[2]), other = std::fmax(std::fmax(a.host[3], a.host[4]), a.host[5]);
        CT_TRUE(p == CUDNN_PROPAGATE_NAN ? std::isnan(got[0]) : std::fabs(got[0] - rest) < 1e-6);
        CT_TRUE(std::fabs(got[1] - other) < 1e-6);
    }
    CT_DOK(cudnnDestroyReduceTensorDescriptor(rd));
    release(a);
    release(c);
}

static void reduce_refusals(cudnnHandle_t h)
{
    const float one = 1, zero = 0;
    tensor a = make(2, 3, 4, 5, true), c = make(2, 1, 4, 1, false), bad = make(2, 2, 1, 1, false);
    cudnnReduceTensorDescriptor_t rd;
    CT_DOK(cudnnCreateReduceTensorDescriptor(&rd));
    CT_DNN(cudnnReduceTensor(h, rd, nullptr, 0, nullptr, 0, &one, a.d, a.dev, &zero, c.d, c.dev),
           CUDNN_STATUS_BAD_PARAM); // never set
    CT_DNN(cudnnSetReduceTensorDescriptor(rd, (cudnnReduceTensorOp_t)9, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN,
                                          CUDNN_REDUCE_TENSOR_NO_INDICES, CUDNN_32BIT_INDICES),
           CUDNN_STATUS_BAD_PARAM);
    CT_DOK(cudnnSetReduceTensorDescriptor(rd, CUDNN_REDUCE_TENSOR_MAX, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN,
                                          CUDNN_REDUCE_TENSOR_FLATTENED_INDICES, CUDNN_32BIT_INDICES));
    size_t size = 0;
    CT_DNN(cudnnGetReductionIndicesSize(h, rd, a.d, bad.d, &size), CUDNN_STATUS_BAD_PARAM);
    int *ip;
    CT_OK(cudaMalloc((void **)&ip, c.size() * sizeof(int)));
    expect_refused("indices too small", cudnnReduceTensor(h, rd, ip, sizeof(int), nullptr, 0, &one, a.d, a.dev,
                                                          &zero, c.d, c.dev), CUDNN_STATUS_BAD_PARAM);
    expect_refused("shapes", cudnnReduceTensor(h, rd, ip, c.size() * sizeof(int), nullptr, 0, &one, a.d, a.dev,
                                               &zero, bad.d, bad.dev), CUDNN_STATUS_BAD_PARAM);
    CT_DOK(cudnnSetReduceTensorDescriptor(rd, CUDNN_REDUCE_TENSOR_MAX, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN,
                                          CUDNN_REDUCE_TENSOR_FLATTENED_INDICES, CUDNN_64BIT_INDICES));
    expect_refused("64-bit indices", cudnnReduceTensor(h, rd, ip, c.size() * sizeof(int), nullptr, 0, &one, a.d,
                                                       a.dev, &zero, c.d, c.dev), CUDNN_STATUS_NOT_SUPPORTED);
    CT_OK(cudaFree(ip));
    CT_DOK(cudnnDestroyReduceTensorDescriptor(rd));
    for (tensor *t : {&a, &c, &bad})
        release(*t);
}

static void reductions(cudnnHandle_t h)
{
    tensor a = make(2, 3, 4, 5, true);
    const int spatial[4] = {2, 3, 1, 1}, batch[4] = {1, 3, 4, 5}, mixed[4] = {2, 1, 4, 1}, all[4] = {1, 1, 1, 1},
              chans[4] = {2, 1, 4, 5}, width[4] = {2, 3, 4, 1};
    reduce_case(h, CUDNN_REDUCE_TENSOR_ADD, a, spatial, false);
    reduce_case(h, CUDNN_REDUCE_TENSOR_AVG, a, batch, false);
    reduce_case(h, CUDNN_REDUCE_TENSOR_MAX, a, mixed, true);
    reduce_case(h, CUDNN_REDUCE_TENSOR_MIN, a, width, true);
    reduce_case(h, CUDNN_REDUCE_TENSOR_AMAX, a, all, true);
    reduce_case(h, CUDNN_REDUCE_TENSOR_MAX, a, spatial, false); // indices asked for by no one
    reduce_case(h, CUDNN_REDUCE_TENSOR_NORM1, a, width, false);
    reduce_case(h, CUDNN_REDUCE_TENSOR_NORM2, a, chans, false);
    // a zero among the factors: MUL_NO_ZEROS passes over it
    const float z = 0;
    CT_OK(cudaMemcpy(a.dev + 7, &z, sizeof z, cudaMemcpyHostToDevice));
    a.host[7] = 0;
    reduce_case(h, CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS, a, chans, false);
    release(a);
    reduce_nan(h);
    reduce_refusals(h);
}

// Half data: float -> half by TransformTensor, ReLU on the half tensor, and back.
static void half_data(cudnnHandle_t h)
{
    const float one = 1, zero = 0;
    tensor x = make(2, 3, 2, 2, true), y = make(2, 3, 2, 2, false);
    cudnnTensorDescriptor_t hd;
    void *hdev;
    CT_DOK(cudnnCreateTensorDescriptor(&hd));
    CT_DOK(cudnnSetTensor4dDescriptor(hd, CUDNN_TENSOR_NCHW, CUDNN_DATA_HALF, 2, 3, 2, 2));
    CT_OK(cudaMalloc(&hdev, x.size() * 2));
    cudnnActivationDescriptor_t ad;
    CT_DOK(cudnnCreateActivationDescriptor(&ad));
    CT_DOK(cudnnSetActivationDescriptor(ad, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
    CT_DOK(cudnnTransformTensor(h, &one, x.d, x.dev, &zero, hd, hdev));
    CT_DOK(cudnnActivationForward(h, ad, &one, hd, hdev, &zero, hd, hdev));
    CT_DOK(cudnnTransformTensor(h, &one, hd, hdev, &zero, y.d, y.dev));
    vec got = fetch(y);
    for (size_t i = 0; i < got.size(); i++) {
        double want = x.host[i] > 0 ? x.host[i] : 0; // half keeps 11 significant bits
        CT_TRUE(std::fabs(got[i] - want) <= 1e-3 * std::fabs(want) + 1e-7);
    }
    CT_DOK(cudnnDestroyActivationDescriptor(ad));
    CT_DOK(cudnnDestroyTensorDescriptor(hd));
    CT_OK(cudaFree(hdev));
    release(x);
    release(y);
}

int main()
{
    cudnnHandle_t h;
    CT_OK(cudaFree(0));
    CT_DOK(cudnnCreate(&h));
    lrn_descriptor();
    lrn_pass(h, {5, 0.5, 0.75, 2.0});
    lrn_pass(h, {4, 1.5, 0.6, 1.0});
    lrn_refusals(h);
    conv_bias_act(h);
    find_ex(h);
    reductions(h);
    half_data(h);
    CT_OK(cudaDeviceSynchronize());
    CT_DOK(cudnnDestroy(h));
    return ct_finish("dnn_legacy");
}
