/* crm_rt_capture.c -- stream capture, at the runtime's and the driver's API
 * (cudaStreamBeginCapture, cuStreamBeginCapture_v2 and their kin) on the client's
 * captures (client/crm_graph.h); and the runtime's host functions and callbacks,
 * which are the driver's (interpose/crm_drv_stream.c). */
#include <cuda_runtime_api.h>
#include "client/crm_graph.h"
#include "interpose/crm_drv.h"
#include "interpose/crm_export.h"

/* Every call here needs a context, as on a local GPU: the thread's first one makes
 * the device's primary context current (torch's autograd threads then find one,
 * CublasHandlePool.cpp). */
static cudaError_t crm__begin(cudaStream_t stream, int mode, int ptsz)
{
    crm_drv_runtime_bind();
    return crm_capture_begin(crm_stream_wire(stream, ptsz), mode);
}

static cudaError_t crm__begin_to(cudaStream_t stream, cudaGraph_t graph, const cudaGraphNode_t *deps,
                                 const cudaGraphEdgeData *edges, size_t ndeps, int mode, int ptsz)
{
    crm_drv_runtime_bind();
    if (graph == NULL || (ndeps > 0 && deps == NULL))
        return cudaErrorInvalidValue;
    for (size_t i = 0; i < ndeps; i++)
        if (!crm_graph_has(graph, deps[i]))
            return cudaErrorInvalidValue;
    for (size_t i = 0; edges != NULL && i < ndeps; i++)
        if (edges[i].type != cudaGraphDependencyTypeDefault || edges[i].from_port != 0 || edges[i].to_port != 0)
            return cudaErrorNotSupported; /* programmatic edges: not remoted */
    return crm_capture_begin_to(crm_stream_wire(stream, ptsz), mode, graph, deps, ndeps);
}

static cudaError_t crm__end(cudaStream_t stream, cudaGraph_t *graph, int ptsz)
{
    crm_drv_runtime_bind();
    return crm_capture_end(crm_stream_wire(stream, ptsz), graph); /* graph may be NULL: see there */
}

static cudaError_t crm__info(cudaStream_t stream, enum cudaStreamCaptureStatus *status, unsigned long long *id,
                             cudaGraph_t *graph, const cudaGraphNode_t **deps, const cudaGraphEdgeData **edges,
                             size_t *ndeps, int ptsz)
{
    crm_drv_runtime_bind();
    if (status == NULL)
        return cudaErrorInvalidValue;
    if (edges != NULL)
        *edges = NULL; /* every edge is a default one */
    return crm_capture_info(crm_stream_wire(stream, ptsz), status, id, graph, deps, ndeps);
}

static cudaError_t crm__update_deps(cudaStream_t stream, cudaGraphNode_t *deps, const cudaGraphEdgeData *edges,
                                    size_t ndeps, unsigned flags, int ptsz)
{
    crm_drv_runtime_bind();
    if ((ndeps > 0 && deps == NULL) || flags > cudaStreamSetCaptureDependencies)
        return cudaErrorInvalidValue;
    for (size_t i = 0; edges != NULL && i < ndeps; i++)
        if (edges[i].type != cudaGraphDependencyTypeDefault || edges[i].from_port != 0 || edges[i].to_port != 0)
            return cudaErrorNotSupported;
    return crm_capture_update_deps(crm_stream_wire(stream, ptsz), deps, ndeps,
                                   flags == cudaStreamSetCaptureDependencies);
}

/* ---- the runtime's ------------------------------------------------------------------ */

CRM_EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    return crm_set_error(crm__begin(stream, mode, CRM_PTDS_OFF));
}

CRM_EXPORT cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    return crm_set_error(crm__begin(stream, mode, CRM_PTDS_ON));
}

CRM_EXPORT cudaError_t cudaStreamBeginCaptureToGraph(cudaStream_t stream, cudaGraph_t graph,
                                                     const cudaGraphNode_t *dependencies,
                                                     const cudaGraphEdgeData *dependencyData, size_t numDependencies,
                                                     enum cudaStreamCaptureMode mode)
{
    return crm_set_error(crm__begin_to(stream, graph, dependencies, dependencyData, numDependencies, mode,
                                       CRM_PTDS_OFF));
}

CRM_EXPORT cudaError_t cudaStreamBeginCaptureToGraph_ptsz(cudaStream_t stream, cudaGraph_t graph,
                                                          const cudaGraphNode_t *dependencies,
                                                          const cudaGraphEdgeData *dependencyData,
                                                          size_t numDependencies, enum cudaStreamCaptureMode mode)
{
    return crm_set_error(crm__begin_to(stream, graph, dependencies, dependencyData, numDependencies, mode,
                                       CRM_PTDS_ON));
}

CRM_EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)
{
    return crm_set_error(crm__end(stream, pGraph, CRM_PTDS_OFF));
}

CRM_EXPORT cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t *pGraph)
{
    return crm_set_error(crm__end(stream, pGraph, CRM_PTDS_ON));
}

