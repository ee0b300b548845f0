/* crm_drv_stream.c -- driver streams and events: the runtime layer's own objects
 * (a CUstream is a cudaStream_t, a CUevent a cudaEvent_t), so creating one costs
 * no round trip and work on it is queued exactly as runtime calls are. Host
 * functions run on the calling thread once the stream's earlier work is done. */
#include <stdint.h>
#include "client/crm_graph.h"
#include "client/crm_handles.h"
#include "crm_client_gen.h"
#include "interpose/crm_drv.h"
#include "interpose/crm_export.h"
#include "interpose/crm_rt_graph.h"

#undef cuEventElapsedTime /* cuda.h maps it to _v2; the older form is defined here too */

cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream);
cudaError_t cudaStreamQuery_ptsz(cudaStream_t stream);
cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event, unsigned int flags);
cudaError_t cudaStreamGetFlags_ptsz(cudaStream_t hStream, unsigned int *flags);
cudaError_t cudaStreamGetPriority_ptsz(cudaStream_t hStream, int *priority);
cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream);
cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t event, cudaStream_t stream, unsigned int flags);

#define CRM__S(s) ((cudaStream_t)(s))
#define CRM__E(e) ((cudaEvent_t)(e))

/* Runs call after checking that the thread has a context. */
#define CRM__IN_CTX(call)                                    \
    do {                                                     \
        CUresult crm__rc = crm_drv_need_ctx();               \
        return crm__rc != CUDA_SUCCESS ? crm__rc : (call);   \
    } while (0)

CRM_EXPORT CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
    if (phStream == NULL || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING) != 0)
        return CUDA_ERROR_INVALID_VALUE;
    CRM__IN_CTX(CRM_DRV_RT(cudaStreamCreateWithPriority((cudaStream_t *)phStream, flags, priority)));
}

CRM_EXPORT CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    return cuStreamCreateWithPriority(phStream, Flags, 0);
}

CRM_EXPORT CUresult cuStreamDestroy_v2(CUstream s) { CRM__IN_CTX(CRM_DRV_RT(cudaStreamDestroy(CRM__S(s)))); }
CRM_EXPORT CUresult cuStreamSynchronize(CUstream s) { CRM__IN_CTX(CRM_DRV_RT(cudaStreamSynchronize(CRM__S(s)))); }
CRM_EXPORT CUresult cuStreamSynchronize_ptsz(CUstream s)
{ CRM__IN_CTX(CRM_DRV_RT(cudaStreamSynchronize_ptsz(CRM__S(s)))); }
CRM_EXPORT CUresult cuStreamQuery(CUstream s) { CRM__IN_CTX(CRM_DRV_RT(cudaStreamQuery(CRM__S(s)))); }
CRM_EXPORT CUresult cuStreamQuery_ptsz(CUstream s) { CRM__IN_CTX(CRM_DRV_RT(cudaStreamQuery_ptsz(CRM__S(s)))); }
CRM_EXPORT CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags)
{ CRM__IN_CTX(CRM_DRV_RT(cudaStreamWaitEvent(CRM__S(s), CRM__E(e), flags))); }
CRM_EXPORT CUresult cuStreamWaitEvent_ptsz(CUstream s, CUevent e, unsigned int flags)
{ CRM__IN_CTX(CRM_DRV_RT(cudaStreamWaitEvent_ptsz(CRM__S(s), CRM__E(e), flags))); }
CRM_EXPORT CUresult cuStreamGetFlags(CUstream s, unsigned int *flags)
{ CRM__IN_CTX(CRM_DRV_RT(cudaStreamGetFlags(CRM__S(s), flags))); }
CRM_EXPORT CUresult cuStreamGetFlags_ptsz(CUstream s, unsigned int *flags)
{ CRM__IN_CTX(CRM_DRV_RT(cudaStreamGetFlags_ptsz(CRM__S(s), flags))); }
CRM_EXPORT CUresult cuStreamGetPriority(CUstream s, int *priority)
{ CRM__IN_CTX(CRM_DRV_RT(cudaStreamGetPriority(CRM__S(s), priority))); }
CRM_EXPORT CUresult cuStreamGetPriority_ptsz(CUstream s, int *priority)
{ CRM__IN_CTX(CRM_DRV_RT(cudaStreamGetPriority_ptsz(CRM__S(s), priority))); }

/* Streams belong to the context that was current when they were made; the
 * session's streams all live in their device's one context. */
CRM_EXPORT CUresult cuStreamGetCtx(CUstream s, CUcontext *pctx)
{
    (void)s;
    CUresult rc = crm_drv_need_ctx();
    if (rc == CUDA_SUCCESS && pctx == NULL)
        rc = CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS)
        *pctx = crm_drv_ctx_current();
    return rc;
}

CRM_EXPORT CUresult cuStreamGetCtx_ptsz(CUstream s, CUcontext *pctx) { return cuStreamGetCtx(s, pctx); }

CRM_EXPORT CUresult cuStreamGetId(CUstream s, unsigned long long *streamId)
{
    CUresult rc = crm_drv_need_ctx();
    if (rc == CUDA_SUCCESS && streamId == NULL)
        rc = CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS) /* the low bits of a handle are its client-chosen wire id */
        *streamId = (unsigned long long)(uintptr_t)s & 0x00ffffffffffffffull;
    return rc;
}

CRM_EXPORT CUresult cuStreamGetId_ptsz(CUstream s, unsigned long long *streamId) { return cuStreamGetId(s, streamId); }

