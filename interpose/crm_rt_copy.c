/* crm_rt_copy.c -- exported copy and memset calls, 1D and 2D, sync and async, with
 * their per-thread-default-stream twins. Every copy is a pitched 2D copy inside:
 * host-to-host stays local, the rest becomes one bulk or device-side call. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include "client/crm_codec.h"
#include "client/crm_conn.h"
#include "client/crm_graph.h"
#include "client/crm_handles.h"
#include "client/crm_hostmem.h"
#include "client/crm_managed.h"
#include "client/crm_ptrmap.h"
#include "crm_client_gen.h"
#include "interpose/crm_drv.h"
#include "interpose/crm_export.h"
#include "interpose/crm_rt_graph.h"

/* One copy request, as the exported functions receive it. */
typedef struct crm__copy {
    void *dst;
    size_t dpitch;
    const void *src;
    size_t spitch;
    size_t width;
    size_t height;
    enum cudaMemcpyKind kind;
    uint64_t stream;   /* wire id */
    int async;
} crm__copy;

static int crm__is_device(const void *p)
{
    return crm_ptrmap_classify((uint64_t)(uintptr_t)p, NULL) == CRM_MEM_DEVICE;
}

/* Resolves cudaMemcpyDefault from the pointers, and refuses a kind that would make
 * the client touch a device address as host memory. */
static cudaError_t crm__resolve_kind(crm__copy *c)
{
    int dst_dev = crm__is_device(c->dst), src_dev = crm__is_device(c->src);
    /* managed memory is reachable from both sides, whatever kind the program named:
     * its copies run where its current bytes are, on the device */
    if (c->kind >= cudaMemcpyHostToHost && c->kind < cudaMemcpyDefault &&
        (crm_managed_find((uint64_t)(uintptr_t)c->dst, NULL, NULL) ||
         crm_managed_find((uint64_t)(uintptr_t)c->src, NULL, NULL)))
        c->kind = cudaMemcpyDefault;
    switch (c->kind) {
    case cudaMemcpyDefault:
        c->kind = src_dev ? (dst_dev ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost)
                          : (dst_dev ? cudaMemcpyHostToDevice : cudaMemcpyHostToHost);
        return cudaSuccess;
    case cudaMemcpyHostToHost:
        return dst_dev || src_dev ? cudaErrorInvalidValue : cudaSuccess;
    case cudaMemcpyHostToDevice:
        return src_dev ? cudaErrorInvalidValue : cudaSuccess;
    case cudaMemcpyDeviceToHost:
        return dst_dev ? cudaErrorInvalidValue : cudaSuccess;
    case cudaMemcpyDeviceToDevice:
        return cudaSuccess;
    default:
        return cudaErrorInvalidMemcpyDirection;
    }
}

/* Sends a host-to-device copy too large to queue in a message of its own, after
 * the queue, posted: it costs no round trip and returns once its data has left,
 * as a local runtime returns once a pageable source is staged (the copy into the
 * device may finish later). A failure on the server, like a queued copy's,
 * surfaces at the next synchronising call; a bad destination is refused here. */
static cudaError_t crm__copy_h2d_now(crm_h2d_args *args)
{
    crm_call call = {.api = CRM_API_crm_memcpy_h2d};
    call.crm_call_u.crm_memcpy_h2d.data = *args;
    return crm_conn_post(&call);
}

static cudaError_t crm__h2d_one(const crm__copy *c, int level, int queued)
{
    crm_h2d_args args = {
        .dst = (uint64_t)(uintptr_t)c->dst, .dpitch = c->dpitch, .width = c->width, .height = c->height,
        .stream = c->stream, .async = c->async, .src = c->src, .spitch = c->spitch, .level = level,
    };
    return queued ? crm_rpc_crm_memcpy_h2d(&args) : crm__copy_h2d_now(&args);
}

/* A copy whose host side lies in shared pinned memory (client/crm_hostmem.h) and
 * whose device side is a known allocation: the server copies the bytes itself, so
 * the call carries none. A synchronous copy waits for its answer, as it would
 * locally. An asynchronous copy to the host is queued: the server writes the
 * memory when it runs it, and the program may read it once the copy is known
 * complete, as CUDA requires. An asynchronous copy to the device keeps its usual
 * path, which takes the bytes now: run later from the shared memory, it would
 * read what the program wrote there since, and our queue holds a copy until the
 * next synchronising call, far longer than a local GPU takes to start it.
 * Returns 0 when the copy does not qualify, else 1 with its result in *err. */
