/* crm_emu_stream.c -- streams of the emulated device: creation, flags, priorities, sync.
 *
 * Work is executed when it is enqueued, so every stream is always idle: queries
 * succeed and synchronisation returns at once. What is kept is the handle's identity
 * and its properties, with the three default streams (0, cudaStreamLegacy,
 * cudaStreamPerThread) valid everywhere and meaning the current device.
 */
#include "server/emu/crm_emu.h"

#include <stdlib.h>

#define CRM__PRIORITY_LEAST    0
#define CRM__PRIORITY_GREATEST (-5)

struct CUstream_st {
    int dev;         /* device current at creation */
    unsigned flags;  /* cudaStreamDefault or cudaStreamNonBlocking */
    int priority;    /* clamped into [GREATEST, LEAST] */
};

static crm__registry crm__streams; /* live struct CUstream_st * */

static int crm__stream_is_default(cudaStream_t s)
{
    return s == NULL || s == cudaStreamLegacy || s == cudaStreamPerThread;
}

cudaError_t crm__stream_check(cudaStream_t s, int *dev)
{
    if (crm__stream_is_default(s)) {
        if (dev != NULL)
            *dev = crm__emu_current();
        return cudaSuccess;
    }
    if (!crm__registry_has(&crm__streams, s))
        return cudaErrorInvalidResourceHandle;
    if (dev != NULL)
        *dev = s->dev;
    return cudaSuccess;
}

void crm__stream_release_device(int dev)
{
    for (size_t i = crm__streams.count; i-- > 0;) {
        struct CUstream_st *s = crm__streams.items[i];
        if (s->dev == dev) {
            crm__registry_remove(&crm__streams, s);
            free(s);
        }
    }
}

/* Priorities outside the range are clamped, as CUDA does. Unknown flag bits:
 * cudaErrorInvalidValue. */
CRM_EXPORT cudaError_t cudaStreamCreateWithPriority(cudaStream_t *pStream, unsigned int flags,
                                                    int priority)
{
    CRM__EMU_STICKY();
    if (pStream == NULL || (flags & ~(unsigned)cudaStreamNonBlocking) != 0)
        return crm__emu_ret(cudaErrorInvalidValue);
    struct CUstream_st *s = malloc(sizeof *s);
    if (s == NULL)
        return crm__emu_ret(cudaErrorMemoryAllocation);
    s->dev = crm__emu_current();
    s->flags = flags;
    s->priority = priority > CRM__PRIORITY_LEAST      ? CRM__PRIORITY_LEAST
                  : priority < CRM__PRIORITY_GREATEST ? CRM__PRIORITY_GREATEST
                                                      : priority;
    crm__emu_wrlock();
    int rc = crm__registry_add(&crm__streams, s);
    crm__emu_unlock();
    if (rc != 0) {
        free(s);
        return crm__emu_ret(cudaErrorMemoryAllocation);
    }
    *pStream = s;
    return cudaSuccess;
}

CRM_EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
    CRM__EMU_STICKY();
    return cudaStreamCreateWithPriority(pStream, flags, CRM__PRIORITY_LEAST);
}

CRM_EXPORT cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
    CRM__EMU_STICKY();
    return cudaStreamCreateWithPriority(pStream, cudaStreamDefault, CRM__PRIORITY_LEAST);
}

CRM_EXPORT cudaError_t cudaDeviceGetStreamPriorityRange(int *leastPriority,
                                                        int *greatestPriority)
{
    if (leastPriority != NULL)
        *leastPriority = CRM__PRIORITY_LEAST;
    if (greatestPriority != NULL)
        *greatestPriority = CRM__PRIORITY_GREATEST;
    return cudaSuccess;
}

/* Default streams report cudaStreamDefault and priority 0. */
static cudaError_t crm__stream_props(cudaStream_t s, unsigned *flags, int *priority)
{
    cudaError_t err = cudaSuccess;
    crm__emu_rdlock();
    if (crm__stream_is_default(s)) {
        *flags = cudaStreamDefault;
        *priority = CRM__PRIORITY_LEAST;
    } else if (crm__registry_has(&crm__streams, s)) {
        *flags = s->flags;
        *priority = s->priority;
    } else {
        err = cudaErrorInvalidResourceHandle;
    }
    crm__emu_unlock();
    return err;
}

CRM_EXPORT cudaError_t cudaStreamGetFlags(cudaStream_t hStream, unsigned int *flags)
{
    int priority;
    if (flags == NULL)
        return crm__emu_ret(cudaErrorInvalidValue);
    return crm__emu_ret(crm__stream_props(hStream, flags, &priority));
}

CRM_EXPORT cudaError_t cudaStreamGetPriority(cudaStream_t hStream, int *priority)
{
    unsigned flags;
    if (priority == NULL)
        return crm__emu_ret(cudaErrorInvalidValue);
    return crm__emu_ret(crm__stream_props(hStream, &flags, priority));
}

/* Destroying a default stream or an unknown handle is cudaErrorInvalidResourceHandle. */
CRM_EXPORT cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    CRM__EMU_STICKY();
    cudaError_t err = cudaErrorInvalidResourceHandle;
    crm__emu_wrlock();
    if (!crm__stream_is_default(stream) && crm__registry_remove(&crm__streams, stream) == 0) {
        free(stream);
        err = cudaSuccess;
    }
    crm__emu_unlock();
    return crm__emu_ret(err);
}

/* Returns cudaSuccess for a known stream (all work is already done). */
static cudaError_t crm__stream_idle(cudaStream_t stream)
{
    crm__emu_rdlock();
    cudaError_t err = crm__stream_check(stream, NULL);
    crm__emu_unlock();
    return err;
}

CRM_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    CRM__EMU_STICKY();
    return crm__emu_ret(crm__stream_idle(stream));
}

CRM_EXPORT cudaError_t cudaStreamQuery(cudaStream_t stream)
{
    CRM__EMU_STICKY();
    return crm__emu_ret(crm__stream_idle(stream));
}
