/* crm_payload.c -- encoding and decoding of bulk payload bytes (raw or zstd chunks). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>
#include "protocol/crm_bulk.h"
#include "protocol/crm_payload.h"
#include "protocol/crm_chan.h"
#include "protocol/crm_zlive.h"
#include "protocol/crm_zshape.h"

#define CRM_PIECE (1u << 30)             /* XDR_GETBYTES/PUTBYTES take a u_int */
#define CRM_SAMPLE (64u << 10)           /* bytes of a chunk compressed to judge it */
#define CRM_SAMPLE_GAIN 0.85             /* a sample must shrink below this to compress */
#define CRM_SKIP_AFTER_MISS 15           /* chunks sent raw without sampling after a miss */
#define CRM_LEAN_HASHLOG 6               /* the LEAN set's hash table: zstd's smallest, 64 entries */

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
    crm_zshape shape;        /* the parameter set this thread's payloads compress with */
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
    int set;                 /* the parameter set (CRM_ZSHAPE_*) */
    crm_zshape *shape;       /* the choice of set, checked on samples; NULL: keep set */
    char *gather;            /* CRM_PAYLOAD_CHUNK bytes */
    char *out;               /* ZSTD_compressBound(CRM_PAYLOAD_CHUNK) bytes */
    size_t out_cap;
    int skip;                /* chunks left to send raw without sampling */
    unsigned tries;          /* chunks compression may still be tried on */
    crm_payload_stats *st;
    crm_chan *chan;          /* the channel whose socket the live choice watches, or NULL */
    crm_zlive zl;            /* the live choice, with chan */
} crm__zenc;

/* Compresses len bytes into z->out with the level and parameter set of z; the
 * size, or a zstd error code. */
static size_t crm__zcompress(crm__zenc *z, int set, const char *data, size_t len)
{
    ZSTD_CCtx_reset(z->cctx, ZSTD_reset_parameters);
    ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_compressionLevel, z->level);
    if (set == CRM_ZSHAPE_LEAN) {
        ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_strategy, ZSTD_fast);
        ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_minMatch, 7);
        ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_hashLog, CRM_LEAN_HASHLOG);
    }
    return ZSTD_compress2(z->cctx, z->out, z->out_cap, data, len);
}

static size_t crm__sample_len(size_t len)
{
    return len < CRM_SAMPLE ? len : CRM_SAMPLE;
}

/* A check of the choice of set: the sample, which came to `got` with the set in
 * use, is compressed with the other set too, and the smaller wins. Returns the
 * chosen set's size (or a zstd error code). z->out holds the chosen set's bytes
 * when the sample is the whole chunk (len), whose stored bytes they are; a
 * longer chunk is compressed anew and needs only the size. */
static size_t crm__check_shape(crm__zenc *z, const char *data, size_t sample, size_t len, size_t got)
{
    int was = z->set;
    size_t other = crm__zcompress(z, !was, data, sample);
    if (ZSTD_isError(other))
        return other;
    crm_zshape_checked(z->shape, sample, was == CRM_ZSHAPE_LEVEL ? got : other, was == CRM_ZSHAPE_LEVEL ? other : got);
    z->set = z->shape->set;
    if (z->set != was)
        return other; /* z->out holds its bytes */
    return sample < len ? got : crm__zcompress(z, was, data, sample);
}

/* Compresses the sample of a chunk with the set the choice of set says, checking
 * the choice when it is due. The size, or a zstd error code. */
static size_t crm__sample_chunk(crm__zenc *z, const char *data, size_t len)
{
    size_t sample = crm__sample_len(len);
    if (z->shape != NULL)
        z->set = z->shape->set;
    size_t got = crm__zcompress(z, z->set, data, sample);
    if (z->shape == NULL || ZSTD_isError(got) || !crm_zshape_due(z->shape, sample, got))
        return got;
    return crm__check_shape(z, data, sample, len, got);
}

/* Compresses the chunk whose sample came to `sampled` if the sample shrank
 * enough; returns stored size or 0 (raw). */
static size_t crm__finish_chunk(crm__zenc *z, const char *data, size_t len, size_t sampled)
{
    size_t sample = crm__sample_len(len);
    if (ZSTD_isError(sampled) || (double)sampled > CRM_SAMPLE_GAIN * (double)sample) {
        z->skip = z->chan == NULL ? CRM_SKIP_AFTER_MISS : 0; /* the live choice tries again itself */
        return 0;
    }
    size_t got = sample == len ? sampled : crm__zcompress(z, z->set, data, len);
    return ZSTD_isError(got) || got >= len ? 0 : got;
}

