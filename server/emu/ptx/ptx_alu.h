/* ptx_alu.h -- what PTX's arithmetic, logic, comparison and conversion
 * instructions compute, on values held as 64-bit patterns (an f32 in the low 32
 * bits, a predicate as 0 or 1). Pure functions; internal to server/emu/ptx/. */
#ifndef PTX_ALU_H
#define PTX_ALU_H

#include <stdint.h>
#include <string.h>
#include "ptx_ir.h"

/* An f32 held in the low 32 bits, or an f64 in all 64, and back. */
static inline float ptx_as_f32(uint64_t v)
{
    uint32_t u = (uint32_t)v;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline uint64_t ptx_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline double ptx_as_f64(uint64_t v)
{
    double d;
    memcpy(&d, &v, sizeof d);
    return d;
}

static inline uint64_t ptx_f64_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

/* setp's comparisons: cmp (enum ptx_cmp) of integers, and sub (a cmp with
 * PTX_C_UNORDERED) of floats, NaN giving the unordered answer. */
int ptx_cmp_int(int cmp, int64_t x, int64_t y, int is_signed);
int ptx_cmp_float(int sub, double x, double y);

/* The result of a one-, two- or three-source instruction (in->op and its type and
 * modifiers; c is the third source of mad/fma). 0, or -1 when the engine does not
 * compute this op for this type. */
int ptx_alu(const ptx_insn *in, uint64_t a, uint64_t b, uint64_t c, uint64_t *out);
/* setp's comparison of a and b. */
int ptx_compare(const ptx_insn *in, uint64_t a, uint64_t b);
/* cvt from in->type2 to in->type with its rounding and saturation; -1 when unsupported. */
int ptx_convert(const ptx_insn *in, uint64_t v, uint64_t *out);
/* An immediate written as a decimal float, as the bits of type t. */
uint64_t ptx_float_bits(double v, enum ptx_type t);
/* atom/red: the new value stored for operation op on old with operands b (and c
 * for cas); -1 when unsupported for the type. */
int ptx_atomic(enum ptx_aop op, enum ptx_type t, uint64_t old, uint64_t b, uint64_t c, uint64_t *out);
/* A value of type t sign- or zero-extended (or left as float bits) to 64 bits. */
uint64_t ptx_extend(enum ptx_type t, uint64_t v);

#endif
