/* crm_rt_stream.c -- exported stream and event creation and destruction; the ids
 * are chosen here, so creating a handle needs no answer from the server: creation
 * is queued, after the arguments were checked as a local GPU checks them, and so is
 * a live stream's or event's destruction. And a
 * stream waiting for an event, which may be another pooled server's. */
#include <cuda_runtime_api.h>
#include "client/crm_conn.h"
#include "client/crm_handles.h"
#include "crm_client_gen.h"
#include "interpose/crm_drv.h"
#include "interpose/crm_export.h"

CRM_EXPORT cudaError_t cudaStreamCreateWithPriority(cudaStream_t *pStream, unsigned int flags, int priority)
{
    crm_drv_runtime_bind();
    uint64_t id;
    if (pStream == NULL || (flags & ~(unsigned)cudaStreamNonBlocking))
        return crm_set_error(cudaErrorInvalidValue);
    cudaStream_t handle = crm_stream_new(&id);
    cudaError_t err = crm_rpc_crm_stream_create(id, flags, priority);
    if (err == cudaSuccess) {
        crm_stream_live(id, flags);
        *pStream = handle;
    }
    return crm_set_error(err);
}

CRM_EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
    return cudaStreamCreateWithPriority(pStream, flags, 0);
}

CRM_EXPORT cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
    return cudaStreamCreateWithPriority(pStream, cudaStreamDefault, 0);
}

/* A live stream's destruction is queued, as a GPU returns at once and releases the
 * stream once its work is done. */
CRM_EXPORT cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    uint64_t id = crm_stream_wire(stream, CRM_PTDS_OFF);
    cudaError_t err = crm_object_take_live(id) ? crm_rpc_cudaStreamDestroy_queued(id) : crm_rpc_cudaStreamDestroy(id);
    if (err == cudaSuccess)
        crm_handles_forget(id);
    return crm_set_error(err);
}

/* Flags a local GPU accepts; checked here because creation is queued. */
static int crm__event_flags_valid(unsigned int flags)
{
    const unsigned known = cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess;
    if (flags & ~known)
        return 0;
    return !(flags & cudaEventInterprocess) || (flags & cudaEventDisableTiming);
}

CRM_EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    crm_drv_runtime_bind();
    uint64_t id;
    if (event == NULL || !crm__event_flags_valid(flags))
        return crm_set_error(cudaErrorInvalidValue);
    cudaEvent_t handle = crm_event_new(&id);
    cudaError_t err = crm_rpc_crm_event_create(id, flags);
    if (err == cudaSuccess) {
        crm_object_live(id);
        *event = handle;
    }
    return crm_set_error(err);
}

CRM_EXPORT cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    return cudaEventCreateWithFlags(event, cudaEventDefault);
}

/* A live event's destruction is queued: the client knows it exists, as a GPU's
 * driver does; another (destroyed twice, never created) is answered by the server. */
CRM_EXPORT cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    uint64_t id = crm_event_wire(event);
    cudaError_t err = crm_object_take_live(id) ? crm_rpc_cudaEventDestroy_queued(id) : crm_rpc_cudaEventDestroy(id);
    if (err == cudaSuccess)
        crm_handles_forget(id);
    return crm_set_error(err);
}

/* A stream waits for an event on the server of both. When the event belongs to
 * another server of a pool, no server sees both: the client waits for the event
 * itself, so the stream's work queued after this call starts after it, as the
 * call asks (at the cost of the client waiting, where a GPU would not). */
static cudaError_t crm__wait_event(cudaStream_t stream, cudaEvent_t event, unsigned int flags, int ptds)
{
    crm_drv_runtime_bind();
    uint64_t s = crm_stream_wire(stream, ptds), e = crm_event_wire(event);
    if (crm_conn_pooled()) {
        int event_dev = crm_handles_device(e), stream_dev = crm_handles_device(s);
        if (stream_dev < 0)
            stream_dev = crm_thread_device(); /* a default stream: the current device's */
        if (event_dev >= 0 && crm_conn_server_of(event_dev) != crm_conn_server_of(stream_dev))
            return flags & ~(unsigned)cudaEventWaitExternal ? crm_set_error(cudaErrorInvalidValue)
                                                           : cudaEventSynchronize(event);
    }
    return crm_set_error(crm_rpc_cudaStreamWaitEvent(s, e, flags));
}

CRM_EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    return crm__wait_event(stream, event, flags, CRM_PTDS_OFF);
}

CRM_EXPORT cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    return crm__wait_event(stream, event, flags, CRM_PTDS_ON);
}
