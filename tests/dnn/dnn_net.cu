// dnn_net.cu -- self-checking cuDNN program for the end-to-end suite: a small
// network (conv -> bias -> relu -> max-pool -> softmax) forward and backward, batch
// norm, tensor operations, algorithm queries and descriptor rules, every result
// checked against host reference code. Built like an application (-lcudnn).
//
//   dnn_net net        the checks; prints "PASS dnn_net"
//   dnn_net desc N     N rounds of descriptor create/set/get/destroy, then exits
//   dnn_net base       the same program without the descriptor rounds
// (the suite compares the round trips of the last two: descriptors cost none).
#include <cstdlib>
#include "dnn_check.h"

static void descriptor_rounds(int rounds)
{
    for (int r = 0; r < rounds; r++) {
        cudnnTensorDescriptor_t t;
        cudnnFilterDescriptor_t f;
        cudnnConvolutionDescriptor_t c;
        cudnnPoolingDescriptor_t p;
        cudnnActivationDescriptor_t a;
        cudnnOpTensorDescriptor_t o;
        cudnnDataType_t dt;
        int n, ch, h, w, ns, cs, hs, ws;
        CT_DOK(cudnnCreateTensorDescriptor(&t));
        CT_DOK(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, 1 + r % 4, 3, 8, 8));
        CT_DOK(cudnnGetTensor4dDescriptor(t, &dt, &n, &ch, &h, &w, &ns, &cs, &hs, &ws));
        CT_DNN(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, -1, 3, 8, 8), CUDNN_STATUS_BAD_PARAM);
        CT_DOK(cudnnCreateFilterDescriptor(&f));
        CT_DOK(cudnnSetFilter4dDescriptor(f, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, 3, 3, 3));
        CT_DOK(cudnnCreateConvolutionDescriptor(&c));
        CT_DOK(cudnnSetConvolution2dDescriptor(c, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
        CT_DOK(cudnnGetConvolution2dForwardOutputDim(c, t, f, &n, &ch, &h, &w));
        CT_DOK(cudnnCreatePoolingDescriptor(&p));
        CT_DOK(cudnnSetPooling2dDescriptor(p, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 2, 2, 0, 0, 2, 2));
        CT_DOK(cudnnCreateActivationDescriptor(&a));
        CT_DOK(cudnnSetActivationDescriptor(a, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
        CT_DOK(cudnnCreateOpTensorDescriptor(&o));
        CT_DOK(cudnnSetOpTensorDescriptor(o, CUDNN_OP_TENSOR_ADD, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN));
        CT_DOK(cudnnDestroyOpTensorDescriptor(o));
        CT_DOK(cudnnDestroyActivationDescriptor(a));
        CT_DOK(cudnnDestroyPoolingDescriptor(p));
        CT_DOK(cudnnDestroyConvolutionDescriptor(c));
        CT_DOK(cudnnDestroyFilterDescriptor(f));
        CT_DOK(cudnnDestroyTensorDescriptor(t));
    }
}

static void network(cudnnHandle_t h)
{
    const int N = 2, C = 3, H = 6, W = 6, K = 4, R = 3;
    const float one = 1, zero = 0;
    tensor x = make(N, C, H, W, true);
    cudnnFilterDescriptor_t fd;
    CT_DOK(cudnnCreateFilterDescriptor(&fd));
    CT_DOK(cudnnSetFilter4dDescriptor(fd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, K, C, R, R));
    vec wv(K * C * R * R);
    for (auto &v : wv)
        v = rnd();
    std::vector<float> wf(wv.begin(), wv.end());
    float *wdev, *dwdev;
    CT_OK(cudaMalloc((void **)&wdev, wf.size() * 4));
    CT_OK(cudaMalloc((void **)&dwdev, wf.size() * 4));
    CT_OK(cudaMemcpy(wdev, wf.data(), wf.size() * 4, cudaMemcpyHostToDevice));
    cudnnConvolutionDescriptor_t cd;
    CT_DOK(cudnnCreateConvolutionDescriptor(&cd));
    CT_DOK(cudnnSetConvolution2dDescriptor(cd, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CT_DOK(cudnnSetConvolutionMathType(cd, CUDNN_FMA_MATH)); // no TF32 on a real GPU: exact float checks
    int on, oc, oh, ow;
    CT_DOK(cudnnGetConvolution2dForwardOutputDim(cd, x.d, fd, &on, &oc, &oh, &ow));
    CT_TRUE(on == N && oc == K && oh == H && ow == W);
    tensor y = make(N, K, H, W, false), b = make(1, K, 1, 1, true);

    // algorithm and workspace queries
    int count = 0;
    cudnnConvolutionFwdAlgoPerf_t perf[8];
    CT_DOK(cudnnGetConvolutionForwardAlgorithm_v7(h, x.d, fd, cd, y.d, 8, &count, perf));
    CT_TRUE(count >= 1 && perf[0].status == CUDNN_STATUS_SUCCESS);
    CT_DOK(cudnnFindConvolutionForwardAlgorithm(h, x.d, fd, cd, y.d, 8, &count, perf));
    CT_TRUE(count >= 1 && perf[0].status == CUDNN_STATUS_SUCCESS);
    cudnnConvolutionFwdAlgo_t algo = perf[0].algo;
    size_t ws_size = 0;
    CT_DOK(cudnnGetConvolutionForwardWorkspaceSize(h, x.d, fd, cd, y.d, algo, &ws_size));
    void *ws = nullptr;
    if (ws_size)
        CT_OK(cudaMalloc(&ws, ws_size));

    // forward: conv, bias, relu, max-pool 2x2, softmax over channels
    CT_DOK(cudnnConvolutionForward(h, &one, x.d, x.dev, fd, wdev, cd, algo, ws, ws_size, &zero, y.d, y.dev));
    vec yr = ref_conv(x, wv, K, R);
    check("conv forward", y, yr);
    CT_DOK(cudnnAddTensor(h, &one, b.d, b.dev, &one, y.d, y.dev));
    for (size_t i = 0; i < yr.size(); i++)
        yr[i] += b.host[(i / (H * W)) % K];
    check("bias", y, yr);
    cudnnActivationDescriptor_t ad;
    CT_DOK(cudnnCreateActivationDescriptor(&ad));
    CT_DOK(cudnnSetActivationDescriptor(ad, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
    tensor a = make(N, K, H, W, false);
    CT_DOK(cudnnActivationForward(h, ad, &one, y.d, y.dev, &zero, a.d, a.dev));
    vec ar(yr.size());
    for (size_t i = 0; i < yr.size(); i++)
        ar[i] = yr[i] > 0 ? yr[i] : 0;
    check("relu", a, ar);
    cudnnPoolingDescriptor_t pd;
    CT_DOK(cudnnCreatePoolingDescriptor(&pd));
    CT_DOK(cudnnSetPooling2dDescriptor(pd, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 2, 2, 0, 0, 2, 2));
    tensor p = make(N, K, H / 2, W / 2, false);
    CT_DOK(cudnnPoolingForward(h, pd, &one, a.d, a.dev, &zero, p.d, p.dev));
    vec pr(p.size());
    std::vector<int> arg(p.size());
    for (int n = 0; n < N; n++)
        for (int k = 0; k < K; k++)
            for (int i = 0; i < H / 2; i++)
                for (int j = 0; j < W / 2; j++) {
                    int best = a.at(n, k, 2 * i, 2 * j);
                    for (int r = 0; r < 2; r++)
                        for (int q = 0; q < 2; q++)
                            if (ar[a.at(n, k, 2 * i + r, 2 * j + q)] > ar[best])
                                best = a.at(n, k, 2 * i + r, 2 * j + q);
                    pr[p.at(n, k, i, j)] = ar[best];
                    arg[p.at(n, k, i, j)] = best;
                }
    check("max pool", p, pr);
    tensor s = make(N, K, H / 2, W / 2, false);
    CT_DOK(cudnnSoftmaxForward(h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, p.d, p.dev, &zero, s.d,
                               s.dev));
    vec sr(s.size());
    for (int n = 0; n < N; n++)
        for (int i = 0; i < H / 2; i++)
            for (int j = 0; j < W / 2; j++) {
                double mx = -1e30, sum = 0;
                for (int k = 0; k < K; k++)
                    mx = std::fmax(mx, pr[p.at(n, k, i, j)]);
                for (int k = 0; k < K; k++)
                    sum += std::exp(pr[p.at(n, k, i, j)] - mx);
                for (int k = 0; k < K; k++)
                    sr[s.at(n, k, i, j)] = std::exp(pr[p.at(n, k, i, j)] - mx) / sum;
            }
    check("softmax", s, sr);

    // backward: softmax, pool, relu, then bias, filter and data gradients
    tensor ds = make(N, K, H / 2, W / 2, true), dp = make(N, K, H / 2, W / 2, false);
    CT_DOK(cudnnSoftmaxBackward(h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, s.d, s.dev, ds.d, ds.dev,
                                &zero, dp.d, dp.dev));
    vec dpr(dp.size());
    for (int n = 0; n < N; n++)
        for (int i = 0; i < H / 2; i++)
            for (int j = 0; j < W / 2; j++) {
                double dot = 0;
                for (int k = 0; k < K; k++)
                    dot += ds.host[s.at(n, k, i, j)] * sr[s.at(n, k, i, j)];
                for (int k = 0; k < K; k++)
                    dpr[s.at(n, k, i, j)] = sr[s.at(n, k, i, j)] * (ds.host[s.at(n, k, i, j)] - dot);
            }
    check("softmax backward", dp, dpr);
    tensor da = make(N, K, H, W, false);
    CT_DOK(cudnnPoolingBackward(h, pd, &one, p.d, p.dev, dp.d, dp.dev, a.d, a.dev, &zero, da.d, da.dev));
    vec dar(da.size(), 0.0);
    for (size_t i = 0; i < dpr.size(); i++)
        dar[arg[i]] += dpr[i];
    check("pool backward", da, dar);
    tensor dy = make(N, K, H, W, false);
    CT_DOK(cudnnActivationBackward(h, ad, &one, a.d, a.dev, da.d, da.dev, y.d, y.dev, &zero, dy.d, dy.dev));
    vec dyr(dy.size());
    for (size_t i = 0; i < dyr.size(); i++)
        dyr[i] = yr[i] > 0 ? dar[i] : 0;
    check("relu backward", dy, dyr);
    tensor db = make(1, K, 1, 1, false);
    CT_DOK(cudnnConvolutionBackwardBias(h, &one, dy.d, dy.dev, &zero, db.d, db.dev));
    vec dbr(K, 0.0);
    for (size_t i = 0; i < dyr.size(); i++)
        dbr[(i / (H * W)) % K] += dyr[i];
    check("bias gradient", db, dbr);
    cudnnConvolutionBwdFilterAlgoPerf_t fperf[8];
    CT_DOK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, x.d, dy.d, cd, fd, 8, &count, fperf));
    CT_TRUE(count >= 1 && fperf[0].status == CUDNN_STATUS_SUCCESS);
    CT_DOK(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, x.d, dy.d, cd, fd, fperf[0].algo, &ws_size));
    CT_TRUE(ws_size == 0 || ws_size < (1u << 30));
    void *ws2 = nullptr;
    if (ws_size)
        CT_OK(cudaMalloc(&ws2, ws_size));
    CT_DOK(cudnnConvolutionBackwardFilter(h, &one, x.d, x.dev, dy.d, dy.dev, cd, fperf[0].algo, ws2, ws_size, &zero,
                                          fd, dwdev));
    std::vector<float> dwf(wf.size());
    CT_OK(cudaMemcpy(dwf.data(), dwdev, dwf.size() * 4, cudaMemcpyDeviceToHost));
    for (int k = 0; k < K; k++)
        for (int c = 0; c < C; c++)
            for (int r = 0; r < R; r++)
                for (int q = 0; q < R; q++) {
                    double sum = 0;
                    for (int n = 0; n < N; n++)
                        for (int i = 0; i < H; i++)
                            for (int j = 0; j < W; j++) {
                                int ih = i - 1 + r, iw = j - 1 + q;
                                if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                                    sum += dyr[dy.at(n, k, i, j)] * x.host[x.at(n, c, ih, iw)];
                            }
                    float got = dwf[((k * C + c) * R + r) * R + q];
                    CT_TRUE(std::fabs(got - sum) <= 1e-3 * (1 + std::fabs(sum)));
                }
    cudnnConvolutionBwdDataAlgoPerf_t dperf[8];
    CT_DOK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, fd, dy.d, cd, x.d, 8, &count, dperf));
    CT_TRUE(count >= 1 && dperf[0].status == CUDNN_STATUS_SUCCESS);
    CT_DOK(cudnnGetConvolutionBackwardDataWorkspaceSize(h, fd, dy.d, cd, x.d, dperf[0].algo, &ws_size));
    void *ws3 = nullptr;
    if (ws_size)
        CT_OK(cudaMalloc(&ws3, ws_size));
    tensor dx = make(N, C, H, W, false);
    CT_DOK(cudnnConvolutionBackwardData(h, &one, fd, wdev, dy.d, dy.dev, cd, dperf[0].algo, ws3, ws_size, &zero, dx.d,
                                        dx.dev));
    vec dxr(dx.size(), 0.0);
    for (int n = 0; n < N; n++)
        for (int k = 0; k < K; k++)
            for (int i = 0; i < H; i++)
                for (int j = 0; j < W; j++)
                    for (int c = 0; c < C; c++)
                        for (int r = 0; r < R; r++)
                            for (int q = 0; q < R; q++) {
                                int ih = i - 1 + r, iw = j - 1 + q;
                                if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                                    dxr[dx.at(n, c, ih, iw)] += dyr[dy.at(n, k, i, j)] * wv[((k * C + c) * R + r) * R + q];
                            }
    check("data gradient", dx, dxr);

    // a device pointer the session does not own is refused, and the session goes on
    float host_buf[64];
    expect_refused("host pointer", cudnnAddTensor(h, &one, b.d, host_buf, &one, y.d, y.dev), CUDNN_STATUS_BAD_PARAM);
    CT_DOK(cudnnActivationForward(h, ad, &one, y.d, y.dev, &zero, a.d, a.dev));
    check("relu after a refused call", a, ar);

    for (void *v : {ws, ws2, ws3})
        if (v)
            CT_OK(cudaFree(v));
    CT_OK(cudaFree(wdev));
    CT_OK(cudaFree(dwdev));
    for (tensor *t : {&x, &y, &b, &a, &p, &s, &ds, &dp, &da, &dy, &db, &dx})
        release(*t);
    CT_DOK(cudnnDestroyFilterDescriptor(fd));
    CT_DOK(cudnnDestroyConvolutionDescriptor(cd));
    CT_DOK(cudnnDestroyActivationDescriptor(ad));
    CT_DOK(cudnnDestroyPoolingDescriptor(pd));
}

// Batch norm (spatial) training: per channel, y has mean bias and variance scale^2;
// tensor ops: op-tensor MUL with a broadcast B, set, scale, NCHW -> NHWC transform.
static void norm_and_ops(cudnnHandle_t h)
{
    const float one = 1, zero = 0;
    tensor x = make(4, 2, 3, 3, true), y = make(4, 2, 3, 3, false);
    cudnnTensorDescriptor_t bd;
    CT_DOK(cudnnCreateTensorDescriptor(&bd));
    CT_DOK(cudnnDeriveBNTensorDescriptor(bd, x.d, CUDNN_BATCHNORM_SPATIAL));
    tensor sc = make(1, 2, 1, 1, true), bi = make(1, 2, 1, 1, true), rm = make(1, 2, 1, 1, false),
           rv = make(1, 2, 1, 1, false);
    CT_DOK(cudnnBatchNormalizationForwardTraining(h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, x.d, x.dev, y.d, y.dev, bd,
                                                  sc.dev, bi.dev, 1.0, rm.dev, rv.dev, 1e-5, nullptr, nullptr));
    vec yv = fetch(y), rmv = fetch(rm);
    for (int c = 0; c < 2; c++) {
        double m = 0, v = 0, xm = 0;
        for (int n = 0; n < 4; n++)
            for (int i = 0; i < 9; i++) {
                m += yv[(n * 2 + c) * 9 + i] / 36;
                xm += x.host[(n * 2 + c) * 9 + i] / 36;
            }
        for (int n = 0; n < 4; n++)
            for (int i = 0; i < 9; i++)
                v += (yv[(n * 2 + c) * 9 + i] - m) * (yv[(n * 2 + c) * 9 + i] - m) / 36;
        CT_TRUE(std::fabs(m - bi.host[c]) < 1e-4);
        CT_TRUE(std::fabs(v - sc.host[c] * sc.host[c]) < 1e-3);
        CT_TRUE(std::fabs(rmv[c] - xm) < 1e-5);
    }
    tensor dy = make(4, 2, 3, 3, true), dx = make(4, 2, 3, 3, false), dsc = make(1, 2, 1, 1, false),
           dbi = make(1, 2, 1, 1, false);
    CT_DOK(cudnnBatchNormalizationBackward(h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, x.d, x.dev, dy.d,
                                           dy.dev, dx.d, dx.dev, bd, sc.dev, dsc.dev, dbi.dev, 1e-5, nullptr, nullptr));
    vec dbv = fetch(dbi), dxv = fetch(dx);
    for (int c = 0; c < 2; c++) {
        double s = 0, sdx = 0;
        for (int n = 0; n < 4; n++)
            for (int i = 0; i < 9; i++) {
                s += dy.host[(n * 2 + c) * 9 + i];
                sdx += dxv[(n * 2 + c) * 9 + i];
            }
        CT_TRUE(std::fabs(dbv[c] - s) < 1e-4);
        CT_TRUE(std::fabs(sdx) < 1e-3); // dx sums to zero per channel
    }
    CT_DOK(cudnnBatchNormalizationForwardInference(h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, x.d, x.dev, y.d, y.dev, bd,
                                                   sc.dev, bi.dev, rm.dev, rv.dev, 1e-5));

    cudnnOpTensorDescriptor_t od;
    CT_DOK(cudnnCreateOpTensorDescriptor(&od));
    CT_DOK(cudnnSetOpTensorDescriptor(od, CUDNN_OP_TENSOR_MUL, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN));
    const float half = 0.5f;
    CT_DOK(cudnnOpTensor(h, od, &one, x.d, x.dev, &half, sc.d, sc.dev, &zero, y.d, y.dev));
    vec want(x.size());
    for (size_t i = 0; i < want.size(); i++)
        want[i] = x.host[i] * 0.5 * sc.host[(i / 9) % 2];
    check("op tensor mul", y, want);
    const float three = 3, minus = -2;
    CT_DOK(cudnnSetTensor(h, y.d, y.dev, &three));
    CT_DOK(cudnnScaleTensor(h, y.d, y.dev, &minus));
    for (auto &v : want)
        v = -6;
    check("set and scale", y, want);
    cudnnTensorDescriptor_t nhwc;
    CT_DOK(cudnnCreateTensorDescriptor(&nhwc));
    CT_DOK(cudnnSetTensor4dDescriptor(nhwc, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, 4, 2, 3, 3));
    CT_DOK(cudnnTransformTensor(h, &one, x.d, x.dev, &zero, nhwc, y.dev));
    vec t = fetch(y);
    for (int n = 0; n < 4; n++)
        for (int c = 0; c < 2; c++)
            for (int i = 0; i < 9; i++)
                CT_TRUE(std::fabs(t[(n * 9 + i) * 2 + c] - x.host[(n * 2 + c) * 9 + i]) < 1e-6);
    CT_DOK(cudnnDestroyTensorDescriptor(nhwc));
    CT_DOK(cudnnDestroyOpTensorDescriptor(od));
    CT_DOK(cudnnDestroyTensorDescriptor(bd));
    for (tensor *tt : {&x, &y, &sc, &bi, &rm, &rv, &dy, &dx, &dsc, &dbi})
        release(*tt);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "net";
    cudnnHandle_t h;
    CT_OK(cudaFree(0));
    CT_DOK(cudnnCreate(&h));
    if (strcmp(mode, "desc") == 0 || strcmp(mode, "base") == 0) {
        if (strcmp(mode, "desc") == 0)
            descriptor_rounds(argc > 2 ? atoi(argv[2]) : 100);
        CT_OK(cudaDeviceSynchronize());
        CT_DOK(cudnnDestroy(h));
        CT_OK(cudaDeviceSynchronize());
        return ct_finish(mode);
    }
    CT_TRUE(cudnnGetVersion() == CUDNN_VERSION);
    CT_STREQ(cudnnGetErrorString(CUDNN_STATUS_NOT_SUPPORTED), "CUDNN_STATUS_NOT_SUPPORTED");
    cudaStream_t st, got;
    CT_OK(cudaStreamCreate(&st));
    CT_DOK(cudnnSetStream(h, st));
    CT_DOK(cudnnGetStream(h, &got));
    CT_TRUE(got == st);
    descriptor_rounds(3);
    network(h);
    norm_and_ops(h);
    CT_OK(cudaStreamSynchronize(st));
    CT_DOK(cudnnDestroy(h));
    CT_DNN(cudnnSetStream(h, st), CUDNN_STATUS_BAD_PARAM);
    CT_OK(cudaStreamDestroy(st));
    return ct_finish("dnn_net");
}
