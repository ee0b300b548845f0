/* ptx_alu.c -- the values PTX instructions compute (see ptx_alu.h): integer
 * arithmetic wraps at the type's width, with .lo/.hi/.wide products; division by
 * zero gives a value (all ones, or the dividend for rem) instead of trapping, as a
 * GPU does; floats follow IEEE round-to-nearest (the .rz/.rm/.rp forms of add, mul
 * and fma are computed to nearest as well), min/max return the number when one
 * operand is NaN, and .sat clamps to [0, 1]. */
#include "ptx_alu.h"

#include <math.h>
#include <string.h>

static uint64_t ptx__mask(unsigned bytes)
{
    return bytes >= 8 ? ~0ull : (1ull << (bytes * 8)) - 1;
}

uint64_t ptx_extend(enum ptx_type t, uint64_t v)
{
    unsigned n = ptx_type_size(t);
    if (n == 0 || n >= 8)
        return v;
    v &= ptx__mask(n);
    if (ptx_type_is_signed(t) && (v >> (n * 8 - 1)) & 1)
        v |= ~ptx__mask(n);
    return v;
}

/* IEEE half and bfloat16 <-> float. */
static float ptx__half(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu, bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (mant << 13);
    } else if (exp == 0) {
        if (mant == 0) {
            bits = sign;
        } else {
            int e = -1;
            do {
                mant <<= 1;
                e++;
            } while (!(mant & 0x400u));
            bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
        }
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
    return ptx_as_f32(bits);
}

static uint16_t ptx__to_half(float f)
{
    uint32_t x = (uint32_t)ptx_f32_bits(f), sign = (x >> 16) & 0x8000u;
    int32_t exp = (int32_t)((x >> 23) & 0xffu) - 127 + 15;
    uint32_t mant = x & 0x7fffffu;
    if (((x >> 23) & 0xffu) == 0xffu)
        return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0));
    if (exp >= 31)
        return (uint16_t)(sign | 0x7c00u);
    if (exp <= 0) {
        if (exp < -10)
            return (uint16_t)sign;
        mant |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - exp), half = mant >> shift, rest = mant & ((1u << shift) - 1);
        uint32_t mid = 1u << (shift - 1);
        half += rest > mid || (rest == mid && (half & 1));
        return (uint16_t)(sign | half);
    }
    uint32_t half = ((uint32_t)exp << 10) | (mant >> 13), rest = mant & 0x1fffu;
    half += rest > 0x1000u || (rest == 0x1000u && (half & 1));
    return (uint16_t)(sign | half);
}

static float ptx__bf16(uint16_t b)
{
    return ptx_as_f32((uint64_t)b << 16);
}

static uint16_t ptx__to_bf16(float f)
{
    uint32_t x = (uint32_t)ptx_f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40u);
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1)) >> 16);
}

/* A float of type t as a double, and back (f16 and bf16 through float). */
static double ptx__fget(enum ptx_type t, uint64_t v)
{
    switch (t) {
    case PTX_T_F64: return ptx_as_f64(v);
    case PTX_T_F16: return ptx__half((uint16_t)v);
    case PTX_T_BF16: return ptx__bf16((uint16_t)v);
    default: return ptx_as_f32(v);
    }
}

static uint64_t ptx__fput(enum ptx_type t, double d)
{
    switch (t) {
    case PTX_T_F64: return ptx_f64_bits(d);
    case PTX_T_F16: return ptx__to_half((float)d);
    case PTX_T_BF16: return ptx__to_bf16((float)d);
    default: return ptx_f32_bits((float)d);
    }
}

uint64_t ptx_float_bits(double v, enum ptx_type t)
{
    return ptx_type_is_float(t) ? ptx__fput(t, v) : (uint64_t)(int64_t)v;
}

static double ptx__fminmax(double a, double b, int max)
{
    if (isnan(a))
        return b;
    if (isnan(b))
        return a;
    return max ? (a > b ? a : b) : (a < b ? a : b);
}

/* Float arithmetic in double (exact for f32's add, sub, mul and fma before the final
 * rounding to float, and for f64 itself). */