CRM_EXPORT cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus)
{
    return crm_set_error(crm__info(stream, pCaptureStatus, NULL, NULL, NULL, NULL, NULL, CRM_PTDS_OFF));
}

CRM_EXPORT cudaError_t cudaStreamIsCapturing_ptsz(cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus)
{
    return crm_set_error(crm__info(stream, pCaptureStatus, NULL, NULL, NULL, NULL, NULL, CRM_PTDS_ON));
}

CRM_EXPORT cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, enum cudaStreamCaptureStatus *status,
                                                unsigned long long *id, cudaGraph_t *graph,
                                                const cudaGraphNode_t **deps, const cudaGraphEdgeData **edges,
                                                size_t *numDeps)
{
    return crm_set_error(crm__info(stream, status, id, graph, deps, edges, numDeps, CRM_PTDS_OFF));
}

CRM_EXPORT cudaError_t cudaStreamGetCaptureInfo_ptsz(cudaStream_t stream, enum cudaStreamCaptureStatus *status,
                                                     unsigned long long *id, cudaGraph_t *graph,
                                                     const cudaGraphNode_t **deps, const cudaGraphEdgeData **edges,
                                                     size_t *numDeps)
{
    return crm_set_error(crm__info(stream, status, id, graph, deps, edges, numDeps, CRM_PTDS_ON));
}

CRM_EXPORT cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t stream, cudaGraphNode_t *dependencies,
                                                           const cudaGraphEdgeData *dependencyData,
                                                           size_t numDependencies, unsigned int flags)
{
    return crm_set_error(crm__update_deps(stream, dependencies, dependencyData, numDependencies, flags, CRM_PTDS_OFF));
}

CRM_EXPORT cudaError_t cudaStreamUpdateCaptureDependencies_ptsz(cudaStream_t stream, cudaGraphNode_t *dependencies,
                                                                const cudaGraphEdgeData *dependencyData,
                                                                size_t numDependencies, unsigned int flags)
{
    return crm_set_error(crm__update_deps(stream, dependencies, dependencyData, numDependencies, flags, CRM_PTDS_ON));
}

CRM_EXPORT cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
    if (mode == NULL || *mode < cudaStreamCaptureModeGlobal || *mode > cudaStreamCaptureModeRelaxed)
        return crm_set_error(cudaErrorInvalidValue);
    *mode = (enum cudaStreamCaptureMode)crm_capture_exchange_mode(*mode);
    return cudaSuccess;
}

/* ---- the driver's: the same captures, CUDA_ERROR_* codes equal to the runtime's ---- */

CRM_EXPORT CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode mode)
{ CRM_DRV_IN_CTX(crm__begin((cudaStream_t)s, (int)mode, CRM_PTDS_OFF)); }
CRM_EXPORT CUresult cuStreamBeginCapture_v2_ptsz(CUstream s, CUstreamCaptureMode mode)
{ CRM_DRV_IN_CTX(crm__begin((cudaStream_t)s, (int)mode, CRM_PTDS_ON)); }
/* The first form took no mode: global. cuda.h maps the old names to the new. */
#undef cuStreamBeginCapture
#undef cuStreamBeginCapture_ptsz
#undef cuStreamUpdateCaptureDependencies
#undef cuStreamUpdateCaptureDependencies_ptsz
CUresult cuStreamBeginCapture(CUstream s);
CUresult cuStreamBeginCapture_ptsz(CUstream s);
CUresult cuStreamUpdateCaptureDependencies(CUstream s, CUgraphNode *deps, size_t n, unsigned int flags);
CUresult cuStreamUpdateCaptureDependencies_ptsz(CUstream s, CUgraphNode *deps, size_t n, unsigned int flags);
CRM_EXPORT CUresult cuStreamBeginCapture(CUstream s)
{ CRM_DRV_IN_CTX(crm__begin((cudaStream_t)s, cudaStreamCaptureModeGlobal, CRM_PTDS_OFF)); }
CRM_EXPORT CUresult cuStreamBeginCapture_ptsz(CUstream s)
{ CRM_DRV_IN_CTX(crm__begin((cudaStream_t)s, cudaStreamCaptureModeGlobal, CRM_PTDS_ON)); }

CRM_EXPORT CUresult cuStreamBeginCaptureToGraph(CUstream s, CUgraph g, const CUgraphNode *deps,
                                                const CUgraphEdgeData *edges, size_t ndeps, CUstreamCaptureMode mode)
{ CRM_DRV_IN_CTX(crm__begin_to((cudaStream_t)s, g, deps, (const cudaGraphEdgeData *)edges, ndeps, (int)mode, CRM_PTDS_OFF)); }
CRM_EXPORT CUresult cuStreamBeginCaptureToGraph_ptsz(CUstream s, CUgraph g, const CUgraphNode *deps,
                                                     const CUgraphEdgeData *edges, size_t ndeps,
                                                     CUstreamCaptureMode mode)
{ CRM_DRV_IN_CTX(crm__begin_to((cudaStream_t)s, g, deps, (const cudaGraphEdgeData *)edges, ndeps, (int)mode, CRM_PTDS_ON)); }

