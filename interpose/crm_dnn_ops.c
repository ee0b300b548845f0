/* crm_dnn_ops.c -- the shim's cuDNN tensor operations, activation, pooling, softmax
 * and batch normalisation: asynchronous calls carrying descriptors by value and
 * scaling factors read here (double for double data, float otherwise). */
#include "interpose/crm_dnn.h"
#include "interpose/crm_export.h"

/* Argument structs are filled in place: A is the union arm of the call. */
#define CRM__DNN_ARGS(API) \
    crm_call call = {.api = CRM_API_##API}; \
    crm_args_##API *a = &call.crm_call_u.API; \
    cudnnStatus_t st

CRM_EXPORT cudnnStatus_t cudnnAddTensor(cudnnHandle_t handle, const void *alpha, const cudnnTensorDescriptor_t aDesc,
                                        const void *A, const void *beta, const cudnnTensorDescriptor_t cDesc, void *C)
{
    CRM__DNN_ARGS(cudnnAddTensor);
    if ((st = crm_dnn_handle_id(handle, &a->handle)) || (st = crm_dnn_wire_tensor(aDesc, &a->aDesc)) ||
        (st = crm_dnn_wire_tensor(cDesc, &a->cDesc)) || (st = crm_dnn_scalar(alpha, a->cDesc.dtype, &a->alpha)) ||
        (st = crm_dnn_scalar(beta, a->cDesc.dtype, &a->beta)))
        return st;
    a->A = crm_dnn_ptr(A);
    a->C = crm_dnn_ptr(C);
    return crm_dnn_async(&call);
}

/* SQRT and NOT use A alone: B's descriptor may then be NULL (A's travels instead). */
CRM_EXPORT cudnnStatus_t cudnnOpTensor(cudnnHandle_t handle, const cudnnOpTensorDescriptor_t opTensorDesc,
                                       const void *alpha1, const cudnnTensorDescriptor_t aDesc, const void *A,
                                       const void *alpha2, const cudnnTensorDescriptor_t bDesc, const void *B,
                                       const void *beta, const cudnnTensorDescriptor_t cDesc, void *C)
{
    CRM__DNN_ARGS(cudnnOpTensor);
    if ((st = crm_dnn_handle_id(handle, &a->handle)) || (st = crm_dnn_wire_op(opTensorDesc, &a->opDesc)) ||
        (st = crm_dnn_wire_tensor(aDesc, &a->aDesc)) || (st = crm_dnn_wire_tensor(cDesc, &a->cDesc)))
        return st;
    int unary = a->opDesc.op == CUDNN_OP_TENSOR_SQRT || a->opDesc.op == CUDNN_OP_TENSOR_NOT;
    if ((st = crm_dnn_wire_tensor(unary && bDesc == NULL ? aDesc : bDesc, &a->bDesc)) ||
        (st = crm_dnn_scalar(alpha1, a->cDesc.dtype, &a->alpha1)) ||
        (st = crm_dnn_scalar(beta, a->cDesc.dtype, &a->beta)))
        return st;
    if (alpha2 == NULL && !unary)
        return CUDNN_STATUS_BAD_PARAM;
    if (alpha2 != NULL)
        crm_dnn_scalar(alpha2, a->cDesc.dtype, &a->alpha2);
    a->A = crm_dnn_ptr(A);
    a->B = crm_dnn_ptr(B);
    a->C = crm_dnn_ptr(C);
    return crm_dnn_async(&call);
}

CRM_EXPORT cudnnStatus_t cudnnSetTensor(cudnnHandle_t handle, const cudnnTensorDescriptor_t yDesc, void *y,
                                        const void *valuePtr)
{
    CRM__DNN_ARGS(cudnnSetTensor);
    if ((st = crm_dnn_handle_id(handle, &a->handle)) || (st = crm_dnn_wire_tensor(yDesc, &a->yDesc)) ||
        (st = crm_dnn_scalar(valuePtr, a->yDesc.dtype, &a->value)))
        return st;
    a->y = crm_dnn_ptr(y);
    return crm_dnn_async(&call);
}

CRM_EXPORT cudnnStatus_t cudnnScaleTensor(cudnnHandle_t handle, const cudnnTensorDescriptor_t yDesc, void *y,
                                          const void *alpha)
{
    CRM__DNN_ARGS(cudnnScaleTensor);
    if ((st = crm_dnn_handle_id(handle, &a->handle)) || (st = crm_dnn_wire_tensor(yDesc, &a->yDesc)) ||
        (st = crm_dnn_scalar(alpha, a->yDesc.dtype, &a->alpha)))
        return st;
    a->y = crm_dnn_ptr(y);
    return crm_dnn_async(&call);
}

CRM_EXPORT cudnnStatus_t cudnnTransformTensor(cudnnHandle_t handle, const void *alpha,
                                              const cudnnTensorDescriptor_t xDesc, const void *x, const void *beta,
                                              const cudnnTensorDescriptor_t yDesc, void *y)
{
    CRM__DNN_ARGS(cudnnTransformTensor);
    if ((st = crm_dnn_handle_id(handle, &a->handle)) || (st = crm_dnn_wire_tensor(xDesc, &a->xDesc)) ||
        (st = crm_dnn_wire_tensor(yDesc, &a->yDesc)) || (st = crm_dnn_scalar(alpha, a->yDesc.dtype, &a->alpha)) ||
        (st = crm_dnn_scalar(beta, a->yDesc.dtype, &a->beta)))
        return st;
    a->x = crm_dnn_ptr(x);
    a->y = crm_dnn_ptr(y);
    return crm_dnn_async(&call);
}

CRM_EXPORT cudnnStatus_t cudnnActivationForward(cudnnHandle_t handle, cudnnActivationDescriptor_t activationDesc,
                                                const void *alpha, const cudnnTensorDescriptor_t xDesc, const void *x,
                                                const void *beta, const cudnnTensorDescriptor_t yDesc, void *y)
{
    CRM__DNN_ARGS(cudnnActivationForward);
    if ((st = crm_dnn_handle_id(handle, &a->handle)) || (st = crm_dnn_wire_act(activationDesc, &a->activationDesc)) ||
        (st = crm_dnn_wire_tensor(xDesc, &a->xDesc)) || (st = crm_dnn_wire_tensor(yDesc, &a->yDesc)) ||
        (st = crm_dnn_scalar(alpha, a->yDesc.dtype, &a->alpha)) || (st = crm_dnn_scalar(beta, a->yDesc.dtype, &a->beta)))
        return st;
    a->x = crm_dnn_ptr(x);
    a->y = crm_dnn_ptr(y);
    return crm_dnn_async(&call);
}

CRM_EXPORT cudnnStatus_t cudnnActivationBackward(cudnnHandle_t handle, cudnnActivationDescriptor_t activationDesc,
                                                 const void *alpha, const cudnnTensorDescriptor_t yDesc, const void *y,
                                                 const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                                 const cudnnTensorDescriptor_t xDesc, const void *x, const void *beta,
                                                 const cudnnTensorDescriptor_t dxDesc, void *dx)
{
    CRM__DNN_ARGS(cudnnActivationBackward);
    if ((st = crm_dnn_handle_id(handle, &a->handle)) || (st = crm_dnn_wire_act(activationDesc, &a->activationDesc)) ||
        (st = crm_dnn_wire_tensor(yDesc, &a->yDesc)) || (st = crm_dnn_wire_tensor(dyDesc, &a->dyDesc)) ||
        (st = crm_dnn_wire_tensor(xDesc, &a->xDesc)) || (st = crm_dnn_wire_tensor(dxDesc, &a->dxDesc)) ||
        (st = crm_dnn_scalar(alpha, a->dxDesc.dtype, &a->alpha)) ||
        (st = crm_dnn_scalar(beta, a->dxDesc.dtype, &a->beta)))
        return st;
    a->y = crm_dnn_ptr(y);
    a->dy = crm_dnn_ptr(dy);
    a->x = crm_dnn_ptr(x);
    a->dx = crm_dnn_ptr(dx);
    return crm_dnn_async(&call);
}

CRM_EXPORT cudnnStatus_t cudnnPoolingForward(cudnnHandle_t handle, const cudnnPoolingDescriptor_t poolingDesc,
                                             const void *alpha, const cudnnTensorDescriptor_t xDesc, const void *x,
                                             const void *beta, const cudnnTensorDescriptor_t yDesc, void *y)
{
    CRM__DNN_ARGS(cudnnPoolingForward);
    if ((st = crm_dnn_handle_id(handle, &a->handle)) || (st = crm_dnn_wire_pool(poolingDesc, &a->poolingDesc)) ||
        (st = crm_dnn_wire_tensor(xDesc, &a->xDesc)) || (st = crm_dnn_wire_tensor(yDesc, &a->yDesc)) ||
        (st = crm_dnn_scalar(alpha, a->yDesc.dtype, &a->alpha)) || (st = crm_dnn_scalar(beta, a->yDesc.dtype, &a->beta)))
        return st;
    a->x = crm_dnn_ptr(x);
    a->y = crm_dnn_ptr(y);
    return crm_dnn_async(&call);
}

CRM_EXPORT cudnnStatus_t cudnnPoolingBackward(cudnnHandle_t handle, const cudnnPoolingDescriptor_t poolingDesc,
                                              const void *alpha, const cudnnTensorDescriptor_t yDesc, const void *y,
                                              const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                              const cudnnTensorDescriptor_t xDesc, const void *x, const void *beta,
                                              const cudnnTensorDescriptor_t dxDesc, void *dx)
{
    CRM__DNN_ARGS(cudnnPoolingBackward);
    if ((st = crm_dnn_handle_id(handle, &a->handle)) || (st = crm_dnn_wire_pool(poolingDesc, &a->poolingDesc)) ||
        (st = crm_dnn_wire_tensor(yDesc, &a->yDesc)) || (st = crm_dnn_wire_tensor(dyDesc, &a->dyDesc)) ||
        (st = crm_dnn_wire_tensor(xDesc, &a->xDesc)) || (st = crm_dnn_wire_tensor(dxDesc, &a->dxDesc)) ||
        (st = crm_dnn_scalar(alpha, a->dxDesc.dtype, &a->alpha)) ||
        (st = crm_dnn_scalar(beta, a->dxDesc.dtype, &a->beta)))
        return st;
    a->y = crm_dnn_ptr(y);
    a->dy = crm_dnn_ptr(dy);
    a->x = crm_dnn_ptr(x);
    a->dx = crm_dnn_ptr(dx);
    return crm_dnn_async(&call);
}

CRM_EXPORT cudnnStatus_t cudnnSoftmaxForward(cudnnHandle_t handle, cudnnSoftmaxAlgorithm_t algo,
                                             cudnnSoftmaxMode_t mode, const void *alpha,
                                             const cudnnTensorDescriptor_t xDesc, const void *x, const void *beta,
                                             const cudnnTensorDescriptor_t yDesc, void *y)
{
    CRM__DNN_ARGS(cudnnSoftmaxForward);
    if ((st = crm_dnn_handle_id(handle, &a->handle)) || (st = crm_dnn_wire_tensor(xDesc, &a->xDesc)) ||
        (st = crm_dnn_wire_tensor(yDesc, &a->yDesc)) || (st = crm_dnn_scalar(alpha, a->yDesc.dtype, &a->alpha)) ||
        (st = crm_dnn_scalar(beta, a->yDesc.dtype, &a->beta)))
        return st;
    a->algo = algo;
    a->mode = mode;
    a->x = crm_dnn_ptr(x);
    a->y = crm_dnn_ptr(y);
    return crm_dnn_async(&call);
}

CRM_EXPORT cudnnStatus_t cudnnSoftmaxBackward(cudnnHandle_t handle, cudnnSoftmaxAlgorithm_t algo,
                                              cudnnSoftmaxMode_t mode, const void *alpha,
                                              const cudnnTensorDescriptor_t yDesc, const void *y,
                                              const cudnnTensorDescriptor_t dyDesc, const void *dy, const void *beta,
                                              const cudnnTensorDescriptor_t dxDesc, void *dx)
{
    CRM__DNN_ARGS(cudnnSoftmaxBackward);
    if ((st = crm_dnn_handle_id(handle, &a->handle)) || (st = crm_dnn_wire_tensor(yDesc, &a->yDesc)) ||
        (st = crm_dnn_wire_tensor(dyDesc, &a->dyDesc)) || (st = crm_dnn_wire_tensor(dxDesc, &a->dxDesc)) ||
        (st = crm_dnn_scalar(alpha, a->dxDesc.dtype, &a->alpha)) ||
        (st = crm_dnn_scalar(beta, a->dxDesc.dtype, &a->beta)))
        return st;
    a->algo = algo;
    a->mode = mode;
    a->y = crm_dnn_ptr(y);
    a->dy = crm_dnn_ptr(dy);
    a->dx = crm_dnn_ptr(dx);
    return crm_dnn_async(&call);
}

CRM_EXPORT cudnnStatus_t cudnnBatchNormalizationForwardTraining(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void *alpha, const void *beta,
    const cudnnTensorDescriptor_t xDesc, const void *x, const cudnnTensorDescriptor_t yDesc, void *y,
    const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void *bnScale, const void *bnBias,
    double exponentialAverageFactor, void *resultRunningMean, void *resultRunningVariance, double epsilon,
    void *resultSaveMean, void *resultSaveInvVariance)
{
    CRM__DNN_ARGS(cudnnBatchNormalizationForwardTraining);
    if ((st = crm_dnn_handle_id(handle, &a->handle)) || (st = crm_dnn_wire_tensor(xDesc, &a->xDesc)) ||
        (st = crm_dnn_wire_tensor(yDesc, &a->yDesc)) ||
        (st = crm_dnn_wire_tensor(bnScaleBiasMeanVarDesc, &a->bnScaleBiasMeanVarDesc)) ||
        (st = crm_dnn_scalar(alpha, a->xDesc.dtype, &a->alpha)) || (st = crm_dnn_scalar(beta, a->xDesc.dtype, &a->beta)))
        return st;
    a->mode = mode;
    a->x = crm_dnn_ptr(x);
    a->y = crm_dnn_ptr(y);
    a->bnScale = crm_dnn_ptr(bnScale);
    a->bnBias = crm_dnn_ptr(bnBias);
    a->exponentialAverageFactor = exponentialAverageFactor;
    a->resultRunningMean = crm_dnn_ptr(resultRunningMean);
    a->resultRunningVariance = crm_dnn_ptr(resultRunningVariance);
    a->epsilon = epsilon;
    a->resultSaveMean = crm_dnn_ptr(resultSaveMean);
    a->resultSaveInvVariance = crm_dnn_ptr(resultSaveInvVariance);
    return crm_dnn_async(&call);
}

CRM_EXPORT cudnnStatus_t cudnnBatchNormalizationForwardInference(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void *alpha, const void *beta,
    const cudnnTensorDescriptor_t xDesc, const void *x, const cudnnTensorDescriptor_t yDesc, void *y,
    const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void *bnScale, const void *bnBias,
    const void *estimatedMean, const void *estimatedVariance, double epsilon)
{
    CRM__DNN_ARGS(cudnnBatchNormalizationForwardInference);
    if ((st = crm_dnn_handle_id(handle, &a->handle)) || (st = crm_dnn_wire_tensor(xDesc, &a->xDesc)) ||
        (st = crm_dnn_wire_tensor(yDesc, &a->yDesc)) ||
        (st = crm_dnn_wire_tensor(bnScaleBiasMeanVarDesc, &a->bnScaleBiasMeanVarDesc)) ||
        (st = crm_dnn_scalar(alpha, a->xDesc.dtype, &a->alpha)) || (st = crm_dnn_scalar(beta, a->xDesc.dtype, &a->beta)))
        return st;
    a->mode = mode;
    a->x = crm_dnn_ptr(x);
    a->y = crm_dnn_ptr(y);
    a->bnScale = crm_dnn_ptr(bnScale);
    a->bnBias = crm_dnn_ptr(bnBias);
    a->estimatedMean = crm_dnn_ptr(estimatedMean);
    a->estimatedVariance = crm_dnn_ptr(estimatedVariance);
    a->epsilon = epsilon;
    return crm_dnn_async(&call);
}

CRM_EXPORT cudnnStatus_t cudnnBatchNormalizationBackward(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void *alphaDataDiff, const void *betaDataDiff,
    const void *alphaParamDiff, const void *betaParamDiff, const cudnnTensorDescriptor_t xDesc, const void *x,
    const cudnnTensorDescriptor_t dyDesc, const void *dy, const cudnnTensorDescriptor_t dxDesc, void *dx,
    const cudnnTensorDescriptor_t dBnScaleBiasDesc, const void *bnScale, void *dBnScaleResult, void *dBnBiasResult,
    double epsilon, const void *savedMean, const void *savedInvVariance)
{
    CRM__DNN_ARGS(cudnnBatchNormalizationBackward);
    if ((st = crm_dnn_handle_id(handle, &a->handle)) || (st = crm_dnn_wire_tensor(xDesc, &a->xDesc)) ||
        (st = crm_dnn_wire_tensor(dyDesc, &a->dyDesc)) || (st = crm_dnn_wire_tensor(dxDesc, &a->dxDesc)) ||
        (st = crm_dnn_wire_tensor(dBnScaleBiasDesc, &a->dBnScaleBiasDesc)) ||
        (st = crm_dnn_scalar(alphaDataDiff, a->xDesc.dtype, &a->alphaDataDiff)) ||
        (st = crm_dnn_scalar(betaDataDiff, a->xDesc.dtype, &a->betaDataDiff)) ||
        (st = crm_dnn_scalar(alphaParamDiff, a->xDesc.dtype, &a->alphaParamDiff)) ||
        (st = crm_dnn_scalar(betaParamDiff, a->xDesc.dtype, &a->betaParamDiff)))
        return st;
    a->mode = mode;
    a->x = crm_dnn_ptr(x);
    a->dy = crm_dnn_ptr(dy);
    a->dx = crm_dnn_ptr(dx);
    a->bnScale = crm_dnn_ptr(bnScale);
    a->dBnScaleResult = crm_dnn_ptr(dBnScaleResult);
    a->dBnBiasResult = crm_dnn_ptr(dBnBiasResult);
    a->epsilon = epsilon;
    a->savedMean = crm_dnn_ptr(savedMean);
    a->savedInvVariance = crm_dnn_ptr(savedInvVariance);
    return crm_dnn_async(&call);
}
