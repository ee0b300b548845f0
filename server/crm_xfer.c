/* crm_xfer.c -- moving bulk payloads between the RPC stream and device memory. */
#include <stdlib.h>
#include <string.h>
#include "common/crm_log.h"
#include "protocol/crm_chan.h"
#include "server/crm_backend.h"
#include "server/crm_xfer.h"

#define CRM_STAGING_BYTES (8u << 20) /* pinned staging for the GPU path */

static crm_session *crm__s;
static char *crm__staging;          /* page-locked when the backend is a GPU */
static size_t crm__staging_size;

static int crm__ensure_staging(size_t need)
{
    if (crm__staging != NULL && crm__staging_size >= need)
        return 0;
    if (crm__staging != NULL)
        crm_rt.cudaFreeHost(crm__staging);
    crm__staging = NULL;
    crm__staging_size = need > CRM_STAGING_BYTES ? need : CRM_STAGING_BYTES;
    if (crm_rt.cudaMallocHost((void **)&crm__staging, crm__staging_size) != cudaSuccess) {
        crm__staging = NULL;
        crm__staging_size = 0;
        return -1;
    }
    return 0;
}

/* GPU path, double-buffered: payload bytes fill one half of the pinned staging
 * buffer while the other half's rows are still being copied to the device, so
 * receiving chunk k+1 overlaps the copy of chunk k. An event per half says when
 * its copy is done and the half may be refilled. */
typedef struct crm__staging_writer {
    crm_payload_writer w;
    crm_h2d_args *a;
    cudaStream_t stream;
    uint64_t half;          /* bytes per half, >= one row */
    int cur;                /* half being filled */
    uint64_t fill;          /* bytes in it */
    uint64_t row;           /* next destination row */
    int busy[2];            /* a copy from that half is in flight */
} crm__staging_writer;

static cudaEvent_t crm__half_done[2]; /* created once per session */

static char *crm__half(const crm__staging_writer *sw, int which)
{
    return crm__staging + (uint64_t)which * sw->half;
}

/* Waits until half `which` may be written again. */
static void crm__half_wait(crm__staging_writer *sw, int which)
{
    if (!sw->busy[which])
        return;
    cudaError_t err = crm_rt.cudaEventSynchronize(crm__half_done[which]);
    if (sw->a->status == cudaSuccess)
        sw->a->status = err;
    sw->busy[which] = 0;
}

static char *crm__staging_space(crm_payload_writer *w, uint64_t *avail)
{
    crm__staging_writer *sw = (crm__staging_writer *)w;
    crm__half_wait(sw, sw->cur);
    *avail = sw->half - sw->fill;
    return crm__half(sw, sw->cur) + sw->fill;
}

/* Starts the copy of the whole rows in the current half and switches halves,
 * carrying a partial row over. */
static void crm__half_flush(crm__staging_writer *sw)
{
    crm_h2d_args *a = sw->a;
    uint64_t rows = sw->fill / a->width, rest = sw->fill - rows * a->width;
    if (rows > 0 && a->status == cudaSuccess) {
        void *dst = (void *)(uintptr_t)(a->dst + sw->row * a->dpitch);
        a->status = crm_rt.cudaMemcpy2DAsync(dst, a->dpitch, crm__half(sw, sw->cur), a->width, a->width, rows,
                                             cudaMemcpyHostToDevice, sw->stream);
        if (a->status == cudaSuccess)
            a->status = crm_rt.cudaEventRecord(crm__half_done[sw->cur], sw->stream);
        sw->busy[sw->cur] = a->status == cudaSuccess;
    }
    sw->row += rows;
    int next = sw->cur ^ 1;
    crm__half_wait(sw, next);
    memcpy(crm__half(sw, next), crm__half(sw, sw->cur) + rows * a->width, rest);
    sw->cur = next;
    sw->fill = rest;
}

static bool_t crm__staging_commit(crm_payload_writer *w, uint64_t len)
{
    crm__staging_writer *sw = (crm__staging_writer *)w;
    sw->fill += len;
    if (sw->fill == sw->half || sw->row + sw->fill / sw->a->width == sw->a->height)
        crm__half_flush(sw);
    return TRUE;
}

static int crm__ensure_events(void)
{
    for (int i = 0; i < 2; i++)
        if (crm__half_done[i] == NULL &&
            crm_rt.cudaEventCreateWithFlags(&crm__half_done[i], cudaEventDisableTiming) != cudaSuccess)
            return -1;
    return 0;
}

