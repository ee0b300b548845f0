/* crm_h_objects.c -- handlers of device-wide calls and of the streams and events the
 * client creates under its own ids; the session tables they maintain and check. */
#include <arpa/inet.h>
#include <stdlib.h>
#include "crm_server_gen.h"
#include "server/crm_backend.h"
#include "server/crm_monitor.h"
#include "server/crm_scrub.h"
#include "server/crm_session.h"

int crm_session_device(void)
{
    int device = 0;
    crm_rt.cudaGetDevice(&device);
    return device;
}

static cudaError_t crm__lookup(crm_idmap *m, uint64_t id, void **out)
{
    void *v;
    if (crm_idmap_get(m, id, &v) != 0)
        return cudaErrorInvalidResourceHandle;
    *out = ((crm_session_obj *)v)->handle;
    return cudaSuccess;
}

int crm_session_charge(crm_session *s, int device, uint64_t bytes)
{
    return crm_monitor_charge_within(device, bytes, s->quota.mem);
}

void crm_session_slice(crm_session *s, int device, size_t *free_bytes, size_t *total_bytes)
{
    uint64_t limit = s->quota.mem, used = crm_monitor_user_used(device);
    if (limit == 0)
        return;
    if (*total_bytes > limit)
        *total_bytes = (size_t)limit;
    if (*free_bytes > limit - (used < limit ? used : limit))
        *free_bytes = (size_t)(limit - (used < limit ? used : limit));
}

cudaError_t crm_session_stream(crm_session *s, uint64_t id, cudaStream_t *out)
{
    if (s->replaying) { /* a graph's work runs in the stream it is launched into */
        *out = s->replay_stream;
        return cudaSuccess;
    }
    if (id == 0) {
        *out = 0; /* the legacy default stream */
        return cudaSuccess;
    }
    return crm__lookup(&s->streams, id, (void **)out);
}

cudaError_t crm_session_event(crm_session *s, uint64_t id, cudaEvent_t *out)
{
    return crm__lookup(&s->events, id, (void **)out);
}

cudaError_t crm_session_check_region(crm_session *s, uint64_t addr, uint64_t pitch, uint64_t width,
                                     uint64_t height)
{
    uint64_t extent;
    if (height > 1 && width > pitch)
        return cudaErrorInvalidPitchValue;
    if (width == 0 || height == 0)
        return cudaSuccess;
    if (height > 1 && pitch > (UINT64_MAX - width) / (height - 1))
        return cudaErrorInvalidValue;
    extent = pitch * (height - 1) + width;
    return crm_rangemap_find_run(&s->allocs, addr, extent, CRM_RANGE_VMM) ? cudaSuccess : cudaErrorInvalidValue;
}

int crm_session_handle(crm_session *s, int kind, uint64_t id, void **out)
{
    void *v;
    if (crm_idmap_get(&s->handles, id, &v) != 0 || ((crm_session_obj *)v)->kind != kind)
        return -1;
    *out = ((crm_session_obj *)v)->handle;
    return 0;
}

/* The --session-limits kind a library handle of kind counts against. */
static int crm__limit_of(int kind)
{
    switch (kind) {
    case CRM_HANDLE_kernel_module: return CRM_LIMIT_MODULES;
    case CRM_HANDLE_kernel_func: return CRM_LIMIT_FUNCTIONS;
    case CRM_HANDLE_vmm_phys: return CRM_LIMIT_ALLOCATIONS;
    default: return CRM_LIMIT_HANDLES;
    }
}

int crm_session_handle_add(crm_session *s, int kind, uint64_t id, void *handle, void (*destroy)(void *))
{
    crm_session_obj *o = malloc(sizeof *o);
    if (o == NULL)
        return -1;
    *o = (crm_session_obj){.handle = handle, .device = crm_session_device(), .kind = kind, .destroy = destroy};
    if (id == 0 || crm_idmap_put(&s->handles, id, o) != 0) {
        free(o);
        return -1;
    }
    crm_session_count(s, crm__limit_of(kind), 1);
    return 0;
}