static int crm__copy_pinned(const crm__copy *c, int to_device, cudaError_t *err)
{
    uint64_t id, offset, bytes = c->width * c->height;
    const void *host = to_device ? c->src : c->dst;
    uint64_t hpitch = to_device ? c->spitch : c->dpitch, dpitch = to_device ? c->dpitch : c->spitch;
    uint64_t dev = (uint64_t)(uintptr_t)(to_device ? c->dst : c->src);
    if (bytes <= CRM_COPY_INLINE_MAX || (to_device && c->async) ||
        (c->height > 1 && hpitch > (UINT64_MAX - c->width) / (c->height - 1)))
        return 0;
    uint64_t extent = hpitch * (c->height - 1) + c->width;
    if (!crm_hostmem_find(host, extent, &id, &offset) ||
        !crm_ptrmap_device_region(dev, dpitch, c->width, c->height))
        return 0;
    if (!c->async) {
        *err = crm_rpc_crm_memcpy_host(id, offset, hpitch, dev, dpitch, c->width, c->height, to_device, c->stream, 0);
    } else {
        crm_call call = {.api = CRM_API_crm_memcpy_host};
        call.crm_call_u.crm_memcpy_host = (crm_args_crm_memcpy_host){
            .region = id, .offset = offset, .hpitch = hpitch, .dev = dev, .dpitch = dpitch, .width = c->width,
            .height = c->height, .to_device = 0, .stream = c->stream, .async = 1,
        };
        *err = crm_conn_async(&call);
    }
    if (*err == cudaSuccess)
        crm_conn_count_pinned(bytes);
    return 1;
}

static cudaError_t crm__copy_h2d(const crm__copy *c)
{
    uint64_t bytes = c->width * c->height;
    int queued;
    cudaError_t err;
    /* Refused here, as a local GPU refuses it at the call, not at a later sync. */
    if (!crm_ptrmap_device_region((uint64_t)(uintptr_t)c->dst, c->dpitch, c->width, c->height))
        return cudaErrorInvalidValue;
    if (crm__copy_pinned(c, 1, &err))
        return err;
    int level = crm_conn_copy_level(bytes, &queued);
    err = crm__h2d_one(c, level, queued);
    if (err == cudaSuccess)
        crm_conn_count_bulk(bytes, 0);
    return err;
}

static cudaError_t crm__d2h_one(const crm__copy *c, int level)
{
    crm_d2h_res data = {.dst = c->dst, .dpitch = c->dpitch, .width = c->width, .height = c->height};
    return crm_rpc_crm_memcpy_d2h((uint64_t)(uintptr_t)c->src, c->spitch, c->width, c->height, c->stream, c->async,
                                  level, &data);
}

static cudaError_t crm__copy_d2h(const crm__copy *c)
{
    uint64_t bytes = c->width * c->height;
    int queued;
    cudaError_t err;
    if (crm__copy_pinned(c, 0, &err))
        return err;
    err = crm__d2h_one(c, crm_conn_copy_level(bytes, &queued));
    if (err == cudaSuccess)
        crm_conn_count_bulk(0, bytes);
    return err;
}

static void crm__copy_h2h(const crm__copy *c)
{
    for (size_t row = 0; row < c->height; row++)
        memmove((char *)c->dst + row * c->dpitch, (const char *)c->src + row * c->spitch, c->width);
}

/* Stream wire id `stream` if it belongs to server `server` of a pool, else the
 * legacy default stream of the device the copy's side is on. */
static uint64_t crm__stream_on(uint64_t stream, int server)
{
    int owner = crm_handles_device(stream);
    return owner >= 0 && crm_conn_server_of(owner) == server ? stream : CRM_WIRE_LEGACY_STREAM;
}

/* The device holding device address p, -1 when the client knows none. */
static int crm__device_of(const void *p)
{
    crm_range r;
    return crm_ptrmap_classify((uint64_t)(uintptr_t)p, &r) == CRM_MEM_DEVICE ? r.device : -1;
}

/* The stream a copy or memset touching device memory at p runs on. In a pool, a
 * stream of another server than p's cannot reach p: the work waits for that
 * stream's earlier work (the client synchronises it), then runs on the legacy
 * stream of p's device. */