static bool_t crm__h2d_staged(XDR *xdrs, crm_h2d_args *a, cudaStream_t stream)
{
    /* a half holds at least one row, so every flush makes progress */
    if (crm__ensure_staging(2 * a->width) != 0 || crm__ensure_events() != 0) {
        a->status = cudaErrorMemoryAllocation;
        return crm_payload_skip(xdrs, a->width * a->height);
    }
    crm__staging_writer sw = {.w = {crm__staging_space, crm__staging_commit}, .a = a, .stream = stream,
                              .half = crm__staging_size / 2};
    bool_t ok = crm_payload_get(xdrs, a->width * a->height, &sw.w, &crm_bulk_received);
    crm__half_wait(&sw, 0); /* the caller's data is on the device before we answer */
    crm__half_wait(&sw, 1);
    return ok;
}

/* cudaSuccess, or the sticky error of the emulated device's context (a kernel
 * fault), which copies straight into or out of its memory must report as the
 * runtime's copies do; the stream query costs nothing there. */
static cudaError_t crm__device_usable(cudaStream_t stream)
{
    return crm_backend_host_addressable() ? crm_rt.cudaStreamQuery(stream) : cudaSuccess;
}

static bool_t crm__h2d_sink(XDR *xdrs, crm_h2d_args *a)
{
    cudaStream_t stream = 0;
    crm_rows_writer rw;
    uint64_t bytes = a->width * a->height; /* bounded by crm_bulk_size already */
    a->status = crm_session_check_region(crm__s, a->dst, a->dpitch, a->width, a->height);
    if (a->status == cudaSuccess)
        a->status = crm_session_stream(crm__s, a->stream, &stream);
    if (a->status == cudaSuccess)
        a->status = crm__device_usable(stream);
    if (a->status != cudaSuccess)
        return crm_payload_skip(xdrs, bytes);
    crm__s->bytes_in += bytes;
    if (!crm_backend_host_addressable())
        return crm__h2d_staged(xdrs, a, stream);
    /* emulated device: decode in place */
    crm_rows_writer_init(&rw, (char *)(uintptr_t)a->dst, a->dpitch, a->width, a->height);
    return crm_payload_get(xdrs, bytes, &rw.w, &crm_bulk_received);
}

void crm_xfer_init(crm_session *s)
{
    crm__s = s;
    crm_h2d_sink = crm__h2d_sink;
}

void crm_xfer_fini(void)
{
    for (int i = 0; i < 2; i++)
        if (crm__half_done[i] != NULL)
            crm_rt.cudaEventDestroy(crm__half_done[i]);
    crm__half_done[0] = crm__half_done[1] = NULL;
    if (crm__staging != NULL)
        crm_rt.cudaFreeHost(crm__staging);
    crm__staging = NULL;
    crm__staging_size = 0;
    crm_h2d_sink = NULL;
}

/* Emulated device memory can be sent straight from where it lives when it is
 * contiguous and no later call of the batch can change it before the reply leaves. */
static int crm__send_in_place(const crm_session *s, uint64_t spitch, uint64_t width, uint64_t height)
{
    return crm_backend_host_addressable() && (spitch == width || height == 1) &&
           s->batch_index + 1 == s->batch_len;
}

/* ---- device to host, pipelined (GPU, data channel) ------------------------------------
 * After the reply, chunks of the region are copied into the two halves of the
 * staging buffer in turn: while one half is written to the channel, the next chunk
 * is being copied into the other. The first chunk is copied before the reply, so a
 * copy that cannot start fails the call as it would locally. */
typedef struct crm__d2h_pipe {
    const char *src;
    uint64_t spitch, width, height;
    cudaStream_t stream;
    uint64_t chunk;            /* packed bytes per chunk: whole rows, or any for contiguous */
    uint64_t first;            /* bytes of the first chunk, already in half 0 */
} crm__d2h_pipe;

static crm__d2h_pipe crm__pipe; /* one reply at a time per session */

static int crm__contiguous(uint64_t spitch, uint64_t width, uint64_t height)
{
    return spitch == width || height == 1;
}

/* Starts the copy of packed bytes [off, off+len) of the region into half `which`. */
static cudaError_t crm__d2h_chunk(const crm__d2h_pipe *p, uint64_t off, uint64_t len, int which, uint64_t half)
{
    char *dst = crm__staging + (uint64_t)which * half;
    cudaError_t err;
    if (crm__contiguous(p->spitch, p->width, p->height))
        err = crm_rt.cudaMemcpy2DAsync(dst, len, p->src + off, len, len, 1, cudaMemcpyDeviceToHost, p->stream);
    else
        err = crm_rt.cudaMemcpy2DAsync(dst, p->width, p->src + off / p->width * p->spitch, p->spitch, p->width,
                                       len / p->width, cudaMemcpyDeviceToHost, p->stream);
    return err == cudaSuccess ? crm_rt.cudaEventRecord(crm__half_done[which], p->stream) : err;
}

