/* check_wire.c -- unit tests of the wire format: round trips of generated crm_calls and
 * crm_replies through xdrmem, and the hand-written bulk XDR of protocol/crm_bulk
 * (pitched rows, padding, preset destinations, the server sink, size limits and
 * truncated or malformed input). */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crm_api.h"
#include <zstd.h>
#include "protocol/crm_bulk.h"
#include "tests/unit/crm_check.h"

typedef bool_t (*codec_fn)(XDR *xdrs, void *obj);

static bool_t codec_calls(XDR *x, void *p) { return xdr_crm_calls(x, p); }
static bool_t codec_replies(XDR *x, void *p) { return xdr_crm_replies(x, p); }
static bool_t codec_call(XDR *x, void *p) { return xdr_crm_call(x, p); }
static bool_t codec_reply(XDR *x, void *p) { return xdr_crm_reply(x, p); }
static bool_t codec_h2d(XDR *x, void *p) { return xdr_crm_h2d_args(x, p); }
static bool_t codec_d2h(XDR *x, void *p) { return xdr_crm_d2h_res(x, p); }

#define HDR_H2D 48u /* five hypers, an int and the payload's codec word */
#define HDR_D2H 12u /* one hyper and, when there is a payload, the codec word */
#define ROUND4(n) (((n) + 3u) & ~3u)

/* Encodes obj into buf (size bytes); returns the encoded length, fails the test on error. */
static u_int encode(codec_fn fn, void *obj, char *buf, u_int size)
{
    XDR x;
    xdrmem_create(&x, buf, size, XDR_ENCODE);
    ck_assert_msg(fn(&x, obj), "encode failed");
    u_int pos = xdr_getpos(&x);
    xdr_destroy(&x);
    return pos;
}

/* Decodes obj from a private heap copy of exactly len bytes (so ASan sees any read past
 * the end); returns the decoder's verdict and the bytes it consumed in *used. */
static bool_t decode(codec_fn fn, void *obj, const char *buf, u_int len, u_int *used)
{
    char *copy = malloc(len ? len : 1);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, buf, len);
    XDR x;
    xdrmem_create(&x, copy, len, XDR_DECODE);
    bool_t ok = fn(&x, obj);
    if (used != NULL)
        *used = xdr_getpos(&x);
    xdr_destroy(&x);
    free(copy);
    return ok;
}

static void fill(char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (char)(seed + i * 7 + (i >> 8));
}

/* ------------------------------------------------------------------ generated calls */

static u_int encode_sample_calls(char *buf, u_int size)
{
    crm_call c[9];
    memset(c, 0, sizeof c);
    c[0].api = CRM_API_cudaSetDevice;
    c[0].crm_call_u.cudaSetDevice.device = 3;
    c[1].api = CRM_API_cudaMalloc;
    c[1].crm_call_u.cudaMalloc.size = (1ull << 40) + 5;
    c[2].api = CRM_API_cudaFree;
    c[2].crm_call_u.cudaFree.devPtr = 0xfedcba9876543210ull;
    c[3].api = CRM_API_crm_memset;
    c[3].crm_call_u.crm_memset = (crm_args_crm_memset){
        .dst = 0x7f0000001000ull, .pitch = 512, .value = -1, .width = 500, .height = 3,
        .stream = 0x1234567890abcdefull, .async = 1};
    c[4].api = CRM_API_crm_stream_create;
    c[4].crm_call_u.crm_stream_create = (crm_args_crm_stream_create){.id = UINT64_MAX, .flags = 1, .priority = -2};
    c[5].api = CRM_API_cudaStreamWaitEvent;
    c[5].crm_call_u.cudaStreamWaitEvent = (crm_args_cudaStreamWaitEvent){.stream = 7, .event = 1ull << 63, .flags = 0};
    c[6].api = CRM_API_cudaEventRecordWithFlags;
    c[6].crm_call_u.cudaEventRecordWithFlags =
        (crm_args_cudaEventRecordWithFlags){.event = 42, .stream = 0, .flags = 0xffffffffu};
    c[7].api = CRM_API_cudaDeviceSynchronize;
    c[8].api = CRM_API_cudaMemGetInfo;
    crm_calls calls = {.crm_calls_len = 9, .crm_calls_val = c};
    return encode(codec_calls, &calls, buf, size);
}

START_TEST(test_calls_round_trip_scalars_and_ids)
{
    static char buf[4096];
    u_int len = encode_sample_calls(buf, sizeof buf);
    crm_calls dec = {0};
    u_int used = 0;
    ck_assert(decode(codec_calls, &dec, buf, len, &used));
    ck_assert_uint_eq(used, len);
    ck_assert_uint_eq(dec.crm_calls_len, 9);
    crm_call *c = dec.crm_calls_val;
    ck_assert_int_eq(c[0].api, CRM_API_cudaSetDevice);
    ck_assert_int_eq(c[0].crm_call_u.cudaSetDevice.device, 3);
    ck_assert_int_eq(c[1].api, CRM_API_cudaMalloc);
    ck_assert_uint_eq(c[1].crm_call_u.cudaMalloc.size, (1ull << 40) + 5);
    ck_assert_uint_eq(c[2].crm_call_u.cudaFree.devPtr, 0xfedcba9876543210ull);
    const crm_args_crm_memset *ms = &c[3].crm_call_u.crm_memset;
    ck_assert_int_eq(c[3].api, CRM_API_crm_memset);
    ck_assert_uint_eq(ms->dst, 0x7f0000001000ull);
    ck_assert_uint_eq(ms->pitch, 512);
    ck_assert_int_eq(ms->value, -1);
    ck_assert_uint_eq(ms->width, 500);
    ck_assert_uint_eq(ms->height, 3);
    ck_assert_uint_eq(ms->stream, 0x1234567890abcdefull);
    ck_assert_int_eq(ms->async, 1);
    ck_assert_uint_eq(c[4].crm_call_u.crm_stream_create.id, UINT64_MAX);
    ck_assert_uint_eq(c[4].crm_call_u.crm_stream_create.flags, 1);
    ck_assert_int_eq(c[4].crm_call_u.crm_stream_create.priority, -2);
    ck_assert_uint_eq(c[5].crm_call_u.cudaStreamWaitEvent.stream, 7);
    ck_assert_uint_eq(c[5].crm_call_u.cudaStreamWaitEvent.event, 1ull << 63);
    ck_assert_uint_eq(c[6].crm_call_u.cudaEventRecordWithFlags.event, 42);
    ck_assert_uint_eq(c[6].crm_call_u.cudaEventRecordWithFlags.flags, 0xffffffffu);
    ck_assert_int_eq(c[7].api, CRM_API_cudaDeviceSynchronize);
    ck_assert_int_eq(c[8].api, CRM_API_cudaMemGetInfo);
    xdr_free((xdrproc_t)xdr_crm_calls, (char *)&dec);
    ck_assert_ptr_null(dec.crm_calls_val);
}
END_TEST