int crm_session_handle_del(crm_session *s, int kind, uint64_t id, void **out)
{
    void *v;
    if (crm_session_handle(s, kind, id, out) != 0)
        return -1;
    crm_idmap_del(&s->handles, id, &v);
    free(v);
    crm_session_count(s, crm__limit_of(kind), -1);
    return 0;
}

/* Remembers a created backend object under the client's id. */
static cudaError_t crm__remember(crm_idmap *m, uint64_t id, void *handle)
{
    crm_session_obj *o = malloc(sizeof *o);
    if (o == NULL)
        return cudaErrorMemoryAllocation;
    *o = (crm_session_obj){.handle = handle, .device = crm_session_device()};
    if (crm_idmap_put(m, id, o) != 0) {
        free(o);
        return cudaErrorMemoryAllocation;
    }
    return cudaSuccess;
}

cudaError_t crm_srv_crm_stream_create(crm_session *s, uint64_t id, unsigned int flags, int priority)
{
    cudaStream_t h;
    if (id == 0 || crm_idmap_get(&s->streams, id, NULL) == 0)
        return cudaErrorInvalidValue;
    if (crm_session_room(s, CRM_LIMIT_STREAMS, 1) != 0)
        return cudaErrorMemoryAllocation; /* as a GPU out of the resources a stream needs */
    cudaError_t err = crm_rt.cudaStreamCreateWithPriority(&h, flags, priority);
    if (err == cudaSuccess && (err = crm__remember(&s->streams, id, h)) != cudaSuccess)
        crm_rt.cudaStreamDestroy(h);
    return err;
}

cudaError_t crm_srv_cudaStreamDestroy(crm_session *s, uint64_t stream)
{
    void *v;
    if (crm_idmap_get(&s->streams, stream, &v) != 0)
        return cudaErrorInvalidResourceHandle;
    cudaError_t err = crm_rt.cudaStreamDestroy(((crm_session_obj *)v)->handle);
    crm_idmap_del(&s->streams, stream, NULL);
    free(v);
    return err;
}

cudaError_t crm_srv_crm_event_create(crm_session *s, uint64_t id, unsigned int flags)
{
    cudaEvent_t h;
    if (id == 0 || crm_idmap_get(&s->events, id, NULL) == 0)
        return cudaErrorInvalidValue;
    if (crm_session_room(s, CRM_LIMIT_EVENTS, 1) != 0)
        return cudaErrorMemoryAllocation;
    cudaError_t err = crm_rt.cudaEventCreateWithFlags(&h, flags);
    if (err == cudaSuccess && (err = crm__remember(&s->events, id, h)) != cudaSuccess)
        crm_rt.cudaEventDestroy(h);
    return err;
}

cudaError_t crm_srv_cudaEventDestroy(crm_session *s, uint64_t event)
{
    void *v;
    if (crm_idmap_get(&s->events, event, &v) != 0)
        return cudaErrorInvalidResourceHandle;
    cudaError_t err = crm_rt.cudaEventDestroy(((crm_session_obj *)v)->handle);
    crm_idmap_del(&s->events, event, NULL);
    free(v);
    return err;
}

cudaError_t crm_srv_cudaGetDeviceProperties(crm_session *s, int device, crm_prop *prop)
{
    struct cudaDeviceProp *p = calloc(1, sizeof *p);
    if (p == NULL)
        return cudaErrorMemoryAllocation;
    cudaError_t err = crm_rt.cudaGetDeviceProperties(p, device);
    if (err != cudaSuccess) {
        free(p);
        return err;
    }
    if (s->quota.mem != 0 && p->totalGlobalMem > s->quota.mem)
        p->totalGlobalMem = (size_t)s->quota.mem; /* the user's slice of it */
    prop->crm_prop_len = sizeof *p;
    prop->crm_prop_val = (char *)p;
    return cudaSuccess;
}

