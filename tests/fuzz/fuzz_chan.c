/* fuzz_chan.c -- libFuzzer harness over the data channel's receiving side: the
 * frames (INLINE, RING, their lengths and ring offsets) and the payload codec
 * read through them (raw, zstd chunks), as a session decodes a host-to-device
 * payload announced on its RPC stream (codec STREAM, protocol/crm_payload.h).
 *
 * Input: u32 payload size (little-endian, below 4 MiB), u32 flags (bit 0: the
 * channel has a 256 KiB ring, as between processes of one machine), then the bytes
 * that arrive on the channel's socket. A thread writes them and reads whatever the
 * receiver answers (ring acknowledgements).
 *
 * `fuzz_chan -write_seeds=DIR` writes seeds made by the client's own encoder
 * (crm_payload_put through a channel): raw and zstd payloads of a few sizes. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "tests/fuzz/fuzz_feed.h"
#include "protocol/crm_chan.h"
#include "protocol/crm_payload.h"

#define RING_BYTES (256u << 10)
#define MAX_PAYLOAD (4u << 20)

/* Decodes one payload of total bytes announced as on the channel. */
static void receive(crm_chan *c, uint64_t total)
{
    char codec[4] = {0, 0, 0, CRM_CODEC_STREAM};
    XDR announce;
    crm_rows_writer rw;
    char *dst = malloc(total ? total : 1);
    if (dst == NULL)
        return;
    xdrmem_create(&announce, codec, sizeof codec, XDR_DECODE);
    crm_rows_writer_init(&rw, dst, total, total, 1);
    crm_chan_current = c;
    (void)crm_payload_get(&announce, total, &rw.w, NULL);
    crm_chan_current = NULL;
    free(dst);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint32_t head[2];
    int sv[2];
    pthread_t t;
    static char ring[RING_BYTES];
    if (size < sizeof head || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return 0;
    memcpy(head, data, sizeof head);
    crm_chan c;
    if (crm_chan_init(&c, sv[1], 1) != 0) {
        close(sv[0]);
        close(sv[1]);
        return 0;
    }
    if (head[1] & 1)
        crm_chan_set_ring(&c, ring, sizeof ring);
    feeder f = {sv[0], data + sizeof head, size - sizeof head};
    if (pthread_create(&t, NULL, feed, &f) == 0) {
        receive(&c, head[0] % MAX_PAYLOAD);
        crm_chan_close(&c); /* closes sv[1]: the feeder sees the end */
        pthread_join(t, NULL);
    } else {
        crm_chan_close(&c);
    }
    close(sv[0]);
    return 0;
}

/* ---- seeds ------------------------------------------------------------------------ */

typedef struct sink {
    int fd;
    char *buf;
    size_t len, cap;
} sink;

static void *collect(void *arg)
{
    sink *s = arg;
    for (;;) {
        if (s->len == s->cap && (s->buf = realloc(s->buf, s->cap = s->cap * 2 + 65536)) == NULL)
            return NULL;
        ssize_t n = recv(s->fd, s->buf + s->len, s->cap - s->len, 0);
        if (n <= 0)
            return NULL;
        s->len += (size_t)n;
    }
}

/* One seed: the channel bytes of a payload of `total` bytes (pattern `kind`) put at
 * `level` by the client's encoder, behind the harness's header. */
static void write_seed(const char *dir, uint32_t total, int kind, int level)
{
    int sv[2];
    pthread_t t;
    crm_chan c;
    sink s = {0};
    char *src = malloc(total), path[512], ann[64];
    XDR x;
    for (uint32_t i = 0; src && i < total; i++)
        src[i] = (char)(kind == 0 ? (i * 2654435761u) >> 13 : kind == 1 ? i / 4096 : 0);
    if (src == NULL || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0 || crm_chan_init(&c, sv[0], 1) != 0)
        exit(1);
    s.fd = sv[1];
    pthread_create(&t, NULL, collect, &s);
    xdrmem_create(&x, ann, sizeof ann, XDR_ENCODE);
    crm_chan_current = &c;
    if (!crm_payload_put(&x, src, total, total, 1, level | CRM_LEVEL_CHANNEL, NULL) || !crm_chan_run(&c))
        exit(1);
    crm_chan_close(&c);
    pthread_join(t, NULL);
    snprintf(path, sizeof path, "%s/payload-%u-%s-%d.bin", dir, total, kind == 0 ? "noise" : "blocks", level);
    FILE *out = fopen(path, "wb");
    uint32_t head[2] = {total, 0};
    if (out == NULL || fwrite(head, sizeof head, 1, out) != 1 || fwrite(s.buf, 1, s.len, out) != s.len)
        exit(1);
    fclose(out);
    close(sv[1]);
    free(s.buf);
    free(src);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    for (int i = 1; i < *argc; i++)
        if (strncmp((*argv)[i], "-write_seeds=", 13) == 0) {
            const char *dir = (*argv)[i] + 13;
            write_seed(dir, 40000, 0, 0);
            write_seed(dir, 100000, 0, 0);
            write_seed(dir, 1u << 20, 1, 3);
            write_seed(dir, 3u << 20, 1, 1);
            exit(0);
        }
    return 0;
}