static cudaError_t crm__stream_for(uint64_t *stream, const void *p)
{
    if (!crm_conn_pooled() || *stream == CRM_WIRE_LEGACY_STREAM)
        return cudaSuccess;
    int owner = crm_handles_device(*stream), dev = crm__device_of(p);
    if (owner < 0 || dev < 0 || crm_conn_server_of(owner) == crm_conn_server_of(dev))
        return cudaSuccess;
    cudaError_t err = crm_rpc_cudaStreamSynchronize(*stream);
    *stream = CRM_WIRE_LEGACY_STREAM;
    return err;
}

/* A device-to-device copy between two servers of a pool: no server sees both
 * sides, so the bytes come through this process, read from the source's server
 * and written to the destination's in bands of at most CRM_ACROSS_BAND bytes. Each
 * band's read waits for the work before it on the source's stream (or its
 * device's legacy stream), and the write is ordered on the destination's; the
 * copy is synchronous with the client, as a copy through pageable memory is. */
#define CRM_ACROSS_BAND (8u << 20)

/* One band buffer kept between copies: a fresh 8 MiB malloc is a fresh mapping,
 * whose pages fault in again on every copy. */
static pthread_mutex_t crm__band_lock = PTHREAD_MUTEX_INITIALIZER;
static char *crm__band;
static size_t crm__band_size;

static char *crm__band_take(size_t size)
{
    char *b = NULL;
    pthread_mutex_lock(&crm__band_lock);
    if (crm__band != NULL && crm__band_size >= size) {
        b = crm__band;
        crm__band = NULL;
    }
    pthread_mutex_unlock(&crm__band_lock);
    return b != NULL ? b : malloc(size);
}

static void crm__band_give(char *b, size_t size)
{
    pthread_mutex_lock(&crm__band_lock);
    if (crm__band == NULL && size <= CRM_ACROSS_BAND) {
        crm__band = b;
        crm__band_size = size;
        b = NULL;
    }
    pthread_mutex_unlock(&crm__band_lock);
    free(b);
}
/* Moves rows [row, row + n) of columns [col, col + w) through band. */
static cudaError_t crm__across_piece(const crm__copy *c, char *band, size_t row, size_t n, size_t col, size_t w,
                                     int src_server, int dst_server)
{
    crm__copy in = {band, w, (const char *)c->src + row * c->spitch + col, c->spitch, w, n,
                    cudaMemcpyDeviceToHost, crm__stream_on(c->stream, src_server), 0};
    crm__copy out = {(char *)c->dst + row * c->dpitch + col, c->dpitch, band, w, w, n,
                     cudaMemcpyHostToDevice, crm__stream_on(c->stream, dst_server), 0};
    cudaError_t err = crm__copy_d2h(&in);
    return err == cudaSuccess ? crm__copy_h2d(&out) : err;
}

static cudaError_t crm__copy_across(const crm__copy *c, int src_server, int dst_server)
{
    /* bands of whole rows, or pieces of one row when a row is wider than a band */
    size_t w = c->width < CRM_ACROSS_BAND ? c->width : CRM_ACROSS_BAND;
    size_t rows = c->width < CRM_ACROSS_BAND ? CRM_ACROSS_BAND / c->width : 1;
    if (rows > c->height)
        rows = c->height;
    char *band = crm__band_take(rows * w);
    if (band == NULL)
        return cudaErrorMemoryAllocation;
    cudaError_t err = cudaSuccess;
    for (size_t row = 0; row < c->height && err == cudaSuccess; row += rows) {
        size_t n = c->height - row < rows ? c->height - row : rows;
        for (size_t col = 0; col < c->width && err == cudaSuccess; col += w)
            err = crm__across_piece(c, band, row, n, col, c->width - col < w ? c->width - col : w, src_server,
                                    dst_server);
    }
    crm__band_give(band, rows * w);
    return err;
}

/* A device-to-device copy: on the server, or across two servers of a pool. Between
 * two regions the client knows on one server it is queued, synchronous or not: a
 * GPU's device-to-device cudaMemcpy does not wait for the copy either. */