/* Compresses one chunk if a sample of it compresses; returns stored size or 0 (raw). */
static size_t crm__try_compress(crm__zenc *z, const char *data, size_t len)
{
    return crm__finish_chunk(z, data, len, crm__sample_chunk(z, data, len));
}

/* ---- a second compressor --------------------------------------------------------
 * Compressing is slower than many links: while a payload's encoder compresses one
 * chunk, a helper thread compresses the next, on machines with a second core. One
 * payload at a time uses it; an encoder that finds it busy works alone. */

typedef struct crm__helper {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int started;                 /* 1: thread running, -1: none on this machine */
    int state;                   /* 0 idle, 1 chunk given, 2 chunk done */
    const char *src;             /* the chunk: payload rows and offset */
    uint64_t pitch, width, height, off;
    uint32_t len;
    crm__zenc z;                 /* its own context and buffers */
    const char *data;            /* result: the gathered chunk */
    size_t stored;               /* and its compressed size, 0 = send raw */
} crm__helper;

static crm__helper crm__h = {.lock = PTHREAD_MUTEX_INITIALIZER, .changed = PTHREAD_COND_INITIALIZER};

static void *crm__helper_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&crm__h.lock);
    for (;;) {
        while (crm__h.state != 1)
            pthread_cond_wait(&crm__h.changed, &crm__h.lock);
        pthread_mutex_unlock(&crm__h.lock);
        crm__h.data = crm__gather(crm__h.src, crm__h.pitch, crm__h.width, crm__h.height, crm__h.off, crm__h.len,
                                  crm__h.z.gather);
        crm__h.z.skip = 0;
        crm__h.stored = crm__try_compress(&crm__h.z, crm__h.data, crm__h.len);
        pthread_mutex_lock(&crm__h.lock);
        crm__h.state = 2;
        pthread_cond_broadcast(&crm__h.changed);
    }
    return NULL;
}

/* A forked child has no helper thread: it starts its own when it needs one. */
static void crm__helper_forget(void)
{
    pthread_mutex_init(&crm__h.lock, NULL);
    pthread_cond_init(&crm__h.changed, NULL);
    crm__h.started = 0;
    crm__h.state = 0;
    crm__h.z.cctx = NULL; /* the parent's buffers stay allocated in this copy */
}

static void crm__helper_register_fork(void)
{
    pthread_atfork(NULL, NULL, crm__helper_forget);
}

/* Starts the helper once (lock held); its buffers are globals, never freed. */
static int crm__helper_start(void)
{
    if (crm__h.started != 0)
        return crm__h.started > 0;
    crm__h.started = -1;
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
        return 0;
    crm__h.z.cctx = ZSTD_createCCtx();
    crm__h.z.gather = malloc(CRM_PAYLOAD_CHUNK);
    crm__h.z.out_cap = ZSTD_compressBound(CRM_PAYLOAD_CHUNK);
    crm__h.z.out = malloc(crm__h.z.out_cap);
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (crm__h.z.cctx && crm__h.z.gather && crm__h.z.out && pthread_create(&t, &attr, crm__helper_main, NULL) == 0)
        crm__h.started = 1;
    pthread_attr_destroy(&attr);
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    if (crm__h.started > 0)
        pthread_once(&once, crm__helper_register_fork);
    return crm__h.started > 0;
}

/* Gives the helper chunk [off, off+len) of the rows; FALSE when it cannot take it. */
static bool_t crm__helper_give(const char *src, uint64_t pitch, uint64_t width, uint64_t height, uint64_t off,
                               uint32_t len, int level, int set)
{
    pthread_mutex_lock(&crm__h.lock);
    bool_t ok = crm__helper_start() && crm__h.state == 0;
    if (ok) {
        crm__h.src = src;
        crm__h.pitch = pitch;
        crm__h.width = width;
        crm__h.height = height;
        crm__h.off = off;
        crm__h.len = len;
        crm__h.z.level = level;
        crm__h.z.set = set;
        crm__h.state = 1;
        pthread_cond_broadcast(&crm__h.changed);
    }
    pthread_mutex_unlock(&crm__h.lock);
    return ok;
}

/* Waits for the chunk given; its bytes stay valid until the next crm__helper_give. */
static void crm__helper_take(const char **data, const char **out, size_t *stored)
{
    pthread_mutex_lock(&crm__h.lock);
    while (crm__h.state != 2)
        pthread_cond_wait(&crm__h.changed, &crm__h.lock);
    crm__h.state = 0;
    *data = crm__h.data;
    *out = crm__h.z.out;
    *stored = crm__h.stored;
    pthread_mutex_unlock(&crm__h.lock);
}

