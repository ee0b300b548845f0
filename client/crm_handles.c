/* crm_handles.c -- per-thread state and client-chosen stream/event ids.
 *
 * Handles given to programs are the wire ids themselves, tagged in the top bits so
 * they are never valid host pointers and never collide with cudaStreamLegacy (1)
 * or cudaStreamPerThread (2). */
#include <stdatomic.h>
#include "client/crm_handles.h"
#include "crm_client_gen.h"

#define CRM_STREAM_TAG 0x5c00000000000000ull
#define CRM_EVENT_TAG  0x5e00000000000000ull
#define CRM_HANDLE_TAG 0x5a00000000000000ull

static _Thread_local cudaError_t crm__last_error = cudaSuccess;
static _Thread_local int crm__device = 0;
static _Thread_local uint64_t crm__pt_stream = 0;      /* wire id, 0 = not created */
static _Thread_local int crm__pt_device = -1;          /* device it was created on */
static _Thread_local unsigned crm__pt_generation = 0;  /* crm__generation when created */

static atomic_uint_fast64_t crm__next_id = 1;
static atomic_uint crm__generation = 1;

cudaError_t crm_set_error(cudaError_t err)
{
    if (err != cudaSuccess)
        crm__last_error = err;
    return err;
}

cudaError_t crm_take_error(void)
{
    cudaError_t err = crm__last_error;
    crm__last_error = cudaSuccess;
    return err;
}

cudaError_t crm_peek_error(void)
{
    return crm__last_error;
}

void crm_put_error(cudaError_t err)
{
    crm__last_error = err;
}

int crm_thread_device(void)
{
    return crm__device;
}

void crm_set_thread_device(int device)
{
    crm__device = device;
}

cudaStream_t crm_stream_new(uint64_t *id)
{
    *id = CRM_STREAM_TAG | atomic_fetch_add(&crm__next_id, 1);
    return (cudaStream_t)(uintptr_t)*id;
}

cudaEvent_t crm_event_new(uint64_t *id)
{
    *id = CRM_EVENT_TAG | atomic_fetch_add(&crm__next_id, 1);
    return (cudaEvent_t)(uintptr_t)*id;
}

uint64_t crm_handle_new_id(void)
{
    return CRM_HANDLE_TAG | atomic_fetch_add(&crm__next_id, 1);
}

/* The thread's per-thread default stream, created on first use per device. */
static uint64_t crm__per_thread_stream(void)
{
    if (crm__pt_stream != 0 && crm__pt_device == crm__device && crm__pt_generation == crm__generation)
        return crm__pt_stream;
    uint64_t id;
    crm_stream_new(&id);
    if (crm_rpc_crm_stream_create(id, cudaStreamDefault, 0) != cudaSuccess)
        return CRM_WIRE_BAD_HANDLE;
    crm__pt_stream = id;
    crm__pt_device = crm__device;
    crm__pt_generation = crm__generation;
    return id;
}

uint64_t crm_stream_wire(cudaStream_t stream, int ptds)
{
    uintptr_t h = (uintptr_t)stream;
    if (h == (uintptr_t)cudaStreamPerThread || (h == 0 && ptds == CRM_PTDS_ON))
        return crm__per_thread_stream();
    if (h == 0 || h == (uintptr_t)cudaStreamLegacy)
        return CRM_WIRE_LEGACY_STREAM;
    return (uint64_t)h;
}

uint64_t crm_event_wire(cudaEvent_t event)
{
    return event == NULL ? CRM_WIRE_BAD_HANDLE : (uint64_t)(uintptr_t)event;
}

void crm_handles_reset(void)
{
    atomic_fetch_add(&crm__generation, 1);
}