/* Host functions: the stream's earlier work completes, then fn runs here. Later
 * work on the stream is issued after fn returns, so CUDA's ordering holds. On a
 * capturing stream the function becomes a host node, run so at each launch. */
typedef struct crm__host_call {
    CUhostFn fn;
    void *data;
} crm__host_call;

static cudaError_t crm__host_step(const void *args, uint64_t stream)
{
    const crm__host_call *h = args;
    cudaError_t err = crm_rpc_cudaStreamSynchronize(stream);
    if (err == cudaSuccess)
        h->fn(h->data);
    return err;
}

cudaError_t crm_graph_host_node(crm_gnode *n, cudaHostFn_t fn, void *data)
{
    crm__host_call h = {fn, data};
    if (fn == NULL)
        return cudaErrorInvalidValue;
    return crm_gnode_set_step(n, crm__host_step, &h, sizeof h) == 0 ? cudaSuccess : cudaErrorMemoryAllocation;
}

static CUresult crm__host_func(CUstream s, CUhostFn fn, void *userData, int ptsz)
{
    CUresult rc = crm_drv_need_ctx();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (fn == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    crm__host_call h = {fn, userData};
    cudaError_t captured;
    if (crm_capture_step(crm_stream_wire(CRM__S(s), ptsz ? CRM_PTDS_ON : CRM_PTDS_OFF), CU_GRAPH_NODE_TYPE_HOST,
                         crm__host_step, &h, sizeof h, &captured))
        return (CUresult)captured;
    rc = ptsz ? CRM_DRV_RT(cudaStreamSynchronize_ptsz(CRM__S(s))) : CRM_DRV_RT(cudaStreamSynchronize(CRM__S(s)));
    if (rc == CUDA_SUCCESS)
        fn(userData);
    return rc;
}

CRM_EXPORT CUresult cuLaunchHostFunc(CUstream s, CUhostFn fn, void *userData) { return crm__host_func(s, fn, userData, 0); }
CRM_EXPORT CUresult cuLaunchHostFunc_ptsz(CUstream s, CUhostFn fn, void *userData)
{ return crm__host_func(s, fn, userData, 1); }

/* A stream callback also learns the stream's status: an earlier failure is
 * handed to it instead of stopping it, as CUDA does. */
static CUresult crm__callback(CUstream s, CUstreamCallback cb, void *userData, unsigned int flags, int ptsz)
{
    CUresult rc = crm_drv_need_ctx();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (cb == NULL || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    rc = (CUresult)crm_capture_refuse_sync(crm_stream_wire(CRM__S(s), ptsz ? CRM_PTDS_ON : CRM_PTDS_OFF),
                                           CRM_WIRE_BAD_HANDLE); /* no callbacks in a graph */
    if (rc != CUDA_SUCCESS)
        return rc;
    rc = ptsz ? CRM_DRV_RT(cudaStreamSynchronize_ptsz(CRM__S(s))) : CRM_DRV_RT(cudaStreamSynchronize(CRM__S(s)));
    cb(s, rc, userData);
    return CUDA_SUCCESS;
}

CRM_EXPORT CUresult cuStreamAddCallback(CUstream s, CUstreamCallback cb, void *userData, unsigned int flags)
{ return crm__callback(s, cb, userData, flags, 0); }
CRM_EXPORT CUresult cuStreamAddCallback_ptsz(CUstream s, CUstreamCallback cb, void *userData, unsigned int flags)
{ return crm__callback(s, cb, userData, flags, 1); }

/* ---- events ----------------------------------------------------------------------- */

CRM_EXPORT CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
    if (phEvent == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CRM__IN_CTX(CRM_DRV_RT(cudaEventCreateWithFlags((cudaEvent_t *)phEvent, Flags)));
}

CRM_EXPORT CUresult cuEventDestroy_v2(CUevent e) { CRM__IN_CTX(CRM_DRV_RT(cudaEventDestroy(CRM__E(e)))); }
CRM_EXPORT CUresult cuEventRecord(CUevent e, CUstream s) { CRM__IN_CTX(CRM_DRV_RT(cudaEventRecord(CRM__E(e), CRM__S(s)))); }
CRM_EXPORT CUresult cuEventRecord_ptsz(CUevent e, CUstream s)
{ CRM__IN_CTX(CRM_DRV_RT(cudaEventRecord_ptsz(CRM__E(e), CRM__S(s)))); }
CRM_EXPORT CUresult cuEventRecordWithFlags(CUevent e, CUstream s, unsigned int flags)
{ CRM__IN_CTX(CRM_DRV_RT(cudaEventRecordWithFlags(CRM__E(e), CRM__S(s), flags))); }
CRM_EXPORT CUresult cuEventRecordWithFlags_ptsz(CUevent e, CUstream s, unsigned int flags)
{ CRM__IN_CTX(CRM_DRV_RT(cudaEventRecordWithFlags_ptsz(CRM__E(e), CRM__S(s), flags))); }
CRM_EXPORT CUresult cuEventQuery(CUevent e) { CRM__IN_CTX(CRM_DRV_RT(cudaEventQuery(CRM__E(e)))); }
CRM_EXPORT CUresult cuEventSynchronize(CUevent e) { CRM__IN_CTX(CRM_DRV_RT(cudaEventSynchronize(CRM__E(e)))); }
CRM_EXPORT CUresult cuEventElapsedTime_v2(float *ms, CUevent start, CUevent end)
{ CRM__IN_CTX(CRM_DRV_RT(cudaEventElapsedTime(ms, CRM__E(start), CRM__E(end)))); }
CRM_EXPORT CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end) { return cuEventElapsedTime_v2(ms, start, end); }