static cudaError_t crm__copy_d2d(const crm__copy *c)
{
    if (crm_conn_pooled()) {
        int src_server = crm_conn_server_of(crm__device_of(c->src));
        int dst_server = crm_conn_server_of(crm__device_of(c->dst));
        if (src_server >= 0 && dst_server >= 0 && src_server != dst_server)
            return crm__copy_across(c, src_server, dst_server);
    } else if (crm_ptrmap_device_region((uint64_t)(uintptr_t)c->dst, c->dpitch, c->width, c->height) &&
               crm_ptrmap_device_region((uint64_t)(uintptr_t)c->src, c->spitch, c->width, c->height)) {
        return crm_rpc_crm_memcpy_d2d_queued((uint64_t)(uintptr_t)c->dst, c->dpitch, (uint64_t)(uintptr_t)c->src,
                                             c->spitch, c->width, c->height, c->stream, c->async);
    }
    if (crm_capture_on(c->stream))
        return cudaErrorInvalidValue; /* a graph cannot hold a copy it cannot check */
    return crm_rpc_crm_memcpy_d2d((uint64_t)(uintptr_t)c->dst, c->dpitch, (uint64_t)(uintptr_t)c->src, c->spitch,
                                  c->width, c->height, c->stream, c->async);
}

static cudaError_t crm__memcpy(crm__copy *c);

/* A copy touching host memory, as a captured graph's client step: it runs again
 * at each launch, on the launch's stream, reading or writing the host bytes of
 * that moment. */
static cudaError_t crm__copy_step(const void *args, uint64_t stream)
{
    crm__copy c = *(const crm__copy *)args;
    c.stream = stream;
    c.async = 1;
    return crm__memcpy(&c);
}

/* During a capture: a synchronous copy is refused as CUDA refuses unsafe calls;
 * an asynchronous one on a capturing stream that touches host memory becomes a
 * client step of the graph. 1 when the copy is dealt with, its result in *err. */
static int crm__copy_captured(const crm__copy *c, cudaError_t *err)
{
    if (!crm_capture_any())
        return 0;
    if (!c->async) {
        *err = crm_capture_refuse_sync(CRM_WIRE_BAD_HANDLE, CRM_WIRE_BAD_HANDLE);
        return *err != cudaSuccess;
    }
    if (c->kind == cudaMemcpyDeviceToDevice)
        return 0; /* queued device work, captured as such */
    return crm_capture_step(c->stream, CU_GRAPH_NODE_TYPE_MEMCPY, crm__copy_step, c, sizeof *c, err);
}

static cudaError_t crm__memcpy(crm__copy *c)
{
    crm_drv_runtime_bind();
    if (c->width == 0 || c->height == 0)
        return c->kind > cudaMemcpyDefault ? cudaErrorInvalidMemcpyDirection : cudaSuccess;
    if (c->dpitch < c->width || c->spitch < c->width)
        return cudaErrorInvalidPitchValue;
    if (c->dst == NULL || c->src == NULL)
        return cudaErrorInvalidValue;
    /* registered memory the device reaches is copied at its device address (client/crm_managed.h) */
    c->dst = (void *)(uintptr_t)crm_managed_device_address((uint64_t)(uintptr_t)c->dst, NULL);
    c->src = (const void *)(uintptr_t)crm_managed_device_address((uint64_t)(uintptr_t)c->src, NULL);
    cudaError_t err = crm__resolve_kind(c);
    if (err == cudaSuccess && c->kind != cudaMemcpyHostToHost)
        err = crm__stream_for(&c->stream, c->kind == cudaMemcpyDeviceToHost ? c->src : c->dst);
    if (err != cudaSuccess || crm__copy_captured(c, &err))
        return err;
    switch (c->kind) {
    case cudaMemcpyHostToHost:
        crm__copy_h2h(c);
        return cudaSuccess;
    case cudaMemcpyHostToDevice:
        return crm__copy_h2d(c);
    case cudaMemcpyDeviceToHost:
        return crm__copy_d2h(c);
    default:
        return crm__copy_d2d(c);
    }
}

/* A pitched copy as the 3D parameters that describe it (one slice, from the start). */
static struct cudaMemcpy3DParms crm__as_3d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                           size_t height, enum cudaMemcpyKind kind)
{
    struct cudaMemcpy3DParms p;
    memset(&p, 0, sizeof p);
    p.srcPtr = (struct cudaPitchedPtr){(void *)src, spitch, width, height};
    p.dstPtr = (struct cudaPitchedPtr){dst, dpitch, width, height};
    p.extent = (struct cudaExtent){width, height, 1};
    p.kind = kind;
    return p;
}

