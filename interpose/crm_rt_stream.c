/* crm_rt_stream.c -- exported stream and event creation and destruction; the ids
 * are chosen here, so creating a handle needs no answer from the server: creation
 * is queued, after the arguments were checked as a local GPU checks them. */
#include <cuda_runtime_api.h>
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
    if (err == cudaSuccess)
        *pStream = handle;
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

CRM_EXPORT cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    return crm_set_error(crm_rpc_cudaStreamDestroy(crm_stream_wire(stream, CRM_PTDS_OFF)));
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
    if (err == cudaSuccess)
        *event = handle;
    return crm_set_error(err);
}

CRM_EXPORT cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    return cudaEventCreateWithFlags(event, cudaEventDefault);
}

CRM_EXPORT cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    return crm_set_error(crm_rpc_cudaEventDestroy(crm_event_wire(event)));
}