static bool_t crm__d2h_produce(XDR *xdrs, void *ctx, uint64_t total)
{
    crm__d2h_pipe *p = ctx;
    uint64_t half = crm__staging_size / 2, sent = 0, queued = p->first, len[2] = {p->first, 0};
    int cur = 0, failed = 0;
    while (sent < total) {
        int next = cur ^ 1;
        len[next] = total - queued < p->chunk ? total - queued : p->chunk;
        if (len[next] > 0 && !failed && crm__d2h_chunk(p, queued, len[next], next, half) != cudaSuccess)
            failed = 1;
        queued += len[next];
        char *data = crm__staging + (uint64_t)cur * half;
        if (failed) /* the bytes still go, so the client is not left waiting */
            memset(data, 0, len[cur]);
        if (!XDR_PUTBYTES(xdrs, data, (u_int)len[cur]))
            return FALSE;
        sent += len[cur];
        if (len[next] > 0 && !failed && crm_rt.cudaEventSynchronize(crm__half_done[next]) != cudaSuccess)
            failed = 1;
        cur = next;
    }
    if (failed)
        crm_warn("a device-to-host copy failed after its reply was sent: the rest of its bytes went as zeros");
    return TRUE;
}

/* Sets up the pipelined copy: FALSE when this copy does not fit it (the caller
 * then copies it whole), else *err says how the first chunk went. */
static int crm__d2h_pipelined(crm_session *s, uint64_t src, uint64_t spitch, uint64_t width, uint64_t height,
                              cudaStream_t stream, crm_d2h_res *out, cudaError_t *err)
{
    uint64_t bytes = width * height;
    if (crm_backend_host_addressable() || !(out->level & CRM_LEVEL_CHANNEL) || (out->level & CRM_LEVEL_MASK) ||
        crm_chan_current == NULL || !crm_chan_ready(crm_chan_current) || crm__ensure_events() != 0 ||
        crm__ensure_staging(CRM_STAGING_BYTES) != 0)
        return 0;
    uint64_t half = crm__staging_size / 2;
    crm__d2h_pipe *p = &crm__pipe;
    *p = (crm__d2h_pipe){(const char *)(uintptr_t)src, spitch, width, height, stream, half, 0};
    if (!crm__contiguous(spitch, width, height)) {
        if (width > half)
            return 0;
        p->chunk = half / width * width;
    }
    p->first = bytes < p->chunk ? bytes : p->chunk;
    *err = crm__d2h_chunk(p, 0, p->first, 0, half);
    if (*err == cudaSuccess)
        *err = crm_rt.cudaEventSynchronize(crm__half_done[0]);
    if (*err == cudaSuccess) {
        out->len = bytes;
        out->src = NULL;
        out->owned = NULL;
        out->produce = crm__d2h_produce;
        out->produce_ctx = p;
        s->bytes_out += bytes;
        crm_debug("device-to-host copy of %llu bytes pipelined through staging", (unsigned long long)bytes);
    }
    return 1;
}

cudaError_t crm_xfer_d2h(crm_session *s, uint64_t src, uint64_t spitch, uint64_t width, uint64_t height,
                         cudaStream_t stream, int async, crm_d2h_res *out)
{
    uint64_t bytes = width * height;
    cudaError_t err = crm__device_usable(stream);
    if (err != cudaSuccess)
        return err;
    if (crm__d2h_pipelined(s, src, spitch, width, height, stream, out, &err))
        return err;
    if (crm__send_in_place(s, spitch, width, height)) {
        out->len = bytes;
        out->src = (const char *)(uintptr_t)src;
        out->owned = NULL;
        s->bytes_out += bytes;
        return cudaSuccess;
    }
    char *buf = malloc(bytes ? bytes : 1);
    if (buf == NULL)
        return cudaErrorMemoryAllocation;
    err = async ? crm_rt.cudaMemcpy2DAsync(buf, width, (const void *)(uintptr_t)src, spitch, width,
                                           height, cudaMemcpyDeviceToHost, stream)
                : crm_rt.cudaMemcpy2D(buf, width, (const void *)(uintptr_t)src, spitch, width, height,
                                      cudaMemcpyDeviceToHost);
    if (err == cudaSuccess && async) /* the bytes must be there before the reply leaves */
        err = crm_rt.cudaStreamSynchronize(stream);
    if (err != cudaSuccess) {
        free(buf);
        return err;
    }
    out->len = bytes;
    out->src = buf;
    out->owned = buf;
    s->bytes_out += bytes;
    return cudaSuccess;
}