int crm_graph_copy_params(const crm_gnode *n, struct cudaMemcpy3DParms *out)
{
    if (n->step == crm__copy_step && n->args_len == sizeof(crm__copy)) {
        const crm__copy *c = n->args;
        *out = crm__as_3d(c->dst, c->dpitch, c->src, c->spitch, c->width, c->height, c->kind);
        return 0;
    }
    crm_call call;
    if (crm_gnode_decode(n, CRM_API_crm_memcpy_d2d, &call) != 0)
        return -1;
    const crm_args_crm_memcpy_d2d *a = &call.crm_call_u.crm_memcpy_d2d;
    *out = crm__as_3d((void *)(uintptr_t)a->dst, a->dpitch, (const void *)(uintptr_t)a->src, a->spitch, a->width,
                      a->height, cudaMemcpyDeviceToDevice);
    xdr_free((xdrproc_t)xdr_crm_call, (char *)&call);
    return 0;
}

cudaError_t crm_graph_copy_node(crm_gnode *n, void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                size_t height, enum cudaMemcpyKind kind)
{
    crm__copy c = {dst, dpitch, src, spitch, width, height, kind, CRM_WIRE_LEGACY_STREAM, 1};
    free(n->meta); /* the 3D parameters it had, if any, no longer say what it does */
    n->meta = NULL;
    n->meta_len = 0;
    if (width == 0 || height == 0 || dst == NULL || src == NULL)
        return cudaErrorInvalidValue;
    if (dpitch < width || spitch < width)
        return cudaErrorInvalidPitchValue;
    cudaError_t err = crm__resolve_kind(&c);
    if (err != cudaSuccess)
        return err;
    if (c.kind != cudaMemcpyDeviceToDevice)
        return crm_gnode_set_step(n, crm__copy_step, &c, sizeof c) == 0 ? cudaSuccess : cudaErrorMemoryAllocation;
    if (!crm_ptrmap_device_region((uint64_t)(uintptr_t)dst, dpitch, width, height) ||
        !crm_ptrmap_device_region((uint64_t)(uintptr_t)src, spitch, width, height))
        return cudaErrorInvalidValue;
    crm_call call = {.api = CRM_API_crm_memcpy_d2d};
    call.crm_call_u.crm_memcpy_d2d = (crm_args_crm_memcpy_d2d){
        .dst = (uint64_t)(uintptr_t)dst, .dpitch = dpitch, .src = (uint64_t)(uintptr_t)src, .spitch = spitch,
        .width = width, .height = height, .stream = CRM_WIRE_LEGACY_STREAM, .async = 1,
    };
    return crm_gnode_set_record(n, &call) == 0 ? cudaSuccess : cudaErrorMemoryAllocation;
}

static cudaError_t crm__memcpy2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                 size_t height, enum cudaMemcpyKind kind, cudaStream_t stream, int async,
                                 int ptds)
{
    crm__copy c = {dst, dpitch, src, spitch, width, height, kind, 0, async};
    if (width > 0 && height > 0)
        c.stream = crm_stream_wire(stream, ptds);
    return crm_set_error(crm__memcpy(&c));
}

CRM_EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    return crm__memcpy2d(dst, count, src, count, count, 1, kind, 0, 0, CRM_PTDS_OFF);
}

CRM_EXPORT cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    return crm__memcpy2d(dst, count, src, count, count, 1, kind, 0, 0, CRM_PTDS_ON);
}

CRM_EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                                       cudaStream_t stream)
{
    return crm__memcpy2d(dst, count, src, count, count, 1, kind, stream, 1, CRM_PTDS_OFF);
}

CRM_EXPORT cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                                            cudaStream_t stream)
{
    return crm__memcpy2d(dst, count, src, count, count, 1, kind, stream, 1, CRM_PTDS_ON);
}

CRM_EXPORT cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                    size_t height, enum cudaMemcpyKind kind)
{
    return crm__memcpy2d(dst, dpitch, src, spitch, width, height, kind, 0, 0, CRM_PTDS_OFF);
}

CRM_EXPORT cudaError_t cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                         size_t height, enum cudaMemcpyKind kind)
{
    return crm__memcpy2d(dst, dpitch, src, spitch, width, height, kind, 0, 0, CRM_PTDS_ON);
}