START_TEST(test_calls_truncated_anywhere_fail_cleanly)
{
    static char buf[4096];
    u_int len = encode_sample_calls(buf, sizeof buf);
    for (u_int cut = 0; cut < len; cut++) {
        crm_calls dec = {0};
        ck_assert_msg(!decode(codec_calls, &dec, buf, cut, NULL), "prefix of %u bytes accepted", cut);
        xdr_free((xdrproc_t)xdr_crm_calls, (char *)&dec);
    }
}
END_TEST

START_TEST(test_call_with_unknown_api_is_rejected)
{
    char buf[16];
    XDR x;
    xdrmem_create(&x, buf, sizeof buf, XDR_ENCODE);
    int api = 999, arg = 5;
    ck_assert(xdr_int(&x, &api) && xdr_int(&x, &arg));
    u_int len = xdr_getpos(&x);
    xdr_destroy(&x);
    crm_call c;
    memset(&c, 0, sizeof c);
    ck_assert(!decode(codec_call, &c, buf, len, NULL));
}
END_TEST

START_TEST(test_batch_longer_than_max_is_rejected)
{
    char buf[16];
    XDR x;
    xdrmem_create(&x, buf, sizeof buf, XDR_ENCODE);
    u_int n = CRM_MAX_BATCH + 1;
    int api = CRM_API_cudaDeviceSynchronize;
    ck_assert(xdr_u_int(&x, &n) && xdr_int(&x, &api));
    u_int len = xdr_getpos(&x);
    xdr_destroy(&x);
    crm_calls dec = {0};
    ck_assert(!decode(codec_calls, &dec, buf, len, NULL));
    xdr_free((xdrproc_t)xdr_crm_calls, (char *)&dec);
}
END_TEST

/* ------------------------------------------------------------------ generated replies */

START_TEST(test_replies_round_trip_meminfo_prop_and_errors)
{
    static char buf[8192];
    static char prop[1001];
    fill(prop, sizeof prop, 3);
    crm_reply r[4];
    memset(r, 0, sizeof r);
    r[0].api = CRM_API_cudaMemGetInfo;
    r[0].crm_reply_u.cudaMemGetInfo = (crm_res_cudaMemGetInfo){.err = 0, .free = (80ull << 30) + 1, .total = 141ull << 30};
    r[1].api = CRM_API_cudaGetDeviceProperties;
    r[1].crm_reply_u.cudaGetDeviceProperties.err = 0;
    r[1].crm_reply_u.cudaGetDeviceProperties.prop = (crm_prop){.crm_prop_len = sizeof prop, .crm_prop_val = prop};
    r[2].api = CRM_API_cudaDeviceGetStreamPriorityRange;
    r[2].crm_reply_u.cudaDeviceGetStreamPriorityRange =
        (crm_res_cudaDeviceGetStreamPriorityRange){.err = 0, .leastPriority = 0, .greatestPriority = -5};
    r[3].api = CRM_API_cudaEventElapsedTime;
    r[3].crm_reply_u.cudaEventElapsedTime = (crm_res_cudaEventElapsedTime){.err = 600, .ms = 1.25f};
    crm_replies reps = {.crm_replies_len = 4, .crm_replies_val = r};
    u_int len = encode(codec_replies, &reps, buf, sizeof buf);
    ck_assert_uint_eq(len % 4, 0);

    crm_replies dec = {0};
    u_int used = 0;
    ck_assert(decode(codec_replies, &dec, buf, len, &used));
    ck_assert_uint_eq(used, len);
    ck_assert_uint_eq(dec.crm_replies_len, 4);
    crm_reply *d = dec.crm_replies_val;
    ck_assert_int_eq(d[0].api, CRM_API_cudaMemGetInfo);
    ck_assert_uint_eq(d[0].crm_reply_u.cudaMemGetInfo.free, (80ull << 30) + 1);
    ck_assert_uint_eq(d[0].crm_reply_u.cudaMemGetInfo.total, 141ull << 30);
    const crm_prop *p = &d[1].crm_reply_u.cudaGetDeviceProperties.prop;
    ck_assert_uint_eq(p->crm_prop_len, sizeof prop);
    ck_assert_ptr_nonnull(p->crm_prop_val);
    ck_assert_int_eq(memcmp(p->crm_prop_val, prop, sizeof prop), 0);
    ck_assert_int_eq(d[2].crm_reply_u.cudaDeviceGetStreamPriorityRange.greatestPriority, -5);
    ck_assert_int_eq(d[3].crm_reply_u.cudaEventElapsedTime.err, 600);
    ck_assert(d[3].crm_reply_u.cudaEventElapsedTime.ms == 1.25f);
    xdr_free((xdrproc_t)xdr_crm_replies, (char *)&dec);
    ck_assert_ptr_null(dec.crm_replies_val);
}
END_TEST

START_TEST(test_prop_longer_than_max_is_rejected)
{
    /* Hand-made reply: api, err, then an opaque claiming CRM_PROP_MAX + 1 bytes. */
    static char buf[CRM_PROP_MAX + 64];
    XDR x;
    xdrmem_create(&x, buf, sizeof buf, XDR_ENCODE);
    int api = CRM_API_cudaGetDeviceProperties, err = 0;
    u_int n = CRM_PROP_MAX + 1;
    ck_assert(xdr_int(&x, &api) && xdr_int(&x, &err) && xdr_u_int(&x, &n));
    u_int len = xdr_getpos(&x) + ROUND4(n);
    xdr_destroy(&x);
    crm_reply r;
    memset(&r, 0, sizeof r);
    ck_assert(!decode(codec_reply, &r, buf, len, NULL));
    xdr_free((xdrproc_t)xdr_crm_reply, (char *)&r);
}
END_TEST

/* ------------------------------------------------------------------ bulk: sizes */

