/* crm_codec.h -- the client's choice of compression for bulk transfers
 * (CUDAREM_COMPRESS=auto|off|on|LEVEL). A transfer on the data channel's socket
 * is left to the sender's live choice (protocol/crm_zlive.h), made chunk by chunk
 * from the transfer's own figures. For the others, auto mode learns the link's speed
 * from transfers sent raw, and the compressor's speed and gain from the chunks it
 * tried to compress (a probe tries only a transfer's first few chunks), and
 * compresses when the compressor outruns the link: the data
 * channel sends one chunk while the next is compressed, so the slower of the two
 * sets the pace. The encoder additionally sends raw each chunk whose sample does
 * not compress. */
#ifndef CRM_CODEC_H
#define CRM_CODEC_H

#include <stdint.h>
#include "protocol/crm_payload.h"

#define CRM_CODEC_MIN_BYTES (256u << 10) /* smaller transfers are never compressed in auto mode */

/* What auto mode knows; 0 = not measured yet. */
typedef struct crm_codec_model {
    double link_bps;     /* payload bytes/s on the wire, from raw transfers */
    double comp_bps;     /* compressor input bytes/s */
    double ratio;        /* wire bytes / raw bytes when compressed */
    unsigned since_probe;/* transfers since the other choice was last tried */
} crm_codec_model;

/* Compression level for a transfer of `bytes` (0 = raw), with CRM_LEVEL_PROBE
 * when only its first chunks should be tried; same_machine: the bytes go through
 * the shared-memory ring, where auto mode never compresses; live: they go through
 * a data channel's socket, where auto mode leaves the choice to the sender, chunk
 * by chunk (CRM_LEVEL_LIVE, protocol/crm_zlive.h). */
int crm_codec_choose(uint64_t bytes, int same_machine, int live);
/* Learns from one message: bulk bytes before/after encoding in either direction,
 * time spent compressing here, and the message's elapsed time. */
void crm_codec_observe(const crm_payload_stats *moved, uint64_t elapsed_ns);

/* Pure parts, for tests. Level for a transfer given the mode (-1 auto, 0 off,
 * > 0 level) and the model; a decision to try the other choice now and then, so
 * that a change of link or data is noticed, updates m->since_probe. */
int crm_codec_decide(int mode, uint64_t bytes, crm_codec_model *m);
/* Updates the model from one message. */
void crm_codec_learn(crm_codec_model *m, const crm_payload_stats *moved, uint64_t elapsed_ns);

#endif
