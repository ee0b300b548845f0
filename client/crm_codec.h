/* crm_codec.h -- the client's choice of compression for bulk transfers
 * (CUDAREM_COMPRESS=auto|off|on|LEVEL). In auto mode it estimates the link's speed
 * and the compressor's speed and gain from the transfers it sees, and compresses
 * only when that moves the bytes sooner; the encoder additionally sends raw each
 * chunk whose sample does not compress. */
#ifndef CRM_CODEC_H
#define CRM_CODEC_H

#include <stdint.h>
#include "protocol/crm_payload.h"

/* Compression level for a transfer of `bytes` (0 = raw). */
int crm_codec_choose(uint64_t bytes);
/* Learns from one message: bulk bytes before/after encoding in either direction,
 * time spent compressing here, and the message's elapsed time. */
void crm_codec_observe(const crm_payload_stats *moved, uint64_t elapsed_ns);

/* Pure decision for tests: level to use given the mode (-1 auto, 0 off, > 0 level),
 * the link speed, compressor speed (bytes/s, 0 = unknown) and gain (wire/raw). */
int crm_codec_decide(int mode, uint64_t bytes, double link_bps, double comp_bps, double ratio);

#endif