START_TEST(test_bulk_size_limits_and_overflow)
{
    uint64_t n = 12345;
    ck_assert(crm_bulk_size(0, UINT64_MAX, &n));
    ck_assert_uint_eq(n, 0);
    ck_assert(crm_bulk_size(UINT64_MAX, 0, &n));
    ck_assert_uint_eq(n, 0);
    ck_assert(crm_bulk_size(3, 5, &n));
    ck_assert_uint_eq(n, 15);
    ck_assert(crm_bulk_size(CRM_BULK_MAX, 1, &n));
    ck_assert_uint_eq(n, CRM_BULK_MAX);
    ck_assert(crm_bulk_size(1 << 20, 1 << 20, &n));
    ck_assert_uint_eq(n, 1ull << 40);
    ck_assert(!crm_bulk_size(CRM_BULK_MAX + 1, 1, &n));
    ck_assert(!crm_bulk_size(1, CRM_BULK_MAX + 1, &n));
    ck_assert(!crm_bulk_size(2, CRM_BULK_MAX / 2 + 1, &n));
    ck_assert(!crm_bulk_size(UINT64_MAX, UINT64_MAX, &n));
    ck_assert(!crm_bulk_size(1ull << 32, 1ull << 32, &n)); /* product wraps to 0 */
    ck_assert(!crm_bulk_size(3, 0x5555555555555556ull, &n)); /* product wraps to 2 */
}
END_TEST

/* ------------------------------------------------------------------ bulk: h2d */

static crm_h2d_args h2d_from(const char *src, uint64_t spitch, uint64_t width, uint64_t height)
{
    return (crm_h2d_args){.dst = 0x7f00deadbe00ull, .dpitch = 4096, .width = width, .height = height,
                          .stream = 0xabcdef0123ull, .async = 1, .src = src, .spitch = spitch};
}

static void assert_h2d_header(const crm_h2d_args *a, uint64_t width, uint64_t height)
{
    ck_assert_uint_eq(a->dst, 0x7f00deadbe00ull);
    ck_assert_uint_eq(a->dpitch, 4096);
    ck_assert_uint_eq(a->width, width);
    ck_assert_uint_eq(a->height, height);
    ck_assert_uint_eq(a->stream, 0xabcdef0123ull);
    ck_assert_int_eq(a->async, 1);
}

/* Round trip of a (possibly pitched) source with no sink: the packed rows come back. */
static void h2d_round_trip(uint64_t spitch, uint64_t width, uint64_t height)
{
    size_t srclen = height ? (size_t)(spitch * (height - 1) + width) : 0;
    char *src = malloc(srclen + 1);
    ck_assert_ptr_nonnull(src);
    fill(src, srclen, (unsigned)(width * 31 + height));
    crm_h2d_args a = h2d_from(src, spitch, width, height);
    u_int cap = HDR_H2D + (u_int)(width * height) + 8;
    char *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    /* A marker after the payload shows the padding was consumed exactly. */
    XDR x;
    xdrmem_create(&x, buf, cap, XDR_ENCODE);
    u_int marker = 0xc0ffee11u;
    ck_assert(xdr_crm_h2d_args(&x, &a) && xdr_u_int(&x, &marker));
    u_int len = xdr_getpos(&x);
    xdr_destroy(&x);
    ck_assert_uint_eq(len, HDR_H2D + ROUND4((u_int)(width * height)) + 4);
    for (u_int i = HDR_H2D + (u_int)(width * height); i < len - 4; i++)
        ck_assert_int_eq(buf[i], 0); /* padding is zeros */

    crm_h2d_args d;
    memset(&d, 0x5a, sizeof d);
    xdrmem_create(&x, buf, len, XDR_DECODE);
    u_int got = 0;
    ck_assert(xdr_crm_h2d_args(&x, &d));
    ck_assert(xdr_u_int(&x, &got));
    ck_assert_uint_eq(got, marker);
    xdr_destroy(&x);
    assert_h2d_header(&d, width, height);
    ck_assert_int_eq(d.status, 0);
    if (width * height == 0) {
        ck_assert_ptr_null(d.data);
    } else {
        ck_assert_ptr_nonnull(d.data);
        for (uint64_t row = 0; row < height; row++)
            ck_assert_int_eq(memcmp(d.data + row * width, src + row * spitch, width), 0);
    }
    xdr_free((xdrproc_t)xdr_crm_h2d_args, (char *)&d);
    ck_assert_ptr_null(d.data);
    free(buf);
    free(src);
}

START_TEST(test_h2d_pitched_source_round_trip_without_sink)
{
    ck_assert_ptr_null(crm_h2d_sink);
    h2d_round_trip(64, 40, 7);     /* pitched */
    h2d_round_trip(40, 40, 7);     /* dense */
    h2d_round_trip(1000, 999, 3);  /* odd rows, pitched */
    h2d_round_trip(17, 1, 5);      /* one byte a row */
}
END_TEST

START_TEST(test_h2d_odd_sizes_are_padded)
{
    h2d_round_trip(1, 1, 1);
    h2d_round_trip(3, 3, 1);
    h2d_round_trip(5, 5, 1);
    h2d_round_trip(8, 3, 3); /* 9 bytes from pitched rows */
    h2d_round_trip(6, 6, 1);
}
END_TEST

START_TEST(test_h2d_zero_length)
{
    h2d_round_trip(0, 0, 5);
    h2d_round_trip(64, 16, 0);
    /* A zero-length payload needs no source at all. */
    crm_h2d_args a = h2d_from(NULL, 0, 0, 0);
    char buf[64];
    ck_assert_uint_eq(encode(codec_h2d, &a, buf, sizeof buf), HDR_H2D);
}
END_TEST

/* Encodes an h2d header alone, claiming width x height. */
static u_int h2d_header_only(char *buf, u_int size, uint64_t width, uint64_t height)
{
    crm_h2d_args a = h2d_from(NULL, 0, width, height);
    XDR x;
    xdrmem_create(&x, buf, size, XDR_ENCODE);
    ck_assert(xdr_uint64_t(&x, &a.dst) && xdr_uint64_t(&x, &a.dpitch) && xdr_uint64_t(&x, &a.width) &&
              xdr_uint64_t(&x, &a.height) && xdr_uint64_t(&x, &a.stream) && xdr_int32_t(&x, &a.async));
    u_int len = xdr_getpos(&x);
    xdr_destroy(&x);
    return len;
}

