/* crm_dnn_conv.c -- the shim's cuDNN convolution algorithm queries: each needs the
 * server's answer (one round trip), a list of perf structs the reply sizes. The
 * passes and the workspace sizes are generated (`dnn` rows of protocol/cudnn.api). */
#include <string.h>
#include "client/crm_conn.h"
#include "interpose/crm_dnn.h"
#include "interpose/crm_export.h"

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
