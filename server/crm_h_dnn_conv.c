/* crm_h_dnn_conv.c -- handlers of the cuDNN convolution algorithm queries: the
 * descriptors are built (no memory is touched) and the backend's list copied into
 * the wire's. The passes and the workspace sizes are generated (crm_h_dnn_gen.c). */
#include "common/crm_dnn_desc.h"
#include "server/crm_backend.h"
#include "server/crm_h_dnn.h"

/* The three query kinds of each pass share one signature (perf structs alike). */
typedef cudnnStatus_t (*crm__dnn_fwd_query)(cudnnHandle_t, const cudnnTensorDescriptor_t,
                                            const cudnnFilterDescriptor_t, const cudnnConvolutionDescriptor_t,
                                            const cudnnTensorDescriptor_t, const int, int *,
                                            cudnnConvolutionFwdAlgoPerf_t *);

_Static_assert(sizeof(cudnnConvolutionFwdAlgoPerf_t) == sizeof(cudnnConvolutionBwdDataAlgoPerf_t) &&
                   sizeof(cudnnConvolutionFwdAlgoPerf_t) == sizeof(cudnnConvolutionBwdFilterAlgoPerf_t),
               "cuDNN algorithm perf structs differ");

/* The descriptors of a convolution query: input tensor, filter, convolution, output
 * tensor (backward queries pass their gradients in those roles: dx/x, dw/w, dy/y). */
typedef struct crm__conv_descs {
    crm_h_dnn_call c;
    cudnnTensorDescriptor_t x, y;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
} crm__conv_descs;

/* Opens the call on `handle` and builds the four descriptors (no memory checked). */
static cudnnStatus_t crm__conv_descs_build(crm__conv_descs *d, crm_session *s, uint64_t handle,
                                           const crm_dnn_tensor *x, const crm_dnn_filter *w,
                                           const crm_dnn_conv *conv, const crm_dnn_tensor *y)
{
    cudnnStatus_t st;
    if ((st = crm_h_dnn_begin(&d->c, s, handle)) || (st = crm_h_dnn_tensor(&d->c, x, 0, 1, &d->x, NULL)) ||
        (st = crm_h_dnn_filter(&d->c, w, 0, 1, &d->w, NULL)) || (st = crm_h_dnn_conv(&d->c, conv, &d->conv)) ||
        (st = crm_h_dnn_tensor(&d->c, y, 0, 1, &d->y, NULL)))
        return st;
    return CUDNN_STATUS_SUCCESS;
}

/* Copies n backend results into the wire list. */
static void crm__dnn_perfs(crm_dnn_perfs *out, const cudnnConvolutionFwdAlgoPerf_t *p, int n)
{
    out->count = n < 0 ? 0 : n > CRM_DNN_ALGO_MAX ? CRM_DNN_ALGO_MAX : n;
    for (int i = 0; i < out->count; i++)
        out->perf[i] = (crm_dnn_perf){.algo = p[i].algo, .status = p[i].status, .time = p[i].time,
                                      .memory = p[i].memory, .determinism = p[i].determinism,
                                      .math = p[i].mathType};
}

/* Builds the descriptors of a forward-shaped query (x, w, conv, y) and runs fn. */
static cudnnStatus_t crm__dnn_query_fwd(crm_session *s, uint64_t handle, const crm_dnn_tensor *xDesc,
                                        const crm_dnn_filter *wDesc, const crm_dnn_conv *convDesc,
                                        const crm_dnn_tensor *yDesc, int requested, crm_dnn_perfs *perf,
                                        crm__dnn_fwd_query fn)
{
    crm__conv_descs d;
    cudnnConvolutionFwdAlgoPerf_t p[CRM_DNN_ALGO_MAX];
    int n = 0;
    cudnnStatus_t st;
    if (requested < 1)
        return CUDNN_STATUS_BAD_PARAM;
    if ((st = crm__conv_descs_build(&d, s, handle, xDesc, wDesc, convDesc, yDesc)))
        return st;
    st = fn(d.c.h, d.x, d.w, d.conv, d.y, requested < CRM_DNN_ALGO_MAX ? requested : CRM_DNN_ALGO_MAX, &n, p);
    if (st == CUDNN_STATUS_SUCCESS)
        crm__dnn_perfs(perf, p, n);
    return st;
}

