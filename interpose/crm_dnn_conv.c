/* crm_dnn_conv.c -- the shim's cuDNN convolutions: the three passes and the bias
 * gradient travel as asynchronous calls carrying their descriptors by value; the
 * algorithm and workspace queries need the server's answer (one round trip each). */
#include <string.h>
#include "client/crm_conn.h"
#include "interpose/crm_dnn.h"
#include "interpose/crm_export.h"

CRM_EXPORT cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t handle, const void *alpha,
                                                 const cudnnTensorDescriptor_t xDesc, const void *x,
                                                 const cudnnFilterDescriptor_t wDesc, const void *w,
                                                 const cudnnConvolutionDescriptor_t convDesc,
                                                 cudnnConvolutionFwdAlgo_t algo, void *workSpace,
                                                 size_t workSpaceSizeInBytes, const void *beta,
                                                 const cudnnTensorDescriptor_t yDesc, void *y)
{
    crm_call call = {.api = CRM_API_cudnnConvolutionForward};
    crm_args_cudnnConvolutionForward *a = &call.crm_call_u.cudnnConvolutionForward;
    cudnnStatus_t st;
    if ((st = crm_dnn_handle_id(handle, &a->handle)) || (st = crm_dnn_wire_tensor(xDesc, &a->xDesc)) ||
        (st = crm_dnn_wire_filter(wDesc, &a->wDesc)) || (st = crm_dnn_wire_conv(convDesc, &a->convDesc)) ||
        (st = crm_dnn_wire_tensor(yDesc, &a->yDesc)) || (st = crm_dnn_scalar(alpha, a->yDesc.dtype, &a->alpha)) ||
        (st = crm_dnn_scalar(beta, a->yDesc.dtype, &a->beta)))
        return st;
    a->x = crm_dnn_ptr(x);
    a->w = crm_dnn_ptr(w);
    a->y = crm_dnn_ptr(y);
    a->algo = algo;
    a->workSpace = crm_dnn_ptr(workSpace);
    a->workSpaceSizeInBytes = workSpaceSizeInBytes;
    return crm_dnn_async(&call);
}

CRM_EXPORT cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t handle, const void *alpha,
                                                      const cudnnFilterDescriptor_t wDesc, const void *w,
                                                      const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                                      const cudnnConvolutionDescriptor_t convDesc,
                                                      cudnnConvolutionBwdDataAlgo_t algo, void *workSpace,
                                                      size_t workSpaceSizeInBytes, const void *beta,
                                                      const cudnnTensorDescriptor_t dxDesc, void *dx)
{
    crm_call call = {.api = CRM_API_cudnnConvolutionBackwardData};
    crm_args_cudnnConvolutionBackwardData *a = &call.crm_call_u.cudnnConvolutionBackwardData;
    cudnnStatus_t st;
    if ((st = crm_dnn_handle_id(handle, &a->handle)) || (st = crm_dnn_wire_filter(wDesc, &a->wDesc)) ||
        (st = crm_dnn_wire_tensor(dyDesc, &a->dyDesc)) || (st = crm_dnn_wire_conv(convDesc, &a->convDesc)) ||
        (st = crm_dnn_wire_tensor(dxDesc, &a->dxDesc)) || (st = crm_dnn_scalar(alpha, a->dxDesc.dtype, &a->alpha)) ||
        (st = crm_dnn_scalar(beta, a->dxDesc.dtype, &a->beta)))
        return st;
    a->w = crm_dnn_ptr(w);
    a->dy = crm_dnn_ptr(dy);
    a->dx = crm_dnn_ptr(dx);
    a->algo = algo;
    a->workSpace = crm_dnn_ptr(workSpace);
    a->workSpaceSizeInBytes = workSpaceSizeInBytes;
    return crm_dnn_async(&call);
}