START_TEST(test_h2d_oversized_or_overflowing_is_rejected)
{
    char buf[256] = {0};
    static const uint64_t bad[][2] = {
        {CRM_BULK_MAX + 1, 1}, {1ull << 21, 1ull << 20}, {UINT64_MAX, 2}, {1ull << 32, 1ull << 32},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        /* Encoding refuses before reading any source byte (src is NULL). */
        crm_h2d_args a = h2d_from(NULL, bad[i][0], bad[i][0], bad[i][1]);
        XDR x;
        xdrmem_create(&x, buf, sizeof buf, XDR_ENCODE);
        ck_assert(!xdr_crm_h2d_args(&x, &a));
        xdr_destroy(&x);
        /* Decoding a header that claims it fails without allocating a payload. */
        u_int len = h2d_header_only(buf, sizeof buf, bad[i][0], bad[i][1]);
        crm_h2d_args d;
        memset(&d, 0, sizeof d);
        ck_assert(!decode(codec_h2d, &d, buf, len + 16, NULL));
        ck_assert_ptr_null(d.data);
    }
}
END_TEST

START_TEST(test_h2d_truncated_anywhere_fails_cleanly)
{
    static char src[3 * 50];
    char buf[512];
    fill(src, sizeof src, 9);
    crm_h2d_args a = h2d_from(src, 50, 33, 3); /* 99 bytes + 1 pad */
    u_int len = encode(codec_h2d, &a, buf, sizeof buf);
    ck_assert_uint_eq(len, HDR_H2D + 100);
    for (u_int cut = 0; cut < len; cut++) {
        crm_h2d_args d;
        memset(&d, 0, sizeof d);
        ck_assert_msg(!decode(codec_h2d, &d, buf, cut, NULL), "prefix of %u bytes accepted", cut);
        xdr_free((xdrproc_t)xdr_crm_h2d_args, (char *)&d); /* releases a partial payload */
        ck_assert_ptr_null(d.data);
    }
}
END_TEST

START_TEST(test_h2d_encode_into_short_buffer_fails)
{
    static char src[100];
    char buf[HDR_H2D + 100];
    crm_h2d_args a = h2d_from(src, 100, 100, 1);
    for (u_int size = 0; size < sizeof buf; size += 4) {
        XDR x;
        xdrmem_create(&x, buf, size, XDR_ENCODE);
        ck_assert(!xdr_crm_h2d_args(&x, &a));
        xdr_destroy(&x);
    }
    ck_assert_uint_eq(encode(codec_h2d, &a, buf, sizeof buf), sizeof buf);
}
END_TEST

/* ------------------------------------------------------------------ bulk: the server sink */

static struct {
    int calls;
    crm_h2d_args seen;  /* header fields at the call */
    char *dest;         /* where the test sink puts the rows */
    uint64_t dpitch;
    int skip;           /* consume with crm_payload_skip instead */
    int fail;           /* return FALSE */
} sink;

static bool_t test_sink(XDR *xdrs, crm_h2d_args *a)
{
    sink.calls++;
    sink.seen = *a;
    if (sink.fail)
        return FALSE;
    if (sink.skip) {
        a->status = 1;
        return crm_payload_skip(xdrs, a->width * a->height);
    }
    a->status = 42;
    crm_rows_writer rw;
    crm_rows_writer_init(&rw, sink.dest, sink.dpitch, a->width, a->height);
    return crm_payload_get(xdrs, a->width * a->height, &rw.w, NULL);
}

static void sink_setup(void)
{
    memset(&sink, 0, sizeof sink);
    crm_h2d_sink = test_sink;
}

static void sink_teardown(void)
{
    crm_h2d_sink = NULL;
}

/* Encodes a pitched h2d payload followed by a marker. */
static u_int encode_h2d_with_marker(char *buf, u_int size, const char *src, uint64_t spitch, uint64_t width,
                                    uint64_t height)
{
    crm_h2d_args a = h2d_from(src, spitch, width, height);
    XDR x;
    xdrmem_create(&x, buf, size, XDR_ENCODE);
    u_int marker = 0xfeedf00du;
    ck_assert(xdr_crm_h2d_args(&x, &a) && xdr_u_int(&x, &marker));
    u_int len = xdr_getpos(&x);
    xdr_destroy(&x);
    return len;
}

START_TEST(test_h2d_sink_gets_header_and_places_rows)
{
    enum { W = 13, H = 5, SP = 16, DP = 24 };
    static char src[SP * H], dest[DP * H], buf[512];
    fill(src, sizeof src, 77);
    memset(dest, '#', sizeof dest);
    sink.dest = dest;
    sink.dpitch = DP;
    u_int len = encode_h2d_with_marker(buf, sizeof buf, src, SP, W, H);

    crm_h2d_args d;
    memset(&d, 0x5a, sizeof d);
    XDR x;
    xdrmem_create(&x, buf, len, XDR_DECODE);
    ck_assert(xdr_crm_h2d_args(&x, &d));
    u_int marker = 0;
    ck_assert(xdr_u_int(&x, &marker));
    ck_assert_uint_eq(marker, 0xfeedf00du);
    ck_assert_uint_eq(xdr_getpos(&x), len);
    xdr_destroy(&x);

    ck_assert_int_eq(sink.calls, 1);
    assert_h2d_header(&sink.seen, W, H);
    ck_assert_ptr_null(sink.seen.data); /* nothing allocated when a sink consumes */
    ck_assert_ptr_null(d.data);
    ck_assert_int_eq(d.status, 42);
    for (int row = 0; row < H; row++) {
        ck_assert_int_eq(memcmp(dest + row * DP, src + row * SP, W), 0);
        for (int c = W; c < DP; c++)
            ck_assert_int_eq(dest[row * DP + c], '#'); /* gaps untouched */
    }
    xdr_free((xdrproc_t)xdr_crm_h2d_args, (char *)&d);
}
END_TEST

START_TEST(test_h2d_sink_skipping_payload_keeps_stream_aligned)
{
    static char src[7 * 3], buf[256];
    fill(src, sizeof src, 1);
    sink.skip = 1;
    u_int len = encode_h2d_with_marker(buf, sizeof buf, src, 7, 7, 3); /* 21 bytes + 3 pad */
    crm_h2d_args d;
    memset(&d, 0, sizeof d);
    XDR x;
    xdrmem_create(&x, buf, len, XDR_DECODE);
    ck_assert(xdr_crm_h2d_args(&x, &d));
    u_int marker = 0;
    ck_assert(xdr_u_int(&x, &marker));
    ck_assert_uint_eq(marker, 0xfeedf00du);
    xdr_destroy(&x);
    ck_assert_int_eq(sink.calls, 1);
    ck_assert_int_eq(d.status, 1);
}
END_TEST

