/* ptx_bits.c -- what PTX's bit-field, byte-permute, funnel-shift, find-bit,
 * bit-mask, dot-product, copysign and testp instructions compute, and which lane
 * shfl reads (see ptx_bits.h). */
#include "ptx_bits.h"

#include <math.h>
#include <string.h>

/* prmt.b32 d, a, b, c: byte i of d is byte (c's nibble i & 7) of {b, a} (a the low
 * word), replicated from its sign bit when the nibble's bit 3 is set. */
static uint64_t ptx__prmt(uint32_t a, uint32_t b, uint32_t c)
{
    uint64_t bytes = (uint64_t)b << 32 | a;
    uint32_t d = 0;
    for (int i = 0; i < 4; i++) {
        unsigned sel = (c >> (4 * i)) & 0xf;
        uint32_t byte = (uint32_t)(bytes >> (8 * (sel & 7))) & 0xff;
        if (sel & 8)
            byte = byte & 0x80 ? 0xff : 0;
        d |= byte << (8 * i);
    }
    return d;
}

/* bfe: len bits of a from pos; past the value's top bit, and above len, the field's
 * sign (its top bit, signed types only), as the PTX ISA specifies. */
static uint64_t ptx__bfe(enum ptx_type t, uint64_t a, unsigned pos, unsigned len)
{
    unsigned bits = ptx_type_size(t) * 8, msb = bits - 1;
    unsigned top = pos + len - 1 > msb ? msb : pos + len - 1;
    uint64_t sbit = ptx_type_is_signed(t) && len > 0 ? (a >> top) & 1 : 0, d = 0;
    for (unsigned i = 0; i < bits; i++) {
        uint64_t bit = i < len && pos + i <= msb ? (a >> (pos + i)) & 1 : sbit;
        d |= bit << i;
    }
    return d;
}

/* bfi: b with len bits from pos replaced by a's low bits. */
static uint64_t ptx__bfi(enum ptx_type t, uint64_t a, uint64_t b, unsigned pos, unsigned len)
{
    unsigned bits = ptx_type_size(t) * 8;
    if (pos >= bits || len == 0)
        return b;
    if (len > bits - pos)
        len = bits - pos;
    uint64_t mask = (len >= 64 ? ~0ull : (1ull << len) - 1) << pos;
    uint64_t r = (b & ~mask) | ((a << pos) & mask);
    return bits >= 64 ? r : r & ((1ull << bits) - 1);
}

/* shf.{l,r}.{wrap,clamp}.b32 d, a, b, c: the shifted funnel {b, a}. */
static uint64_t ptx__shf(uint32_t mods, uint32_t a, uint32_t b, uint32_t c)
{
    unsigned n = mods & PTX_M_WRAP ? c & 31 : (c > 32 ? 32 : c);
    uint64_t funnel = (uint64_t)b << 32 | a;
    if (mods & PTX_M_L)
        return (uint32_t)((funnel << n) >> 32);
    return (uint32_t)(funnel >> n);
}

/* bfind: the position of the highest bit that differs from the sign (unsigned: the
 * highest 1), 0xffffffff when none; .shiftamt: the left shift that would make it the
 * top bit. */
static uint64_t ptx__bfind(const ptx_insn *in, uint64_t a)
{
    enum ptx_type t = (enum ptx_type)in->type;
    unsigned bits = ptx_type_size(t) * 8;
    if (bits < 64)
        a &= (1ull << bits) - 1;
    if (ptx_type_is_signed(t) && (a >> (bits - 1)) & 1)
        a = ~a & (bits >= 64 ? ~0ull : (1ull << bits) - 1);
    if (a == 0)
        return 0xffffffffu;
    unsigned pos = 63 - (unsigned)__builtin_clzll(a);
    return in->mods & PTX_M_SHIFTAMT ? bits - 1 - pos : pos;
}

