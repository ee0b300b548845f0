// dnn_bn_ex.cu -- self-checking program of cuDNN's batch normalisation Ex forms
// (cudnnBatchNormalizationForwardTrainingEx, cudnnBatchNormalizationBackwardEx and
// their workspace and reserve-space queries), as PyTorch calls them: for each bnOps
// (BN, BN + ReLU, BN + residual + ReLU), training's y, running and saved statistics
// against the plain cudnnBatchNormalizationForwardTraining's, with z added and the
// ReLU applied on the host; backward's dx, dScale and dBias against the plain
// cudnnBatchNormalizationBackward fed the gradient that passes the ReLU (and that
// gradient as dz), with workspace and reserve space of the sizes the queries give.
// Then the refusals: an unknown bnOps, and an activation asked for without its
// descriptor. Prints `PASS dnn_bn_ex`.
#include <algorithm>
#include "dnn_check.h"

static const cudnnBatchNormMode_t MODE = CUDNN_BATCHNORM_SPATIAL;
static const double EPS = 1e-5;

struct bn_case {
    tensor x, z, y, dy, dx, dz, sc, bi, rm, rv, sm, si, dsc, dbi;
    cudnnTensorDescriptor_t bd;
    cudnnActivationDescriptor_t act;
};

static bn_case setup()
{
    bn_case c{make(3, 2, 2, 3, true), make(3, 2, 2, 3, true), make(3, 2, 2, 3, false), make(3, 2, 2, 3, true),
              make(3, 2, 2, 3, false), make(3, 2, 2, 3, false), make(1, 2, 1, 1, true), make(1, 2, 1, 1, true),
              make(1, 2, 1, 1, false), make(1, 2, 1, 1, false), make(1, 2, 1, 1, false), make(1, 2, 1, 1, false),
              make(1, 2, 1, 1, false), make(1, 2, 1, 1, false), nullptr, nullptr};
    CT_DOK(cudnnCreateTensorDescriptor(&c.bd));
    CT_DOK(cudnnDeriveBNTensorDescriptor(c.bd, c.x.d, MODE));
    CT_DOK(cudnnCreateActivationDescriptor(&c.act));
    CT_DOK(cudnnSetActivationDescriptor(c.act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
    return c;
}

static void teardown(bn_case &c)
{
    for (tensor *t : {&c.x, &c.z, &c.y, &c.dy, &c.dx, &c.dz, &c.sc, &c.bi, &c.rm, &c.rv, &c.sm, &c.si, &c.dsc, &c.dbi})
        release(*t);
    CT_DOK(cudnnDestroyTensorDescriptor(c.bd));
    CT_DOK(cudnnDestroyActivationDescriptor(c.act));
}

// The plain forward (its y, running and saved statistics: the reference).
struct plain_out {
    vec y, rm, rv, sm, si;
};

static plain_out plain_forward(cudnnHandle_t h, bn_case &c)
{
    const float one = 1, zero = 0;
    upload(c.rm, vec(2, 0.5));
    upload(c.rv, vec(2, 2.0));
    CT_DOK(cudnnBatchNormalizationForwardTraining(h, MODE, &one, &zero, c.x.d, c.x.dev, c.y.d, c.y.dev, c.bd, c.sc.dev,
                                                  c.bi.dev, 0.25, c.rm.dev, c.rv.dev, EPS, c.sm.dev, c.si.dev));
    return {fetch(c.y), fetch(c.rm), fetch(c.rv), fetch(c.sm), fetch(c.si)};
}

static void forward_ex(cudnnHandle_t h, bn_case &c, cudnnBatchNormOps_t ops, const plain_out &p)
{
    const float one = 1, zero = 0;
    bool relu = ops != CUDNN_BATCHNORM_OPS_BN, add = ops == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION;
    cudnnTensorDescriptor_t zd = add ? c.z.d : nullptr;
    cudnnActivationDescriptor_t ad = relu ? c.act : nullptr;
    size_t ws = 0, rs = 0;
    CT_DOK(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(h, MODE, ops, c.x.d, zd, c.y.d, c.bd, ad, &ws));
    CT_DOK(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(h, MODE, ops, ad, c.x.d, &rs));
    void *w = dev_bytes(ws), *r = dev_bytes(rs);
    upload(c.rm, vec(2, 0.5));
    upload(c.rv, vec(2, 2.0));
    CT_DOK(cudnnBatchNormalizationForwardTrainingEx(h, MODE, ops, &one, &zero, c.x.d, c.x.dev, zd,
                                                    add ? c.z.dev : nullptr, c.y.d, c.y.dev, c.bd, c.sc.dev, c.bi.dev,
                                                    0.25, c.rm.dev, c.rv.dev, EPS, c.sm.dev, c.si.dev, ad, w, ws, r,
                                                    rs));
    vec want = p.y;
    for (size_t i = 0; i < want.size(); i++) {
        if (add)
            want[i] += c.z.host[i];
        if (relu)
            want[i] = std::max(want[i], 0.0);
    }
    check("training Ex y", c.y, want);
    check("training Ex running mean", c.rm, p.rm);
    check("training Ex running variance", c.rv, p.rv);
    check("training Ex saved mean", c.sm, p.sm);
    check("training Ex saved inverse deviation", c.si, p.si);
    if (w)
        CT_OK(cudaFree(w));
    if (r)
        CT_OK(cudaFree(r));
}

// Backward Ex against the plain backward given the gradient past the ReLU (c.y holds
// the Ex forward's output for ops).
static void backward_ex(cudnnHandle_t h, bn_case &c, cudnnBatchNormOps_t ops)
{
    const float one = 1, zero = 0;
    bool relu = ops != CUDNN_BATCHNORM_OPS_BN, add = ops == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION;
    vec yv = fetch(c.y), g = c.dy.host;
    for (size_t i = 0; i < g.size(); i++)
        if (relu && !(yv[i] > 0))
            g[i] = 0;
    tensor gp = make(3, 2, 2, 3, false);
    upload(gp, g);
    CT_DOK(cudnnBatchNormalizationBackward(h, MODE, &one, &zero, &one, &zero, c.x.d, c.x.dev, gp.d, gp.dev, c.dx.d,
                                           c.dx.dev, c.bd, c.sc.dev, c.dsc.dev, c.dbi.dev, EPS, c.sm.dev, c.si.dev));
    vec want_dx = fetch(c.dx), want_ds = fetch(c.dsc), want_db = fetch(c.dbi);
    cudnnTensorDescriptor_t dzd = add ? c.dz.d : nullptr;
    cudnnActivationDescriptor_t ad = relu ? c.act : nullptr;
    size_t ws = 0, rs = 0;
    CT_DOK(cudnnGetBatchNormalizationBackwardExWorkspaceSize(h, MODE, ops, c.x.d, c.y.d, c.dy.d, dzd, c.dx.d, c.bd, ad,
                                                             &ws));
    CT_DOK(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(h, MODE, ops, ad, c.x.d, &rs));
    void *w = dev_bytes(ws), *r = dev_bytes(rs);
    CT_DOK(cudnnBatchNormalizationBackwardEx(h, MODE, ops, &one, &zero, &one, &zero, c.x.d, c.x.dev, c.y.d, c.y.dev,
                                             c.dy.d, c.dy.dev, dzd, add ? c.dz.dev : nullptr, c.dx.d, c.dx.dev, c.bd,
                                             c.sc.dev, c.bi.dev, c.dsc.dev, c.dbi.dev, EPS, c.sm.dev, c.si.dev, ad, w,
                                             ws, r, rs));
    check("backward Ex dx", c.dx, want_dx);
    check("backward Ex dScale", c.dsc, want_ds);
    check("backward Ex dBias", c.dbi, want_db);
    if (add)
        check("backward Ex dz", c.dz, g);
    release(gp);
    if (w)
        CT_OK(cudaFree(w));
    if (r)
        CT_OK(cudaFree(r));
}

static void refusals(cudnnHandle_t h, bn_case &c)
{
    const float one = 1, zero = 0;
    size_t ws = 0;
    CT_DNN(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(h, MODE, (cudnnBatchNormOps_t)7, c.x.d, nullptr,
                                                                    c.y.d, c.bd, nullptr, &ws),
           CUDNN_STATUS_BAD_PARAM);
    expect_refused("activation without its descriptor",
                   cudnnBatchNormalizationForwardTrainingEx(h, MODE, CUDNN_BATCHNORM_OPS_BN_ACTIVATION, &one, &zero,
                                                            c.x.d, c.x.dev, nullptr, nullptr, c.y.d, c.y.dev, c.bd,
                                                            c.sc.dev, c.bi.dev, 1.0, nullptr, nullptr, EPS, nullptr,
                                                            nullptr, nullptr, nullptr, 0, nullptr, 0),
                   CUDNN_STATUS_BAD_PARAM);
}

int main()
{
    cudnnHandle_t h;
    CT_DOK(cudnnCreate(&h));
    bn_case c = setup();
    plain_out p = plain_forward(h, c);
    for (cudnnBatchNormOps_t ops : {CUDNN_BATCHNORM_OPS_BN, CUDNN_BATCHNORM_OPS_BN_ACTIVATION,
                                    CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION}) {
        forward_ex(h, c, ops, p);
        backward_ex(h, c, ops);
    }
    refusals(h, c);
    teardown(c);
    CT_DOK(cudnnDestroy(h));
    CT_OK(cudaDeviceSynchronize());
    return ct_finish("dnn_bn_ex");
}
