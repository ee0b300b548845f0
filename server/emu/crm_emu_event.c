/* crm_emu_event.c -- events of the emulated device: record, query, timing, stream waits.
 *
 * All enqueued work has finished by the time a call returns, so an event is complete
 * as soon as it is recorded; recording stores a CLOCK_MONOTONIC timestamp.
 */
#include "server/emu/crm_emu.h"

#include <stdlib.h>
#include <time.h>

#define CRM__EVENT_FLAGS \
    (cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess)

struct CUevent_st {
    int dev;               /* device current at creation */
    unsigned flags;        /* cudaEvent* creation flags */
    int recorded;          /* 1 once recorded */
    struct timespec when;  /* time of the last record */
};

static crm__registry crm__events; /* live struct CUevent_st * */

void crm__event_release_device(int dev)
{
    for (size_t i = crm__events.count; i-- > 0;) {
        struct CUevent_st *e = crm__events.items[i];
        if (e->dev == dev) {
            crm__registry_remove(&crm__events, e);
            free(e);
        }
    }
}

/* Unknown flags, or cudaEventInterprocess without cudaEventDisableTiming, are
 * cudaErrorInvalidValue. */
CRM_EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    CRM__EMU_STICKY();
    if (event == NULL || (flags & ~(unsigned)CRM__EVENT_FLAGS) != 0 ||
        ((flags & cudaEventInterprocess) && !(flags & cudaEventDisableTiming)))
        return crm__emu_ret(cudaErrorInvalidValue);
    struct CUevent_st *e = calloc(1, sizeof *e);
    if (e == NULL)
        return crm__emu_ret(cudaErrorMemoryAllocation);
    e->dev = crm__emu_current();
    e->flags = flags;
    crm__emu_wrlock();
    int rc = crm__registry_add(&crm__events, e);
    crm__emu_unlock();
    if (rc != 0) {
        free(e);
        return crm__emu_ret(cudaErrorMemoryAllocation);
    }
    *event = e;
    return cudaSuccess;
}

CRM_EXPORT cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    CRM__EMU_STICKY();
    return cudaEventCreateWithFlags(event, cudaEventDefault);
}

CRM_EXPORT cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    CRM__EMU_STICKY();
    cudaError_t err = cudaErrorInvalidResourceHandle;
    crm__emu_wrlock();
    if (event != NULL && crm__registry_remove(&crm__events, event) == 0) {
        free(event);
        err = cudaSuccess;
    }
    crm__emu_unlock();
    return crm__emu_ret(err);
}

/* Records now. Unknown event or stream, or a stream of another device than the
 * event's: cudaErrorInvalidResourceHandle; unknown flags: cudaErrorInvalidValue. */
CRM_EXPORT cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream,
                                                unsigned int flags)
{
    CRM__EMU_STICKY();
    if ((flags & ~(unsigned)cudaEventRecordExternal) != 0)
        return crm__emu_ret(cudaErrorInvalidValue);
    int dev;
    crm__emu_wrlock();
    cudaError_t err = crm__stream_check(stream, &dev);
    if (err == cudaSuccess && (!crm__registry_has(&crm__events, event) || event->dev != dev))
        err = cudaErrorInvalidResourceHandle;
    if (err == cudaSuccess) {
        clock_gettime(CLOCK_MONOTONIC, &event->when);
        event->recorded = 1;
    }
    crm__emu_unlock();
    return crm__emu_ret(err);
}

CRM_EXPORT cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    CRM__EMU_STICKY();
    return cudaEventRecordWithFlags(event, stream, cudaEventRecordDefault);
}

/* cudaSuccess for any live event (recorded or not, work is always complete). */
static cudaError_t crm__event_check(cudaEvent_t event)
{
    crm__emu_rdlock();
    int ok = crm__registry_has(&crm__events, event);
    crm__emu_unlock();
    return ok ? cudaSuccess : cudaErrorInvalidResourceHandle;
}

CRM_EXPORT cudaError_t cudaEventQuery(cudaEvent_t event)
{
    CRM__EMU_STICKY();
    return crm__emu_ret(crm__event_check(event));
}

CRM_EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    CRM__EMU_STICKY();
    return crm__emu_ret(crm__event_check(event));
}

/* Returns 1 when e is live, recorded and timed; lock held. */
static int crm__event_timed(cudaEvent_t e)
{
    return crm__registry_has(&crm__events, e) && e->recorded &&
           !(e->flags & cudaEventDisableTiming);
}

/* Milliseconds from start to end. An unknown, unrecorded or cudaEventDisableTiming
 * event is cudaErrorInvalidResourceHandle; a NULL ms is cudaErrorInvalidValue. */
CRM_EXPORT cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    CRM__EMU_STICKY();
    if (ms == NULL)
        return crm__emu_ret(cudaErrorInvalidValue);
    cudaError_t err = cudaErrorInvalidResourceHandle;
    crm__emu_rdlock();
    if (crm__event_timed(start) && crm__event_timed(end)) {
        double d = (double)(end->when.tv_sec - start->when.tv_sec) * 1e3 +
                   (double)(end->when.tv_nsec - start->when.tv_nsec) / 1e6;
        *ms = (float)d;
        err = cudaSuccess;
    }
    crm__emu_unlock();
    return crm__emu_ret(err);
}

/* Nothing to wait for; validates the stream, the event and the flags
 * (cudaEventWaitDefault or cudaEventWaitExternal, else cudaErrorInvalidValue). */
CRM_EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
                                           unsigned int flags)
{
    CRM__EMU_STICKY();
    if ((flags & ~(unsigned)cudaEventWaitExternal) != 0)
        return crm__emu_ret(cudaErrorInvalidValue);
    crm__emu_rdlock();
    cudaError_t err = crm__stream_check(stream, NULL);
    if (err == cudaSuccess && !crm__registry_has(&crm__events, event))
        err = cudaErrorInvalidResourceHandle;
    crm__emu_unlock();
    return crm__emu_ret(err);
}
