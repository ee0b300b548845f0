/* crm_emu_dnn_norm.c -- cuDNN's v8 normalization calls on the emulated device
 * (cudnnNormalizationForwardInference/Training, cudnnNormalizationBackward and their
 * size queries): batch normalisation in other words, so each one checks what the
 * v8 form adds and hands the work to the batch-norm cores (crm_emu_dnn_bn.c,
 * crm_emu_dnn_bn_ex.c). A normMode is the batch-norm mode of the same value
 * (per activation, per channel) and a normOps the bnOps of the same value; the
 * means and variances have a descriptor of their own, which must give the scale's
 * and bias's shape; groupCnt must be 1 (cuDNN reserves it). */
#include "server/emu/crm_emu_dnn.h"

/* NOT_SUPPORTED for a group count other than 1; BAD_PARAM for a mean/variance
 * descriptor of another shape than the scale/bias one. */
static cudnnStatus_t crm__norm_args(int groupCnt, const cudnnTensorDescriptor_t scale_bias,
                                    const cudnnTensorDescriptor_t mean_var)
{
    if (groupCnt != 1)
        return CUDNN_STATUS_NOT_SUPPORTED;
    if (scale_bias == NULL || mean_var == NULL || !crm__dnn_same_dims(&scale_bias->d, &mean_var->d))
        return CUDNN_STATUS_BAD_PARAM;
    return CUDNN_STATUS_SUCCESS;
}

CRM_EXPORT cudnnStatus_t cudnnNormalizationForwardInference(
    cudnnHandle_t handle, cudnnNormMode_t mode, cudnnNormOps_t normOps, cudnnNormAlgo_t algo, const void *alpha,
    const void *beta, const cudnnTensorDescriptor_t xDesc, const void *x,
    const cudnnTensorDescriptor_t normScaleBiasDesc, const void *normScale, const void *normBias,
    const cudnnTensorDescriptor_t normMeanVarDesc, const void *estimatedMean, const void *estimatedVariance,
    const cudnnTensorDescriptor_t zDesc, const void *z, cudnnActivationDescriptor_t activationDesc,
    const cudnnTensorDescriptor_t yDesc, void *y, double epsilon, int groupCnt)
{
    int relu, add;
    cudnnStatus_t st = crm__norm_args(groupCnt, normScaleBiasDesc, normMeanVarDesc);
    (void)algo;
    if (st == CUDNN_STATUS_SUCCESS)
        st = crm__bn_ops((cudnnBatchNormOps_t)normOps, activationDesc, zDesc != NULL && z != NULL, &relu, &add);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    return crm__bn_infer(handle, (cudnnBatchNormMode_t)mode, alpha, beta, xDesc, x, add ? zDesc : NULL,
                         add ? z : NULL, relu, yDesc, y, normScaleBiasDesc, normScale, normBias, estimatedMean,
                         estimatedVariance, epsilon);
}

CRM_EXPORT cudnnStatus_t cudnnNormalizationForwardTraining(
    cudnnHandle_t handle, cudnnNormMode_t mode, cudnnNormOps_t normOps, cudnnNormAlgo_t algo, const void *alpha,
    const void *beta, const cudnnTensorDescriptor_t xDesc, const void *xData,
    const cudnnTensorDescriptor_t normScaleBiasDesc, const void *normScale, const void *normBias,
    double exponentialAverageFactor, const cudnnTensorDescriptor_t normMeanVarDesc, void *resultRunningMean,
    void *resultRunningVariance, double epsilon, void *resultSaveMean, void *resultSaveInvVariance,
    cudnnActivationDescriptor_t activationDesc, const cudnnTensorDescriptor_t zDesc, const void *zData,
    const cudnnTensorDescriptor_t yDesc, void *yData, void *workspace, size_t workSpaceSizeInBytes,
    void *reserveSpace, size_t reserveSpaceSizeInBytes, int groupCnt)
{
    int relu, add;
    cudnnStatus_t st = crm__norm_args(groupCnt, normScaleBiasDesc, normMeanVarDesc);
    (void)algo, (void)workspace, (void)workSpaceSizeInBytes, (void)reserveSpace, (void)reserveSpaceSizeInBytes;
    if (st == CUDNN_STATUS_SUCCESS)
        st = crm__bn_ops((cudnnBatchNormOps_t)normOps, activationDesc, zDesc != NULL && zData != NULL, &relu, &add);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    return crm__bn_train(handle, (cudnnBatchNormMode_t)mode, alpha, beta, xDesc, xData, add ? zDesc : NULL,
                         add ? zData : NULL, relu, yDesc, yData, normScaleBiasDesc, normScale, normBias,
                         exponentialAverageFactor, resultRunningMean, resultRunningVariance, epsilon, resultSaveMean,
                         resultSaveInvVariance);
}