CRM_EXPORT cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                         size_t height, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return crm__memcpy2d(dst, dpitch, src, spitch, width, height, kind, stream, 1, CRM_PTDS_OFF);
}

CRM_EXPORT cudaError_t cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch, const void *src, size_t spitch,
                                              size_t width, size_t height, enum cudaMemcpyKind kind,
                                              cudaStream_t stream)
{
    return crm__memcpy2d(dst, dpitch, src, spitch, width, height, kind, stream, 1, CRM_PTDS_ON);
}

static cudaError_t crm__memset2d(void *dst, size_t pitch, int value, size_t width, size_t height,
                                 cudaStream_t stream, int async, int ptds)
{
    crm_drv_runtime_bind();
    if (width == 0 || height == 0)
        return cudaSuccess;
    if (height > 1 && width > pitch)
        return crm_set_error(cudaErrorInvalidPitchValue);
    if (!crm_ptrmap_device_region((uint64_t)(uintptr_t)dst, pitch, width, height))
        return crm_set_error(cudaErrorInvalidValue);
    uint64_t wire = crm_stream_wire(stream, ptds);
    cudaError_t err = crm__stream_for(&wire, dst);
    if (err == cudaSuccess && !async && crm_capture_any())
        err = crm_capture_refuse_sync(CRM_WIRE_BAD_HANDLE, CRM_WIRE_BAD_HANDLE);
    if (err == cudaSuccess)
        err = crm_rpc_crm_memset((uint64_t)(uintptr_t)dst, pitch, value, width, height, wire, async);
    return crm_set_error(err);
}

CRM_EXPORT cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
    return crm__memset2d(devPtr, count, value, count, 1, 0, 0, CRM_PTDS_OFF);
}

CRM_EXPORT cudaError_t cudaMemset_ptds(void *devPtr, int value, size_t count)
{
    return crm__memset2d(devPtr, count, value, count, 1, 0, 0, CRM_PTDS_ON);
}

CRM_EXPORT cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
    return crm__memset2d(devPtr, count, value, count, 1, stream, 1, CRM_PTDS_OFF);
}

CRM_EXPORT cudaError_t cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count, cudaStream_t stream)
{
    return crm__memset2d(devPtr, count, value, count, 1, stream, 1, CRM_PTDS_ON);
}

CRM_EXPORT cudaError_t cudaMemset2D(void *devPtr, size_t pitch, int value, size_t width, size_t height)
{
    return crm__memset2d(devPtr, pitch, value, width, height, 0, 0, CRM_PTDS_OFF);
}

CRM_EXPORT cudaError_t cudaMemset2D_ptds(void *devPtr, size_t pitch, int value, size_t width, size_t height)
{
    return crm__memset2d(devPtr, pitch, value, width, height, 0, 0, CRM_PTDS_ON);
}

CRM_EXPORT cudaError_t cudaMemset2DAsync(void *devPtr, size_t pitch, int value, size_t width, size_t height,
                                         cudaStream_t stream)
{
    return crm__memset2d(devPtr, pitch, value, width, height, stream, 1, CRM_PTDS_OFF);
}

CRM_EXPORT cudaError_t cudaMemset2DAsync_ptsz(void *devPtr, size_t pitch, int value, size_t width,
                                              size_t height, cudaStream_t stream)
{
    return crm__memset2d(devPtr, pitch, value, width, height, stream, 1, CRM_PTDS_ON);
}

/* Peer copies: within one server its devices share an address space; between
 * servers of a pool the copy goes through the client (crm__copy_across). */
static cudaError_t crm__memcpy_peer(void *dst, int dst_dev, const void *src, int src_dev, size_t count,
                                    cudaStream_t stream, int async)
{
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || dst_dev < 0 || dst_dev >= ndev || src_dev < 0 ||
        src_dev >= ndev)
        return crm_set_error(cudaErrorInvalidDevice);
    return crm__memcpy2d(dst, count, src, count, count, 1, cudaMemcpyDeviceToDevice, stream, async, CRM_PTDS_OFF);
}

CRM_EXPORT cudaError_t cudaMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice, size_t count)
{
    return crm__memcpy_peer(dst, dstDevice, src, srcDevice, count, NULL, 0);
}

CRM_EXPORT cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice, size_t count,
                                           cudaStream_t stream)
{
    return crm__memcpy_peer(dst, dstDevice, src, srcDevice, count, stream, 1);
}
