/* check_chan.c -- unit tests of the data channel (protocol/crm_chan.c): payloads
 * through a socket pair, raw and compressed, dense and pitched, with and without
 * the shared ring, and hostile frames, which must fail the payload cleanly. */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include "protocol/crm_chan.h"
#include "protocol/crm_payload.h"
#include "tests/unit/crm_check.h"

#define RING_BYTES (1u << 20)

static crm_chan tx, rx;
static char *ring;

/* tx sends with its thread; rx decodes in the test's thread. */
static void open_pair(int with_ring)
{
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    ck_assert_int_eq(crm_chan_init(&tx, sv[0], 1), 0);
    ck_assert_int_eq(crm_chan_init(&rx, sv[1], 1), 0);
    if (with_ring) {
        ring = malloc(RING_BYTES); /* one process: plain memory is shared enough */
        crm_chan_set_ring(&tx, ring, RING_BYTES);
        crm_chan_set_ring(&rx, ring, RING_BYTES);
    }
    ck_assert_int_eq(crm_chan_start_sender(&tx), 0);
    rx.xdr.x_op = XDR_DECODE;
}

static void close_pair(void)
{
    crm_chan_close(&tx);
    crm_chan_close(&rx);
    free(ring);
    ring = NULL;
}

static void fill(unsigned char *p, size_t n, unsigned seed, int compressible)
{
    for (size_t i = 0; i < n; i++)
        p[i] = compressible ? (unsigned char)((i / 4096) + seed) : (unsigned char)((i * 2654435761u + seed) >> 13);
}

/* Sends rows (pitched at the source when pitch > width) and checks what arrives. */
static void round_trip(uint64_t width, uint64_t height, uint64_t pitch, int level, int with_ring, int compressible)
{
    /* pieces of 32 KiB and more use the ring; rows and compressed chunks smaller go inline */
    int expect_ring = with_ring && !compressible && width >= (32u << 10);
    open_pair(with_ring);
    unsigned char *src = malloc(pitch * height), *want = malloc(width * height), *got = calloc(1, width * height);
    fill(src, pitch * height, 9, compressible);
    for (uint64_t r = 0; r < height; r++)
        memcpy(want + r * width, src + r * pitch, width);
    crm_chan_job job = {.src = (const char *)src, .pitch = pitch, .width = width, .height = height, .level = level};
    ck_assert(crm_chan_post(&tx, &job));
    crm_rows_writer w;
    crm_rows_writer_init(&w, (char *)got, width, width, height);
    ck_assert(crm_payload_get(&rx.xdr, width * height, &w.w, NULL) && crm_chan_end_get(&rx));
    ck_assert(crm_chan_wait(&tx));
    ck_assert_int_eq(memcmp(got, want, width * height), 0);
    ck_assert(expect_ring ? rx.ring_moved > 0 : rx.ring_moved == 0);
    ck_assert_uint_eq(tx.ring_used, 0); /* every piece acknowledged */
    free(src);
    free(want);
    free(got);
    close_pair();
}

START_TEST(test_raw_dense)
{
    round_trip(5u << 20, 1, 5u << 20, 0, _i, 0);
}
END_TEST

START_TEST(test_raw_pitched)
{
    round_trip(100000, 37, 100013, 0, _i, 0);
}
END_TEST

START_TEST(test_small_rows)
{
    round_trip(3, 1001, 7, 0, _i, 0);
}
END_TEST

START_TEST(test_zstd)
{
    round_trip(3u << 20, 1, 3u << 20, 3, _i, 1);
}
END_TEST