CRM_EXPORT cudnnStatus_t cudnnNormalizationBackward(
    cudnnHandle_t handle, cudnnNormMode_t mode, cudnnNormOps_t normOps, cudnnNormAlgo_t algo,
    const void *alphaDataDiff, const void *betaDataDiff, const void *alphaParamDiff, const void *betaParamDiff,
    const cudnnTensorDescriptor_t xDesc, const void *xData, const cudnnTensorDescriptor_t yDesc, const void *yData,
    const cudnnTensorDescriptor_t dyDesc, const void *dyData, const cudnnTensorDescriptor_t dzDesc, void *dzData,
    const cudnnTensorDescriptor_t dxDesc, void *dxData, const cudnnTensorDescriptor_t dNormScaleBiasDesc,
    const void *normScaleData, const void *normBiasData, void *dNormScaleData, void *dNormBiasData, double epsilon,
    const cudnnTensorDescriptor_t normMeanVarDesc, const void *savedMean, const void *savedInvVariance,
    cudnnActivationDescriptor_t activationDesc, void *workSpace, size_t workSpaceSizeInBytes, void *reserveSpace,
    size_t reserveSpaceSizeInBytes, int groupCnt)
{
    int relu, add;
    cudnnStatus_t st = crm__norm_args(groupCnt, dNormScaleBiasDesc, normMeanVarDesc);
    (void)algo, (void)normBiasData, (void)workSpace, (void)workSpaceSizeInBytes, (void)reserveSpace,
        (void)reserveSpaceSizeInBytes;
    if (st == CUDNN_STATUS_SUCCESS)
        st = crm__bn_ops((cudnnBatchNormOps_t)normOps, activationDesc, dzDesc != NULL && dzData != NULL, &relu, &add);
    if (st == CUDNN_STATUS_SUCCESS && relu && (yDesc == NULL || yData == NULL))
        st = CUDNN_STATUS_BAD_PARAM; /* the activation's gradient needs its output */
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    return crm__bn_back_call(handle, (cudnnBatchNormMode_t)mode, alphaDataDiff, betaDataDiff, alphaParamDiff,
                             betaParamDiff, xDesc, xData, relu ? yDesc : NULL, yData, dyDesc, dyData,
                             add ? dzDesc : NULL, dzData, dxDesc, dxData, dNormScaleBiasDesc, normScaleData,
                             dNormScaleData, dNormBiasData, epsilon, savedMean, savedInvVariance);
}

/* The size queries: the emulated device needs neither workspace nor reserve space. */
CRM_EXPORT cudnnStatus_t cudnnGetNormalizationForwardTrainingWorkspaceSize(
    cudnnHandle_t handle, cudnnNormMode_t mode, cudnnNormOps_t normOps, cudnnNormAlgo_t algo,
    const cudnnTensorDescriptor_t xDesc, const cudnnTensorDescriptor_t zDesc, const cudnnTensorDescriptor_t yDesc,
    const cudnnTensorDescriptor_t normScaleBiasDesc, const cudnnActivationDescriptor_t activationDesc,
    const cudnnTensorDescriptor_t normMeanVarDesc, size_t *sizeInBytes, int groupCnt)
{
    cudnnStatus_t st = crm__norm_args(groupCnt, normScaleBiasDesc, normMeanVarDesc);
    (void)algo, (void)yDesc;
    if (st == CUDNN_STATUS_SUCCESS && (xDesc == NULL || crm__bn_shape(mode, &xDesc->d, &normScaleBiasDesc->d)))
        st = CUDNN_STATUS_BAD_PARAM;
    return st != CUDNN_STATUS_SUCCESS
               ? st
               : crm__bn_size(handle, (cudnnBatchNormOps_t)normOps, activationDesc, zDesc != NULL, xDesc, sizeInBytes);
}

CRM_EXPORT cudnnStatus_t cudnnGetNormalizationBackwardWorkspaceSize(
    cudnnHandle_t handle, cudnnNormMode_t mode, cudnnNormOps_t normOps, cudnnNormAlgo_t algo,
    const cudnnTensorDescriptor_t xDesc, const cudnnTensorDescriptor_t yDesc, const cudnnTensorDescriptor_t dyDesc,
    const cudnnTensorDescriptor_t dzDesc, const cudnnTensorDescriptor_t dxDesc,
    const cudnnTensorDescriptor_t dNormScaleBiasDesc, const cudnnActivationDescriptor_t activationDesc,
    const cudnnTensorDescriptor_t normMeanVarDesc, size_t *sizeInBytes, int groupCnt)
{
    cudnnStatus_t st = crm__norm_args(groupCnt, dNormScaleBiasDesc, normMeanVarDesc);
    (void)algo, (void)yDesc, (void)dyDesc, (void)dxDesc;
    if (st == CUDNN_STATUS_SUCCESS && (xDesc == NULL || crm__bn_shape(mode, &xDesc->d, &dNormScaleBiasDesc->d)))
        st = CUDNN_STATUS_BAD_PARAM;
    return st != CUDNN_STATUS_SUCCESS
               ? st
               : crm__bn_size(handle, (cudnnBatchNormOps_t)normOps, activationDesc, dzDesc != NULL, xDesc, sizeInBytes);
}

CRM_EXPORT cudnnStatus_t cudnnGetNormalizationTrainingReserveSpaceSize(cudnnHandle_t handle, cudnnNormMode_t mode,
                                                                       cudnnNormOps_t normOps, cudnnNormAlgo_t algo,
                                                                       const cudnnActivationDescriptor_t activationDesc,
                                                                       const cudnnTensorDescriptor_t xDesc,
                                                                       size_t *sizeInBytes, int groupCnt)
{
    (void)mode, (void)algo;
    if (groupCnt != 1)
        return CUDNN_STATUS_NOT_SUPPORTED;
    return crm__bn_size(handle, (cudnnBatchNormOps_t)normOps, activationDesc, 1, xDesc, sizeInBytes);
}