static int ptx__float_op(const ptx_insn *in, double a, double b, double c, double *r)
{
    int f32 = in->type != PTX_T_F64;
    switch (in->op) {
    case PTX_OP_ADD: *r = a + b; break;
    case PTX_OP_SUB: *r = a - b; break;
    case PTX_OP_MUL: *r = a * b; break;
    case PTX_OP_MAD:
    case PTX_OP_FMA: *r = f32 ? (double)fmaf((float)a, (float)b, (float)c) : fma(a, b, c); break;
    case PTX_OP_DIV: *r = f32 ? (double)((float)a / (float)b) : a / b; break;
    case PTX_OP_MIN: *r = ptx__fminmax(a, b, 0); break;
    case PTX_OP_MAX: *r = ptx__fminmax(a, b, 1); break;
    case PTX_OP_NEG: *r = -a; break;
    case PTX_OP_ABS: *r = fabs(a); break;
    case PTX_OP_RCP: *r = f32 ? (double)(1.0f / (float)a) : 1.0 / a; break;
    case PTX_OP_SQRT: *r = f32 ? (double)sqrtf((float)a) : sqrt(a); break;
    case PTX_OP_RSQRT: *r = f32 ? (double)(1.0f / sqrtf((float)a)) : 1.0 / sqrt(a); break;
    case PTX_OP_EX2: *r = f32 ? (double)exp2f((float)a) : exp2(a); break;
    case PTX_OP_LG2: *r = f32 ? (double)log2f((float)a) : log2(a); break;
    case PTX_OP_SIN: *r = f32 ? (double)sinf((float)a) : sin(a); break;
    case PTX_OP_COS: *r = f32 ? (double)cosf((float)a) : cos(a); break;
    default: return -1;
    }
    if (in->mods & PTX_M_SAT)
        *r = isnan(*r) ? 0.0 : *r < 0.0 ? 0.0 : *r > 1.0 ? 1.0 : *r;
    return 0;
}

/* The high half of a full product of two n-byte values. */
static uint64_t ptx__mulhi(uint64_t a, uint64_t b, unsigned n, int is_signed)
{
    if (n < 8) {
        uint64_t p = is_signed ? (uint64_t)((int64_t)a * (int64_t)b) : a * b;
        return is_signed ? (uint64_t)((int64_t)p >> (n * 8)) : p >> (n * 8);
    }
    if (is_signed)
        return (uint64_t)(((__int128)(int64_t)a * (__int128)(int64_t)b) >> 64);
    return (uint64_t)(((unsigned __int128)a * (unsigned __int128)b) >> 64);
}

static uint64_t ptx__product(const ptx_insn *in, uint64_t a, uint64_t b, unsigned n, int s)
{
    if (in->mods & PTX_M_HI)
        return ptx__mulhi(a, b, n, s);
    return a * b; /* .lo and .wide: the low bits, the operands already extended */
}

static int ptx__divrem(const ptx_insn *in, uint64_t a, uint64_t b, unsigned n, int s, uint64_t *r)
{
    int rem = in->op == PTX_OP_REM;
    if (b == 0) {
        *r = rem ? a : ~0ull;
    } else if (s) {
        int64_t x = (int64_t)a, y = (int64_t)b;
        int64_t min = n >= 8 ? INT64_MIN : -(int64_t)(1ull << (n * 8 - 1));
        if (x == min && y == -1)
            *r = rem ? 0 : (uint64_t)x;
        else
            *r = rem ? (uint64_t)(x % y) : (uint64_t)(x / y);
    } else {
        *r = rem ? a % b : a / b;
    }
    return 0;
}

static uint64_t ptx__shift(const ptx_insn *in, uint64_t a, uint64_t b, unsigned n, int s)
{
    unsigned bits = n * 8;
    if (in->op == PTX_OP_SHL)
        return b >= bits ? 0 : a << b;
    if (s)
        return (uint64_t)((int64_t)a >> (b >= bits ? 63 : b));
    return b >= bits ? 0 : (a & ptx__mask(n)) >> b;
}

static uint64_t ptx__bitcount(const ptx_insn *in, uint64_t a, unsigned n)
{
    a &= ptx__mask(n);
    if (in->op == PTX_OP_POPC)
        return (uint64_t)__builtin_popcountll(a);
    if (in->op == PTX_OP_CLZ)
        return a == 0 ? n * 8 : (uint64_t)__builtin_clzll(a) - (64 - n * 8);
    uint64_t r = 0; /* brev */
    for (unsigned i = 0; i < n * 8; i++)
        r |= ((a >> i) & 1) << (n * 8 - 1 - i);
    return r;
}

/* Integer (and bit) instructions on n-byte values extended to 64 bits. */
static int ptx__int_op(const ptx_insn *in, uint64_t a, uint64_t b, uint64_t c, unsigned n, int s, uint64_t *r)
{
    switch (in->op) {
    case PTX_OP_ADD: *r = a + b; break;
    case PTX_OP_SUB: *r = a - b; break;
    case PTX_OP_MUL: *r = ptx__product(in, a, b, n, s); break;
    case PTX_OP_MAD: *r = ptx__product(in, a, b, n, s) + c; break;
    case PTX_OP_DIV:
    case PTX_OP_REM: return ptx__divrem(in, a, b, n, s, r);
    case PTX_OP_MIN: *r = s ? ((int64_t)a < (int64_t)b ? a : b) : (a < b ? a : b); break;
    case PTX_OP_MAX: *r = s ? ((int64_t)a > (int64_t)b ? a : b) : (a > b ? a : b); break;
    case PTX_OP_NEG: *r = (uint64_t)-(int64_t)a; break;
    case PTX_OP_ABS: *r = (int64_t)a < 0 ? (uint64_t)-(int64_t)a : a; break;
    case PTX_OP_AND: *r = a & b; break;
    case PTX_OP_OR: *r = a | b; break;
    case PTX_OP_XOR: *r = a ^ b; break;
    case PTX_OP_NOT: *r = in->type == PTX_T_PRED ? !a : ~a; break;
    case PTX_OP_SHL:
    case PTX_OP_SHR: *r = ptx__shift(in, a, b, n, s); break;
    case PTX_OP_POPC:
    case PTX_OP_CLZ:
    case PTX_OP_BREV: *r = ptx__bitcount(in, a, n); break;
    default: return -1;
    }
    return 0;
}

