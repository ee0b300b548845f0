/* crm_emu_dnn_bn_ex.c -- the Ex forms of the emulated device's batch normalisation
 * (cudnnBatchNormalizationForwardTrainingEx, cudnnBatchNormalizationBackwardEx and
 * their workspace and reserve-space queries): bnOps adds a residual z and a ReLU,
 * y = relu(BN(x) + z), and backward passes the gradient through the ReLU (from its
 * output y) and out to dz; the work is crm_emu_dnn_bn.c's. No workspace or reserve
 * space is needed here: the queries answer 0 and the buffers go unused. */
#include "server/emu/crm_emu_dnn.h"

/* What bnOps asks for: *relu and *add; BAD_PARAM for an unknown bnOps or a missing
 * operand, NOT_SUPPORTED for an activation other than ReLU. */
cudnnStatus_t crm__bn_ops(cudnnBatchNormOps_t ops, const cudnnActivationDescriptor_t act, int has_z, int *relu,
                          int *add)
{
    *relu = ops == CUDNN_BATCHNORM_OPS_BN_ACTIVATION || ops == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION;
    *add = ops == CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION;
    if (ops != CUDNN_BATCHNORM_OPS_BN && !*relu)
        return CUDNN_STATUS_BAD_PARAM;
    if (*relu && act == NULL)
        return CUDNN_STATUS_BAD_PARAM;
    if (*add && !has_z)
        return CUDNN_STATUS_BAD_PARAM;
    return *relu && act->d.mode != CUDNN_ACTIVATION_RELU ? CUDNN_STATUS_NOT_SUPPORTED : CUDNN_STATUS_SUCCESS;
}

CRM_EXPORT cudnnStatus_t cudnnBatchNormalizationForwardTrainingEx(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps, const void *alpha, const void *beta,
    const cudnnTensorDescriptor_t xDesc, const void *xData, const cudnnTensorDescriptor_t zDesc, const void *zData,
    const cudnnTensorDescriptor_t yDesc, void *yData, const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc,
    const void *bnScale, const void *bnBias, double exponentialAverageFactor, void *resultRunningMean,
    void *resultRunningVariance, double epsilon, void *resultSaveMean, void *resultSaveInvVariance,
    cudnnActivationDescriptor_t activationDesc, void *workspace, size_t workSpaceSizeInBytes, void *reserveSpace,
    size_t reserveSpaceSizeInBytes)
{
    int relu, add;
    cudnnStatus_t st = crm__bn_ops(bnOps, activationDesc, zDesc != NULL && zData != NULL, &relu, &add);
    (void)workspace, (void)workSpaceSizeInBytes, (void)reserveSpace, (void)reserveSpaceSizeInBytes; /* none needed */
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    return crm__bn_train(handle, mode, alpha, beta, xDesc, xData, add ? zDesc : NULL, add ? zData : NULL, relu, yDesc,
                         yData, bnScaleBiasMeanVarDesc, bnScale, bnBias, exponentialAverageFactor, resultRunningMean,
                         resultRunningVariance, epsilon, resultSaveMean, resultSaveInvVariance);
}

