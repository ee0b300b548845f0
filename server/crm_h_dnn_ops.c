/* crm_h_dnn_ops.c -- handlers of the cuDNN tensor operations, activation, pooling,
 * softmax and batch normalisation calls: each tensor's footprint is checked against
 * the session's allocations before the backend runs. */
#include "common/crm_dnn_desc.h"
#include "server/crm_backend.h"
#include "server/crm_h_dnn.h"

cudnnStatus_t crm_srv_cudnnAddTensor(crm_session *s, uint64_t handle, double alpha, const crm_dnn_tensor *aDesc,
                                     uint64_t A, double beta, const crm_dnn_tensor *cDesc, uint64_t C)
{
    crm_h_dnn_call c;
    cudnnTensorDescriptor_t ad, cd;
    void *pa, *pc;
    cudnnStatus_t st;
    if ((st = crm_h_dnn_begin(&c, s, handle)) || (st = crm_h_dnn_tensor(&c, aDesc, A, 0, &ad, &pa)) ||
        (st = crm_h_dnn_tensor(&c, cDesc, C, 0, &cd, &pc)))
        return st;
    return crm_rt.cudnnAddTensor(c.h, crm_h_dnn_scalar(&c, alpha, cDesc->dtype), ad, pa,
                                 crm_h_dnn_scalar(&c, beta, cDesc->dtype), cd, pc);
}

/* SQRT and NOT read A alone: B may then travel as 0 with any descriptor. */
cudnnStatus_t crm_srv_cudnnOpTensor(crm_session *s, uint64_t handle, const crm_dnn_optensor *opDesc, double alpha1,
                                    const crm_dnn_tensor *aDesc, uint64_t A, double alpha2,
                                    const crm_dnn_tensor *bDesc, uint64_t B, double beta, const crm_dnn_tensor *cDesc,
                                    uint64_t C)
{
    crm_h_dnn_call c;
    cudnnOpTensorDescriptor_t od;
    cudnnTensorDescriptor_t ad, bd, cd;
    void *pa, *pb, *pc;
    cudnnStatus_t st;
    int unary = opDesc->op == CUDNN_OP_TENSOR_SQRT || opDesc->op == CUDNN_OP_TENSOR_NOT;
    if ((st = crm_h_dnn_begin(&c, s, handle)) || (st = crm_h_dnn_op(&c, opDesc, &od)) ||
        (st = crm_h_dnn_tensor(&c, aDesc, A, 0, &ad, &pa)) || (st = crm_h_dnn_tensor(&c, bDesc, B, unary, &bd, &pb)) ||
        (st = crm_h_dnn_tensor(&c, cDesc, C, 0, &cd, &pc)))
        return st;
    int dt = cDesc->dtype;
    return crm_rt.cudnnOpTensor(c.h, od, crm_h_dnn_scalar(&c, alpha1, dt), ad, pa, crm_h_dnn_scalar(&c, alpha2, dt),
                                bd, pb, crm_h_dnn_scalar(&c, beta, dt), cd, pc);
}

cudnnStatus_t crm_srv_cudnnSetTensor(crm_session *s, uint64_t handle, const crm_dnn_tensor *yDesc, uint64_t y,
                                     double value)
{
    crm_h_dnn_call c;
    cudnnTensorDescriptor_t yd;
    void *py;
    cudnnStatus_t st;
    if ((st = crm_h_dnn_begin(&c, s, handle)) || (st = crm_h_dnn_tensor(&c, yDesc, y, 0, &yd, &py)))
        return st;
    return crm_rt.cudnnSetTensor(c.h, yd, py, crm_h_dnn_scalar(&c, value, yDesc->dtype));
}

cudnnStatus_t crm_srv_cudnnScaleTensor(crm_session *s, uint64_t handle, const crm_dnn_tensor *yDesc, uint64_t y,
                                       double alpha)
{
    crm_h_dnn_call c;
    cudnnTensorDescriptor_t yd;
    void *py;
    cudnnStatus_t st;
    if ((st = crm_h_dnn_begin(&c, s, handle)) || (st = crm_h_dnn_tensor(&c, yDesc, y, 0, &yd, &py)))
        return st;
    return crm_rt.cudnnScaleTensor(c.h, yd, py, crm_h_dnn_scalar(&c, alpha, yDesc->dtype));
}

