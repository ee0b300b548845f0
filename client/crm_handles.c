/* crm_handles.c -- per-thread state and client-chosen stream/event ids.
 *
 * Handles given to programs are the wire ids themselves, tagged in the top bits so
 * they are never valid host pointers and never collide with cudaStreamLegacy (1)
 * or cudaStreamPerThread (2). */
#include <pthread.h>
#include <stdatomic.h>
#include "client/crm_conn.h"
#include "client/crm_handles.h"
#include "common/crm_idmap.h"
#include "crm_client_gen.h"

#define CRM_STREAM_TAG 0x5c00000000000000ull
#define CRM_EVENT_TAG  0x5e00000000000000ull
#define CRM_HANDLE_TAG 0x5a00000000000000ull

static _Thread_local cudaError_t crm__last_error = cudaSuccess;
static _Thread_local int crm__device = 0;
static _Thread_local uint64_t crm__pt_stream = 0;      /* wire id, 0 = not created */
static _Thread_local int crm__pt_device = -1;          /* device it was created on */
static _Thread_local unsigned crm__pt_generation = 0;  /* crm__generation when created */

static _Thread_local uint64_t crm__serial = 0;          /* 0 = not numbered yet */

static atomic_uint_fast64_t crm__next_id = 1;
static atomic_uint_fast64_t crm__next_serial = 1;
static atomic_uint crm__generation = 1;

uint64_t crm_thread_serial(void)
{
    if (crm__serial == 0)
        crm__serial = atomic_fetch_add(&crm__next_serial, 1);
    return crm__serial;
}

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

/* The device each object was made on, kept when several servers are pooled: a
 * call naming the object goes to that device's server (client/crm_conn.h). */
static pthread_mutex_t crm__owners_lock = PTHREAD_MUTEX_INITIALIZER;
static crm_idmap crm__owners;

static uint64_t crm__owned(uint64_t id)
{
    /* an object may be a program's first CUDA call: the sessions open first, so
     * whether this is a pool is known */
    if (!crm_conn_pooled() && (crm_conn_session(NULL) != cudaSuccess || !crm_conn_pooled()))
        return id;
    pthread_mutex_lock(&crm__owners_lock);
    crm_idmap_put(&crm__owners, id, (void *)(intptr_t)(crm__device + 1)); /* no room: routed as current */
    pthread_mutex_unlock(&crm__owners_lock);
    return id;
}

int crm_handles_device(uint64_t id)
{
    void *value = NULL;
    pthread_mutex_lock(&crm__owners_lock);
    int found = crm__owners.cap > 0 && crm_idmap_get(&crm__owners, id, &value) == 0;
    pthread_mutex_unlock(&crm__owners_lock);
    return found ? (int)(intptr_t)value - 1 : -1;
}

void crm_handles_forget(uint64_t id)
{
    pthread_mutex_lock(&crm__owners_lock);
    if (crm__owners.cap > 0)
        crm_idmap_del(&crm__owners, id, NULL);
    pthread_mutex_unlock(&crm__owners_lock);
}

/* Streams and events created and not yet destroyed, whatever the pool: a
 * destruction the client can check costs no round trip. */
static pthread_mutex_t crm__live_lock = PTHREAD_MUTEX_INITIALIZER;
static crm_idmap crm__live_objects;

void crm_object_live(uint64_t id)
{
    pthread_mutex_lock(&crm__live_lock);
    if (crm__live_objects.cap == 0)
        crm_idmap_init(&crm__live_objects);
    crm_idmap_put(&crm__live_objects, id, NULL); /* no room: its destruction is answered */
    pthread_mutex_unlock(&crm__live_lock);
}

void crm_stream_live(uint64_t id, unsigned flags)
{
    pthread_mutex_lock(&crm__live_lock);
    if (crm__live_objects.cap == 0)
        crm_idmap_init(&crm__live_objects);
    crm_idmap_put(&crm__live_objects, id, (void *)(uintptr_t)(flags | 0x100u)); /* never NULL: a stream's */
    pthread_mutex_unlock(&crm__live_lock);
}

int crm_stream_nonblocking(uint64_t id)
{
    void *v = NULL;
    pthread_mutex_lock(&crm__live_lock);
    int found = crm__live_objects.cap > 0 && crm_idmap_get(&crm__live_objects, id, &v) == 0;
    pthread_mutex_unlock(&crm__live_lock);
    return found && ((uintptr_t)v & cudaStreamNonBlocking) != 0;
}

int crm_object_take_live(uint64_t id)
{
    pthread_mutex_lock(&crm__live_lock);
    int live = crm__live_objects.cap > 0 && crm_idmap_del(&crm__live_objects, id, NULL) == 0;
    pthread_mutex_unlock(&crm__live_lock);
    return live;
}

cudaStream_t crm_stream_new(uint64_t *id)
{
    *id = crm__owned(CRM_STREAM_TAG | atomic_fetch_add(&crm__next_id, 1));
    return (cudaStream_t)(uintptr_t)*id;
}

cudaEvent_t crm_event_new(uint64_t *id)
{
    *id = crm__owned(CRM_EVENT_TAG | atomic_fetch_add(&crm__next_id, 1));
    return (cudaEvent_t)(uintptr_t)*id;
}

uint64_t crm_handle_new_id(void)
{
    return crm__owned(CRM_HANDLE_TAG | atomic_fetch_add(&crm__next_id, 1));
}

uint64_t crm_handle_new_shared_id(void)
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
    pthread_mutex_lock(&crm__live_lock); /* the reset destroyed them on the server */
    if (crm__live_objects.cap > 0)
        crm_idmap_free(&crm__live_objects);
    pthread_mutex_unlock(&crm__live_lock);
}