START_TEST(test_h2d_sink_failure_fails_decode)
{
    static char src[8], buf[128];
    sink.fail = 1;
    u_int len = encode_h2d_with_marker(buf, sizeof buf, src, 8, 8, 1);
    crm_h2d_args d;
    memset(&d, 0, sizeof d);
    ck_assert(!decode(codec_h2d, &d, buf, len, NULL));
    ck_assert_int_eq(sink.calls, 1);
}
END_TEST

START_TEST(test_h2d_sink_not_called_for_oversized_header)
{
    char buf[128];
    u_int len = h2d_header_only(buf, sizeof buf, UINT64_MAX, 3);
    crm_h2d_args d;
    memset(&d, 0, sizeof d);
    ck_assert(!decode(codec_h2d, &d, buf, len, NULL));
    ck_assert_int_eq(sink.calls, 0);
}
END_TEST

START_TEST(test_h2d_sink_on_truncated_payload_fails)
{
    enum { W = 30, H = 4 };
    static char src[W * H], dest[W * H], buf[512];
    fill(src, sizeof src, 5);
    sink.dest = dest;
    sink.dpitch = W;
    crm_h2d_args a = h2d_from(src, W, W, H);
    u_int len = encode(codec_h2d, &a, buf, sizeof buf);
    for (u_int cut = HDR_H2D; cut < len; cut++) {
        crm_h2d_args d;
        memset(&d, 0, sizeof d);
        ck_assert_msg(!decode(codec_h2d, &d, buf, cut, NULL), "prefix of %u bytes accepted", cut);
    }
    ck_assert_int_eq(sink.calls, (int)(len - HDR_H2D));
}
END_TEST

/* ------------------------------------------------------------------ bulk: d2h */

static u_int encode_d2h(char *buf, u_int size, const char *payload, uint64_t n)
{
    crm_d2h_res r = {.len = n, .src = payload};
    return encode(codec_d2h, &r, buf, size);
}

START_TEST(test_d2h_into_preset_pitched_destination)
{
    enum { W = 11, H = 6, DP = 16 };
    static char payload[W * H], dest[DP * H], buf[256];
    fill(payload, sizeof payload, 21);
    memset(dest, '#', sizeof dest);
    u_int len = encode_d2h(buf, sizeof buf, payload, W * H);
    ck_assert_uint_eq(len, HDR_D2H + ROUND4(W * H));

    crm_d2h_res r = {.dst = dest, .dpitch = DP, .width = W, .height = H};
    u_int used = 0;
    ck_assert(decode(codec_d2h, &r, buf, len, &used));
    ck_assert_uint_eq(used, len);
    ck_assert_uint_eq(r.len, W * H);
    ck_assert_ptr_null(r.owned);
    for (int row = 0; row < H; row++) {
        ck_assert_int_eq(memcmp(dest + row * DP, payload + row * W, W), 0);
        for (int c = W; c < DP; c++)
            ck_assert_int_eq(dest[row * DP + c], '#');
    }
    xdr_free((xdrproc_t)xdr_crm_d2h_res, (char *)&r);
}
END_TEST

START_TEST(test_d2h_into_preset_dense_destination)
{
    static char payload[4096], dest[4096], buf[4200];
    fill(payload, sizeof payload, 2);
    u_int len = encode_d2h(buf, sizeof buf, payload, sizeof payload);
    crm_d2h_res r = {.dst = dest, .dpitch = 64, .width = 64, .height = 64};
    ck_assert(decode(codec_d2h, &r, buf, len, NULL));
    ck_assert_int_eq(memcmp(dest, payload, sizeof dest), 0);
}
END_TEST

START_TEST(test_d2h_wrong_preset_size_fails)
{
    static char payload[64], dest[256], buf[128];
    fill(payload, sizeof payload, 4);
    memset(dest, '#', sizeof dest);
    u_int len = encode_d2h(buf, sizeof buf, payload, 60);
    static const uint64_t shapes[][2] = {{61, 1}, {59, 1}, {6, 11}, {0, 0}, {UINT64_MAX, 2}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        crm_d2h_res r = {.dst = dest, .dpitch = 64, .width = shapes[i][0], .height = shapes[i][1]};
        ck_assert_msg(!decode(codec_d2h, &r, buf, len, NULL), "shape %zu accepted", i);
        ck_assert_ptr_null(r.owned);
    }
    for (size_t i = 0; i < sizeof dest; i++)
        ck_assert_int_eq(dest[i], '#');
    /* The right shape works on the same bytes. */
    crm_d2h_res r = {.dst = dest, .dpitch = 16, .width = 6, .height = 10};
    ck_assert(decode(codec_d2h, &r, buf, len, NULL));
    ck_assert_int_eq(memcmp(dest + 16, payload + 6, 6), 0);
    ck_assert_int_eq(dest[6], '#');
}
END_TEST

START_TEST(test_d2h_zero_len_leaves_preset_destination_alone)
{
    char buf[16], dest[32];
    memset(dest, '#', sizeof dest);
    u_int len = encode_d2h(buf, sizeof buf, NULL, 0);
    ck_assert_uint_eq(len, 8u); /* no payload: no codec word */
    crm_d2h_res r = {.dst = dest, .dpitch = 8, .width = 8, .height = 4};
    u_int used = 0;
    ck_assert(decode(codec_d2h, &r, buf, len, &used));
    ck_assert_uint_eq(used, 8u);
    ck_assert_uint_eq(r.len, 0);
    for (size_t i = 0; i < sizeof dest; i++)
        ck_assert_int_eq(dest[i], '#');
}
END_TEST

START_TEST(test_d2h_without_destination_allocates_owned)
{
    static const uint64_t sizes[] = {1, 3, 5, 8, 1001};
    static char payload[1001], buf[1100];
    fill(payload, sizeof payload, 8);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        u_int len = encode_d2h(buf, sizeof buf, payload, sizes[i]);
        ck_assert_uint_eq(len, HDR_D2H + ROUND4((u_int)sizes[i]));
        for (u_int k = HDR_D2H + (u_int)sizes[i]; k < len; k++)
            ck_assert_int_eq(buf[k], 0);
        crm_d2h_res r = {0};
        u_int used = 0;
        ck_assert(decode(codec_d2h, &r, buf, len, &used));
        ck_assert_uint_eq(used, len);
        ck_assert_uint_eq(r.len, sizes[i]);
        ck_assert_ptr_nonnull(r.owned);
        ck_assert_int_eq(memcmp(r.owned, payload, sizes[i]), 0);
        xdr_free((xdrproc_t)xdr_crm_d2h_res, (char *)&r);
        ck_assert_ptr_null(r.owned);
    }
    /* Zero length: nothing to own. */
    u_int len = encode_d2h(buf, sizeof buf, NULL, 0);
    crm_d2h_res r = {0};
    ck_assert(decode(codec_d2h, &r, buf, len, NULL));
    ck_assert_ptr_null(r.owned);
}
END_TEST