/* Backward-data queries take (w, dy, conv, dx); backward-filter ones (x, dy, conv, dw). */
typedef cudnnStatus_t (*crm__dnn_bwd_data_query)(cudnnHandle_t, const cudnnFilterDescriptor_t,
                                                 const cudnnTensorDescriptor_t, const cudnnConvolutionDescriptor_t,
                                                 const cudnnTensorDescriptor_t, const int, int *,
                                                 cudnnConvolutionBwdDataAlgoPerf_t *);
typedef cudnnStatus_t (*crm__dnn_bwd_filter_query)(cudnnHandle_t, const cudnnTensorDescriptor_t,
                                                   const cudnnTensorDescriptor_t, const cudnnConvolutionDescriptor_t,
                                                   const cudnnFilterDescriptor_t, const int, int *,
                                                   cudnnConvolutionBwdFilterAlgoPerf_t *);

static cudnnStatus_t crm__dnn_query_bwd_data(crm_session *s, uint64_t handle, const crm_dnn_filter *wDesc,
                                             const crm_dnn_tensor *dyDesc, const crm_dnn_conv *convDesc,
                                             const crm_dnn_tensor *dxDesc, int requested, crm_dnn_perfs *perf,
                                             crm__dnn_bwd_data_query fn)
{
    crm__conv_descs d;
    cudnnConvolutionBwdDataAlgoPerf_t p[CRM_DNN_ALGO_MAX];
    int n = 0;
    cudnnStatus_t st;
    if (requested < 1)
        return CUDNN_STATUS_BAD_PARAM;
    if ((st = crm__conv_descs_build(&d, s, handle, dxDesc, wDesc, convDesc, dyDesc)))
        return st;
    st = fn(d.c.h, d.w, d.y, d.conv, d.x, requested < CRM_DNN_ALGO_MAX ? requested : CRM_DNN_ALGO_MAX, &n, p);
    if (st == CUDNN_STATUS_SUCCESS)
        crm__dnn_perfs(perf, (const cudnnConvolutionFwdAlgoPerf_t *)p, n);
    return st;
}

static cudnnStatus_t crm__dnn_query_bwd_filter(crm_session *s, uint64_t handle, const crm_dnn_tensor *xDesc,
                                               const crm_dnn_tensor *dyDesc, const crm_dnn_conv *convDesc,
                                               const crm_dnn_filter *dwDesc, int requested, crm_dnn_perfs *perf,
                                               crm__dnn_bwd_filter_query fn)
{
    crm__conv_descs d;
    cudnnConvolutionBwdFilterAlgoPerf_t p[CRM_DNN_ALGO_MAX];
    int n = 0;
    cudnnStatus_t st;
    if (requested < 1)
        return CUDNN_STATUS_BAD_PARAM;
    if ((st = crm__conv_descs_build(&d, s, handle, xDesc, dwDesc, convDesc, dyDesc)))
        return st;
    st = fn(d.c.h, d.x, d.y, d.conv, d.w, requested < CRM_DNN_ALGO_MAX ? requested : CRM_DNN_ALGO_MAX, &n, p);
    if (st == CUDNN_STATUS_SUCCESS)
        crm__dnn_perfs(perf, (const cudnnConvolutionFwdAlgoPerf_t *)p, n);
    return st;
}

