/* crm_emu_dnn_find.c -- the Ex forms of the emulated device's convolution algorithm
 * search (cudnnFindConvolution{Forward,BackwardData,BackwardFilter}AlgorithmEx): each
 * algorithm the plain search lists as usable runs once on the caller's own data and
 * workspace (the output is overwritten, as cuDNN allows), timed by the host's
 * monotonic clock; the results come sorted by that time, those that failed (their
 * status kept) and those that do not apply after them. */
#include <stdlib.h>
#include "server/emu/crm_emu_dnn.h"
#include "server/emu/crm_emu_watchdog.h"

/* One pass's operands in the roles of the plain search: input (x, dx or x), filter
 * (w, w or dw), output (y, dy or dy), with their data. */
typedef struct crm__find {
    enum crm__conv_pass pass;
    cudnnHandle_t h;
    cudnnTensorDescriptor_t in, out;
    cudnnFilterDescriptor_t filt;
    cudnnConvolutionDescriptor_t conv;
    void *in_data, *out_data, *filt_data;
    void *ws;
    size_t ws_size;
} crm__find;

/* Runs f's pass once with algorithm algo (alpha 1, beta 0 in the output's type). */
static cudnnStatus_t crm__find_run(const crm__find *f, int algo)
{
    double one_d = 1, zero_d = 0;
    float one_f = 1, zero_f = 0;
    int dbl = (f->pass == CRM__BWD_DATA ? f->in : f->out)->d.dtype == CUDNN_DATA_DOUBLE;
    if (f->pass == CRM__BWD_FILTER)
        dbl = f->filt->d.dtype == CUDNN_DATA_DOUBLE;
    const void *one = dbl ? (const void *)&one_d : &one_f, *zero = dbl ? (const void *)&zero_d : &zero_f;
    switch (f->pass) {
    case CRM__FWD:
        return cudnnConvolutionForward(f->h, one, f->in, f->in_data, f->filt, f->filt_data, f->conv,
                                       (cudnnConvolutionFwdAlgo_t)algo, f->ws, f->ws_size, zero, f->out, f->out_data);
    case CRM__BWD_DATA:
        return cudnnConvolutionBackwardData(f->h, one, f->filt, f->filt_data, f->out, f->out_data, f->conv,
                                            (cudnnConvolutionBwdDataAlgo_t)algo, f->ws, f->ws_size, zero, f->in,
                                            f->in_data);
    default:
        return cudnnConvolutionBackwardFilter(f->h, one, f->in, f->in_data, f->out, f->out_data, f->conv,
                                              (cudnnConvolutionBwdFilterAlgo_t)algo, f->ws, f->ws_size, zero,
                                              f->filt, f->filt_data);
    }
}

/* Usable and measured first, by time; then the failed; then those that do not apply. */
static int crm__perf_order(const void *a, const void *b)
{
    const cudnnConvolutionFwdAlgoPerf_t *p = a, *q = b;
    int rp = p->status == CUDNN_STATUS_SUCCESS ? 0 : p->time >= 0 ? 1 : 2;
    int rq = q->status == CUDNN_STATUS_SUCCESS ? 0 : q->time >= 0 ? 1 : 2;
    if (rp != rq)
        return rp - rq;
    return (p->time > q->time) - (p->time < q->time);
}

static cudnnStatus_t crm__find_ex(const crm__find *f, int requested, int *returned,
                                  cudnnConvolutionFwdAlgoPerf_t *perf)
{
    cudnnConvolutionFwdAlgoPerf_t all[CUDNN_CONVOLUTION_FWD_ALGO_COUNT + CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    int n = 0;
    cudnnStatus_t st;
    if (returned == NULL || perf == NULL || requested < 1 || f->in_data == NULL || f->out_data == NULL ||
        f->filt_data == NULL)
        return CUDNN_STATUS_BAD_PARAM;
    if (f->pass == CRM__FWD)
        st = cudnnFindConvolutionForwardAlgorithm(f->h, f->in, f->filt, f->conv, f->out, crm__conv_algo_count(f->pass),
                                                  &n, all);
    else if (f->pass == CRM__BWD_DATA)
        st = cudnnFindConvolutionBackwardDataAlgorithm(f->h, f->filt, f->out, f->conv, f->in,
                                                       crm__conv_algo_count(f->pass), &n,
                                                       (cudnnConvolutionBwdDataAlgoPerf_t *)all);
    else
        st = cudnnFindConvolutionBackwardFilterAlgorithm(f->h, f->in, f->out, f->conv, f->filt,
                                                         crm__conv_algo_count(f->pass), &n,
                                                         (cudnnConvolutionBwdFilterAlgoPerf_t *)all);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    for (int i = 0; i < n; i++) {
        if (all[i].status != CUDNN_STATUS_SUCCESS)
            continue;
        double t0 = crm_emu_now();
        all[i].status = crm__find_run(f, (int)all[i].algo);
        all[i].time = (float)((crm_emu_now() - t0) * 1e3);
    }
    qsort(all, (size_t)n, sizeof all[0], crm__perf_order);
    *returned = n < requested ? n : requested;
    for (int i = 0; i < *returned; i++)
        perf[i] = all[i];
    return CUDNN_STATUS_SUCCESS;
}

CRM_EXPORT cudnnStatus_t cudnnFindConvolutionForwardAlgorithmEx(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const void *x, const cudnnFilterDescriptor_t wDesc,
    const void *w, const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t yDesc, void *y,
    const int requestedAlgoCount, int *returnedAlgoCount, cudnnConvolutionFwdAlgoPerf_t *perfResults, void *workSpace,
    size_t workSpaceSizeInBytes)
{
    crm__find f = {CRM__FWD, handle, xDesc, yDesc, wDesc, convDesc, (void *)x, y, (void *)w, workSpace,
                   workSpaceSizeInBytes};
    return crm__find_ex(&f, requestedAlgoCount, returnedAlgoCount, perfResults);
}

CRM_EXPORT cudnnStatus_t cudnnFindConvolutionBackwardDataAlgorithmEx(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc, const void *w, const cudnnTensorDescriptor_t dyDesc,
    const void *dy, const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t dxDesc, void *dx,
    const int requestedAlgoCount, int *returnedAlgoCount, cudnnConvolutionBwdDataAlgoPerf_t *perfResults,
    void *workSpace, size_t workSpaceSizeInBytes)
{
    crm__find f = {CRM__BWD_DATA, handle, dxDesc, dyDesc, wDesc, convDesc, dx, (void *)dy, (void *)w, workSpace,
                   workSpaceSizeInBytes};
    return crm__find_ex(&f, requestedAlgoCount, returnedAlgoCount, (cudnnConvolutionFwdAlgoPerf_t *)perfResults);
}

CRM_EXPORT cudnnStatus_t cudnnFindConvolutionBackwardFilterAlgorithmEx(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const void *x, const cudnnTensorDescriptor_t dyDesc,
    const void *y, const cudnnConvolutionDescriptor_t convDesc, const cudnnFilterDescriptor_t dwDesc, void *dw,
    const int requestedAlgoCount, int *returnedAlgoCount, cudnnConvolutionBwdFilterAlgoPerf_t *perfResults,
    void *workSpace, size_t workSpaceSizeInBytes)
{
    crm__find f = {CRM__BWD_FILTER, handle, xDesc, dyDesc, dwDesc, convDesc, (void *)x, (void *)y, dw, workSpace,
                   workSpaceSizeInBytes};
    return crm__find_ex(&f, requestedAlgoCount, returnedAlgoCount, (cudnnConvolutionFwdAlgoPerf_t *)perfResults);
}
