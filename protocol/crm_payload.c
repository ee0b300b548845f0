/* crm_payload.c -- encoding and decoding of bulk payload bytes (raw or zstd chunks). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>
#include "protocol/crm_bulk.h"
#include "protocol/crm_payload.h"
#include "protocol/crm_chan.h"

#define CRM_PIECE (1u << 30)             /* XDR_GETBYTES/PUTBYTES take a u_int */
#define CRM_SAMPLE (64u << 10)           /* bytes of a chunk compressed to judge it */
#define CRM_SAMPLE_GAIN 0.85             /* a sample must shrink below this to compress */
#define CRM_SKIP_AFTER_MISS 15           /* chunks sent raw without sampling after a miss */

enum { CRM__CHUNK_RAW = 0, CRM__CHUNK_ZSTD = 1 };

static const char crm__zeros[4];

static bool_t crm__pad(XDR *xdrs, uint64_t n)
{
    u_int pad = (u_int)((4 - (n & 3)) & 3);
    char sink[4];
    if (pad == 0)
        return TRUE;
    return xdrs->x_op == XDR_ENCODE ? XDR_PUTBYTES(xdrs, crm__zeros, pad) : XDR_GETBYTES(xdrs, sink, pad);
}

static bool_t crm__put(XDR *xdrs, const char *src, uint64_t n)
{
    for (uint64_t done = 0; done < n;) {
        u_int piece = n - done > CRM_PIECE ? CRM_PIECE : (u_int)(n - done);
        if (!XDR_PUTBYTES(xdrs, src + done, piece))
            return FALSE;
        done += piece;
    }
    return TRUE;
}

static uint64_t crm__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- per-thread codec state ------------------------------------------------------- */

/* Contexts and chunk buffers, made once per thread and kept: a payload is encoded
 * or decoded by one thread at a time and never both at once. */
typedef struct crm__codec_tls {
    ZSTD_CCtx *cctx;
    ZSTD_DCtx *dctx;
    char *plain;             /* CRM_PAYLOAD_CHUNK bytes: gathered or decompressed */
    char *stored;            /* stored_cap bytes: compressed */
    size_t stored_cap;
} crm__codec_tls;

static pthread_key_t crm__tls_key;
static pthread_once_t crm__tls_once = PTHREAD_ONCE_INIT;

static void crm__tls_free(void *p)
{
    crm__codec_tls *tls = p;
    ZSTD_freeCCtx(tls->cctx);
    ZSTD_freeDCtx(tls->dctx);
    free(tls->plain);
    free(tls->stored);
    free(tls);
}

static void crm__tls_init(void)
{
    pthread_key_create(&crm__tls_key, crm__tls_free);
}

static crm__codec_tls *crm__tls(void)
{
    pthread_once(&crm__tls_once, crm__tls_init);
    crm__codec_tls *tls = pthread_getspecific(crm__tls_key);
    if (tls != NULL)
        return tls;
    if ((tls = calloc(1, sizeof *tls)) == NULL)
        return NULL;
    tls->stored_cap = ZSTD_compressBound(CRM_PAYLOAD_CHUNK);
    tls->cctx = ZSTD_createCCtx();
    tls->dctx = ZSTD_createDCtx();
    tls->plain = malloc(CRM_PAYLOAD_CHUNK);
    tls->stored = malloc(tls->stored_cap);
    if (!tls->cctx || !tls->dctx || !tls->plain || !tls->stored || pthread_setspecific(crm__tls_key, tls) != 0) {
        crm__tls_free(tls);
        return NULL;
    }
    return tls;
}

/* ---- rows writer ---------------------------------------------------------------- */

static char *crm__rows_space(crm_payload_writer *w, uint64_t *avail)
{
    crm_rows_writer *rw = (crm_rows_writer *)w;
    uint64_t total = rw->width * rw->height;
    if (rw->pitch == rw->width || rw->height == 1) {
        *avail = total - rw->offset;
        return rw->base + rw->offset;
    }
    uint64_t row = rw->offset / rw->width, col = rw->offset % rw->width;
    *avail = rw->width - col;
    return rw->base + row * rw->pitch + col;
}