START_TEST(test_d2h_odd_lengths_into_preset_destination)
{
    static const uint64_t sizes[] = {1, 3, 5, 7};
    char payload[8], dest[8], buf[32];
    fill(payload, sizeof payload, 60);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        memset(dest, '#', sizeof dest);
        XDR x;
        xdrmem_create(&x, buf, sizeof buf, XDR_ENCODE);
        crm_d2h_res e = {.len = sizes[i], .src = payload};
        u_int marker = 0x600dcafeu;
        ck_assert(xdr_crm_d2h_res(&x, &e) && xdr_u_int(&x, &marker));
        u_int len = xdr_getpos(&x);
        xdr_destroy(&x);

        crm_d2h_res r = {.dst = dest, .dpitch = sizes[i], .width = sizes[i], .height = 1};
        xdrmem_create(&x, buf, len, XDR_DECODE);
        u_int got = 0;
        ck_assert(xdr_crm_d2h_res(&x, &r) && xdr_u_int(&x, &got));
        ck_assert_uint_eq(got, marker);
        xdr_destroy(&x);
        ck_assert_int_eq(memcmp(dest, payload, sizes[i]), 0);
        ck_assert_int_eq(dest[sizes[i]], '#');
    }
}
END_TEST

START_TEST(test_d2h_truncated_anywhere_fails_cleanly)
{
    static char payload[45], dest[45], buf[128];
    fill(payload, sizeof payload, 13);
    u_int len = encode_d2h(buf, sizeof buf, payload, sizeof payload);
    for (u_int cut = 0; cut < len; cut++) {
        crm_d2h_res owned = {0};
        ck_assert_msg(!decode(codec_d2h, &owned, buf, cut, NULL), "prefix of %u bytes accepted", cut);
        xdr_free((xdrproc_t)xdr_crm_d2h_res, (char *)&owned); /* releases a partial buffer */
        ck_assert_ptr_null(owned.owned);
        crm_d2h_res preset = {.dst = dest, .dpitch = 9, .width = 9, .height = 5};
        ck_assert_msg(!decode(codec_d2h, &preset, buf, cut, NULL), "prefix of %u bytes accepted", cut);
        ck_assert_ptr_null(preset.owned);
    }
}
END_TEST

START_TEST(test_d2h_len_over_max_is_rejected_without_allocating)
{
    char buf[32];
    XDR x;
    xdrmem_create(&x, buf, sizeof buf, XDR_ENCODE);
    uint64_t n = CRM_BULK_MAX + 1;
    ck_assert(xdr_uint64_t(&x, &n));
    u_int len = xdr_getpos(&x);
    xdr_destroy(&x);
    crm_d2h_res r = {0};
    ck_assert(!decode(codec_d2h, &r, buf, len, NULL));
    ck_assert_ptr_null(r.owned);
    n = UINT64_MAX;
    xdrmem_create(&x, buf, sizeof buf, XDR_ENCODE);
    ck_assert(xdr_uint64_t(&x, &n));
    xdr_destroy(&x);
    ck_assert(!decode(codec_d2h, &r, buf, len, NULL));
    ck_assert_ptr_null(r.owned);
}
END_TEST

/* ------------------------------------------------------------------ bulk inside batches */

START_TEST(test_h2d_call_in_batch_round_trip_and_free)
{
    enum { W = 10, H = 4, SP = 12 };
    static char src[SP * H], buf[1024];
    fill(src, sizeof src, 50);
    crm_call c[3];
    memset(c, 0, sizeof c);
    c[0].api = CRM_API_crm_memcpy_h2d;
    c[0].crm_call_u.crm_memcpy_h2d.data = h2d_from(src, SP, W, H);
    c[1].api = CRM_API_crm_memcpy_h2d;
    c[1].crm_call_u.crm_memcpy_h2d.data = h2d_from(src, SP, 3, 1);
    c[2].api = CRM_API_cudaStreamSynchronize;
    c[2].crm_call_u.cudaStreamSynchronize.stream = 99;
    crm_calls calls = {.crm_calls_len = 3, .crm_calls_val = c};
    u_int len = encode(codec_calls, &calls, buf, sizeof buf);

    crm_calls dec = {0};
    ck_assert(decode(codec_calls, &dec, buf, len, NULL));
    ck_assert_uint_eq(dec.crm_calls_len, 3);
    const crm_h2d_args *d0 = &dec.crm_calls_val[0].crm_call_u.crm_memcpy_h2d.data;
    assert_h2d_header(d0, W, H);
    for (int row = 0; row < H; row++)
        ck_assert_int_eq(memcmp(d0->data + row * W, src + row * SP, W), 0);
    ck_assert_int_eq(memcmp(dec.crm_calls_val[1].crm_call_u.crm_memcpy_h2d.data.data, src, 3), 0);
    ck_assert_uint_eq(dec.crm_calls_val[2].crm_call_u.cudaStreamSynchronize.stream, 99);
    xdr_free((xdrproc_t)xdr_crm_calls, (char *)&dec); /* frees both payloads (LSan checks) */
    ck_assert_ptr_null(dec.crm_calls_val);

    /* Truncated batches release their partial payloads too. */
    for (u_int cut = 0; cut < len; cut += 3) {
        crm_calls part = {0};
        ck_assert(!decode(codec_calls, &part, buf, cut, NULL));
        xdr_free((xdrproc_t)xdr_crm_calls, (char *)&part);
    }
}
END_TEST

