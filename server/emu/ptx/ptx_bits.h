/* ptx_bits.h -- PTX's bit-field and byte instructions and float tests: prmt, bfe,
 * bfi, shf, bfind, bmsk, dp4a/dp2a, copysign and testp, on values held as 64-bit
 * patterns, and shfl's lane arithmetic. Pure functions; internal to server/emu/ptx/. */
#ifndef PTX_BITS_H
#define PTX_BITS_H

#include <stdint.h>
#include "ptx_ir.h"

/* The result of in (one of the ops above) on its sources src[0..3]; 0, or -1 when
 * the engine does not compute it (a prmt mode other than the default, a type). */
int ptx_bits(const ptx_insn *in, const uint64_t *src, uint64_t *out);

/* shfl.sync's source lane for `lane` in mode (enum ptx_shfl) with operands b and c
 * (c: the clamp in bits 0-4, the segment mask in bits 8-12), in a warp of width
 * lanes; *ok says whether it lies in range (else the lane reads its own value). */
unsigned ptx_shfl_source(int mode, unsigned lane, uint32_t b, uint32_t c, unsigned width, int *ok);

#endif