int ptx_alu(const ptx_insn *in, uint64_t a, uint64_t b, uint64_t c, uint64_t *out)
{
    enum ptx_type t = (enum ptx_type)in->type;
    if (ptx_type_is_float(t)) {
        double r;
        if (t == PTX_T_F16X2 || ptx__float_op(in, ptx__fget(t, a), ptx__fget(t, b), ptx__fget(t, c), &r) != 0)
            return -1;
        *out = ptx__fput(t, r);
        return 0;
    }
    unsigned n = ptx_type_size(t);
    int s = ptx_type_is_signed(t);
    /* shifts take a u32 amount; .wide widens the product's operands only */
    uint64_t bb = in->op == PTX_OP_SHL || in->op == PTX_OP_SHR ? (uint32_t)b : ptx_extend(t, b);
    if (ptx__int_op(in, ptx_extend(t, a), bb, c, n, s, out) != 0)
        return -1;
    unsigned dst = in->mods & PTX_M_WIDE ? n * 2 : n;
    if (in->op == PTX_OP_POPC || in->op == PTX_OP_CLZ)
        dst = 4;
    *out &= ptx__mask(dst);
    return 0;
}

int ptx_cmp_int(int cmp, int64_t x, int64_t y, int is_signed)
{
    switch (cmp) {
    case PTX_C_EQ: return x == y;
    case PTX_C_NE: return x != y;
    case PTX_C_LT: return is_signed ? x < y : (uint64_t)x < (uint64_t)y;
    case PTX_C_LE: return is_signed ? x <= y : (uint64_t)x <= (uint64_t)y;
    case PTX_C_GT: return is_signed ? x > y : (uint64_t)x > (uint64_t)y;
    default: return is_signed ? x >= y : (uint64_t)x >= (uint64_t)y;
    }
}

int ptx_cmp_float(int sub, double x, double y)
{
    int cmp = sub & 7, nan = isnan(x) || isnan(y);
    if (cmp == PTX_C_NUM || cmp == PTX_C_NAN)
        return cmp == PTX_C_NAN ? nan : !nan;
    if (nan)
        return (sub & PTX_C_UNORDERED) != 0;
    switch (cmp) {
    case PTX_C_EQ: return x == y;
    case PTX_C_NE: return x != y;
    case PTX_C_LT: return x < y;
    case PTX_C_LE: return x <= y;
    case PTX_C_GT: return x > y;
    default: return x >= y;
    }
}

int ptx_compare(const ptx_insn *in, uint64_t a, uint64_t b)
{
    enum ptx_type t = (enum ptx_type)in->type;
    if (ptx_type_is_float(t))
        return ptx_cmp_float(in->sub, ptx__fget(t, a), ptx__fget(t, b));
    return ptx_cmp_int(in->sub & 7, (int64_t)ptx_extend(t, a), (int64_t)ptx_extend(t, b), ptx_type_is_signed(t));
}

/* Rounds to an integral value by the cvt modifier (.rni when none is given). */
static double ptx__round(uint32_t mods, double d)
{
    if (mods & (PTX_M_RZI | PTX_M_RZ))
        return trunc(d);
    if (mods & (PTX_M_RMI | PTX_M_RM))
        return floor(d);
    if (mods & (PTX_M_RPI | PTX_M_RP))
        return ceil(d);
    return nearbyint(d);
}

/* A float to an integer type: rounded, clamped to the type's range, NaN to 0. */
static uint64_t ptx__float_to_int(const ptx_insn *in, double d, enum ptx_type dt)
{
    unsigned n = ptx_type_size(dt);
    if (isnan(d))
        return 0;
    d = ptx__round(in->mods, d);
    if (ptx_type_is_signed(dt)) {
        double lo = -ldexp(1.0, (int)n * 8 - 1), hi = ldexp(1.0, (int)n * 8 - 1) - 1;
        int64_t v = d <= lo ? (int64_t)lo : d >= hi ? (n == 8 ? INT64_MAX : (int64_t)hi) : (int64_t)d;
        return (uint64_t)v & ptx__mask(n);
    }
    double hi = ldexp(1.0, (int)n * 8);
    uint64_t v = d <= 0 ? 0 : d >= hi ? ptx__mask(n) : (uint64_t)d;
    return v & ptx__mask(n);
}