static bool_t crm__rows_commit(crm_payload_writer *w, uint64_t len)
{
    crm_rows_writer *rw = (crm_rows_writer *)w;
    rw->offset += len;
    return TRUE;
}

void crm_rows_writer_init(crm_rows_writer *rw, char *base, uint64_t pitch, uint64_t width, uint64_t height)
{
    rw->w.space = crm__rows_space;
    rw->w.commit = crm__rows_commit;
    rw->base = base;
    rw->pitch = pitch;
    rw->width = width;
    rw->height = height;
    rw->offset = 0;
}

/* ---- encoding --------------------------------------------------------------------- */

/* Packs payload bytes [offset, offset+len) of the rows into buf, or points into src
 * when they are contiguous there. */
static const char *crm__gather(const char *src, uint64_t pitch, uint64_t width, uint64_t height, uint64_t offset,
                               uint64_t len, char *buf)
{
    if (pitch == width || height == 1)
        return src + offset;
    for (uint64_t done = 0; done < len;) {
        uint64_t row = (offset + done) / width, col = (offset + done) % width;
        uint64_t n = width - col < len - done ? width - col : len - done;
        memcpy(buf + done, src + row * pitch + col, n);
        done += n;
    }
    return buf;
}

static bool_t crm__put_chunk(XDR *xdrs, uint32_t kind, uint32_t raw_len, const char *data, uint32_t stored)
{
    return xdr_uint32_t(xdrs, &kind) && xdr_uint32_t(xdrs, &raw_len) && xdr_uint32_t(xdrs, &stored) &&
           crm__put(xdrs, data, stored) && crm__pad(xdrs, stored);
}

/* Encoder state for one zstd payload. */
typedef struct crm__zenc {
    ZSTD_CCtx *cctx;
    int level;
    char *gather;            /* CRM_PAYLOAD_CHUNK bytes */
    char *out;               /* ZSTD_compressBound(CRM_PAYLOAD_CHUNK) bytes */
    size_t out_cap;
    int skip;                /* chunks left to send raw without sampling */
    crm_payload_stats *st;
} crm__zenc;

/* Compresses one chunk if a sample of it compresses; returns stored size or 0 (raw). */
static size_t crm__try_compress(crm__zenc *z, const char *data, size_t len)
{
    if (z->skip > 0) {
        z->skip--;
        return 0;
    }
    uint64_t t0 = crm__now_ns();
    size_t sample = len < CRM_SAMPLE ? len : CRM_SAMPLE;
    size_t got = ZSTD_compressCCtx(z->cctx, z->out, z->out_cap, data, sample, z->level);
    if (ZSTD_isError(got) || (double)got > CRM_SAMPLE_GAIN * (double)sample) {
        z->skip = CRM_SKIP_AFTER_MISS;
        z->st->compress_ns += crm__now_ns() - t0;
        return 0;
    }
    got = sample == len ? got : ZSTD_compressCCtx(z->cctx, z->out, z->out_cap, data, len, z->level);
    z->st->compress_ns += crm__now_ns() - t0;
    return ZSTD_isError(got) || got >= len ? 0 : got;
}

static bool_t crm__put_zstd(XDR *xdrs, crm__zenc *z, const char *src, uint64_t pitch, uint64_t width,
                            uint64_t height)
{
    uint64_t total = width * height;
    for (uint64_t off = 0; off < total;) {
        uint32_t len = total - off > CRM_PAYLOAD_CHUNK ? CRM_PAYLOAD_CHUNK : (uint32_t)(total - off);
        const char *data = crm__gather(src, pitch, width, height, off, len, z->gather);
        size_t stored = crm__try_compress(z, data, len);
        bool_t ok = stored ? crm__put_chunk(xdrs, CRM__CHUNK_ZSTD, len, z->out, (uint32_t)stored)
                           : crm__put_chunk(xdrs, CRM__CHUNK_RAW, len, data, len);
        if (!ok)
            return FALSE;
        z->st->wire_bytes += (stored ? stored : len) + 12;
        off += len;
    }
    return TRUE;
}