/* Several payloads in a row reuse the channel; the ring wraps around. */
START_TEST(test_many_payloads)
{
    open_pair(_i);
    size_t n = 700000;
    unsigned char *src = malloc(n), *got = malloc(n);
    for (unsigned k = 0; k < 6; k++) {
        fill(src, n, k, 0);
        crm_chan_job job = {.src = (const char *)src, .pitch = n, .width = n, .height = 1};
        ck_assert(crm_chan_post(&tx, &job));
        crm_rows_writer w;
        crm_rows_writer_init(&w, (char *)got, n, n, 1);
        ck_assert(crm_payload_get(&rx.xdr, n, &w.w, NULL) && crm_chan_end_get(&rx));
        ck_assert(crm_chan_wait(&tx));
        ck_assert_int_eq(memcmp(got, src, n), 0);
    }
    free(src);
    free(got);
    close_pair();
}
END_TEST

/* The receiver owes its acks until a quarter of the ring is copied out or the
 * payload ends (5 MiB through the 1 MiB ring above only passes with the first);
 * the sender's payload ends once the last is paid. */
START_TEST(test_acks_wait_for_the_payload_end)
{
    open_pair(1);
    size_t n = 100000; /* one piece */
    unsigned char *src = malloc(n), *got = malloc(n);
    fill(src, n, 3, 0);
    crm_chan_job job = {.src = (const char *)src, .pitch = n, .width = n, .height = 1};
    ck_assert(crm_chan_post(&tx, &job));
    crm_rows_writer w;
    crm_rows_writer_init(&w, (char *)got, n, n, 1);
    ck_assert(crm_payload_get(&rx.xdr, n, &w.w, NULL));
    ck_assert_uint_eq(rx.ack_owed, n);
    ck_assert(crm_chan_end_get(&rx));
    ck_assert_uint_eq(rx.ack_owed, 0);
    ck_assert(crm_chan_wait(&tx));
    ck_assert_uint_eq(tx.ring_used, 0);
    ck_assert_int_eq(memcmp(got, src, n), 0);
    free(src);
    free(got);
    close_pair();
}
END_TEST

/* A produced payload: bytes made in pieces of odd sizes as they are written. */
static bool_t produce_pattern(XDR *xdrs, void *ctx, uint64_t total)
{
    unsigned char piece[70001];
    (void)ctx;
    for (uint64_t off = 0; off < total;) {
        uint64_t n = total - off < sizeof piece ? total - off : sizeof piece;
        for (uint64_t i = 0; i < n; i++)
            piece[i] = (unsigned char)((off + i) * 7 + 1);
        if (!XDR_PUTBYTES(xdrs, (char *)piece, (u_int)n))
            return FALSE;
        off += n;
    }
    return TRUE;
}

START_TEST(test_produced)
{
    open_pair(_i);
    size_t n = (3u << 20) + 5;
    unsigned char *got = malloc(n);
    crm_chan_job job = {.width = n, .height = 1, .produce = produce_pattern};
    ck_assert(crm_chan_post(&tx, &job));
    crm_rows_writer w;
    crm_rows_writer_init(&w, (char *)got, n, n, 1);
    ck_assert(crm_payload_get(&rx.xdr, n, &w.w, NULL) && crm_chan_end_get(&rx));
    ck_assert(crm_chan_wait(&tx));
    for (size_t i = 0; i < n; i++)
        ck_assert_uint_eq(got[i], (unsigned char)(i * 7 + 1));
    free(got);
    close_pair();
}
END_TEST

/* Writes a raw payload header and then one hand-made frame. */
static void send_bad_frame(int fd, uint32_t type, uint32_t len, uint32_t offset)
{
    uint32_t codec_frame[3] = {htonl(1), htonl(4), 0}; /* INLINE, 4 bytes: the codec */
    uint32_t codec = htonl(CRM_CODEC_RAW);
    uint32_t frame[3] = {htonl(type), htonl(len), htonl(offset)};
    ck_assert(write(fd, codec_frame, sizeof codec_frame) == sizeof codec_frame);
    ck_assert(write(fd, &codec, 4) == 4);
    ck_assert(write(fd, frame, sizeof frame) == sizeof frame);
}