CRM_EXPORT CUresult cuStreamEndCapture(CUstream s, CUgraph *g) { CRM_DRV_IN_CTX(crm__end((cudaStream_t)s, g, CRM_PTDS_OFF)); }
CRM_EXPORT CUresult cuStreamEndCapture_ptsz(CUstream s, CUgraph *g)
{ CRM_DRV_IN_CTX(crm__end((cudaStream_t)s, g, CRM_PTDS_ON)); }

CRM_EXPORT CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *status)
{ CRM_DRV_IN_CTX(crm__info((cudaStream_t)s, (enum cudaStreamCaptureStatus *)status, NULL, NULL, NULL, NULL, NULL,
                     CRM_PTDS_OFF)); }
CRM_EXPORT CUresult cuStreamIsCapturing_ptsz(CUstream s, CUstreamCaptureStatus *status)
{ CRM_DRV_IN_CTX(crm__info((cudaStream_t)s, (enum cudaStreamCaptureStatus *)status, NULL, NULL, NULL, NULL, NULL,
                     CRM_PTDS_ON)); }

CRM_EXPORT CUresult cuStreamGetCaptureInfo_v3(CUstream s, CUstreamCaptureStatus *status, cuuint64_t *id, CUgraph *g,
                                              const CUgraphNode **deps, const CUgraphEdgeData **edges, size_t *n)
{ CRM_DRV_IN_CTX(crm__info((cudaStream_t)s, (enum cudaStreamCaptureStatus *)status, (unsigned long long *)id, g, deps,
                     (const cudaGraphEdgeData **)edges, n, CRM_PTDS_OFF)); }
CRM_EXPORT CUresult cuStreamGetCaptureInfo_v3_ptsz(CUstream s, CUstreamCaptureStatus *status, cuuint64_t *id,
                                                   CUgraph *g, const CUgraphNode **deps,
                                                   const CUgraphEdgeData **edges, size_t *n)
{ CRM_DRV_IN_CTX(crm__info((cudaStream_t)s, (enum cudaStreamCaptureStatus *)status, (unsigned long long *)id, g, deps,
                     (const cudaGraphEdgeData **)edges, n, CRM_PTDS_ON)); }
CRM_EXPORT CUresult cuStreamGetCaptureInfo_v2(CUstream s, CUstreamCaptureStatus *status, cuuint64_t *id, CUgraph *g,
                                              const CUgraphNode **deps, size_t *n)
{ return cuStreamGetCaptureInfo_v3(s, status, id, g, deps, NULL, n); }
CRM_EXPORT CUresult cuStreamGetCaptureInfo_v2_ptsz(CUstream s, CUstreamCaptureStatus *status, cuuint64_t *id,
                                                   CUgraph *g, const CUgraphNode **deps, size_t *n)
{ return cuStreamGetCaptureInfo_v3_ptsz(s, status, id, g, deps, NULL, n); }
#undef cuStreamGetCaptureInfo
CRM_EXPORT CUresult cuStreamGetCaptureInfo(CUstream s, CUstreamCaptureStatus *status, cuuint64_t *id)
{ return cuStreamGetCaptureInfo_v3(s, status, id, NULL, NULL, NULL, NULL); }
CRM_EXPORT CUresult cuStreamGetCaptureInfo_ptsz(CUstream s, CUstreamCaptureStatus *status, cuuint64_t *id)
{ return cuStreamGetCaptureInfo_v3_ptsz(s, status, id, NULL, NULL, NULL, NULL); }

CRM_EXPORT CUresult cuStreamUpdateCaptureDependencies_v2(CUstream s, CUgraphNode *deps, const CUgraphEdgeData *edges,
                                                         size_t n, unsigned int flags)
{ CRM_DRV_IN_CTX(crm__update_deps((cudaStream_t)s, deps, (const cudaGraphEdgeData *)edges, n, flags, CRM_PTDS_OFF)); }
CRM_EXPORT CUresult cuStreamUpdateCaptureDependencies_v2_ptsz(CUstream s, CUgraphNode *deps,
                                                              const CUgraphEdgeData *edges, size_t n,
                                                              unsigned int flags)
{ CRM_DRV_IN_CTX(crm__update_deps((cudaStream_t)s, deps, (const cudaGraphEdgeData *)edges, n, flags, CRM_PTDS_ON)); }
CRM_EXPORT CUresult cuStreamUpdateCaptureDependencies(CUstream s, CUgraphNode *deps, size_t n, unsigned int flags)
{ return cuStreamUpdateCaptureDependencies_v2(s, deps, NULL, n, flags); }
CRM_EXPORT CUresult cuStreamUpdateCaptureDependencies_ptsz(CUstream s, CUgraphNode *deps, size_t n,
                                                           unsigned int flags)
{ return cuStreamUpdateCaptureDependencies_v2_ptsz(s, deps, NULL, n, flags); }

CRM_EXPORT CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
    return (CUresult)cudaThreadExchangeStreamCaptureMode((enum cudaStreamCaptureMode *)mode);
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