/* The data channel a payload in xdrs may move to; never the channel itself. */
static crm_chan *crm__channel_for(const XDR *xdrs)
{
    crm_chan *c = crm_chan_current;
    return c != NULL && xdrs != &c->xdr && crm_chan_ready(c) ? c : NULL;
}

/* Names the channel as the payload's place and posts the payload there. */
static bool_t crm__put_channel(XDR *xdrs, const crm_chan_job *job)
{
    uint32_t codec = CRM_CODEC_STREAM;
    return xdr_uint32_t(xdrs, &codec) && crm_chan_post(crm_chan_current, job);
}

bool_t crm_payload_put_produced(XDR *xdrs, uint64_t total, bool_t (*produce)(XDR *, void *, uint64_t), void *ctx,
                                int level, crm_payload_stats *st)
{
    crm_payload_stats local = {0, 0, 0};
    uint32_t codec = CRM_CODEC_RAW;
    if ((level & CRM_LEVEL_CHANNEL) && crm__channel_for(xdrs) != NULL) {
        crm_chan_job job = {NULL, total, total, 1, 0, produce, ctx};
        return crm__put_channel(xdrs, &job);
    }
    st = st ? st : &local;
    st->raw_bytes += total;
    st->wire_bytes += total;
    return xdr_uint32_t(xdrs, &codec) && produce(xdrs, ctx, total) && crm__pad(xdrs, total);
}

bool_t crm_payload_put(XDR *xdrs, const char *src, uint64_t pitch, uint64_t width, uint64_t height, int level,
                       crm_payload_stats *st)
{
    crm_payload_stats local = {0, 0, 0};
    uint64_t total = width * height;
    if ((level & CRM_LEVEL_CHANNEL) && crm__channel_for(xdrs) != NULL) {
        crm_chan_job job = {src, pitch, width, height, level & CRM_LEVEL_MASK, NULL, NULL};
        return crm__put_channel(xdrs, &job);
    }
    level &= CRM_LEVEL_MASK;
    uint32_t codec = level > 0 && total > 0 ? CRM_CODEC_ZSTD : CRM_CODEC_RAW;
    st = st ? st : &local;
    st->raw_bytes += total;
    if (!xdr_uint32_t(xdrs, &codec))
        return FALSE;
    if (codec == CRM_CODEC_RAW) {
        st->wire_bytes += total;
        return crm_bulk_put_rows(xdrs, src, pitch, width, height) && crm__pad(xdrs, total);
    }
    crm__codec_tls *tls = crm__tls();
    if (tls == NULL)
        return FALSE;
    crm__zenc z = {.cctx = tls->cctx, .level = level > CRM_ZSTD_MAX_LEVEL ? CRM_ZSTD_MAX_LEVEL : level,
                   .gather = tls->plain, .out = tls->stored, .out_cap = tls->stored_cap, .st = st};
    return crm__put_zstd(xdrs, &z, src, pitch, width, height);
}

/* ---- decoding --------------------------------------------------------------------- */

/* Reads n raw bytes from the wire into the writer. */
static bool_t crm__get_into(XDR *xdrs, crm_payload_writer *w, uint64_t n)
{
    while (n > 0) {
        uint64_t avail;
        char *p = w->space(w, &avail);
        uint64_t take = avail < n ? avail : n;
        if (take > CRM_PIECE)
            take = CRM_PIECE;
        if (p == NULL || take == 0 || !XDR_GETBYTES(xdrs, p, (u_int)take) || !w->commit(w, take))
            return FALSE;
        n -= take;
    }
    return TRUE;
}

/* Copies decoded bytes to the writer. */
static bool_t crm__copy_into(crm_payload_writer *w, const char *data, uint64_t n)
{
    while (n > 0) {
        uint64_t avail;
        char *p = w->space(w, &avail);
        uint64_t take = avail < n ? avail : n;
        if (p == NULL || take == 0)
            return FALSE;
        memcpy(p, data, take);
        if (!w->commit(w, take))
            return FALSE;
        data += take;
        n -= take;
    }
    return TRUE;
}

/* Decoder buffers for one zstd payload. */
typedef struct crm__zdec {
    ZSTD_DCtx *dctx;
    char *stored;            /* ZSTD_compressBound(CRM_PAYLOAD_CHUNK) bytes */
    size_t stored_cap;
    char *plain;             /* CRM_PAYLOAD_CHUNK bytes */
} crm__zdec;