static void expect_refused(uint32_t type, uint32_t len, uint32_t offset, int with_ring)
{
    int sv[2];
    char buf[4096];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    ck_assert_int_eq(crm_chan_init(&rx, sv[1], 1), 0);
    if (with_ring) {
        ring = malloc(RING_BYTES);
        crm_chan_set_ring(&rx, ring, RING_BYTES);
    }
    rx.xdr.x_op = XDR_DECODE;
    send_bad_frame(sv[0], type, len, offset);
    close(sv[0]); /* and nothing more: a truncated payload too */
    crm_rows_writer w;
    crm_rows_writer_init(&w, buf, sizeof buf, sizeof buf, 1);
    ck_assert(!crm_payload_get(&rx.xdr, sizeof buf, &w.w, NULL));
    ck_assert(rx.broken);
    crm_chan_close(&rx);
    free(ring);
    ring = NULL;
}

START_TEST(test_hostile_frames)
{
    expect_refused(2, 64, 0, 0);                      /* a ring frame without a ring */
    expect_refused(2, 64, RING_BYTES, 1);             /* offset past the ring */
    expect_refused(2, RING_BYTES, 64, 1);             /* runs past its end */
    expect_refused(3, 64, 0, 1);                      /* an ack inside a payload */
    expect_refused(9, 64, 0, 1);                      /* no such frame */
    expect_refused(1, 0, 0, 0);                       /* an empty frame */
    expect_refused(1, 4096, 0, 0);                    /* promised bytes never come */
}
END_TEST

/* A sender whose peer went away fails instead of hanging. */
START_TEST(test_peer_gone)
{
    open_pair(_i);
    close(rx.fd);
    rx.fd = -1;
    size_t n = 8u << 20;
    char *src = calloc(1, n);
    crm_chan_job job = {.src = src, .pitch = n, .width = n, .height = 1};
    ck_assert(crm_chan_post(&tx, &job));
    ck_assert(!crm_chan_wait(&tx));
    free(src);
    close_pair();
}
END_TEST

/* A receiver whose peer stops sending midway through a payload fails when the
 * socket's time limit runs out, and says it timed out (the client reports the
 * server stopped answering); a peer that closed instead is not a timeout. */
START_TEST(test_read_timeout)
{
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    ck_assert_int_eq(crm_chan_init(&rx, sv[1], 1), 0);
    struct timeval limit = {.tv_sec = 0, .tv_usec = 100000};
    ck_assert_int_eq(setsockopt(sv[1], SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit), 0);
    rx.xdr.x_op = XDR_DECODE;
    uint32_t hdr[3] = {htonl(1), htonl(4096), 0}; /* an INLINE frame whose bytes never come */
    ck_assert_int_eq(write(sv[0], hdr, sizeof hdr), (ssize_t)sizeof hdr);
    if (_i == 1)
        close(sv[0]);
    char got[4096];
    crm_rows_writer w;
    crm_rows_writer_init(&w, got, sizeof got, sizeof got, 1);
    ck_assert(!crm_payload_get(&rx.xdr, sizeof got, &w.w, NULL));
    ck_assert(rx.broken);
    ck_assert_int_eq(rx.timed_out, _i == 0);
    if (_i == 0)
        close(sv[0]);
    crm_chan_close(&rx);
}
END_TEST

static Suite *chan_suite(void)
{
    Suite *s = suite_create("chan");
    TCase *tc = tcase_create("chan");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_raw_dense, 0, 2);
    tcase_add_loop_test(tc, test_raw_pitched, 0, 2);
    tcase_add_loop_test(tc, test_small_rows, 0, 2);
    tcase_add_loop_test(tc, test_zstd, 0, 2);
    tcase_add_loop_test(tc, test_many_payloads, 0, 2);
    tcase_add_loop_test(tc, test_produced, 0, 2);
    tcase_add_test(tc, test_acks_wait_for_the_payload_end);
    tcase_add_test(tc, test_hostile_frames);
    tcase_add_loop_test(tc, test_peer_gone, 0, 2);
    tcase_add_loop_test(tc, test_read_timeout, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(chan_suite)
