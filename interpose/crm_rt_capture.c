/* crm_rt_capture.c -- the runtime's stream-capture queries and host functions, on
 * the driver's: nothing is ever being captured (CUDA graphs are not remoted), so
 * the answers are the client's own; host functions and callbacks run once the
 * stream's earlier work is done (interpose/crm_drv_stream.c). */
#include <cuda_runtime_api.h>
#include "interpose/crm_drv.h"
#include "interpose/crm_export.h"

/* The thread's capture mode, exchanged as CUDA does even with nothing to capture. */
static _Thread_local enum cudaStreamCaptureMode crm__mode = cudaStreamCaptureModeGlobal;

/* Asking about a stream needs a context, as on a local GPU: the thread's first such
 * call makes the device's primary context current (torch's autograd threads then
 * find one, CublasHandlePool.cpp). */
static cudaError_t crm__not_capturing(enum cudaStreamCaptureStatus *status)
{
    crm_drv_runtime_bind();
    if (status == NULL)
        return crm_set_error(cudaErrorInvalidValue);
    *status = cudaStreamCaptureStatusNone;
    return cudaSuccess;
}

CRM_EXPORT cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus)
{
    (void)stream;
    return crm__not_capturing(pCaptureStatus);
}

CRM_EXPORT cudaError_t cudaStreamIsCapturing_ptsz(cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus)
{
    return cudaStreamIsCapturing(stream, pCaptureStatus);
}

CRM_EXPORT cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, enum cudaStreamCaptureStatus *status,
                                                unsigned long long *id, cudaGraph_t *graph,
                                                const cudaGraphNode_t **deps, const cudaGraphEdgeData **edges,
                                                size_t *numDeps)
{
    (void)stream, (void)id, (void)graph, (void)deps, (void)edges, (void)numDeps;
    return crm__not_capturing(status);
}

CRM_EXPORT cudaError_t cudaStreamGetCaptureInfo_ptsz(cudaStream_t stream, enum cudaStreamCaptureStatus *status,
                                                     unsigned long long *id, cudaGraph_t *graph,
                                                     const cudaGraphNode_t **deps, const cudaGraphEdgeData **edges,
                                                     size_t *numDeps)
{
    return cudaStreamGetCaptureInfo(stream, status, id, graph, deps, edges, numDeps);
}

CRM_EXPORT cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
    if (mode == NULL)
        return crm_set_error(cudaErrorInvalidValue);
    enum cudaStreamCaptureMode old = crm__mode;
    crm__mode = *mode;
    *mode = old;
    return cudaSuccess;
}

/* ---- host functions: the driver's, with the runtime's error semantics ------------- */

static cudaError_t crm__rt(CUresult rc)
{
    return crm_set_error((cudaError_t)rc); /* the codes of these calls coincide */
}

CRM_EXPORT cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
    crm_drv_runtime_bind();
    return crm__rt(cuLaunchHostFunc((CUstream)stream, fn, userData));
}

CRM_EXPORT cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
    crm_drv_runtime_bind();
    return crm__rt(cuLaunchHostFunc_ptsz((CUstream)stream, fn, userData));
}

CRM_EXPORT cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback, void *userData,
                                             unsigned int flags)
{
    crm_drv_runtime_bind();
    return crm__rt(cuStreamAddCallback((CUstream)stream, (CUstreamCallback)callback, userData, flags));
}

CRM_EXPORT cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t stream, cudaStreamCallback_t callback,
                                                  void *userData, unsigned int flags)
{
    crm_drv_runtime_bind();
    return crm__rt(cuStreamAddCallback_ptsz((CUstream)stream, (CUstreamCallback)callback, userData, flags));
}
