/* crm_payload.h -- the bytes of a bulk payload on the wire: raw, or zstd-compressed
 * in independent chunks (a chunk that does not compress travels raw).
 *
 * Wire: u32 codec, then for CRM_CODEC_RAW the packed bytes padded to 4; for
 * CRM_CODEC_ZSTD a sequence of chunks {u32 kind, u32 raw_len, u32 stored_len,
 * stored bytes padded to 4} whose raw lengths add up to the payload size; for
 * CRM_CODEC_STREAM nothing more: the payload itself (raw or zstd) travels on the
 * session's data channel (protocol/crm_chan.h), sent after the message. Readers
 * hand bytes to a writer that says where they go, so raw data lands in its
 * destination with no intermediate copy and chunks decompress straight into it. */
#ifndef CRM_PAYLOAD_H
#define CRM_PAYLOAD_H

#include <stdint.h>
#include <rpc/rpc.h>

#define CRM_CODEC_RAW  0u
#define CRM_CODEC_ZSTD 1u
#define CRM_CODEC_STREAM 3u              /* the payload is on the data channel */
#define CRM_LEVEL_CHANNEL 0x100          /* flag of a level: send through the data channel */
#define CRM_LEVEL_PROBE 0x200            /* flag of a level: compress only the first chunks */
#define CRM_LEVEL_LIVE 0x400             /* flag of a level: on a data channel socket, compress the
                                            chunks the live choice picks (protocol/crm_zlive.h) */
#define CRM_LEVEL_MASK 0xff              /* the zstd level in a level */
#define CRM_PROBE_CHUNKS 8               /* chunks a probing payload tries to compress */
#define CRM_PAYLOAD_CHUNK (1u << 20)   /* packed bytes per compressed chunk */
#define CRM_ZSTD_MAX_LEVEL 19

/* Bytes before and after encoding, and time spent compressing. */
typedef struct crm_payload_stats {
    uint64_t raw_bytes;
    uint64_t wire_bytes;
    uint64_t compress_ns;
    uint64_t tried_raw;      /* bytes of the chunks compression was tried on (encoder) */
    uint64_t tried_wire;     /* and what they became; decoders count compressed chunks */
} crm_payload_stats;

/* Where decoded bytes go, in payload order. */
typedef struct crm_payload_writer crm_payload_writer;
struct crm_payload_writer {
    /* Returns where the next bytes go and how many fit there (> 0). */
    char *(*space)(crm_payload_writer *w, uint64_t *avail);
    /* Says len bytes were written at the last space; FALSE aborts decoding. */
    bool_t (*commit)(crm_payload_writer *w, uint64_t len);
};

/* Writer into height rows of width bytes, pitch apart, at base. */
typedef struct crm_rows_writer {
    crm_payload_writer w;
    char *base;
    uint64_t pitch, width, height;
    uint64_t offset;               /* packed bytes written so far */
} crm_rows_writer;

void crm_rows_writer_init(crm_rows_writer *rw, char *base, uint64_t pitch, uint64_t width, uint64_t height);

/* Writes rows (height rows of width bytes, pitch apart) from src. level 0 sends
 * them raw; level > 0 compresses chunks with zstd at that level, sampling each
 * chunk first and sending raw what does not compress; with CRM_LEVEL_LIVE, when
 * xdrs is a data channel's socket, only the chunks the live choice picks. With CRM_LEVEL_CHANNEL in
 * level and a data channel open, only the codec goes into xdrs and the payload is
 * posted to the channel (crm_chan_post): src must stay valid until it is sent.
 * st may be NULL. */
bool_t crm_payload_put(XDR *xdrs, const char *src, uint64_t pitch, uint64_t width, uint64_t height, int level,
                       crm_payload_stats *st);
/* Writes a raw payload of `total` bytes that produce writes as it makes them (the
 * GPU server's pipelined device-to-host copies). With CRM_LEVEL_CHANNEL in level
 * and a data channel open, it is posted to the channel like crm_payload_put's. */
bool_t crm_payload_put_produced(XDR *xdrs, uint64_t total, bool_t (*produce)(XDR *, void *, uint64_t), void *ctx,
                                int level, crm_payload_stats *st);
/* Reads a payload of `total` bytes into w. Lengths from the wire are checked;
 * FALSE on malformed or truncated input. st may be NULL. */
bool_t crm_payload_get(XDR *xdrs, uint64_t total, crm_payload_writer *w, crm_payload_stats *st);
/* Reads and drops a payload of `total` bytes. */
bool_t crm_payload_skip(XDR *xdrs, uint64_t total);

#endif