static bool_t crm__put_one(XDR *xdrs, crm__zenc *z, uint32_t len, const char *data, const char *out, size_t stored)
{
    z->st->wire_bytes += (stored ? stored : len) + 12;
    if (z->chan != NULL)
        crm_zlive_sent(&z->zl, len, (stored ? stored : len) + 12);
    return stored ? crm__put_chunk(xdrs, CRM__CHUNK_ZSTD, len, out, (uint32_t)stored)
                  : crm__put_chunk(xdrs, CRM__CHUNK_RAW, len, data, len);
}

static uint32_t crm__chunk_len(uint64_t total, uint64_t off)
{
    return total - off > CRM_PAYLOAD_CHUNK ? CRM_PAYLOAD_CHUNK : (uint32_t)(total - off);
}

/* ---- the live choice ------------------------------------------------------------- */

static pthread_mutex_t crm__zprior_lock = PTHREAD_MUTEX_INITIALIZER;
static crm_zlive crm__zprior; /* what the last live payload of this process measured */
static int crm__zprior_set;

/* The channel whose socket xdrs writes to, for the live choice; NULL when there is
 * none or its bytes go through the ring. */
static crm_chan *crm__live_channel(const XDR *xdrs)
{
    crm_chan *c = crm_chan_current;
    uint64_t wrote, queued;
    return c != NULL && xdrs == &c->xdr && crm_chan_link(c, &wrote, &queued) == 0 ? c : NULL;
}

/* Samples the socket and returns how many bytes it holds. */
static uint64_t crm__live_sample(crm__zenc *z)
{
    uint64_t wrote, queued;
    if (crm_chan_link(z->chan, &wrote, &queued) == 0)
        crm_zlive_link(&z->zl, crm__now_ns(), wrote, queued);
    return queued;
}

/* What to do with the next len bytes (CRM_ZLIVE_*). */
static int crm__plan(crm__zenc *z, uint64_t len)
{
    if (z->chan != NULL)
        return crm_zlive_decide(&z->zl, len, crm__live_sample(z));
    if (z->skip > 0) {
        z->skip--;
        return CRM_ZLIVE_RAW;
    }
    return z->tries > 0 ? CRM_ZLIVE_COMPRESS : CRM_ZLIVE_RAW;
}

/* Compresses a sample of the chunk only, to see whether the data shrinks now. */
static void crm__probe(crm__zenc *z, const char *data, size_t len)
{
    size_t sample = len < CRM_SAMPLE ? len : CRM_SAMPLE;
    size_t got = crm__zcompress(z, z->set, data, sample);
    crm_zlive_comp(&z->zl, sample, ZSTD_isError(got) || got > sample ? sample : got, 0);
}

/* Chunks in pairs: the helper compresses the second while this thread compresses
 * the first; both are then written in order. */
static bool_t crm__put_zstd(XDR *xdrs, crm__zenc *z, const char *src, uint64_t pitch, uint64_t width,
                            uint64_t height)
{
    uint64_t total = width * height;
    for (uint64_t off = 0; off < total;) {
        uint32_t len = crm__chunk_len(total, off), len2 = off + len < total ? crm__chunk_len(total, off + len) : 0;
        int what = crm__plan(z, (uint64_t)len + len2);
        int trying = what == CRM_ZLIVE_COMPRESS;
        uint64_t t0 = crm__now_ns();
        const char *data = crm__gather(src, pitch, width, height, off, len, z->gather), *data2 = NULL, *out2 = NULL;
        size_t sampled = trying ? crm__sample_chunk(z, data, len) : 0; /* first: it may change the set */
        int helped = trying && z->tries > 1 && len2 > 0 &&
                     crm__helper_give(src, pitch, width, height, off + len, len2, z->level, z->set);
        size_t stored = trying ? crm__finish_chunk(z, data, len, sampled) : 0, stored2 = 0;
        if (what == CRM_ZLIVE_PROBE)
            crm__probe(z, data, len);
        if (helped)
            crm__helper_take(&data2, &out2, &stored2);
        if (trying) {
            uint64_t ns = crm__now_ns() - t0, raw = len + (helped ? len2 : 0);
            uint64_t wire = (stored ? stored : len) + (helped ? (stored2 ? stored2 : len2) : 0);
            z->st->compress_ns += ns;
            z->tries -= helped ? 2 : 1;
            z->st->tried_raw += raw;
            z->st->tried_wire += wire;
            if (z->chan != NULL)
                crm_zlive_comp(&z->zl, raw, wire, ns);
        }
        if (z->chan != NULL)
            crm__live_sample(z); /* how much the link drained meanwhile */
        if (!crm__put_one(xdrs, z, len, data, z->out, stored) ||
            (helped && !crm__put_one(xdrs, z, len2, data2, out2, stored2)))
            return FALSE;
        off += len + (helped ? len2 : 0);
    }
    return TRUE;
}