cudaError_t crm_srv_crm_device_attrs(crm_session *s, int device, crm_bytes *values)
{
    (void)s;
    uint32_t *pairs = calloc(2 * cudaDevAttrMax, sizeof *pairs);
    if (pairs == NULL)
        return cudaErrorMemoryAllocation;
    for (int attr = 0; attr < cudaDevAttrMax; attr++) {
        int value = 0;
        cudaError_t err = crm_rt.cudaDeviceGetAttribute(&value, (enum cudaDeviceAttr)attr, device);
        if (err == cudaErrorInvalidDevice) {
            free(pairs);
            crm_rt.cudaGetLastError();
            return err;
        }
        pairs[2 * attr] = htonl((uint32_t)err);
        pairs[2 * attr + 1] = htonl((uint32_t)value);
    }
    crm_rt.cudaGetLastError(); /* invalid attributes must not leave a sticky error */
    values->crm_bytes_len = 2 * cudaDevAttrMax * sizeof *pairs;
    values->crm_bytes_val = (char *)pairs;
    return cudaSuccess;
}

cudaError_t crm_srv_cudaDeviceReset(crm_session *s)
{
    int device = crm_session_device();
    cudaError_t err = crm_rt.cudaDeviceReset();
    crm_session_release(s, device, 1); /* the reset destroyed them already */
    return err;
}

/* Collects the ids of objects on one device, so they can be removed after the walk. */
typedef struct crm__sweep {
    int device;
    uint64_t *ids;
    size_t count;
} crm__sweep;

static void crm__collect(uint64_t id, void *value, void *arg)
{
    crm__sweep *sw = arg;
    if (sw->device < 0 || ((crm_session_obj *)value)->device == sw->device)
        sw->ids[sw->count++] = id;
}

/* Releases one object: library handles through their destroy function. */
static void crm__release_obj(crm_session_obj *o, int forget_only, int is_stream)
{
    if (forget_only)
        return;
    if (o->destroy != NULL)
        o->destroy(o->handle);
    else if (is_stream)
        crm_rt.cudaStreamDestroy(o->handle);
    else
        crm_rt.cudaEventDestroy(o->handle);
}

/* Releases the objects of m on device (-1: all); `counted`: the session whose
 * library handles they are, whose counts go down (NULL for streams and events). */
static void crm__release_objs(crm_idmap *m, int device, int forget_only, int is_stream, crm_session *counted)
{
    crm__sweep sw = {device, malloc((m->used + 1) * sizeof(uint64_t)), 0};
    if (sw.ids == NULL)
        return;
    crm_idmap_each(m, crm__collect, &sw);
    for (size_t i = 0; i < sw.count; i++) {
        void *v;
        crm_idmap_del(m, sw.ids[i], &v);
        if (counted != NULL)
            crm_session_count(counted, crm__limit_of(((crm_session_obj *)v)->kind), -1);
        crm__release_obj(v, forget_only, is_stream);
        free(v);
    }
    free(sw.ids);
}

void crm_session_release(crm_session *s, int device, int forget_only)
{
    crm__release_objs(&s->handles, device, forget_only, 0, s); /* they may use streams */
    crm__release_objs(&s->streams, device, forget_only, 1, NULL);
    crm__release_objs(&s->events, device, forget_only, 0, NULL);
    crm_rangemap *m = &s->allocs;
    for (size_t i = m->count; i-- > 0;) {
        if (device >= 0 && m->ranges[i].device != device)
            continue;
        uint32_t kind = m->ranges[i].kind;
        if (!forget_only && kind != CRM_RANGE_SYMBOL)
            crm_scrub(s, m->ranges[i].device, m->ranges[i].base, m->ranges[i].size);
        if (!forget_only && kind == CRM_RANGE_VMM)
            crm_rt.cuMemUnmap((CUdeviceptr)m->ranges[i].base, m->ranges[i].size);
        else if (!forget_only && kind != CRM_RANGE_SYMBOL)
            crm_rt.cudaFree((void *)(uintptr_t)m->ranges[i].base);
        if (kind != CRM_RANGE_SYMBOL && kind != CRM_RANGE_VMM) /* mapped memory is charged when created */
            crm_monitor_charge(m->ranges[i].device, -(int64_t)m->ranges[i].size);
        crm_rangemap_remove(m, m->ranges[i].base, NULL);
    }
    if (device < 0) {
        crm_rangemap_free(&s->allocs);
        crm_idmap_free(&s->streams);
        crm_idmap_free(&s->events);
        crm_idmap_free(&s->handles);
        crm_idmap_free(&s->hostmem);
        crm_session_graphs_free(s);
    }
}