START_TEST(test_d2h_reply_decodes_into_preset_reply)
{
    /* What the client does: the reply slot is preset with the destination. */
    enum { W = 7, H = 3, DP = 10 };
    static char payload[W * H], dest[DP * H], buf[256];
    fill(payload, sizeof payload, 33);
    memset(dest, '#', sizeof dest);
    crm_reply e;
    memset(&e, 0, sizeof e);
    e.api = CRM_API_crm_memcpy_d2h;
    e.crm_reply_u.crm_memcpy_d2h.err = 0;
    e.crm_reply_u.crm_memcpy_d2h.data = (crm_d2h_res){.len = W * H, .src = payload};
    u_int len = encode(codec_reply, &e, buf, sizeof buf);

    crm_reply r;
    memset(&r, 0, sizeof r);
    r.api = CRM_API_crm_memcpy_d2h;
    r.crm_reply_u.crm_memcpy_d2h.data = (crm_d2h_res){.dst = dest, .dpitch = DP, .width = W, .height = H};
    u_int used = 0;
    ck_assert(decode(codec_reply, &r, buf, len, &used));
    ck_assert_uint_eq(used, len);
    ck_assert_int_eq(r.crm_reply_u.crm_memcpy_d2h.err, 0);
    for (int row = 0; row < H; row++)
        ck_assert_int_eq(memcmp(dest + row * DP, payload + row * W, W), 0);
    ck_assert_int_eq(dest[W], '#');

    /* Without a preset destination (array allocated by the decoder) the payload is owned. */
    crm_replies reps = {.crm_replies_len = 1, .crm_replies_val = &e};
    len = encode(codec_replies, &reps, buf, sizeof buf);
    crm_replies dec = {0};
    ck_assert(decode(codec_replies, &dec, buf, len, NULL));
    const crm_d2h_res *o = &dec.crm_replies_val[0].crm_reply_u.crm_memcpy_d2h.data;
    ck_assert_ptr_nonnull(o->owned);
    ck_assert_int_eq(memcmp(o->owned, payload, W * H), 0);
    xdr_free((xdrproc_t)xdr_crm_replies, (char *)&dec);
}
END_TEST

/* ------------------------------------------------------------------ bulk: zstd payloads */

/* Encodes rows with compression level `level`, decodes the payload into a pitched
 * destination, compares, and returns the encoded length. */
static u_int zstd_round_trip(const char *src, uint64_t spitch, uint64_t width, uint64_t height, int level,
                             uint64_t dpitch)
{
    crm_h2d_args a = h2d_from(src, spitch, width, height);
    a.level = level;
    u_int cap = HDR_H2D + (u_int)(width * height) + (u_int)(width * height) / 64 + 4096;
    char *buf = malloc(cap), *dest = malloc(dpitch * height + 1);
    ck_assert(buf != NULL && dest != NULL);
    u_int len = encode(codec_h2d, &a, buf, cap);
    memset(dest, '#', dpitch * height + 1);
    XDR x;
    xdrmem_create(&x, buf + HDR_H2D - 4, len - HDR_H2D + 4, XDR_DECODE); /* the payload alone */
    crm_rows_writer rw;
    crm_rows_writer_init(&rw, dest, dpitch, width, height);
    crm_payload_stats st = {0};
    ck_assert(crm_payload_get(&x, width * height, &rw.w, &st));
    ck_assert_uint_eq(xdr_getpos(&x), len - HDR_H2D + 4);
    xdr_destroy(&x);
    for (uint64_t r = 0; r < height; r++) {
        ck_assert_int_eq(memcmp(dest + r * dpitch, src + r * spitch, width), 0);
        if (dpitch > width)
            ck_assert_int_eq(dest[r * dpitch + width], '#'); /* gaps untouched */
    }
    ck_assert_uint_eq(st.raw_bytes, width * height);
    free(buf);
    free(dest);
    return len;
}

START_TEST(test_zstd_zeros_shrink_and_round_trip)
{
    size_t n = 3 * CRM_PAYLOAD_CHUNK + 12345; /* several chunks and a short last one */
    char *zeros = calloc(1, n);
    u_int len = zstd_round_trip(zeros, n, n, 1, 1, n);
    ck_assert_uint_lt(len, n / 100);
    free(zeros);
}
END_TEST

START_TEST(test_zstd_pitched_rows_round_trip)
{
    enum { W = 1000, SP = 1024, H = 2500 }; /* rows straddle chunk boundaries */
    char *src = calloc(SP, H);
    for (size_t i = 0; i < (size_t)SP * H; i++)
        src[i] = (char)((i / 97) & 7); /* low entropy */
    u_int len = zstd_round_trip(src, SP, W, H, 3, 1013);
    ck_assert_uint_lt(len, (u_int)(W * H) / 2);
    free(src);
}
END_TEST

