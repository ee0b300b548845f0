/* ptx_fast.h -- the PTX engine's fast path: the instructions kernels execute most
 * (integer and f32/f64 arithmetic, setp, selp, mov, integer cvt, scalar ld/st of
 * global and shared memory) with register and immediate operands get a
 * specialised handler at preparation, which runs a whole warp's lanes in one
 * tight loop over their register frames; the rest of arithmetic, conversion and
 * bit instructions read their operands the same way and compute with the general
 * path's functions. Everything else, and every access that would fault, takes the
 * general path (ptx_exec.c). Internal to server/emu/ptx/. */
#ifndef PTX_FAST_H
#define PTX_FAST_H

#include "ptx_block.h"

enum ptx_fast_kind {
    PTX_F_NONE,
    PTX_F_MOV, PTX_F_MOV_SREG, PTX_F_LD_PARAM, PTX_F_CVT_INT, PTX_F_SELP,
    PTX_F_ADD, PTX_F_SUB, PTX_F_MUL_LO, PTX_F_MAD_LO, PTX_F_AND, PTX_F_OR, PTX_F_XOR, PTX_F_NOT,
    PTX_F_SHL, PTX_F_SHR_U, PTX_F_SHR_S,
    PTX_F_MUL_WIDE_U, PTX_F_MUL_WIDE_S, PTX_F_MAD_WIDE_U, PTX_F_MAD_WIDE_S,
    PTX_F_MIN_S, PTX_F_MAX_S, PTX_F_MIN_U, PTX_F_MAX_U,
    PTX_F_ADD_F32, PTX_F_SUB_F32, PTX_F_MUL_F32, PTX_F_FMA_F32,
    PTX_F_ADD_F64, PTX_F_SUB_F64, PTX_F_MUL_F64, PTX_F_FMA_F64,
    PTX_F_SETP_S, PTX_F_SETP_U, PTX_F_SETP_F32, PTX_F_SETP_F64,
    PTX_F_LD_GLOBAL, PTX_F_ST_GLOBAL, PTX_F_LD_SHARED, PTX_F_ST_SHARED, PTX_F_SHFL,
    /* the rest of arithmetic, cvt and the bit instructions: the general path's own
     * functions (ptx_alu.c, ptx_bits.c) called per lane, operands read directly */
    PTX_F_ALU, PTX_F_CVT, PTX_F_BITS,
};

/* Prepares the module for the fast path: each function's register masks and each
 * instruction's handler. 0, or -1 when out of memory. */
int ptx_fast_prepare(ptx_module *m);

/* Runs `in` (in->fast != 0) for the n threads lanes[] whose register frames are rp[]: 0 when
 * done, 1 when the general path must run it instead (an access it does not check
 * itself); the lanes' program counters are the caller's. */
int ptx_fast_exec(ptx_block *b, const ptx_insn *in, const unsigned *lanes, uint64_t *const *rp, unsigned n);

#endif
