/* crm_zshape.h -- which of two zstd parameter sets a payload's chunks are
 * compressed with, chosen from samples the encoder compresses anyway.
 *
 * zstd's fast levels look for short matches. On data whose bytes carry little
 * entropy but repeat little (a few-letter alphabet, quantised values), those short
 * matches cost more bits than the bytes' own Huffman code: level 1 stops near 3.2x
 * on random bytes of a 4-letter alphabet, where literals alone reach almost 4x.
 * The LEAN set (fast strategy, 7-byte matches only, a 64-entry hash table) leaves
 * such data to the literals' code, and runs at least as fast; on data with real
 * repeats (text, records) it loses ratio, so it is used only where it wins.
 *
 * The choice: the first chunk, every CRM_ZSHAPE_CHECK-th, the first of each
 * payload of several chunks (a new tensor is the likeliest change of data, and
 * one whose sample shrinks about as much as the last one's with the set in use
 * would pass unnoticed: sentences with LEAN and 4-letter data do), and any chunk
 * whose sample shrank more than CRM_ZSHAPE_SHIFT differently from the last
 * check's (the data changed) have their sample compressed the other way too.
 * LEAN is used from then on when its sample came out at least CRM_ZSHAPE_MARGIN
 * smaller, the level's own set when LEAN's is no smaller, and between the two the
 * set in use stays. Pure; the encoder (protocol/crm_payload.c) applies the sets
 * and keeps one state per thread. */
#ifndef CRM_ZSHAPE_H
#define CRM_ZSHAPE_H

#include <stdint.h>

#define CRM_ZSHAPE_CHECK 16              /* compressed chunks between two checks */
#define CRM_ZSHAPE_MARGIN 0.03           /* LEAN must shrink a sample this much more */
#define CRM_ZSHAPE_SHIFT 0.05            /* stored/raw this far from the last check's: check */

/* The parameter sets. */
enum { CRM_ZSHAPE_LEVEL = 0 /* the zstd level's own */, CRM_ZSHAPE_LEAN = 1 };

/* Zero-initialised: the level's set, and the first compressed chunk is a check. */
typedef struct crm_zshape {
    int set;                 /* the set in use */
    unsigned until_check;    /* compressed chunks before the next check */
    double ratio;            /* stored/raw of the last check's sample with the set chosen */
} crm_zshape;

/* A chunk's sample came to `stored` of `raw` bytes with the set in use: 1 when it
 * is to be compressed the other way too (then crm_zshape_checked follows). */
int crm_zshape_due(crm_zshape *z, uint64_t raw, uint64_t stored);
/* A payload of several chunks begins: its first compressed chunk is a check. */
void crm_zshape_payload(crm_zshape *z);
/* The sizes a sample of raw bytes came to with each set. */
void crm_zshape_checked(crm_zshape *z, uint64_t raw, uint64_t level_bytes, uint64_t lean_bytes);

#endif