cudnnStatus_t crm_srv_cudnnGetConvolutionForwardAlgorithm_v7(crm_session *s, uint64_t handle,
                                                             const crm_dnn_tensor *xDesc, const crm_dnn_filter *wDesc,
                                                             const crm_dnn_conv *convDesc, const crm_dnn_tensor *yDesc,
                                                             int requestedAlgoCount, crm_dnn_perfs *perf)
{
    return crm__dnn_query_fwd(s, handle, xDesc, wDesc, convDesc, yDesc, requestedAlgoCount, perf,
                              crm_rt.cudnnGetConvolutionForwardAlgorithm_v7);
}

cudnnStatus_t crm_srv_cudnnFindConvolutionForwardAlgorithm(crm_session *s, uint64_t handle,
                                                           const crm_dnn_tensor *xDesc, const crm_dnn_filter *wDesc,
                                                           const crm_dnn_conv *convDesc, const crm_dnn_tensor *yDesc,
                                                           int requestedAlgoCount, crm_dnn_perfs *perf)
{
    return crm__dnn_query_fwd(s, handle, xDesc, wDesc, convDesc, yDesc, requestedAlgoCount, perf,
                              crm_rt.cudnnFindConvolutionForwardAlgorithm);
}

cudnnStatus_t crm_srv_cudnnGetConvolutionBackwardDataAlgorithm_v7(crm_session *s, uint64_t handle,
                                                                  const crm_dnn_filter *wDesc,
                                                                  const crm_dnn_tensor *dyDesc,
                                                                  const crm_dnn_conv *convDesc,
                                                                  const crm_dnn_tensor *dxDesc,
                                                                  int requestedAlgoCount, crm_dnn_perfs *perf)
{
    return crm__dnn_query_bwd_data(s, handle, wDesc, dyDesc, convDesc, dxDesc, requestedAlgoCount, perf,
                                   crm_rt.cudnnGetConvolutionBackwardDataAlgorithm_v7);
}

cudnnStatus_t crm_srv_cudnnFindConvolutionBackwardDataAlgorithm(crm_session *s, uint64_t handle,
                                                                const crm_dnn_filter *wDesc,
                                                                const crm_dnn_tensor *dyDesc,
                                                                const crm_dnn_conv *convDesc,
                                                                const crm_dnn_tensor *dxDesc, int requestedAlgoCount,
                                                                crm_dnn_perfs *perf)
{
    return crm__dnn_query_bwd_data(s, handle, wDesc, dyDesc, convDesc, dxDesc, requestedAlgoCount, perf,
                                   crm_rt.cudnnFindConvolutionBackwardDataAlgorithm);
}

cudnnStatus_t crm_srv_cudnnGetConvolutionBackwardFilterAlgorithm_v7(crm_session *s, uint64_t handle,
                                                                    const crm_dnn_tensor *xDesc,
                                                                    const crm_dnn_tensor *dyDesc,
                                                                    const crm_dnn_conv *convDesc,
                                                                    const crm_dnn_filter *dwDesc,
                                                                    int requestedAlgoCount, crm_dnn_perfs *perf)
{
    return crm__dnn_query_bwd_filter(s, handle, xDesc, dyDesc, convDesc, dwDesc, requestedAlgoCount, perf,
                                     crm_rt.cudnnGetConvolutionBackwardFilterAlgorithm_v7);
}

cudnnStatus_t crm_srv_cudnnFindConvolutionBackwardFilterAlgorithm(crm_session *s, uint64_t handle,
                                                                  const crm_dnn_tensor *xDesc,
                                                                  const crm_dnn_tensor *dyDesc,
                                                                  const crm_dnn_conv *convDesc,
                                                                  const crm_dnn_filter *dwDesc,
                                                                  int requestedAlgoCount, crm_dnn_perfs *perf)
{
    return crm__dnn_query_bwd_filter(s, handle, xDesc, dyDesc, convDesc, dwDesc, requestedAlgoCount, perf,
                                     crm_rt.cudnnFindConvolutionBackwardFilterAlgorithm);
}
