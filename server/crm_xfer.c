/* crm_xfer.c -- moving bulk payloads between the RPC stream and device memory. */
#include <stdlib.h>
#include <string.h>
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

/* GPU path: payload bytes fill the pinned staging buffer; each time it holds whole
 * rows they are copied to the device, and the rest moves to the front. */
typedef struct crm__staging_writer {
    crm_payload_writer w;
    crm_h2d_args *a;
    cudaStream_t stream;
    uint64_t fill;          /* bytes in the staging buffer */
    uint64_t row;           /* next destination row */
} crm__staging_writer;

static char *crm__staging_space(crm_payload_writer *w, uint64_t *avail)
{
    crm__staging_writer *sw = (crm__staging_writer *)w;
    *avail = crm__staging_size - sw->fill;
    return crm__staging + sw->fill;
}

static bool_t crm__staging_commit(crm_payload_writer *w, uint64_t len)
{
    crm__staging_writer *sw = (crm__staging_writer *)w;
    crm_h2d_args *a = sw->a;
    sw->fill += len;
    uint64_t rows = sw->fill / a->width;
    if (sw->fill < crm__staging_size && sw->row + rows < a->height)
        return TRUE; /* not full and not the end: keep filling */
    if (a->status == cudaSuccess && rows > 0) {
        void *dst = (void *)(uintptr_t)(a->dst + sw->row * a->dpitch);
        a->status = crm_rt.cudaMemcpy2DAsync(dst, a->dpitch, crm__staging, a->width, a->width, rows,
                                             cudaMemcpyHostToDevice, sw->stream);
        if (a->status == cudaSuccess) /* the staging buffer is reused next */
            a->status = crm_rt.cudaStreamSynchronize(sw->stream);
    }
    sw->row += rows;
    sw->fill -= rows * a->width;
    memmove(crm__staging, crm__staging + rows * a->width, sw->fill);
    return TRUE;
}

static bool_t crm__h2d_staged(XDR *xdrs, crm_h2d_args *a, cudaStream_t stream)
{
    crm__staging_writer sw = {.w = {crm__staging_space, crm__staging_commit}, .a = a, .stream = stream};
    if (crm__ensure_staging(a->width) != 0) {
        a->status = cudaErrorMemoryAllocation;
        return crm_payload_skip(xdrs, a->width * a->height);
    }
    return crm_payload_get(xdrs, a->width * a->height, &sw.w, &crm_bulk_received);
}

static bool_t crm__h2d_sink(XDR *xdrs, crm_h2d_args *a)
{
    cudaStream_t stream = 0;
    crm_rows_writer rw;
    uint64_t bytes = a->width * a->height; /* bounded by crm_bulk_size already */
    a->status = crm_session_check_region(crm__s, a->dst, a->dpitch, a->width, a->height);
    if (a->status == cudaSuccess)
        a->status = crm_session_stream(crm__s, a->stream, &stream);
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

cudaError_t crm_xfer_d2h(crm_session *s, uint64_t src, uint64_t spitch, uint64_t width, uint64_t height,
                         cudaStream_t stream, int async, crm_d2h_res *out)
{
    uint64_t bytes = width * height;
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
    cudaError_t err = async ? crm_rt.cudaMemcpy2DAsync(buf, width, (const void *)(uintptr_t)src, spitch, width,
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