CRM_EXPORT cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t handle, const void *alpha,
                                                        const cudnnTensorDescriptor_t xDesc, const void *x,
                                                        const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                                        const cudnnConvolutionDescriptor_t convDesc,
                                                        cudnnConvolutionBwdFilterAlgo_t algo, void *workSpace,
                                                        size_t workSpaceSizeInBytes, const void *beta,
                                                        const cudnnFilterDescriptor_t dwDesc, void *dw)
{
    crm_call call = {.api = CRM_API_cudnnConvolutionBackwardFilter};
    crm_args_cudnnConvolutionBackwardFilter *a = &call.crm_call_u.cudnnConvolutionBackwardFilter;
    cudnnStatus_t st;
    if ((st = crm_dnn_handle_id(handle, &a->handle)) || (st = crm_dnn_wire_tensor(xDesc, &a->xDesc)) ||
        (st = crm_dnn_wire_tensor(dyDesc, &a->dyDesc)) || (st = crm_dnn_wire_conv(convDesc, &a->convDesc)) ||
        (st = crm_dnn_wire_filter(dwDesc, &a->dwDesc)) || (st = crm_dnn_scalar(alpha, a->dwDesc.dtype, &a->alpha)) ||
        (st = crm_dnn_scalar(beta, a->dwDesc.dtype, &a->beta)))
        return st;
    a->x = crm_dnn_ptr(x);
    a->dy = crm_dnn_ptr(dy);
    a->dw = crm_dnn_ptr(dw);
    a->algo = algo;
    a->workSpace = crm_dnn_ptr(workSpace);
    a->workSpaceSizeInBytes = workSpaceSizeInBytes;
    return crm_dnn_async(&call);
}

CRM_EXPORT cudnnStatus_t cudnnConvolutionBackwardBias(cudnnHandle_t handle, const void *alpha,
                                                      const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                                      const void *beta, const cudnnTensorDescriptor_t dbDesc, void *db)
{
    crm_call call = {.api = CRM_API_cudnnConvolutionBackwardBias};
    crm_args_cudnnConvolutionBackwardBias *a = &call.crm_call_u.cudnnConvolutionBackwardBias;
    cudnnStatus_t st;
    if ((st = crm_dnn_handle_id(handle, &a->handle)) || (st = crm_dnn_wire_tensor(dyDesc, &a->dyDesc)) ||
        (st = crm_dnn_wire_tensor(dbDesc, &a->dbDesc)) || (st = crm_dnn_scalar(alpha, a->dbDesc.dtype, &a->alpha)) ||
        (st = crm_dnn_scalar(beta, a->dbDesc.dtype, &a->beta)))
        return st;
    a->dy = crm_dnn_ptr(dy);
    a->db = crm_dnn_ptr(db);
    return crm_dnn_async(&call);
}

/* --- queries --- */

/* Copies the server's list into the caller's perf array (the three perf structs of
 * cuDNN share one layout). */
static void crm__dnn_perf_out(const crm_dnn_perfs *p, int requested, int *returned,
                              cudnnConvolutionFwdAlgoPerf_t *out)
{
    int n = p->count < requested ? p->count : requested;
    n = n < 0 ? 0 : n > CRM_DNN_ALGO_MAX ? CRM_DNN_ALGO_MAX : n;
    for (int i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof out[i]);
        out[i].algo = (cudnnConvolutionFwdAlgo_t)p->perf[i].algo;
        out[i].status = (cudnnStatus_t)p->perf[i].status;
        out[i].time = p->perf[i].time;
        out[i].memory = (size_t)p->perf[i].memory;
        out[i].determinism = (cudnnDeterminism_t)p->perf[i].determinism;
        out[i].mathType = (cudnnMathType_t)p->perf[i].math;
    }
    *returned = n;
}

_Static_assert(sizeof(cudnnConvolutionFwdAlgoPerf_t) == sizeof(cudnnConvolutionBwdDataAlgoPerf_t) &&
                   sizeof(cudnnConvolutionFwdAlgoPerf_t) == sizeof(cudnnConvolutionBwdFilterAlgoPerf_t),
               "cuDNN algorithm perf structs differ");

/* The query calls' arguments share one layout: handle, four descriptors (in the
 * order of the prototype), the requested count; API names the union arm. */