static double ptx__as_double(enum ptx_type t, uint64_t v)
{
    if (t == PTX_T_F64) {
        double d;
        memcpy(&d, &v, sizeof d);
        return d;
    }
    uint32_t u = (uint32_t)v;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static int ptx__testp(enum ptx_testp what, double d)
{
    switch (what) {
    case PTX_TP_FINITE: return isfinite(d);
    case PTX_TP_INFINITE: return isinf(d);
    case PTX_TP_NUMBER: return !isnan(d);
    case PTX_TP_NAN: return isnan(d);
    case PTX_TP_NORMAL: return isnormal(d);
    default: return fpclassify(d) == FP_SUBNORMAL;
    }
}

/* bmsk.{clamp,wrap}.b32 d, a, b: b one-bits from bit a (clamped to 32, or taken
 * modulo 32). */
static uint64_t ptx__bmsk(uint32_t mods, uint32_t a, uint32_t b)
{
    if (mods & PTX_M_WRAP) {
        a &= 31;
        b &= 31;
    }
    uint64_t ones = b >= 32 ? 0xffffffffull : (1ull << b) - 1;
    return a >= 32 ? 0 : (uint32_t)(ones << a);
}

/* Byte or half-word k of v, sign-extended when is_signed. */
static int64_t ptx__part(uint32_t v, unsigned k, unsigned bits, int is_signed)
{
    uint32_t x = (v >> (k * bits)) & ((1u << bits) - 1);
    return is_signed && (x >> (bits - 1)) ? (int64_t)x - (1ll << bits) : (int64_t)x;
}

/* dp4a.atype.btype d, a, b, c: c plus the dot product of a's and b's four bytes;
 * dp2a.{lo,hi}.atype.btype: of a's two half-words and b's low or high two bytes. */
static uint64_t ptx__dot(const ptx_insn *in, uint32_t a, uint32_t b, uint32_t c)
{
    int sa = ptx_type_is_signed((enum ptx_type)in->type), sb = ptx_type_is_signed((enum ptx_type)in->type2);
    int64_t acc = 0;
    if (in->op == PTX_OP_DP4A) {
        for (unsigned k = 0; k < 4; k++)
            acc += ptx__part(a, k, 8, sa) * ptx__part(b, k, 8, sb);
    } else {
        unsigned first = in->mods & PTX_M_HI ? 2 : 0;
        for (unsigned k = 0; k < 2; k++)
            acc += ptx__part(a, k, 16, sa) * ptx__part(b, first + k, 8, sb);
    }
    return (uint32_t)((uint32_t)acc + c);
}

int ptx_bits(const ptx_insn *in, const uint64_t *s, uint64_t *out)
{
    enum ptx_type t = (enum ptx_type)in->type;
    switch (in->op) {
    case PTX_OP_PRMT:
        if (in->mods != 0 || in->sub != 0) /* the .f4e, .b4e, .rc8 ... modes */
            return -1;
        *out = ptx__prmt((uint32_t)s[0], (uint32_t)s[1], (uint32_t)s[2]);
        return 0;
    case PTX_OP_BFE: *out = ptx__bfe(t, s[0], (uint8_t)s[1], (uint8_t)s[2]); return 0;
    case PTX_OP_BFI: *out = ptx__bfi(t, s[0], s[1], (uint8_t)s[2], (uint8_t)s[3]); return 0;
    case PTX_OP_SHF: *out = ptx__shf(in->mods, (uint32_t)s[0], (uint32_t)s[1], (uint32_t)s[2]); return 0;
    case PTX_OP_BFIND: *out = ptx__bfind(in, s[0]); return 0;
    case PTX_OP_COPYSIGN: { /* copysign.type d, a, b: b with a's sign */
        uint64_t sign = t == PTX_T_F64 ? 1ull << 63 : 1ull << 31;
        *out = (s[1] & ~sign) | (s[0] & sign);
        if (t != PTX_T_F64)
            *out &= 0xffffffffu;
        return t == PTX_T_F32 || t == PTX_T_F64 ? 0 : -1;
    }
    case PTX_OP_BMSK: *out = ptx__bmsk(in->mods, (uint32_t)s[0], (uint32_t)s[1]); return t == PTX_T_B32 ? 0 : -1;
    case PTX_OP_DP4A:
    case PTX_OP_DP2A: *out = ptx__dot(in, (uint32_t)s[0], (uint32_t)s[1], (uint32_t)s[2]); return 0;
    case PTX_OP_TESTP:
        *out = (uint64_t)ptx__testp((enum ptx_testp)in->sub, ptx__as_double(t, s[0]));
        return t == PTX_T_F32 || t == PTX_T_F64 ? 0 : -1;
    default:
        return -1;
    }
}

unsigned ptx_shfl_source(int mode, unsigned lane, uint32_t b, uint32_t c, unsigned width, int *ok)
{
    uint32_t clamp = c & 0x1f, seg = (c >> 8) & 0x1f, lo = lane & seg, hi = lo | (clamp & ~seg);
    int32_t j;
    switch (mode) {
    case PTX_SH_UP: j = (int32_t)lane - (int32_t)b; *ok = j >= (int32_t)lo; break;
    case PTX_SH_DOWN: j = (int32_t)(lane + b); *ok = j <= (int32_t)hi; break;
    case PTX_SH_BFLY: j = (int32_t)(lane ^ b); *ok = j <= (int32_t)hi; break;
    default: j = (int32_t)(lo | (b & ~seg)); *ok = j <= (int32_t)hi; break;
    }
    return !*ok || j < 0 || j >= (int32_t)width ? lane : (unsigned)j;
}