/* crm__put_zstd with the live choice: it starts from, and leaves, this process's
 * estimates. */
static bool_t crm__put_zstd_live(XDR *xdrs, crm__zenc *z, const char *src, uint64_t pitch, uint64_t width,
                                 uint64_t height)
{
    uint64_t wrote, queued;
    crm_chan_link(z->chan, &wrote, &queued);
    pthread_mutex_lock(&crm__zprior_lock);
    crm_zlive_start(&z->zl, crm__zprior_set ? &crm__zprior : NULL, wrote);
    pthread_mutex_unlock(&crm__zprior_lock);
    bool_t ok = crm__put_zstd(xdrs, z, src, pitch, width, height);
    pthread_mutex_lock(&crm__zprior_lock);
    crm__zprior = z->zl;
    crm__zprior_set = 1;
    pthread_mutex_unlock(&crm__zprior_lock);
    return ok;
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
    crm_payload_stats local = {0};
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
    crm_payload_stats local = {0};
    uint64_t total = width * height;
    if ((level & CRM_LEVEL_CHANNEL) && crm__channel_for(xdrs) != NULL) {
        crm_chan_job job = {src, pitch, width, height, level & ~CRM_LEVEL_CHANNEL, NULL, NULL};
        return crm__put_channel(xdrs, &job);
    }
    level &= ~CRM_LEVEL_CHANNEL;
    uint32_t codec = (level & CRM_LEVEL_MASK) > 0 && total > 0 ? CRM_CODEC_ZSTD : CRM_CODEC_RAW;
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
    int zlevel = level & CRM_LEVEL_MASK;
    if (total > CRM_PAYLOAD_CHUNK)
        crm_zshape_payload(&tls->shape);
    crm__zenc z = {.cctx = tls->cctx, .level = zlevel > CRM_ZSTD_MAX_LEVEL ? CRM_ZSTD_MAX_LEVEL : zlevel,
                   .set = tls->shape.set, .shape = &tls->shape,
                   .gather = tls->plain, .out = tls->stored, .out_cap = tls->stored_cap, .st = st,
                   .tries = (level & CRM_LEVEL_PROBE) ? CRM_PROBE_CHUNKS : ~0u,
                   .chan = (level & CRM_LEVEL_LIVE) ? crm__live_channel(xdrs) : NULL};
    return z.chan != NULL ? crm__put_zstd_live(xdrs, &z, src, pitch, width, height)
                          : crm__put_zstd(xdrs, &z, src, pitch, width, height);
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
        } else {
            st->tried_raw += raw_len;
            st->tried_wire += stored;
        }
        st->wire_bytes += stored + 12;
        off += raw_len;
    }
    return TRUE;
}

/* A payload that travels on the data channel: wait until the channel is idle
 * (the client's sender may still be reading acknowledgements), then decode it there. */
static bool_t crm__get_from_channel(const XDR *xdrs, uint64_t total, crm_payload_writer *w, crm_payload_stats *st)
{
    crm_chan *c = crm__channel_for(xdrs);
    if (c == NULL || !crm_chan_wait(c))
        return FALSE;
    c->xdr.x_op = XDR_DECODE;
    return crm_payload_get(&c->xdr, total, w, st) && crm_chan_end_get(c);
}

bool_t crm_payload_get(XDR *xdrs, uint64_t total, crm_payload_writer *w, crm_payload_stats *st)
{
    crm_payload_stats local = {0};
    uint32_t codec;
    st = st ? st : &local;
    if (!xdr_uint32_t(xdrs, &codec))
        return FALSE;
    if (codec == CRM_CODEC_STREAM)
        return crm__get_from_channel(xdrs, total, w, st);
    st->raw_bytes += total;
    if (codec == CRM_CODEC_RAW) {
        st->wire_bytes += total;
        return crm__get_into(xdrs, w, total) && crm__pad(xdrs, total);
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