#define CRM__DNN_QUERY(API, D1, W1, D2, W2, D3, W3, D4, W4)                                          \
    crm_call call = {.api = CRM_API_##API};                                                      \
    crm_reply reply;                                                                             \
    cudnnStatus_t st;                                                                            \
    if (returnedAlgoCount == NULL || perfResults == NULL || requestedAlgoCount < 1)              \
        return CUDNN_STATUS_BAD_PARAM;                                                           \
    if ((st = crm_dnn_handle_id(handle, &call.crm_call_u.API.handle)) ||                         \
        (st = W1(D1, &call.crm_call_u.API.D1)) || (st = W2(D2, &call.crm_call_u.API.D2)) ||      \
        (st = W3(D3, &call.crm_call_u.API.D3)) || (st = W4(D4, &call.crm_call_u.API.D4)))        \
        return st;                                                                               \
    call.crm_call_u.API.requestedAlgoCount = requestedAlgoCount;                                 \
    st = crm_dnn_sync(&call, &reply);                                                            \
    if (st == CUDNN_STATUS_SUCCESS)                                                              \
        crm__dnn_perf_out(&reply.crm_reply_u.API.perf, requestedAlgoCount, returnedAlgoCount,    \
                          (cudnnConvolutionFwdAlgoPerf_t *)perfResults);                         \
    crm_conn_reply_free(&reply);                                                                 \
    return st

CRM_EXPORT cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const cudnnFilterDescriptor_t wDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t yDesc, const int requestedAlgoCount,
    int *returnedAlgoCount, cudnnConvolutionFwdAlgoPerf_t *perfResults)
{
    CRM__DNN_QUERY(cudnnGetConvolutionForwardAlgorithm_v7, xDesc, crm_dnn_wire_tensor, wDesc, crm_dnn_wire_filter,
                   convDesc, crm_dnn_wire_conv, yDesc, crm_dnn_wire_tensor);
}

CRM_EXPORT cudnnStatus_t cudnnFindConvolutionForwardAlgorithm(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const cudnnFilterDescriptor_t wDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t yDesc, const int requestedAlgoCount,
    int *returnedAlgoCount, cudnnConvolutionFwdAlgoPerf_t *perfResults)
{
    CRM__DNN_QUERY(cudnnFindConvolutionForwardAlgorithm, xDesc, crm_dnn_wire_tensor, wDesc, crm_dnn_wire_filter,
                   convDesc, crm_dnn_wire_conv, yDesc, crm_dnn_wire_tensor);
}

CRM_EXPORT cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc, const cudnnTensorDescriptor_t dyDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t dxDesc, const int requestedAlgoCount,
    int *returnedAlgoCount, cudnnConvolutionBwdDataAlgoPerf_t *perfResults)
{
    CRM__DNN_QUERY(cudnnGetConvolutionBackwardDataAlgorithm_v7, wDesc, crm_dnn_wire_filter, dyDesc,
                   crm_dnn_wire_tensor, convDesc, crm_dnn_wire_conv, dxDesc, crm_dnn_wire_tensor);
}

CRM_EXPORT cudnnStatus_t cudnnFindConvolutionBackwardDataAlgorithm(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc, const cudnnTensorDescriptor_t dyDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t dxDesc, const int requestedAlgoCount,
    int *returnedAlgoCount, cudnnConvolutionBwdDataAlgoPerf_t *perfResults)
{
    CRM__DNN_QUERY(cudnnFindConvolutionBackwardDataAlgorithm, wDesc, crm_dnn_wire_filter, dyDesc,
                   crm_dnn_wire_tensor, convDesc, crm_dnn_wire_conv, dxDesc, crm_dnn_wire_tensor);
}

CRM_EXPORT cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithm_v7(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const cudnnTensorDescriptor_t dyDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnFilterDescriptor_t dwDesc, const int requestedAlgoCount,
    int *returnedAlgoCount, cudnnConvolutionBwdFilterAlgoPerf_t *perfResults)
{
    CRM__DNN_QUERY(cudnnGetConvolutionBackwardFilterAlgorithm_v7, xDesc, crm_dnn_wire_tensor, dyDesc,
                   crm_dnn_wire_tensor, convDesc, crm_dnn_wire_conv, dwDesc, crm_dnn_wire_filter);
}