/* An integer value (extended) clamped by .sat to the destination type's range. */
static uint64_t ptx__saturate(uint64_t v, int src_signed, enum ptx_type dt)
{
    unsigned n = ptx_type_size(dt);
    if (n >= 8 && src_signed == ptx_type_is_signed(dt))
        return v;
    if (ptx_type_is_signed(dt)) {
        int64_t hi = n >= 8 ? INT64_MAX : (int64_t)(ptx__mask(n) >> 1), lo = -hi - 1;
        if (src_signed)
            return (int64_t)v < lo ? (uint64_t)lo : (int64_t)v > hi ? (uint64_t)hi : v;
        return v > (uint64_t)hi ? (uint64_t)hi : v;
    }
    if (src_signed && (int64_t)v < 0)
        return 0;
    return v > ptx__mask(n) ? ptx__mask(n) : v;
}

int ptx_convert(const ptx_insn *in, uint64_t v, uint64_t *out)
{
    enum ptx_type dt = (enum ptx_type)in->type, st = (enum ptx_type)in->type2;
    if (dt == PTX_T_F16X2 || st == PTX_T_F16X2 || ptx_type_size(dt) == 0 || ptx_type_size(st) == 0)
        return -1;
    if (ptx_type_is_float(st)) {
        double d = ptx__fget(st, v);
        if (!ptx_type_is_float(dt)) {
            *out = ptx__float_to_int(in, d, dt);
            return 0;
        }
        if (in->mods & (PTX_M_RNI | PTX_M_RZI | PTX_M_RMI | PTX_M_RPI))
            d = ptx__round(in->mods, d);
        if (in->mods & PTX_M_SAT)
            d = isnan(d) ? 0.0 : d < 0.0 ? 0.0 : d > 1.0 ? 1.0 : d;
        *out = ptx__fput(dt, d);
        return 0;
    }
    uint64_t x = ptx_extend(st, v);
    if (ptx_type_is_float(dt)) {
        double d = ptx_type_is_signed(st) ? (double)(int64_t)x : (double)x;
        if (ptx_type_size(st) == 8 && dt != PTX_T_F64) /* one rounding, not two */
            d = ptx_type_is_signed(st) ? (double)(float)(int64_t)x : (double)(float)x;
        *out = ptx__fput(dt, d);
        return 0;
    }
    if (in->mods & PTX_M_SAT)
        x = ptx__saturate(x, ptx_type_is_signed(st), dt);
    *out = x & ptx__mask(ptx_type_size(dt));
    return 0;
}

int ptx_atomic(enum ptx_aop op, enum ptx_type t, uint64_t old, uint64_t b, uint64_t c, uint64_t *out)
{
    unsigned n = ptx_type_size(t);
    int s = ptx_type_is_signed(t), fl = ptx_type_is_float(t);
    uint64_t x = ptx_extend(t, old), y = ptx_extend(t, b);
    switch (op) {
    case PTX_A_ADD:
        *out = fl ? ptx__fput(t, ptx__fget(t, old) + ptx__fget(t, b)) : x + y;
        break;
    case PTX_A_MIN:
    case PTX_A_MAX: {
        int take_b = fl ? (op == PTX_A_MIN ? ptx__fget(t, b) < ptx__fget(t, old) : ptx__fget(t, b) > ptx__fget(t, old))
                     : s ? (op == PTX_A_MIN ? (int64_t)y < (int64_t)x : (int64_t)y > (int64_t)x)
                         : (op == PTX_A_MIN ? y < x : y > x);
        *out = take_b ? b : old;
        break;
    }
    case PTX_A_EXCH: *out = b; break;
    case PTX_A_CAS: *out = (old & ptx__mask(n)) == (b & ptx__mask(n)) ? c : old; break;
    case PTX_A_AND: *out = old & b; break;
    case PTX_A_OR: *out = old | b; break;
    case PTX_A_XOR: *out = old ^ b; break;
    case PTX_A_INC: *out = (old & ptx__mask(n)) >= (b & ptx__mask(n)) ? 0 : old + 1; break;
    case PTX_A_DEC: *out = (old & ptx__mask(n)) == 0 || (old & ptx__mask(n)) > (b & ptx__mask(n)) ? b : old - 1; break;
    default: return -1;
    }
    if (fl && (op == PTX_A_AND || op == PTX_A_OR || op == PTX_A_XOR || op == PTX_A_INC || op == PTX_A_DEC))
        return -1;
    *out &= ptx__mask(n);
    return 0;
}