cudnnStatus_t crm_srv_cudnnTransformTensor(crm_session *s, uint64_t handle, double alpha,
                                           const crm_dnn_tensor *xDesc, uint64_t x, double beta,
                                           const crm_dnn_tensor *yDesc, uint64_t y)
{
    crm_h_dnn_call c;
    cudnnTensorDescriptor_t xd, yd;
    void *px, *py;
    cudnnStatus_t st;
    if ((st = crm_h_dnn_begin(&c, s, handle)) || (st = crm_h_dnn_tensor(&c, xDesc, x, 0, &xd, &px)) ||
        (st = crm_h_dnn_tensor(&c, yDesc, y, 0, &yd, &py)))
        return st;
    return crm_rt.cudnnTransformTensor(c.h, crm_h_dnn_scalar(&c, alpha, yDesc->dtype), xd, px,
                                       crm_h_dnn_scalar(&c, beta, yDesc->dtype), yd, py);
}

/* The four tensors of an activation or pooling backward call: y, dy, x, dx, their
 * backend descriptors and checked device addresses. */
typedef struct crm__grad4 {
    cudnnTensorDescriptor_t yd, dyd, xd, dxd;
    void *py, *pdy, *px, *pdx;
} crm__grad4;

static cudnnStatus_t crm__grad4_build(crm_h_dnn_call *c, crm__grad4 *g, const crm_dnn_tensor *yDesc, uint64_t y,
                                      const crm_dnn_tensor *dyDesc, uint64_t dy, const crm_dnn_tensor *xDesc,
                                      uint64_t x, const crm_dnn_tensor *dxDesc, uint64_t dx)
{
    cudnnStatus_t st;
    if ((st = crm_h_dnn_tensor(c, yDesc, y, 0, &g->yd, &g->py)) ||
        (st = crm_h_dnn_tensor(c, dyDesc, dy, 0, &g->dyd, &g->pdy)) ||
        (st = crm_h_dnn_tensor(c, xDesc, x, 0, &g->xd, &g->px)) ||
        (st = crm_h_dnn_tensor(c, dxDesc, dx, 0, &g->dxd, &g->pdx)))
        return st;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t crm_srv_cudnnActivationForward(crm_session *s, uint64_t handle, const crm_dnn_act *activationDesc,
                                             double alpha, const crm_dnn_tensor *xDesc, uint64_t x, double beta,
                                             const crm_dnn_tensor *yDesc, uint64_t y)
{
    crm_h_dnn_call c;
    cudnnActivationDescriptor_t ad;
    cudnnTensorDescriptor_t xd, yd;
    void *px, *py;
    cudnnStatus_t st;
    if ((st = crm_h_dnn_begin(&c, s, handle)) || (st = crm_h_dnn_act(&c, activationDesc, &ad)) ||
        (st = crm_h_dnn_tensor(&c, xDesc, x, 0, &xd, &px)) || (st = crm_h_dnn_tensor(&c, yDesc, y, 0, &yd, &py)))
        return st;
    return crm_rt.cudnnActivationForward(c.h, ad, crm_h_dnn_scalar(&c, alpha, yDesc->dtype), xd, px,
                                         crm_h_dnn_scalar(&c, beta, yDesc->dtype), yd, py);
}

cudnnStatus_t crm_srv_cudnnActivationBackward(crm_session *s, uint64_t handle, const crm_dnn_act *activationDesc,
                                              double alpha, const crm_dnn_tensor *yDesc, uint64_t y,
                                              const crm_dnn_tensor *dyDesc, uint64_t dy, const crm_dnn_tensor *xDesc,
                                              uint64_t x, double beta, const crm_dnn_tensor *dxDesc, uint64_t dx)
{
    crm_h_dnn_call c;
    cudnnActivationDescriptor_t ad;
    crm__grad4 g;
    cudnnStatus_t st;
    if ((st = crm_h_dnn_begin(&c, s, handle)) || (st = crm_h_dnn_act(&c, activationDesc, &ad)) ||
        (st = crm__grad4_build(&c, &g, yDesc, y, dyDesc, dy, xDesc, x, dxDesc, dx)))
        return st;
    return crm_rt.cudnnActivationBackward(c.h, ad, crm_h_dnn_scalar(&c, alpha, dxDesc->dtype), g.yd, g.py, g.dyd,
                                          g.pdy, g.xd, g.px, crm_h_dnn_scalar(&c, beta, dxDesc->dtype), g.dxd, g.pdx);
}

cudnnStatus_t crm_srv_cudnnPoolingForward(crm_session *s, uint64_t handle, const crm_dnn_pool *poolingDesc,
                                          double alpha, const crm_dnn_tensor *xDesc, uint64_t x, double beta,
                                          const crm_dnn_tensor *yDesc, uint64_t y)
{
    crm_h_dnn_call c;
    cudnnPoolingDescriptor_t pd;
    cudnnTensorDescriptor_t xd, yd;
    void *px, *py;
    cudnnStatus_t st;
    if ((st = crm_h_dnn_begin(&c, s, handle)) || (st = crm_h_dnn_pool(&c, poolingDesc, &pd)) ||
        (st = crm_h_dnn_tensor(&c, xDesc, x, 0, &xd, &px)) || (st = crm_h_dnn_tensor(&c, yDesc, y, 0, &yd, &py)))
        return st;
    return crm_rt.cudnnPoolingForward(c.h, pd, crm_h_dnn_scalar(&c, alpha, yDesc->dtype), xd, px,
                                      crm_h_dnn_scalar(&c, beta, yDesc->dtype), yd, py);
}

cudnnStatus_t crm_srv_cudnnPoolingBackward(crm_session *s, uint64_t handle, const crm_dnn_pool *poolingDesc,
                                           double alpha, const crm_dnn_tensor *yDesc, uint64_t y,
                                           const crm_dnn_tensor *dyDesc, uint64_t dy, const crm_dnn_tensor *xDesc,
                                           uint64_t x, double beta, const crm_dnn_tensor *dxDesc, uint64_t dx)
{
    crm_h_dnn_call c;
    cudnnPoolingDescriptor_t pd;
    crm__grad4 g;
    cudnnStatus_t st;
    if ((st = crm_h_dnn_begin(&c, s, handle)) || (st = crm_h_dnn_pool(&c, poolingDesc, &pd)) ||
        (st = crm__grad4_build(&c, &g, yDesc, y, dyDesc, dy, xDesc, x, dxDesc, dx)))
        return st;
    return crm_rt.cudnnPoolingBackward(c.h, pd, crm_h_dnn_scalar(&c, alpha, dxDesc->dtype), g.yd, g.py, g.dyd, g.pdy,
                                       g.xd, g.px, crm_h_dnn_scalar(&c, beta, dxDesc->dtype), g.dxd, g.pdx);
}

cudnnStatus_t crm_srv_cudnnSoftmaxForward(crm_session *s, uint64_t handle, int algo, int mode, double alpha,
                                          const crm_dnn_tensor *xDesc, uint64_t x, double beta,
                                          const crm_dnn_tensor *yDesc, uint64_t y)
{
    crm_h_dnn_call c;
    cudnnTensorDescriptor_t xd, yd;
    void *px, *py;
    cudnnStatus_t st;
    if ((st = crm_h_dnn_begin(&c, s, handle)) || (st = crm_h_dnn_tensor(&c, xDesc, x, 0, &xd, &px)) ||
        (st = crm_h_dnn_tensor(&c, yDesc, y, 0, &yd, &py)))
        return st;
    return crm_rt.cudnnSoftmaxForward(c.h, (cudnnSoftmaxAlgorithm_t)algo, (cudnnSoftmaxMode_t)mode,
                                      crm_h_dnn_scalar(&c, alpha, yDesc->dtype), xd, px,
                                      crm_h_dnn_scalar(&c, beta, yDesc->dtype), yd, py);
}

cudnnStatus_t crm_srv_cudnnSoftmaxBackward(crm_session *s, uint64_t handle, int algo, int mode, double alpha,
                                           const crm_dnn_tensor *yDesc, uint64_t y, const crm_dnn_tensor *dyDesc,
                                           uint64_t dy, double beta, const crm_dnn_tensor *dxDesc, uint64_t dx)
{
    crm_h_dnn_call c;
    cudnnTensorDescriptor_t yd, dyd, dxd;
    void *py, *pdy, *pdx;
    cudnnStatus_t st;
    if ((st = crm_h_dnn_begin(&c, s, handle)) || (st = crm_h_dnn_tensor(&c, yDesc, y, 0, &yd, &py)) ||
        (st = crm_h_dnn_tensor(&c, dyDesc, dy, 0, &dyd, &pdy)) || (st = crm_h_dnn_tensor(&c, dxDesc, dx, 0, &dxd, &pdx)))
        return st;
    return crm_rt.cudnnSoftmaxBackward(c.h, (cudnnSoftmaxAlgorithm_t)algo, (cudnnSoftmaxMode_t)mode,
                                       crm_h_dnn_scalar(&c, alpha, dxDesc->dtype), yd, py, dyd, pdy,
                                       crm_h_dnn_scalar(&c, beta, dxDesc->dtype), dxd, pdx);
}

/* --- batch normalisation: one parameter descriptor describes several pointers --- */

cudnnStatus_t crm_srv_cudnnBatchNormalizationForwardTraining(
    crm_session *s, uint64_t handle, int mode, double alpha, double beta, const crm_dnn_tensor *xDesc, uint64_t x,
    const crm_dnn_tensor *yDesc, uint64_t y, const crm_dnn_tensor *bnDesc, uint64_t bnScale, uint64_t bnBias,
    double exponentialAverageFactor, uint64_t resultRunningMean, uint64_t resultRunningVariance, double epsilon,
    uint64_t resultSaveMean, uint64_t resultSaveInvVariance)
{
    crm_h_dnn_call c;
    cudnnTensorDescriptor_t xd, yd, bd;
    void *px, *py, *ps, *pb, *prm, *prv, *psm, *psv;
    cudnnStatus_t st;
    if ((st = crm_h_dnn_begin(&c, s, handle)) || (st = crm_h_dnn_tensor(&c, xDesc, x, 0, &xd, &px)) ||
        (st = crm_h_dnn_tensor(&c, yDesc, y, 0, &yd, &py)) || (st = crm_h_dnn_tensor(&c, bnDesc, bnScale, 0, &bd, &ps)) ||
        (st = crm_h_dnn_tensor_ptr(&c, bnDesc, bnBias, 0, &pb)) ||
        (st = crm_h_dnn_tensor_ptr(&c, bnDesc, resultRunningMean, 1, &prm)) ||
        (st = crm_h_dnn_tensor_ptr(&c, bnDesc, resultRunningVariance, 1, &prv)) ||
        (st = crm_h_dnn_tensor_ptr(&c, bnDesc, resultSaveMean, 1, &psm)) ||
        (st = crm_h_dnn_tensor_ptr(&c, bnDesc, resultSaveInvVariance, 1, &psv)))
        return st;
    return crm_rt.cudnnBatchNormalizationForwardTraining(
        c.h, (cudnnBatchNormMode_t)mode, crm_h_dnn_scalar(&c, alpha, xDesc->dtype),
        crm_h_dnn_scalar(&c, beta, xDesc->dtype), xd, px, yd, py, bd, ps, pb, exponentialAverageFactor, prm, prv,
        epsilon, psm, psv);
}

cudnnStatus_t crm_srv_cudnnBatchNormalizationForwardInference(
    crm_session *s, uint64_t handle, int mode, double alpha, double beta, const crm_dnn_tensor *xDesc, uint64_t x,
    const crm_dnn_tensor *yDesc, uint64_t y, const crm_dnn_tensor *bnDesc, uint64_t bnScale, uint64_t bnBias,
    uint64_t estimatedMean, uint64_t estimatedVariance, double epsilon)
{
    crm_h_dnn_call c;
    cudnnTensorDescriptor_t xd, yd, bd;
    void *px, *py, *ps, *pb, *pm, *pv;
    cudnnStatus_t st;
    if ((st = crm_h_dnn_begin(&c, s, handle)) || (st = crm_h_dnn_tensor(&c, xDesc, x, 0, &xd, &px)) ||
        (st = crm_h_dnn_tensor(&c, yDesc, y, 0, &yd, &py)) || (st = crm_h_dnn_tensor(&c, bnDesc, bnScale, 0, &bd, &ps)) ||
        (st = crm_h_dnn_tensor_ptr(&c, bnDesc, bnBias, 0, &pb)) ||
        (st = crm_h_dnn_tensor_ptr(&c, bnDesc, estimatedMean, 0, &pm)) ||
        (st = crm_h_dnn_tensor_ptr(&c, bnDesc, estimatedVariance, 0, &pv)))
        return st;
    return crm_rt.cudnnBatchNormalizationForwardInference(
        c.h, (cudnnBatchNormMode_t)mode, crm_h_dnn_scalar(&c, alpha, xDesc->dtype),
        crm_h_dnn_scalar(&c, beta, xDesc->dtype), xd, px, yd, py, bd, ps, pb, pm, pv, epsilon);
}

cudnnStatus_t crm_srv_cudnnBatchNormalizationBackward(
    crm_session *s, uint64_t handle, int mode, double alphaDataDiff, double betaDataDiff, double alphaParamDiff,
    double betaParamDiff, const crm_dnn_tensor *xDesc, uint64_t x, const crm_dnn_tensor *dyDesc, uint64_t dy,
    const crm_dnn_tensor *dxDesc, uint64_t dx, const crm_dnn_tensor *bnDesc, uint64_t bnScale,
    uint64_t dBnScaleResult, uint64_t dBnBiasResult, double epsilon, uint64_t savedMean, uint64_t savedInvVariance)
{
    crm_h_dnn_call c;
    cudnnTensorDescriptor_t xd, dyd, dxd, bd;
    void *px, *pdy, *pdx, *ps, *pds, *pdb, *pm, *pv;
    cudnnStatus_t st;
    if ((st = crm_h_dnn_begin(&c, s, handle)) || (st = crm_h_dnn_tensor(&c, xDesc, x, 0, &xd, &px)) ||
        (st = crm_h_dnn_tensor(&c, dyDesc, dy, 0, &dyd, &pdy)) || (st = crm_h_dnn_tensor(&c, dxDesc, dx, 0, &dxd, &pdx)) ||
        (st = crm_h_dnn_tensor(&c, bnDesc, bnScale, 0, &bd, &ps)) ||
        (st = crm_h_dnn_tensor_ptr(&c, bnDesc, dBnScaleResult, 0, &pds)) ||
        (st = crm_h_dnn_tensor_ptr(&c, bnDesc, dBnBiasResult, 0, &pdb)) ||
        (st = crm_h_dnn_tensor_ptr(&c, bnDesc, savedMean, 1, &pm)) ||
        (st = crm_h_dnn_tensor_ptr(&c, bnDesc, savedInvVariance, 1, &pv)))
        return st;
    int dt = xDesc->dtype;
    return crm_rt.cudnnBatchNormalizationBackward(
        c.h, (cudnnBatchNormMode_t)mode, crm_h_dnn_scalar(&c, alphaDataDiff, dt), crm_h_dnn_scalar(&c, betaDataDiff, dt),
        crm_h_dnn_scalar(&c, alphaParamDiff, dt), crm_h_dnn_scalar(&c, betaParamDiff, dt), xd, px, dyd, pdy, dxd, pdx,
        bd, ps, pds, pdb, epsilon, pm, pv);
}