CRM_EXPORT cudnnStatus_t cudnnFindConvolutionBackwardFilterAlgorithm(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const cudnnTensorDescriptor_t dyDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnFilterDescriptor_t dwDesc, const int requestedAlgoCount,
    int *returnedAlgoCount, cudnnConvolutionBwdFilterAlgoPerf_t *perfResults)
{
    CRM__DNN_QUERY(cudnnFindConvolutionBackwardFilterAlgorithm, xDesc, crm_dnn_wire_tensor, dyDesc,
                   crm_dnn_wire_tensor, convDesc, crm_dnn_wire_conv, dwDesc, crm_dnn_wire_filter);
}

/* Workspace queries: same shape with an algorithm instead of a count. */
#define CRM__DNN_WS(API, D1, W1, D2, W2, D3, W3, D4, W4)                                             \
    crm_call call = {.api = CRM_API_##API};                                                      \
    crm_reply reply;                                                                             \
    cudnnStatus_t st;                                                                            \
    if (sizeInBytes == NULL)                                                                     \
        return CUDNN_STATUS_BAD_PARAM;                                                           \
    if ((st = crm_dnn_handle_id(handle, &call.crm_call_u.API.handle)) ||                         \
        (st = W1(D1, &call.crm_call_u.API.D1)) || (st = W2(D2, &call.crm_call_u.API.D2)) ||      \
        (st = W3(D3, &call.crm_call_u.API.D3)) || (st = W4(D4, &call.crm_call_u.API.D4)))        \
        return st;                                                                               \
    call.crm_call_u.API.algo = algo;                                                             \
    st = crm_dnn_sync(&call, &reply);                                                            \
    if (st == CUDNN_STATUS_SUCCESS)                                                              \
        *sizeInBytes = (size_t)reply.crm_reply_u.API.sizeInBytes;                                \
    crm_conn_reply_free(&reply);                                                                 \
    return st

CRM_EXPORT cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t handle,
                                                                 const cudnnTensorDescriptor_t xDesc,
                                                                 const cudnnFilterDescriptor_t wDesc,
                                                                 const cudnnConvolutionDescriptor_t convDesc,
                                                                 const cudnnTensorDescriptor_t yDesc,
                                                                 cudnnConvolutionFwdAlgo_t algo, size_t *sizeInBytes)
{
    CRM__DNN_WS(cudnnGetConvolutionForwardWorkspaceSize, xDesc, crm_dnn_wire_tensor, wDesc, crm_dnn_wire_filter,
                convDesc, crm_dnn_wire_conv, yDesc, crm_dnn_wire_tensor);
}

CRM_EXPORT cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(cudnnHandle_t handle,
                                                                      const cudnnFilterDescriptor_t wDesc,
                                                                      const cudnnTensorDescriptor_t dyDesc,
                                                                      const cudnnConvolutionDescriptor_t convDesc,
                                                                      const cudnnTensorDescriptor_t dxDesc,
                                                                      cudnnConvolutionBwdDataAlgo_t algo,
                                                                      size_t *sizeInBytes)
{
    CRM__DNN_WS(cudnnGetConvolutionBackwardDataWorkspaceSize, wDesc, crm_dnn_wire_filter, dyDesc,
                crm_dnn_wire_tensor, convDesc, crm_dnn_wire_conv, dxDesc, crm_dnn_wire_tensor);
}

CRM_EXPORT cudnnStatus_t cudnnGetConvolutionBackwardFilterWorkspaceSize(cudnnHandle_t handle,
                                                                        const cudnnTensorDescriptor_t xDesc,
                                                                        const cudnnTensorDescriptor_t dyDesc,
                                                                        const cudnnConvolutionDescriptor_t convDesc,
                                                                        const cudnnFilterDescriptor_t dwDesc,
                                                                        cudnnConvolutionBwdFilterAlgo_t algo,
                                                                        size_t *sizeInBytes)
{
    CRM__DNN_WS(cudnnGetConvolutionBackwardFilterWorkspaceSize, xDesc, crm_dnn_wire_tensor, dyDesc,
                crm_dnn_wire_tensor, convDesc, crm_dnn_wire_conv, dwDesc, crm_dnn_wire_filter);
}
