// dnn_check.h -- what the cuDNN test programs share: status checks, a float NCHW
// tensor on the device with its host copy, and comparison with reference values.
#ifndef DNN_CHECK_H
#define DNN_CHECK_H

#include <cudnn.h>
#include <cmath>
#include <cstdio>
#include <vector>
#include "../cuda/cuda_check.h"

#define CT_DNN(call, expected)                                                   \
    do {                                                                         \
        cudnnStatus_t ct_s_ = (call), ct_x_ = (expected);                        \
        if (ct_s_ != ct_x_)                                                      \
            ct_fail(__FILE__, __LINE__, #call, cudnnGetErrorString(ct_x_),       \
                    cudnnGetErrorString(ct_s_));                                 \
    } while (0)
#define CT_DOK(call) CT_DNN(call, CUDNN_STATUS_SUCCESS)

typedef std::vector<double> vec;

static unsigned seed = 7;
static inline double rnd()
{
    seed = seed * 1103515245u + 12345u;
    return ((seed >> 8) & 0xffff) / 32768.0 - 1.0;
}

// A float NCHW tensor on the device with its host copy.
struct tensor {
    int n, c, h, w;
    cudnnTensorDescriptor_t d;
    float *dev;
    vec host;
    size_t size() const { return (size_t)n * c * h * w; }
    int at(int i, int j, int k, int l) const { return ((i * c + j) * h + k) * w + l; }
};

static inline tensor make(int n, int c, int h, int w, bool random)
{
    tensor t{n, c, h, w, nullptr, nullptr, vec((size_t)n * c * h * w)};
    CT_DOK(cudnnCreateTensorDescriptor(&t.d));
    CT_DOK(cudnnSetTensor4dDescriptor(t.d, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, h, w));
    CT_OK(cudaMalloc((void **)&t.dev, t.size() * sizeof(float)));
    for (auto &v : t.host)
        v = random ? rnd() : 0.0;
    std::vector<float> f(t.host.begin(), t.host.end());
    CT_OK(cudaMemcpy(t.dev, f.data(), f.size() * sizeof(float), cudaMemcpyHostToDevice));
    return t;
}

static inline vec fetch(const tensor &t)
{
    std::vector<float> f(t.size());
    CT_OK(cudaMemcpy(f.data(), t.dev, f.size() * sizeof(float), cudaMemcpyDeviceToHost));
    return vec(f.begin(), f.end());
}

// n bytes of device memory, NULL for none (a workspace of size 0).
static inline void *dev_bytes(size_t n)
{
    void *p = nullptr;
    if (n > 0)
        CT_OK(cudaMalloc(&p, n));
    return p;
}

// Replaces t's device values with v (its host copy stays).
static inline void upload(const tensor &t, const vec &v)
{
    std::vector<float> f(v.begin(), v.end());
    CT_OK(cudaMemcpy(t.dev, f.data(), f.size() * sizeof(float), cudaMemcpyHostToDevice));
}

static inline void release(tensor &t)
{
    CT_DOK(cudnnDestroyTensorDescriptor(t.d));
    CT_OK(cudaFree(t.dev));
}

// The device values of t must match want (relative tolerance for float math).
static inline void check(const char *what, const tensor &t, const vec &want)
{
    vec got = fetch(t);
    for (size_t i = 0; i < got.size(); i++) {
        if (std::fabs(got[i] - want[i]) > 1e-3 * (1 + std::fabs(want[i]))) {
            char g[64], e[64];
            snprintf(g, sizeof g, "%g at %zu", got[i], i);
            snprintf(e, sizeof e, "%g", want[i]);
            ct_fail(__FILE__, __LINE__, what, e, g);
            return;
        }
    }
}

// A call cuDNN refuses with `want`: at once, or (the shim sends compute calls
// asynchronously) at the next synchronisation; the session goes on either way.
static inline void expect_refused(const char *what, cudnnStatus_t got, cudnnStatus_t want)
{
    if (got == CUDNN_STATUS_SUCCESS) {
        if (cudaDeviceSynchronize() == cudaSuccess)
            ct_fail(__FILE__, __LINE__, what, cudnnGetErrorString(want), "accepted");
        (void)cudaGetLastError();
    } else if (got != want) {
        ct_fail(__FILE__, __LINE__, what, cudnnGetErrorString(want), cudnnGetErrorString(got));
    }
}

// Host reference of conv (pad 1, stride 1, cross-correlation), x: NCHW, w: KCRS.
static inline vec ref_conv(const tensor &x, const vec &w, int K, int R)
{
    vec y((size_t)x.n * K * x.h * x.w, 0.0);
    for (int n = 0; n < x.n; n++)
        for (int k = 0; k < K; k++)
            for (int i = 0; i < x.h; i++)
                for (int j = 0; j < x.w; j++) {
                    double s = 0;
                    for (int c = 0; c < x.c; c++)
                        for (int r = 0; r < R; r++)
                            for (int q = 0; q < R; q++) {
                                int ih = i - 1 + r, iw = j - 1 + q;
                                if (ih >= 0 && ih < x.h && iw >= 0 && iw < x.w)
                                    s += x.host[x.at(n, c, ih, iw)] * w[((k * x.c + c) * R + r) * R + q];
                            }
                    y[((n * K + k) * x.h + i) * x.w + j] = s;
                }
    return y;
}

#endif
