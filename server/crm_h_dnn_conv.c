/* crm_h_dnn_conv.c -- handlers of the cuDNN convolution calls: the three passes and
 * the bias gradient (every tensor, the filter and the workspace checked against the
 * session's allocations first), the algorithm queries and the workspace sizes. */
#include "common/crm_dnn_desc.h"
#include "server/crm_backend.h"
#include "server/crm_h_dnn.h"

cudnnStatus_t crm_srv_cudnnConvolutionForward(crm_session *s, uint64_t handle, double alpha,
                                              const crm_dnn_tensor *xDesc, uint64_t x, const crm_dnn_filter *wDesc,
                                              uint64_t w, const crm_dnn_conv *convDesc, int algo, uint64_t workSpace,
                                              uint64_t workSpaceSizeInBytes, double beta, const crm_dnn_tensor *yDesc,
                                              uint64_t y)
{
    crm_h_dnn_call c;
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    void *px, *pw, *py, *ws;
    cudnnStatus_t st;
    if ((st = crm_h_dnn_begin(&c, s, handle)) || (st = crm_h_dnn_tensor(&c, xDesc, x, 0, &xd, &px)) ||
        (st = crm_h_dnn_filter(&c, wDesc, w, 0, &wd, &pw)) || (st = crm_h_dnn_conv(&c, convDesc, &cd)) ||
        (st = crm_h_dnn_tensor(&c, yDesc, y, 0, &yd, &py)) ||
        (st = crm_h_dnn_workspace(&c, workSpace, workSpaceSizeInBytes, &ws)))
        return st;
    return crm_rt.cudnnConvolutionForward(c.h, crm_h_dnn_scalar(&c, alpha, yDesc->dtype), xd, px, wd, pw, cd,
                                          (cudnnConvolutionFwdAlgo_t)algo, ws, workSpaceSizeInBytes,
                                          crm_h_dnn_scalar(&c, beta, yDesc->dtype), yd, py);
}

cudnnStatus_t crm_srv_cudnnConvolutionBackwardData(crm_session *s, uint64_t handle, double alpha,
                                                   const crm_dnn_filter *wDesc, uint64_t w,
                                                   const crm_dnn_tensor *dyDesc, uint64_t dy,
                                                   const crm_dnn_conv *convDesc, int algo, uint64_t workSpace,
                                                   uint64_t workSpaceSizeInBytes, double beta,
                                                   const crm_dnn_tensor *dxDesc, uint64_t dx)
{
    crm_h_dnn_call c;
    cudnnTensorDescriptor_t dyd, dxd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    void *pw, *pdy, *pdx, *ws;
    cudnnStatus_t st;
    if ((st = crm_h_dnn_begin(&c, s, handle)) || (st = crm_h_dnn_filter(&c, wDesc, w, 0, &wd, &pw)) ||
        (st = crm_h_dnn_tensor(&c, dyDesc, dy, 0, &dyd, &pdy)) || (st = crm_h_dnn_conv(&c, convDesc, &cd)) ||
        (st = crm_h_dnn_tensor(&c, dxDesc, dx, 0, &dxd, &pdx)) ||
        (st = crm_h_dnn_workspace(&c, workSpace, workSpaceSizeInBytes, &ws)))
        return st;
    return crm_rt.cudnnConvolutionBackwardData(c.h, crm_h_dnn_scalar(&c, alpha, dxDesc->dtype), wd, pw, dyd, pdy,
                                               cd, (cudnnConvolutionBwdDataAlgo_t)algo, ws, workSpaceSizeInBytes,
                                               crm_h_dnn_scalar(&c, beta, dxDesc->dtype), dxd, pdx);
}

cudnnStatus_t crm_srv_cudnnConvolutionBackwardFilter(crm_session *s, uint64_t handle, double alpha,
                                                     const crm_dnn_tensor *xDesc, uint64_t x,
                                                     const crm_dnn_tensor *dyDesc, uint64_t dy,
                                                     const crm_dnn_conv *convDesc, int algo, uint64_t workSpace,
                                                     uint64_t workSpaceSizeInBytes, double beta,
                                                     const crm_dnn_filter *dwDesc, uint64_t dw)
{
    crm_h_dnn_call c;
    cudnnTensorDescriptor_t xd, dyd;
    cudnnFilterDescriptor_t dwd;
    cudnnConvolutionDescriptor_t cd;
    void *px, *pdy, *pdw, *ws;
    cudnnStatus_t st;
    if ((st = crm_h_dnn_begin(&c, s, handle)) || (st = crm_h_dnn_tensor(&c, xDesc, x, 0, &xd, &px)) ||
        (st = crm_h_dnn_tensor(&c, dyDesc, dy, 0, &dyd, &pdy)) || (st = crm_h_dnn_conv(&c, convDesc, &cd)) ||
        (st = crm_h_dnn_filter(&c, dwDesc, dw, 0, &dwd, &pdw)) ||
        (st = crm_h_dnn_workspace(&c, workSpace, workSpaceSizeInBytes, &ws)))
        return st;
    return crm_rt.cudnnConvolutionBackwardFilter(c.h, crm_h_dnn_scalar(&c, alpha, dwDesc->dtype), xd, px, dyd, pdy,
                                                 cd, (cudnnConvolutionBwdFilterAlgo_t)algo, ws,
                                                 workSpaceSizeInBytes, crm_h_dnn_scalar(&c, beta, dwDesc->dtype),
                                                 dwd, pdw);
}

