/* crm_bulk.h -- bulk payload types of the wire format and their hand-written XDR.
 *
 * A bulk payload is a header followed by the raw bytes, padded to 4 as XDR opaque
 * data is. The bytes may be a pitched 2D region: rows of `width` bytes, `pitch`
 * apart at the source or destination, packed densely on the wire. Encoders read
 * straight from the caller's memory; decoders write straight into a destination
 * chosen before decoding (client) or by a sink (server), so no intermediate copy
 * is needed on either side.
 */
#ifndef CRM_BULK_H
#define CRM_BULK_H

#include <stdint.h>
#include <rpc/rpc.h>
#include "protocol/crm_payload.h"

/* Host-to-device copy: the arguments of crm_memcpy_h2d. */
typedef struct crm_h2d_args {
    /* on the wire */
    uint64_t dst;          /* device address of the first row */
    uint64_t dpitch;       /* distance between destination rows */
    uint64_t width;        /* bytes per row */
    uint64_t height;       /* rows; the payload is width * height bytes */
    uint64_t stream;       /* stream id, 0 = legacy default stream */
    int32_t async;         /* 1 for cudaMemcpy*Async */
    /* encode side only */
    const char *src;       /* first source row in client memory */
    uint64_t spitch;       /* distance between source rows */
    int level;             /* 0: raw payload; > 0: zstd level */
    /* decode side only */
    int status;            /* cudaError_t the sink gave, 0 without a sink */
    char *data;            /* packed payload when no sink is installed (owned) */
} crm_h2d_args;

/* Device-to-host copy: the payload of crm_memcpy_d2h's reply. */
typedef struct crm_d2h_res {
    /* on the wire */
    uint64_t len;          /* payload bytes, 0 when the copy failed */
    /* encode side only */
    const char *src;       /* packed payload to send */
    char *owned;           /* buffer to free once sent (may equal src), or NULL */
    int level;             /* 0: raw payload; > 0: zstd level; | CRM_LEVEL_CHANNEL */
    bool_t (*produce)(XDR *, void *, uint64_t); /* non-NULL: writes the raw bytes instead of src */
    void *produce_ctx;
    /* decode side: preset by the caller before decoding */
    char *dst;             /* first destination row, NULL: allocate into owned */
    uint64_t dpitch;       /* distance between destination rows */
    uint64_t width;        /* bytes per row; len must be width * rows */
    uint64_t height;       /* rows expected */
} crm_d2h_res;

/* Server hook: consumes the payload of `args` from `xdrs` (crm_payload_get into
 * its destination, or crm_payload_skip) and nothing else, and sets args->status.
 * Must consume the payload even when the destination is invalid. FALSE = stream
 * broken. */
typedef bool_t (*crm_h2d_sink_fn)(XDR *xdrs, crm_h2d_args *args);
extern crm_h2d_sink_fn crm_h2d_sink;

/* Bytes encoded and decoded by this process's bulk XDR (raw and on the wire), and
 * compression time; callers serialise their use (the client under its connection
 * lock, a session process is single-threaded). */
extern crm_payload_stats crm_bulk_sent, crm_bulk_received;

/* Largest single bulk payload accepted from the wire. */
#define CRM_BULK_MAX (1ull << 40)

bool_t xdr_crm_h2d_args(XDR *xdrs, crm_h2d_args *args);
bool_t xdr_crm_d2h_res(XDR *xdrs, crm_d2h_res *res);

/* Reads `height` rows of `width` bytes into dst, rows `pitch` apart. */
bool_t crm_bulk_get_rows(XDR *xdrs, char *dst, uint64_t pitch, uint64_t width, uint64_t height);
/* Writes `height` rows of `width` bytes from src, rows `pitch` apart. */
bool_t crm_bulk_put_rows(XDR *xdrs, const char *src, uint64_t pitch, uint64_t width, uint64_t height);
/* Reads and drops n payload bytes. */
bool_t crm_bulk_skip(XDR *xdrs, uint64_t n);
/* Multiplies width by height, FALSE when the product overflows or exceeds CRM_BULK_MAX. */
bool_t crm_bulk_size(uint64_t width, uint64_t height, uint64_t *bytes);

#endif