/* The next value of a xorshift generator: test data that repeats nothing. */
static uint64_t next_random(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

START_TEST(test_zstd_incompressible_travels_raw_at_little_cost)
{
    size_t n = 2 * CRM_PAYLOAD_CHUNK;
    char *noise = malloc(n);
    uint64_t s = 88172645463325252ull;
    for (size_t i = 0; i < n; i++)
        noise[i] = (char)next_random(&s);
    u_int len = zstd_round_trip(noise, n, n, 1, 1, n);
    ck_assert_uint_le(len, HDR_H2D + n + 2 * 12); /* chunk headers only */
    free(noise);
}
END_TEST

/* Random bytes of a 4-letter alphabet: 2 bits of entropy per byte, few repeats. */
static char *four_letters(size_t n)
{
    char *buf = malloc(n);
    uint64_t s = 0x9e3779b97f4a7c15ull;
    ck_assert(buf != NULL);
    for (size_t i = 0; i < n; i++)
        buf[i] = "ACGT"[next_random(&s) & 3];
    return buf;
}

/* Sentences that repeat with small changes, as text and records do. */
static char *sentences(size_t n)
{
    static const char *words[] = {"the ", "device ", "copies ", "a ", "tensor ", "to ", "host ", "memory ",
                                  "while ", "stream ", "seven ", "waits; "};
    char *buf = malloc(n);
    uint64_t s = 88172645463325252ull;
    ck_assert(buf != NULL);
    for (size_t i = 0; i < n;) {
        const char *w = words[next_random(&s) % 12];
        for (size_t k = 0; w[k] != '\0' && i < n; k++)
            buf[i++] = w[k];
    }
    return buf;
}

/* zstd at `level` with its own parameters, chunk by chunk: what the encoder
 * would send if it never chose the LEAN set. */
static size_t level_only_bytes(const char *src, size_t n, int level)
{
    size_t total = 0, cap = ZSTD_compressBound(CRM_PAYLOAD_CHUNK);
    char *out = malloc(cap);
    ck_assert(out != NULL);
    for (size_t off = 0; off < n; off += CRM_PAYLOAD_CHUNK) {
        size_t len = n - off < CRM_PAYLOAD_CHUNK ? n - off : CRM_PAYLOAD_CHUNK;
        size_t got = ZSTD_compress(out, cap, src + off, len, level);
        ck_assert(!ZSTD_isError(got));
        total += got;
    }
    free(out);
    return total;
}

/* The encoder picks the LEAN set on few-letter data (level 1 alone stops near
 * 3.2x) and keeps the level's own set on text, where LEAN would lose. */
START_TEST(test_zstd_parameter_set_follows_the_data)
{
    size_t n = 8 * CRM_PAYLOAD_CHUNK;
    char *low = four_letters(n), *text = sentences(n);
    u_int low_len = zstd_round_trip(low, n, n, 1, 1, n);
    ck_assert_uint_lt(low_len, (u_int)(n / 3.6));
    ck_assert_uint_lt(low_len, (u_int)(level_only_bytes(low, n, 1) * 0.9));
    u_int text_len = zstd_round_trip(text, n, n, 1, 1, n);
    ck_assert_uint_le(text_len, (u_int)(level_only_bytes(text, n, 1) * 1.01) + 8 * 12 + HDR_H2D);
    low_len = zstd_round_trip(low, n, n, 1, 1, n); /* and back: the choice is not stuck */
    ck_assert_uint_lt(low_len, (u_int)(n / 3.6));
    free(low);
    free(text);
}
END_TEST

/* Hand-made payload words; each case must be rejected without a crash. */
static int zstd_bad_payload_rejected(const uint32_t *words, size_t count, uint64_t total)
{
    uint32_t net[16];
    for (size_t i = 0; i < count; i++)
        net[i] = htonl(words[i]);
    XDR x;
    xdrmem_create(&x, (char *)net, (u_int)(count * 4), XDR_DECODE);
    int ok = crm_payload_skip(&x, total);
    xdr_destroy(&x);
    return !ok;
}

START_TEST(test_zstd_malformed_chunks_rejected)
{
    const uint32_t unknown_codec[] = {7, 0, 0};
    const uint32_t chunk_too_big[] = {CRM_CODEC_ZSTD, 0, CRM_PAYLOAD_CHUNK + 1, CRM_PAYLOAD_CHUNK + 1};
    const uint32_t beyond_total[] = {CRM_CODEC_ZSTD, 0, 8, 8, 0, 0};
    const uint32_t raw_len_mismatch[] = {CRM_CODEC_ZSTD, 0, 4, 8, 0, 0};
    const uint32_t unknown_kind[] = {CRM_CODEC_ZSTD, 9, 4, 4, 0};
    const uint32_t garbage_frame[] = {CRM_CODEC_ZSTD, 1, 4, 4, 0x12345678};
    const uint32_t empty_chunk[] = {CRM_CODEC_ZSTD, 0, 0, 0};
    ck_assert(zstd_bad_payload_rejected(unknown_codec, 3, 4));
    ck_assert(zstd_bad_payload_rejected(chunk_too_big, 4, 1u << 21));
    ck_assert(zstd_bad_payload_rejected(beyond_total, 6, 4));
    ck_assert(zstd_bad_payload_rejected(raw_len_mismatch, 6, 4));
    ck_assert(zstd_bad_payload_rejected(unknown_kind, 5, 4));
    ck_assert(zstd_bad_payload_rejected(garbage_frame, 5, 4));
    ck_assert(zstd_bad_payload_rejected(empty_chunk, 4, 4));
}
END_TEST

Suite *crm_wire_suite(void)
{
    Suite *s = suite_create("wire");
    TCase *tg = tcase_create("generated");
    tcase_add_test(tg, test_calls_round_trip_scalars_and_ids);
    tcase_add_test(tg, test_calls_truncated_anywhere_fail_cleanly);
    tcase_add_test(tg, test_call_with_unknown_api_is_rejected);
    tcase_add_test(tg, test_batch_longer_than_max_is_rejected);
    tcase_add_test(tg, test_replies_round_trip_meminfo_prop_and_errors);
    tcase_add_test(tg, test_prop_longer_than_max_is_rejected);
    suite_add_tcase(s, tg);

    TCase *th = tcase_create("h2d");
    tcase_add_test(th, test_bulk_size_limits_and_overflow);
    tcase_add_test(th, test_h2d_pitched_source_round_trip_without_sink);
    tcase_add_test(th, test_h2d_odd_sizes_are_padded);
    tcase_add_test(th, test_zstd_zeros_shrink_and_round_trip);
    tcase_add_test(th, test_zstd_pitched_rows_round_trip);
    tcase_add_test(th, test_zstd_incompressible_travels_raw_at_little_cost);
    tcase_add_test(th, test_zstd_parameter_set_follows_the_data);
    tcase_add_test(th, test_zstd_malformed_chunks_rejected);
    tcase_add_test(th, test_h2d_zero_length);
    tcase_add_test(th, test_h2d_oversized_or_overflowing_is_rejected);
    tcase_add_test(th, test_h2d_truncated_anywhere_fails_cleanly);
    tcase_add_test(th, test_h2d_encode_into_short_buffer_fails);
    suite_add_tcase(s, th);

    TCase *ts = tcase_create("sink");
    tcase_add_checked_fixture(ts, sink_setup, sink_teardown);
    tcase_add_test(ts, test_h2d_sink_gets_header_and_places_rows);
    tcase_add_test(ts, test_h2d_sink_skipping_payload_keeps_stream_aligned);
    tcase_add_test(ts, test_h2d_sink_failure_fails_decode);
    tcase_add_test(ts, test_h2d_sink_not_called_for_oversized_header);
    tcase_add_test(ts, test_h2d_sink_on_truncated_payload_fails);
    suite_add_tcase(s, ts);

    TCase *td = tcase_create("d2h");
    tcase_add_test(td, test_d2h_into_preset_pitched_destination);
    tcase_add_test(td, test_d2h_into_preset_dense_destination);
    tcase_add_test(td, test_d2h_wrong_preset_size_fails);
    tcase_add_test(td, test_d2h_zero_len_leaves_preset_destination_alone);
    tcase_add_test(td, test_d2h_without_destination_allocates_owned);
    tcase_add_test(td, test_d2h_odd_lengths_into_preset_destination);
    tcase_add_test(td, test_d2h_truncated_anywhere_fails_cleanly);
    tcase_add_test(td, test_d2h_len_over_max_is_rejected_without_allocating);
    suite_add_tcase(s, td);

    TCase *tb = tcase_create("batches");
    tcase_add_test(tb, test_h2d_call_in_batch_round_trip_and_free);
    tcase_add_test(tb, test_d2h_reply_decodes_into_preset_reply);
    suite_add_tcase(s, tb);
    return s;
}

CRM_CHECK_MAIN(crm_wire_suite)