cudnnStatus_t crm_srv_cudnnConvolutionBackwardBias(crm_session *s, uint64_t handle, double alpha,
                                                   const crm_dnn_tensor *dyDesc, uint64_t dy, double beta,
                                                   const crm_dnn_tensor *dbDesc, uint64_t db)
{
    crm_h_dnn_call c;
    cudnnTensorDescriptor_t dyd, dbd;
    void *pdy, *pdb;
    cudnnStatus_t st;
    if ((st = crm_h_dnn_begin(&c, s, handle)) || (st = crm_h_dnn_tensor(&c, dyDesc, dy, 0, &dyd, &pdy)) ||
        (st = crm_h_dnn_tensor(&c, dbDesc, db, 0, &dbd, &pdb)))
        return st;
    return crm_rt.cudnnConvolutionBackwardBias(c.h, crm_h_dnn_scalar(&c, alpha, dbDesc->dtype), dyd, pdy,
                                               crm_h_dnn_scalar(&c, beta, dbDesc->dtype), dbd, pdb);
}

/* --- queries: descriptors only, answers copied into the wire's perf list --- */

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

cudnnStatus_t crm_srv_cudnnGetConvolutionForwardWorkspaceSize(crm_session *s, uint64_t handle,
                                                              const crm_dnn_tensor *xDesc,
                                                              const crm_dnn_filter *wDesc,
                                                              const crm_dnn_conv *convDesc,
                                                              const crm_dnn_tensor *yDesc, int algo,
                                                              uint64_t *sizeInBytes)
{
    crm__conv_descs d;
    size_t size = 0;
    cudnnStatus_t st;
    if ((st = crm__conv_descs_build(&d, s, handle, xDesc, wDesc, convDesc, yDesc)))
        return st;
    st = crm_rt.cudnnGetConvolutionForwardWorkspaceSize(d.c.h, d.x, d.w, d.conv, d.y, (cudnnConvolutionFwdAlgo_t)algo,
                                                        &size);
    *sizeInBytes = size;
    return st;
}

cudnnStatus_t crm_srv_cudnnGetConvolutionBackwardDataWorkspaceSize(crm_session *s, uint64_t handle,
                                                                   const crm_dnn_filter *wDesc,
                                                                   const crm_dnn_tensor *dyDesc,
                                                                   const crm_dnn_conv *convDesc,
                                                                   const crm_dnn_tensor *dxDesc, int algo,
                                                                   uint64_t *sizeInBytes)
{
    crm__conv_descs d;
    size_t size = 0;
    cudnnStatus_t st;
    if ((st = crm__conv_descs_build(&d, s, handle, dxDesc, wDesc, convDesc, dyDesc)))
        return st;
    st = crm_rt.cudnnGetConvolutionBackwardDataWorkspaceSize(d.c.h, d.w, d.y, d.conv, d.x,
                                                             (cudnnConvolutionBwdDataAlgo_t)algo, &size);
    *sizeInBytes = size;
    return st;
}

cudnnStatus_t crm_srv_cudnnGetConvolutionBackwardFilterWorkspaceSize(crm_session *s, uint64_t handle,
                                                                     const crm_dnn_tensor *xDesc,
                                                                     const crm_dnn_tensor *dyDesc,
                                                                     const crm_dnn_conv *convDesc,
                                                                     const crm_dnn_filter *dwDesc, int algo,
                                                                     uint64_t *sizeInBytes)
{
    crm__conv_descs d;
    size_t size = 0;
    cudnnStatus_t st;
    if ((st = crm__conv_descs_build(&d, s, handle, xDesc, dwDesc, convDesc, dyDesc)))
        return st;
    st = crm_rt.cudnnGetConvolutionBackwardFilterWorkspaceSize(d.c.h, d.x, d.y, d.conv, d.w,
                                                               (cudnnConvolutionBwdFilterAlgo_t)algo, &size);
    *sizeInBytes = size;
    return st;
}