static bool_t crm__get_zchunk(XDR *xdrs, crm__zdec *z, crm_payload_writer *w, uint32_t raw_len, uint32_t stored)
{
    if (stored > z->stored_cap || !XDR_GETBYTES(xdrs, z->stored, stored) || !crm__pad(xdrs, stored))
        return FALSE;
    uint64_t avail;
    char *p = w->space(w, &avail);
    if (p != NULL && avail >= raw_len) { /* straight into the destination */
        size_t got = ZSTD_decompressDCtx(z->dctx, p, raw_len, z->stored, stored);
        return !ZSTD_isError(got) && got == raw_len && w->commit(w, raw_len);
    }
    size_t got = ZSTD_decompressDCtx(z->dctx, z->plain, raw_len, z->stored, stored);
    return !ZSTD_isError(got) && got == raw_len && crm__copy_into(w, z->plain, raw_len);
}

static bool_t crm__get_zstd(XDR *xdrs, crm__zdec *z, uint64_t total, crm_payload_writer *w, crm_payload_stats *st)
{
    for (uint64_t off = 0; off < total;) {
        uint32_t kind, raw_len, stored;
        if (!xdr_uint32_t(xdrs, &kind) || !xdr_uint32_t(xdrs, &raw_len) || !xdr_uint32_t(xdrs, &stored))
            return FALSE;
        if (raw_len == 0 || raw_len > CRM_PAYLOAD_CHUNK || raw_len > total - off)
            return FALSE;
        if (kind == CRM__CHUNK_RAW) {
            if (stored != raw_len || !crm__get_into(xdrs, w, raw_len) || !crm__pad(xdrs, raw_len))
                return FALSE;
        } else if (kind != CRM__CHUNK_ZSTD || !crm__get_zchunk(xdrs, z, w, raw_len, stored)) {
            return FALSE;
        }
        st->wire_bytes += stored + 12;
        off += raw_len;
    }
    return TRUE;
}

bool_t crm_payload_get(XDR *xdrs, uint64_t total, crm_payload_writer *w, crm_payload_stats *st)
{
    crm_payload_stats local = {0, 0, 0};
    uint32_t codec;
    st = st ? st : &local;
    st->raw_bytes += total;
    if (!xdr_uint32_t(xdrs, &codec))
        return FALSE;
    if (codec == CRM_CODEC_RAW) {
        st->wire_bytes += total;
        return crm__get_into(xdrs, w, total) && crm__pad(xdrs, total);
    }
    if (codec == CRM_CODEC_STREAM) {
        crm_chan *c = crm__channel_for(xdrs);
        st->raw_bytes -= total; /* counted by the nested payload */
        if (c == NULL || !crm_chan_wait(c))
            return FALSE;
        c->xdr.x_op = XDR_DECODE;
        return crm_payload_get(&c->xdr, total, w, st);
    }
    if (codec != CRM_CODEC_ZSTD)
        return FALSE;
    crm__codec_tls *tls = crm__tls();
    if (tls == NULL)
        return FALSE;
    crm__zdec z = {.dctx = tls->dctx, .stored = tls->stored, .stored_cap = tls->stored_cap, .plain = tls->plain};
    return crm__get_zstd(xdrs, &z, total, w, st);
}

/* A writer that drops everything into a scratch buffer. */
typedef struct crm__drop_writer {
    crm_payload_writer w;
    char scratch[16384];
} crm__drop_writer;

static char *crm__drop_space(crm_payload_writer *w, uint64_t *avail)
{
    *avail = sizeof ((crm__drop_writer *)w)->scratch;
    return ((crm__drop_writer *)w)->scratch;
}

static bool_t crm__drop_commit(crm_payload_writer *w, uint64_t len)
{
    (void)w;
    (void)len;
    return TRUE;
}

bool_t crm_payload_skip(XDR *xdrs, uint64_t total)
{
    crm__drop_writer d = {.w = {crm__drop_space, crm__drop_commit}};
    return crm_payload_get(xdrs, total, &d.w, NULL);
}