CRM_EXPORT cudnnStatus_t cudnnBatchNormalizationBackwardEx(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps, const void *alphaDataDiff,
    const void *betaDataDiff, const void *alphaParamDiff, const void *betaParamDiff,
    const cudnnTensorDescriptor_t xDesc, const void *xData, const cudnnTensorDescriptor_t yDesc, const void *yData,
    const cudnnTensorDescriptor_t dyDesc, const void *dyData, const cudnnTensorDescriptor_t dzDesc, void *dzData,
    const cudnnTensorDescriptor_t dxDesc, void *dxData, const cudnnTensorDescriptor_t dBnScaleBiasDesc,
    const void *bnScaleData, const void *bnBiasData, void *dBnScaleData, void *dBnBiasData, double epsilon,
    const void *savedMean, const void *savedInvVariance, cudnnActivationDescriptor_t activationDesc, void *workSpace,
    size_t workSpaceSizeInBytes, void *reserveSpace, size_t reserveSpaceSizeInBytes)
{
    int relu, add;
    cudnnStatus_t st = crm__bn_ops(bnOps, activationDesc, dzDesc != NULL && dzData != NULL, &relu, &add);
    (void)bnBiasData, (void)workSpace, (void)workSpaceSizeInBytes, (void)reserveSpace, (void)reserveSpaceSizeInBytes;
    if (st == CUDNN_STATUS_SUCCESS && relu && (yDesc == NULL || yData == NULL))
        st = CUDNN_STATUS_BAD_PARAM; /* the ReLU's gradient needs its output */
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    return crm__bn_back_call(handle, mode, alphaDataDiff, betaDataDiff, alphaParamDiff, betaParamDiff, xDesc, xData,
                             relu ? yDesc : NULL, yData, dyDesc, dyData, add ? dzDesc : NULL, dzData, dxDesc, dxData,
                             dBnScaleBiasDesc, bnScaleData, dBnScaleData, dBnBiasData, epsilon, savedMean,
                             savedInvVariance);
}

/* The size queries: the emulated device needs neither workspace nor reserve space. */
cudnnStatus_t crm__bn_size(cudnnHandle_t handle, cudnnBatchNormOps_t ops, const cudnnActivationDescriptor_t act,
                           int has_z, const cudnnTensorDescriptor_t xd, size_t *size)
{
    int relu, add;
    if (!crm__dnn_handle_ok(handle) || xd == NULL || size == NULL)
        return CUDNN_STATUS_BAD_PARAM;
    cudnnStatus_t st = crm__bn_ops(ops, act, has_z, &relu, &add);
    if (st == CUDNN_STATUS_SUCCESS)
        *size = 0;
    return st;
}

CRM_EXPORT cudnnStatus_t cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps, const cudnnTensorDescriptor_t xDesc,
    const cudnnTensorDescriptor_t zDesc, const cudnnTensorDescriptor_t yDesc,
    const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const cudnnActivationDescriptor_t activationDesc,
    size_t *sizeInBytes)
{
    (void)yDesc;
    if (xDesc == NULL || bnScaleBiasMeanVarDesc == NULL || crm__bn_shape(mode, &xDesc->d, &bnScaleBiasMeanVarDesc->d))
        return CUDNN_STATUS_BAD_PARAM;
    return crm__bn_size(handle, bnOps, activationDesc, zDesc != NULL, xDesc, sizeInBytes);
}

CRM_EXPORT cudnnStatus_t cudnnGetBatchNormalizationBackwardExWorkspaceSize(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps, const cudnnTensorDescriptor_t xDesc,
    const cudnnTensorDescriptor_t yDesc, const cudnnTensorDescriptor_t dyDesc, const cudnnTensorDescriptor_t dzDesc,
    const cudnnTensorDescriptor_t dxDesc, const cudnnTensorDescriptor_t dBnScaleBiasDesc,
    const cudnnActivationDescriptor_t activationDesc, size_t *sizeInBytes)
{
    (void)yDesc, (void)dyDesc, (void)dxDesc;
    if (xDesc == NULL || dBnScaleBiasDesc == NULL || crm__bn_shape(mode, &xDesc->d, &dBnScaleBiasDesc->d))
        return CUDNN_STATUS_BAD_PARAM;
    return crm__bn_size(handle, bnOps, activationDesc, dzDesc != NULL, xDesc, sizeInBytes);
}

CRM_EXPORT cudnnStatus_t cudnnGetBatchNormalizationTrainingExReserveSpaceSize(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps,
    const cudnnActivationDescriptor_t activationDesc, const cudnnTensorDescriptor_t xDesc, size_t *sizeInBytes)
{
    (void)mode;
    return crm__bn_size(handle, bnOps, activationDesc, 1, xDesc, sizeInBytes);
}
