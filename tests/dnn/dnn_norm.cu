// dnn_norm.cu -- self-checking program of cuDNN's v8 normalization calls
// (cudnnDeriveNormTensorDescriptor, cudnnNormalizationForwardTraining/Inference,
// cudnnNormalizationBackward and their size queries), which are batch
// normalisation with the means and variances under a descriptor of their own: for
// each normOps (norm, norm + ReLU, norm + residual + ReLU), per channel, every
// output against the batch-norm call that computes the same thing (the Ex forms for
// training and backward; for inference, the plain inference with z added and the
// ReLU applied on the host). Then the refusals: a group count of 2, a mean/variance
// descriptor of another shape. Prints `PASS dnn_norm`.
#include <algorithm>
#include "dnn_check.h"

static const double EPS = 1e-5;

struct norm_case {
    cudnnHandle_t h;
    tensor x, z, y, dy, dx, dz, sc, bi, rm, rv, sm, si, dsc, dbi;
    cudnnTensorDescriptor_t sd, md; // scale/bias and mean/variance, derived
    cudnnActivationDescriptor_t act;
};

static norm_case setup()
{
    norm_case c{nullptr, make(3, 2, 2, 3, true), make(3, 2, 2, 3, true), make(3, 2, 2, 3, false),
                make(3, 2, 2, 3, true), make(3, 2, 2, 3, false), make(3, 2, 2, 3, false), make(1, 2, 1, 1, true),
                make(1, 2, 1, 1, true), make(1, 2, 1, 1, false), make(1, 2, 1, 1, false), make(1, 2, 1, 1, false),
                make(1, 2, 1, 1, false), make(1, 2, 1, 1, false), make(1, 2, 1, 1, false), nullptr, nullptr, nullptr};
    CT_DOK(cudnnCreate(&c.h));
    CT_DOK(cudnnCreateTensorDescriptor(&c.sd));
    CT_DOK(cudnnCreateTensorDescriptor(&c.md));
    CT_DOK(cudnnDeriveNormTensorDescriptor(c.sd, c.md, c.x.d, CUDNN_NORM_PER_CHANNEL, 1));
    CT_DOK(cudnnCreateActivationDescriptor(&c.act));
    CT_DOK(cudnnSetActivationDescriptor(c.act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
    return c;
}

struct stats {
    vec y, rm, rv, sm, si;
};

static stats take(const norm_case &c)
{
    return {fetch(c.y), fetch(c.rm), fetch(c.rv), fetch(c.sm), fetch(c.si)};
}

static void reset_running(const norm_case &c)
{
    upload(c.rm, vec(2, 0.5));
    upload(c.rv, vec(2, 2.0));
}

static void training(norm_case &c, cudnnNormOps_t ops)
{
    const float one = 1, zero = 0;
    bool relu = ops != CUDNN_NORM_OPS_NORM, add = ops == CUDNN_NORM_OPS_NORM_ADD_ACTIVATION;
    cudnnTensorDescriptor_t zd = add ? c.z.d : nullptr;
    cudnnActivationDescriptor_t ad = relu ? c.act : nullptr;
    reset_running(c);
    CT_DOK(cudnnBatchNormalizationForwardTrainingEx(c.h, CUDNN_BATCHNORM_SPATIAL, (cudnnBatchNormOps_t)ops, &one, &zero,
                                                    c.x.d, c.x.dev, zd, add ? c.z.dev : nullptr, c.y.d, c.y.dev, c.sd,
                                                    c.sc.dev, c.bi.dev, 0.25, c.rm.dev, c.rv.dev, EPS, c.sm.dev,
                                                    c.si.dev, ad, nullptr, 0, nullptr, 0));
    stats want = take(c);
    size_t ws = 0, rs = 0;
    CT_DOK(cudnnGetNormalizationForwardTrainingWorkspaceSize(c.h, CUDNN_NORM_PER_CHANNEL, ops, CUDNN_NORM_ALGO_STANDARD,
                                                             c.x.d, zd, c.y.d, c.sd, ad, c.md, &ws, 1));
    CT_DOK(cudnnGetNormalizationTrainingReserveSpaceSize(c.h, CUDNN_NORM_PER_CHANNEL, ops, CUDNN_NORM_ALGO_STANDARD, ad,
                                                         c.x.d, &rs, 1));
    void *w = dev_bytes(ws), *r = dev_bytes(rs);
    reset_running(c);
    upload(c.y, vec(c.y.size(), 9.0));
    CT_DOK(cudnnNormalizationForwardTraining(c.h, CUDNN_NORM_PER_CHANNEL, ops, CUDNN_NORM_ALGO_STANDARD, &one, &zero,
                                             c.x.d, c.x.dev, c.sd, c.sc.dev, c.bi.dev, 0.25, c.md, c.rm.dev, c.rv.dev,
                                             EPS, c.sm.dev, c.si.dev, ad, zd, add ? c.z.dev : nullptr, c.y.d, c.y.dev,
                                             w, ws, r, rs, 1));
    check("training y", c.y, want.y);
    check("training running mean", c.rm, want.rm);
    check("training running variance", c.rv, want.rv);
    check("training saved mean", c.sm, want.sm);
    check("training saved inverse deviation", c.si, want.si);
    for (void *p : {w, r})
        if (p)
            CT_OK(cudaFree(p));
}

// c.y holds the forward's output for ops (the ReLU's gradient reads it).
static void backward(norm_case &c, cudnnNormOps_t ops)
{
    const float one = 1, zero = 0;
    bool relu = ops != CUDNN_NORM_OPS_NORM, add = ops == CUDNN_NORM_OPS_NORM_ADD_ACTIVATION;
    cudnnTensorDescriptor_t dzd = add ? c.dz.d : nullptr;
    cudnnActivationDescriptor_t ad = relu ? c.act : nullptr;
    CT_DOK(cudnnBatchNormalizationBackwardEx(c.h, CUDNN_BATCHNORM_SPATIAL, (cudnnBatchNormOps_t)ops, &one, &zero, &one,
                                             &zero, c.x.d, c.x.dev, c.y.d, c.y.dev, c.dy.d, c.dy.dev, dzd,
                                             add ? c.dz.dev : nullptr, c.dx.d, c.dx.dev, c.sd, c.sc.dev, c.bi.dev,
                                             c.dsc.dev, c.dbi.dev, EPS, c.sm.dev, c.si.dev, ad, nullptr, 0, nullptr, 0));
    vec dx = fetch(c.dx), ds = fetch(c.dsc), db = fetch(c.dbi), dz = fetch(c.dz);
    size_t ws = 0;
    CT_DOK(cudnnGetNormalizationBackwardWorkspaceSize(c.h, CUDNN_NORM_PER_CHANNEL, ops, CUDNN_NORM_ALGO_STANDARD, c.x.d,
                                                      c.y.d, c.dy.d, dzd, c.dx.d, c.sd, ad, c.md, &ws, 1));
    void *w = dev_bytes(ws);
    for (tensor *t : {&c.dx, &c.dsc, &c.dbi, &c.dz})
        upload(*t, vec(t->size(), 9.0));
    CT_DOK(cudnnNormalizationBackward(c.h, CUDNN_NORM_PER_CHANNEL, ops, CUDNN_NORM_ALGO_STANDARD, &one, &zero, &one,
                                      &zero, c.x.d, c.x.dev, c.y.d, c.y.dev, c.dy.d, c.dy.dev, dzd,
                                      add ? c.dz.dev : nullptr, c.dx.d, c.dx.dev, c.sd, c.sc.dev, c.bi.dev, c.dsc.dev,
                                      c.dbi.dev, EPS, c.md, c.sm.dev, c.si.dev, ad, w, ws, nullptr, 0, 1));
    check("backward dx", c.dx, dx);
    check("backward dScale", c.dsc, ds);
    check("backward dBias", c.dbi, db);
    if (add)
        check("backward dz", c.dz, dz);
    if (w)
        CT_OK(cudaFree(w));
}

static void inference(norm_case &c, cudnnNormOps_t ops)
{
    const float one = 1, zero = 0;
    bool relu = ops != CUDNN_NORM_OPS_NORM, add = ops == CUDNN_NORM_OPS_NORM_ADD_ACTIVATION;
    reset_running(c);
    CT_DOK(cudnnBatchNormalizationForwardInference(c.h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, c.x.d, c.x.dev, c.y.d,
                                                   c.y.dev, c.sd, c.sc.dev, c.bi.dev, c.rm.dev, c.rv.dev, EPS));
    vec want = fetch(c.y);
    for (size_t i = 0; i < want.size(); i++) {
        if (add)
            want[i] += c.z.host[i];
        if (relu)
            want[i] = std::max(want[i], 0.0);
    }
    upload(c.y, vec(c.y.size(), 9.0));
    CT_DOK(cudnnNormalizationForwardInference(c.h, CUDNN_NORM_PER_CHANNEL, ops, CUDNN_NORM_ALGO_STANDARD, &one, &zero,
                                              c.x.d, c.x.dev, c.sd, c.sc.dev, c.bi.dev, c.md, c.rm.dev, c.rv.dev,
                                              add ? c.z.d : nullptr, add ? c.z.dev : nullptr, relu ? c.act : nullptr,
                                              c.y.d, c.y.dev, EPS, 1));
    check("inference y", c.y, want);
}

static void refusals(norm_case &c)
{
    const float one = 1, zero = 0;
    cudnnTensorDescriptor_t other;
    CT_DOK(cudnnCreateTensorDescriptor(&other));
    CT_DNN(cudnnDeriveNormTensorDescriptor(c.sd, other, c.x.d, CUDNN_NORM_PER_CHANNEL, 2), CUDNN_STATUS_NOT_SUPPORTED);
    CT_DOK(cudnnDeriveNormTensorDescriptor(other, other, c.x.d, CUDNN_NORM_PER_ACTIVATION, 1));
    expect_refused("mean/variance of another shape",
                   cudnnNormalizationForwardInference(c.h, CUDNN_NORM_PER_CHANNEL, CUDNN_NORM_OPS_NORM,
                                                      CUDNN_NORM_ALGO_STANDARD, &one, &zero, c.x.d, c.x.dev, c.sd,
                                                      c.sc.dev, c.bi.dev, other, c.rm.dev, c.rv.dev, nullptr, nullptr,
                                                      nullptr, c.y.d, c.y.dev, EPS, 1),
                   CUDNN_STATUS_BAD_PARAM);
    expect_refused("two groups",
                   cudnnNormalizationForwardInference(c.h, CUDNN_NORM_PER_CHANNEL, CUDNN_NORM_OPS_NORM,
                                                      CUDNN_NORM_ALGO_STANDARD, &one, &zero, c.x.d, c.x.dev, c.sd,
                                                      c.sc.dev, c.bi.dev, c.md, c.rm.dev, c.rv.dev, nullptr, nullptr,
                                                      nullptr, c.y.d, c.y.dev, EPS, 2),
                   CUDNN_STATUS_NOT_SUPPORTED);
    CT_DOK(cudnnDestroyTensorDescriptor(other));
}

int main()
{
    norm_case c = setup();
    for (cudnnNormOps_t ops : {CUDNN_NORM_OPS_NORM, CUDNN_NORM_OPS_NORM_ACTIVATION, CUDNN_NORM_OPS_NORM_ADD_ACTIVATION}) {
        training(c, ops);
        backward(c, ops);
        inference(c, ops);
    }
    refusals(c);
    for (tensor *t : {&c.x, &c.z, &c.y, &c.dy, &c.dx, &c.dz, &c.sc, &c.bi, &c.rm, &c.rv, &c.sm, &c.si, &c.dsc, &c.dbi})
        release(*t);
    CT_DOK(cudnnDestroyTensorDescriptor(c.sd));
    CT_DOK(cudnnDestroyTensorDescriptor(c.md));
    CT_DOK(cudnnDestroyActivationDescriptor(c.act));
    CT_DOK(cudnnDestroy(c.h));
    CT_OK(cudaDeviceSynchronize());
    return ct_finish("dnn_norm");
}
