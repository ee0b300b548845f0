/* ptx_fast.c -- the fast path (see ptx_fast.h): choosing a handler for each
 * instruction once, at preparation, and running it for a warp's lanes. Each
 * handler computes exactly what the general path computes (ptx_alu.c): integer
 * results cut to the instruction's width, f32 arithmetic rounded once to float,
 * registers cut to their declared type, predicates stored as 0 or 1. */
#include "ptx_fast.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ptx_alu.h"
#include "ptx_bits.h"

/* ---- preparation -------------------------------------------------------------------- */

static uint64_t ptx__bytes_mask(unsigned n)
{
    return n >= 8 ? ~0ull : (1ull << (n * 8)) - 1;
}

static int ptx__is_value(const ptx_operand *o)
{
    return (o->kind == PTX_O_REG && o->reg >= 0 && !o->neg) || o->kind == PTX_O_IMM || o->kind == PTX_O_FIMM;
}

static int ptx__is_int(enum ptx_type t)
{
    return t >= PTX_T_B8 && t <= PTX_T_S64;
}

/* 1 when operands [from, to) are registers or immediates, and o[0] a register. */
static int ptx__plain(const ptx_insn *in, unsigned from, unsigned to)
{
    if (in->nops < to || in->o[0].kind != PTX_O_REG || in->o[0].reg < 0)
        return 0;
    for (unsigned k = from; k < to; k++)
        if (!ptx__is_value(&in->o[k]))
            return 0;
    return 1;
}

static enum ptx_fast_kind ptx__int_kind(const ptx_insn *in)
{
    enum ptx_type t = (enum ptx_type)in->type;
    uint32_t shape = in->mods & (PTX_M_HI | PTX_M_WIDE | PTX_M_SAT);
    int s = ptx_type_is_signed(t), n = (int)ptx_type_size(t);
    if (!(ptx__is_int(t) || (t == PTX_T_PRED && (in->op == PTX_OP_AND || in->op == PTX_OP_OR ||
                                                 in->op == PTX_OP_XOR || in->op == PTX_OP_NOT))))
        return PTX_F_NONE;
    switch (in->op) {
    case PTX_OP_ADD: return shape ? PTX_F_NONE : PTX_F_ADD;
    case PTX_OP_SUB: return shape ? PTX_F_NONE : PTX_F_SUB;
    case PTX_OP_AND: return PTX_F_AND;
    case PTX_OP_OR: return PTX_F_OR;
    case PTX_OP_XOR: return PTX_F_XOR;
    case PTX_OP_NOT: return PTX_F_NOT;
    case PTX_OP_SHL: return PTX_F_SHL;
    case PTX_OP_SHR: return s ? PTX_F_SHR_S : PTX_F_SHR_U;
    case PTX_OP_MIN: return s ? PTX_F_MIN_S : PTX_F_MIN_U;
    case PTX_OP_MAX: return s ? PTX_F_MAX_S : PTX_F_MAX_U;
    case PTX_OP_MUL:
    case PTX_OP_MAD:
        if (shape == PTX_M_WIDE && n <= 4)
            return in->op == PTX_OP_MUL ? (s ? PTX_F_MUL_WIDE_S : PTX_F_MUL_WIDE_U)
                                        : (s ? PTX_F_MAD_WIDE_S : PTX_F_MAD_WIDE_U);
        if (shape != 0)
            return PTX_F_NONE;
        return in->op == PTX_OP_MUL ? PTX_F_MUL_LO : PTX_F_MAD_LO;
    default: return PTX_F_NONE;
    }
}

static enum ptx_fast_kind ptx__float_kind(const ptx_insn *in)
{
    static const enum ptx_fast_kind f32[] = {PTX_F_ADD_F32, PTX_F_SUB_F32, PTX_F_MUL_F32, PTX_F_FMA_F32};
    static const enum ptx_fast_kind f64[] = {PTX_F_ADD_F64, PTX_F_SUB_F64, PTX_F_MUL_F64, PTX_F_FMA_F64};
    int which = in->op == PTX_OP_ADD ? 0 : in->op == PTX_OP_SUB ? 1 : in->op == PTX_OP_MUL ? 2
              : in->op == PTX_OP_FMA || in->op == PTX_OP_MAD ? 3 : -1;
    if (which < 0 || (in->mods & PTX_M_SAT))
        return PTX_F_NONE;
    return in->type == PTX_T_F32 ? f32[which] : in->type == PTX_T_F64 ? f64[which] : PTX_F_NONE;
}

/* The number of value operands each arithmetic handler reads after o[0]. */
static unsigned ptx__sources(enum ptx_fast_kind k)
{
    switch (k) {
    case PTX_F_NOT: return 1;
    case PTX_F_MAD_LO:
    case PTX_F_MAD_WIDE_U:
    case PTX_F_MAD_WIDE_S:
    case PTX_F_FMA_F32:
    case PTX_F_FMA_F64: return 3;
    default: return 2;
    }
}

static enum ptx_fast_kind ptx__setp_kind(const ptx_insn *in)
{
    enum ptx_type t = (enum ptx_type)in->type;
    if (in->nops != 3 || !ptx__plain(in, 1, 3))
        return PTX_F_NONE;
    if (t == PTX_T_F32)
        return PTX_F_SETP_F32;
    if (t == PTX_T_F64)
        return PTX_F_SETP_F64;
    if (!ptx__is_int(t) || ptx_type_size(t) < 2)
        return PTX_F_NONE;
    return ptx_type_is_signed(t) ? PTX_F_SETP_S : PTX_F_SETP_U;
}

/* A register or plain address [%r+imm] / [sym+imm] / [%r] whose element type is
 * scalar, for ld/st in global or shared memory. */
static enum ptx_fast_kind ptx__memory_kind(const ptx_module *m, const ptx_insn *in)
{
    int is_ld = in->op == PTX_OP_LD;
    const ptx_operand *addr = &in->o[is_ld ? 1 : 0], *val = &in->o[is_ld ? 0 : 1];
    enum ptx_type t = (enum ptx_type)in->type;
    if (in->nops != 2 || addr->kind != PTX_O_ADDR || ptx_type_size(t) == 0 || t == PTX_T_PRED)
        return PTX_F_NONE;
    if (val->kind == PTX_O_VEC ? val->nvec != in->vec : (in->vec != 1 || !ptx__is_value(val)))
        return PTX_F_NONE;
    if (is_ld && val->kind == PTX_O_REG && val->reg < 0)
        return PTX_F_NONE;
    /* a generic address inside the device allocation last reached is global memory
     * (the shared window and local memory are elsewhere); any other goes the general way */
    if ((in->space == PTX_SP_GLOBAL || in->space == PTX_SP_GENERIC) && addr->sym < 0 && addr->reg >= 0)
        return is_ld ? PTX_F_LD_GLOBAL : PTX_F_ST_GLOBAL;
    if (in->space == PTX_SP_SHARED && (addr->sym < 0 || m->syms[addr->sym].space == PTX_SP_SHARED))
        return is_ld ? PTX_F_LD_SHARED : PTX_F_ST_SHARED;
    return PTX_F_NONE;
}

/* mov of a thread's or block's coordinates (the registers every kernel reads first). */
static int ptx__coordinate(const ptx_insn *in)
{
    return in->nops == 2 && in->o[0].kind == PTX_O_REG && in->o[0].reg >= 0 && in->o[1].kind == PTX_O_SREG &&
           in->o[1].imm >= PTX_S_TID_X && in->o[1].imm <= PTX_S_WARPID;
}

/* ld.param of a kernel parameter (the same bytes for every thread, inside the buffer). */
static int ptx__param_load(const ptx_module *m, const ptx_func *f, const ptx_insn *in)
{
    const ptx_operand *a = &in->o[1];
    unsigned size = ptx_type_size((enum ptx_type)in->type);
    if (in->op != PTX_OP_LD || in->space != PTX_SP_PARAM || in->vec != 1 || in->nops != 2 || !f->is_entry ||
        in->o[0].kind != PTX_O_REG || in->o[0].reg < 0 || a->kind != PTX_O_ADDR || a->reg >= 0 || a->sym < 0 ||
        size == 0 || in->type == PTX_T_PRED)
        return 0;
    const ptx_sym *s = &m->syms[a->sym];
    uint64_t at = s->offset + (uint64_t)a->imm;
    return s->space == PTX_SP_PARAM && !s->in_frame && a->imm >= 0 && at % size == 0 && at + size <= f->param_bytes;
}

/* Arithmetic (up to three sources), cvt and the bit instructions (up to four)
 * whose operands are registers and immediates: computed by the general path's
 * functions on operands read the fast way. */
static enum ptx_fast_kind ptx__computed_kind(const ptx_insn *in)
{
    switch (in->op) {
    case PTX_OP_ADD: case PTX_OP_SUB: case PTX_OP_MUL: case PTX_OP_MAD: case PTX_OP_FMA: case PTX_OP_DIV:
    case PTX_OP_REM: case PTX_OP_MIN: case PTX_OP_MAX: case PTX_OP_NEG: case PTX_OP_ABS: case PTX_OP_AND:
    case PTX_OP_OR: case PTX_OP_XOR: case PTX_OP_NOT: case PTX_OP_SHL: case PTX_OP_SHR: case PTX_OP_POPC:
    case PTX_OP_CLZ: case PTX_OP_BREV: case PTX_OP_RCP: case PTX_OP_SQRT: case PTX_OP_RSQRT: case PTX_OP_EX2:
    case PTX_OP_LG2: case PTX_OP_SIN: case PTX_OP_COS:
        return in->nops >= 2 && in->nops <= 4 && ptx__plain(in, 1, in->nops) ? PTX_F_ALU : PTX_F_NONE;
    case PTX_OP_CVT: /* a decimal float source is folded as the destination type: not here */
        return in->nops == 2 && ptx__plain(in, 1, 2) && in->o[1].kind != PTX_O_FIMM ? PTX_F_CVT : PTX_F_NONE;
    case PTX_OP_PRMT: case PTX_OP_BFE: case PTX_OP_BFI: case PTX_OP_SHF: case PTX_OP_BFIND:
    case PTX_OP_COPYSIGN: case PTX_OP_TESTP: case PTX_OP_BMSK: case PTX_OP_DP4A: case PTX_OP_DP2A:
        return in->nops >= 2 && in->nops <= 5 && ptx__plain(in, 1, in->nops) ? PTX_F_BITS : PTX_F_NONE;
    default: return PTX_F_NONE;
    }
}

static enum ptx_fast_kind ptx__kind(const ptx_module *m, const ptx_func *f, const ptx_insn *in)
{
    enum ptx_type t = (enum ptx_type)in->type, t2 = (enum ptx_type)in->type2;
    enum ptx_fast_kind k;
    if (ptx__param_load(m, f, in))
        return PTX_F_LD_PARAM;
    switch (in->op) {
    case PTX_OP_MOV:
        if (ptx__coordinate(in))
            return PTX_F_MOV_SREG;
        return ptx__plain(in, 1, 2) && in->nops == 2 ? PTX_F_MOV : PTX_F_NONE;
    case PTX_OP_CVTA: /* a global address is its generic address */
        return ptx__plain(in, 1, 2) && in->nops == 2 && in->space == PTX_SP_GLOBAL ? PTX_F_MOV : PTX_F_NONE;
    case PTX_OP_CVT:
        return ptx__plain(in, 1, 2) && ptx__is_int(t) && ptx__is_int(t2) && !(in->mods & PTX_M_SAT) &&
               in->o[1].kind != PTX_O_FIMM ? PTX_F_CVT_INT : PTX_F_NONE;
    case PTX_OP_SELP:
        return ptx__plain(in, 1, 3) && in->nops == 4 && in->o[3].kind == PTX_O_REG && in->o[3].reg >= 0 &&
               t != PTX_T_PRED ? PTX_F_SELP : PTX_F_NONE;
    case PTX_OP_SETP: return ptx__setp_kind(in);
    case PTX_OP_LD:
    case PTX_OP_ST: return ptx__memory_kind(m, in);
    case PTX_OP_SHFL:
        return in->nops >= 4 && in->o[1].kind == PTX_O_REG && ptx__plain(in, 1, 4) ? PTX_F_SHFL : PTX_F_NONE;
    default: break;
    }
    k = ptx_type_is_float(t) ? ptx__float_kind(in) : ptx__int_kind(in);
    if (k != PTX_F_NONE && in->nops == 1 + ptx__sources(k) && ptx__plain(in, 1, 1 + ptx__sources(k)))
        return k;
    return ptx__computed_kind(in);
}

/* Decimal float immediates of a fast instruction become their bit patterns. */
static void ptx__fold_floats(ptx_insn *in)
{
    for (unsigned k = 0; k < in->nops; k++)
        if (in->o[k].kind == PTX_O_FIMM) {
            in->o[k].imm = (int64_t)ptx_float_bits(in->o[k].fimm, (enum ptx_type)in->type);
            in->o[k].kind = PTX_O_IMM;
        }
}

static int ptx__prepare_func(const ptx_module *m, ptx_func *f, int fast)
{
    f->reg_mask = calloc(f->nregs ? f->nregs : 1, sizeof *f->reg_mask);
    if (f->reg_mask == NULL)
        return -1;
    for (uint32_t r = 0; r < f->nregs; r++)
        f->reg_mask[r] = f->reg_type[r] == PTX_T_PRED ? 0 : ptx__bytes_mask(ptx_type_size(f->reg_type[r]));
    for (size_t i = 0; i < f->ninsns; i++) {
        ptx_insn *in = &f->insns[i];
        in->fast = fast ? (uint8_t)ptx__kind(m, f, in) : PTX_F_NONE;
        if (in->fast != PTX_F_NONE)
            ptx__fold_floats(in);
    }
    return 0;
}

int ptx_fast_prepare(ptx_module *m)
{
    const char *knob = getenv("CUDAREM_EMU_PTX_FAST"); /* "off": the general path only, to compare */
    int fast = knob == NULL || strcmp(knob, "off") != 0;
    for (size_t i = 0; i < m->nfuncs; i++)
        if (ptx__prepare_func(m, &m->funcs[i], fast) != 0)
            return -1;
    return 0;
}

/* ---- execution ---------------------------------------------------------------------- */

#define PTX__LANES 32

/* The values of operand o for each lane. */
static inline void ptx__values(uint64_t *const *rp, unsigned n, const ptx_operand *o, uint64_t *v)
{
    if (o->kind == PTX_O_REG) {
        int32_t r = o->reg;
        for (unsigned i = 0; i < n; i++)
            v[i] = rp[i][r];
    } else {
        for (unsigned i = 0; i < n; i++)
            v[i] = (uint64_t)o->imm;
    }
}

/* Writes r[] into register d of each lane, cut to its declared type. */
static inline void ptx__put(uint64_t *const *rp, unsigned n, int32_t d, uint64_t mask, const uint64_t *r)
{
    if (mask == 0) {
        for (unsigned i = 0; i < n; i++)
            rp[i][d] = r[i] != 0;
    } else {
        for (unsigned i = 0; i < n; i++)
            rp[i][d] = r[i] & mask;
    }
}

static inline uint64_t ptx__sext(uint64_t v, unsigned bytes)
{
    unsigned shift = 64 - bytes * 8;
    return (uint64_t)((int64_t)(v << shift) >> shift);
}

#define PTX__EACH(expr)                   \
    for (unsigned i = 0; i < n; i++)      \
        r[i] = (expr)

/* Integer results, before they are cut to the instruction's width (the forms
 * ptx__fused runs are not here). */
static void ptx__int(enum ptx_fast_kind k, unsigned bytes, unsigned n, const uint64_t *a, const uint64_t *b,
                     const uint64_t *c, uint64_t *r)
{
    unsigned bits = bytes * 8;
    uint64_t tm = ptx__bytes_mask(bytes);
    switch (k) {
    case PTX_F_SHL: PTX__EACH((uint32_t)b[i] >= bits ? 0 : a[i] << (uint32_t)b[i]); break;
    case PTX_F_SHR_U: PTX__EACH((uint32_t)b[i] >= bits ? 0 : (a[i] & tm) >> (uint32_t)b[i]); break;
    case PTX_F_SHR_S:
        PTX__EACH((uint64_t)((int64_t)ptx__sext(a[i], bytes) >> ((uint32_t)b[i] >= bits ? 63 : (uint32_t)b[i])));
        break;
    case PTX_F_MUL_WIDE_U: PTX__EACH((a[i] & tm) * (b[i] & tm)); break;
    case PTX_F_MUL_WIDE_S: PTX__EACH(ptx__sext(a[i], bytes) * ptx__sext(b[i], bytes)); break;
    case PTX_F_MAD_WIDE_U: PTX__EACH((a[i] & tm) * (b[i] & tm) + c[i]); break;
    case PTX_F_MAD_WIDE_S: PTX__EACH(ptx__sext(a[i], bytes) * ptx__sext(b[i], bytes) + c[i]); break;
    case PTX_F_MIN_S:
        PTX__EACH((int64_t)ptx__sext(a[i], bytes) < (int64_t)ptx__sext(b[i], bytes) ? a[i] : b[i]);
        break;
    case PTX_F_MAX_S:
        PTX__EACH((int64_t)ptx__sext(a[i], bytes) > (int64_t)ptx__sext(b[i], bytes) ? a[i] : b[i]);
        break;
    case PTX_F_MIN_U: PTX__EACH((a[i] & tm) < (b[i] & tm) ? a[i] : b[i]); break;
    case PTX_F_MAX_U: PTX__EACH((a[i] & tm) > (b[i] & tm) ? a[i] : b[i]); break;
    default: break;
    }
}

static void ptx__float(enum ptx_fast_kind k, unsigned n, const uint64_t *a, const uint64_t *b, const uint64_t *c,
                       uint64_t *r)
{
    switch (k) {
    case PTX_F_ADD_F64: PTX__EACH(ptx_f64_bits(ptx_as_f64(a[i]) + ptx_as_f64(b[i]))); break;
    case PTX_F_SUB_F64: PTX__EACH(ptx_f64_bits(ptx_as_f64(a[i]) - ptx_as_f64(b[i]))); break;
    case PTX_F_MUL_F64: PTX__EACH(ptx_f64_bits(ptx_as_f64(a[i]) * ptx_as_f64(b[i]))); break;
    case PTX_F_FMA_F64: PTX__EACH(ptx_f64_bits(fma(ptx_as_f64(a[i]), ptx_as_f64(b[i]), ptx_as_f64(c[i])))); break;
    default: break;
    }
}

static void ptx__setp(const ptx_insn *in, unsigned n, const uint64_t *a, const uint64_t *b, uint64_t *r)
{
    unsigned bytes = ptx_type_size((enum ptx_type)in->type);
    switch (in->fast) {
    case PTX_F_SETP_S: PTX__EACH((uint64_t)ptx_cmp_int(in->sub & 7, (int64_t)ptx__sext(a[i], bytes),
                                                       (int64_t)ptx__sext(b[i], bytes), 1)); break;
    case PTX_F_SETP_U: {
        uint64_t tm = ptx__bytes_mask(bytes);
        PTX__EACH((uint64_t)ptx_cmp_int(in->sub & 7, (int64_t)(a[i] & tm), (int64_t)(b[i] & tm), 0));
        break;
    }
    case PTX_F_SETP_F32: PTX__EACH((uint64_t)ptx_cmp_float(in->sub, ptx_as_f32(a[i]), ptx_as_f32(b[i]))); break;
    default: PTX__EACH((uint64_t)ptx_cmp_float(in->sub, ptx_as_f64(a[i]), ptx_as_f64(b[i]))); break;
    }
}

/* The shared-window offset, or the device address, each lane's operand names. */
static void ptx__addresses(const ptx_block *b, const ptx_operand *o, uint64_t *const *rp, unsigned n, uint64_t *a)
{
    uint64_t base = (uint64_t)o->imm;
    if (o->sym >= 0) {
        const ptx_sym *s = &b->m->syms[o->sym];
        base += s->size == 0 ? b->dyn_base : s->owner < 0 ? s->offset : b->func_shared_base + s->offset;
    }
    if (o->reg >= 0) {
        for (unsigned i = 0; i < n; i++)
            a[i] = rp[i][o->reg] + base;
    } else {
        for (unsigned i = 0; i < n; i++)
            a[i] = base;
    }
}

/* Where each lane's `bytes` at a[i] are, or 0 when one would fault or is not
 * known here (the general path then runs the instruction). */
static int ptx__places(const ptx_block *b, int shared, const uint64_t *a, unsigned n, unsigned bytes,
                       unsigned char **p)
{
    uint64_t lo = shared ? 0 : b->mem_lo, hi = shared ? b->shared_size : b->mem_hi;
    for (unsigned i = 0; i < n; i++) {
        if ((bytes > 1 && a[i] % bytes != 0) || a[i] < lo || a[i] >= hi || bytes > hi - a[i])
            return 0;
        p[i] = shared ? b->shared + a[i] : (unsigned char *)(uintptr_t)a[i];
    }
    return 1;
}

static int ptx__ld(ptx_block *b, const ptx_insn *in, uint64_t *const *rp, unsigned n)
{
    enum ptx_type t = (enum ptx_type)in->type;
    unsigned size = ptx_type_size(t), count = in->vec, sext = ptx_type_is_signed(t) && size < 8;
    uint64_t a[PTX__LANES];
    unsigned char *p[PTX__LANES];
    ptx__addresses(b, &in->o[1], rp, n, a);
    if (!ptx__places(b, in->fast == PTX_F_LD_SHARED, a, n, size * count, p))
        return 1;
    for (unsigned k = 0; k < count; k++) {
        int32_t d = in->o[0].kind == PTX_O_VEC ? in->o[0].regs[k] : in->o[0].reg;
        if (d < 0)
            continue;
        uint64_t r[PTX__LANES];
        for (unsigned i = 0; i < n; i++) {
            uint64_t v = 0;
            memcpy(&v, p[i] + k * size, size);
            r[i] = sext ? ptx__sext(v, size) : v;
        }
        ptx__put(rp, n, d, b->fast_mask[d], r);
    }
    return 0;
}

static int ptx__st(ptx_block *b, const ptx_insn *in, uint64_t *const *rp, unsigned n)
{
    unsigned size = ptx_type_size((enum ptx_type)in->type), count = in->vec;
    uint64_t a[PTX__LANES];
    unsigned char *p[PTX__LANES];
    ptx__addresses(b, &in->o[0], rp, n, a);
    if (!ptx__places(b, in->fast == PTX_F_ST_SHARED, a, n, size * count, p))
        return 1;
    for (unsigned k = 0; k < count; k++) {
        uint64_t v[PTX__LANES];
        if (in->o[1].kind == PTX_O_VEC) {
            ptx_operand e = {.kind = PTX_O_REG, .reg = in->o[1].regs[k], .sym = -1};
            ptx__values(rp, n, &e, v);
        } else {
            ptx__values(rp, n, &in->o[1], v);
        }
        for (unsigned i = 0; i < n; i++)
            memcpy(p[i] + k * size, &v[i], size);
    }
    return 0;
}

/* One loop per lane for the commonest forms: sources read, result computed and cut
 * to the instruction's width, register written (a predicate as 0 or 1), with no
 * arrays between. */
#define PTX__FUSED(expr)                                                        \
    for (unsigned i = 0; i < n; i++) {                                          \
        uint64_t x = ra >= 0 ? rp[i][ra] : ia, y = rb >= 0 ? rp[i][rb] : ib;   \
        uint64_t z = rc >= 0 ? rp[i][rc] : ic, r = (expr) & tm;                 \
        (void)z;                                                                \
        rp[i][d] = pred ? r != 0 : r & dm;                                      \
    }

/* 1 when it ran `in`, 0 when the general loops must. */
static int ptx__fused(const ptx_block *b, const ptx_insn *in, uint64_t *const *rp, unsigned n)
{
    int32_t d = in->o[0].reg;
    int32_t ra = in->o[1].kind == PTX_O_REG ? in->o[1].reg : -1, rb = -1, rc = -1;
    uint64_t ia = (uint64_t)in->o[1].imm, ib = 0, ic = 0, dm = b->fast_mask[d];
    uint64_t tm = ptx__bytes_mask(ptx_type_size((enum ptx_type)in->type));
    int pred = dm == 0;
    if (in->nops < 3)
        return 0;
    rb = in->o[2].kind == PTX_O_REG ? in->o[2].reg : -1;
    ib = (uint64_t)in->o[2].imm;
    if (in->nops > 3) {
        rc = in->o[3].kind == PTX_O_REG ? in->o[3].reg : -1;
        ic = (uint64_t)in->o[3].imm;
    }
    switch (in->fast) {
    case PTX_F_ADD: PTX__FUSED(x + y); return 1;
    case PTX_F_SUB: PTX__FUSED(x - y); return 1;
    case PTX_F_MUL_LO: PTX__FUSED(x * y); return 1;
    case PTX_F_MAD_LO: PTX__FUSED(x * y + z); return 1;
    case PTX_F_AND: PTX__FUSED(x & y); return 1;
    case PTX_F_OR: PTX__FUSED(x | y); return 1;
    case PTX_F_XOR: PTX__FUSED(x ^ y); return 1;
    case PTX_F_ADD_F32: PTX__FUSED(ptx_f32_bits(ptx_as_f32(x) + ptx_as_f32(y))); return 1;
    case PTX_F_SUB_F32: PTX__FUSED(ptx_f32_bits(ptx_as_f32(x) - ptx_as_f32(y))); return 1;
    case PTX_F_MUL_F32: PTX__FUSED(ptx_f32_bits(ptx_as_f32(x) * ptx_as_f32(y))); return 1;
    case PTX_F_FMA_F32: PTX__FUSED(ptx_f32_bits(fmaf(ptx_as_f32(x), ptx_as_f32(y), ptx_as_f32(z)))); return 1;
    default: return 0;
    }
}

static void ptx__arith(const ptx_block *b, const ptx_insn *in, uint64_t *const *rp, unsigned n)
{
    if (ptx__fused(b, in, rp, n))
        return;
    enum ptx_fast_kind k = (enum ptx_fast_kind)in->fast;
    enum ptx_type t = (enum ptx_type)in->type;
    unsigned bytes = ptx_type_size(t), nsrc = ptx__sources(k);
    uint64_t a[PTX__LANES], bv[PTX__LANES], c[PTX__LANES], r[PTX__LANES];
    ptx__values(rp, n, &in->o[1], a);
    if (nsrc > 1)
        ptx__values(rp, n, &in->o[2], bv);
    if (nsrc > 2)
        ptx__values(rp, n, &in->o[3], c);
    if (k >= PTX_F_ADD_F32 && k <= PTX_F_FMA_F64) {
        ptx__float(k, n, a, bv, c, r);
    } else if (k == PTX_F_NOT) {
        PTX__EACH(t == PTX_T_PRED ? (uint64_t)!a[i] : ~a[i]);
    } else {
        ptx__int(k, bytes, n, a, bv, c, r);
        uint64_t wm = ptx__bytes_mask(k >= PTX_F_MUL_WIDE_U && k <= PTX_F_MAD_WIDE_S ? bytes * 2 : bytes);
        PTX__EACH(r[i] & wm);
    }
    ptx__put(rp, n, in->o[0].reg, b->fast_mask[in->o[0].reg], r);
}

/* %tid, %ntid, %ctaid, %nctaid, %laneid, %warpid of each thread. */
static void ptx__coordinates(const ptx_block *b, int sreg, const unsigned *lanes, unsigned n, uint64_t *r)
{
    const unsigned *bd = b->l->block, *gd = b->l->grid;
    switch (sreg) {
    case PTX_S_TID_X: PTX__EACH(lanes[i] % bd[0]); break;
    case PTX_S_TID_Y: PTX__EACH(lanes[i] / bd[0] % bd[1]); break;
    case PTX_S_TID_Z: PTX__EACH(lanes[i] / (bd[0] * bd[1])); break;
    case PTX_S_NTID_X: case PTX_S_NTID_Y: case PTX_S_NTID_Z: PTX__EACH(bd[sreg - PTX_S_NTID_X]); break;
    case PTX_S_CTAID_X: case PTX_S_CTAID_Y: case PTX_S_CTAID_Z: PTX__EACH(b->ctaid[sreg - PTX_S_CTAID_X]); break;
    case PTX_S_NCTAID_X: case PTX_S_NCTAID_Y: case PTX_S_NCTAID_Z: PTX__EACH(gd[sreg - PTX_S_NCTAID_X]); break;
    case PTX_S_LANEID: PTX__EACH(lanes[i] % 32); break;
    default: PTX__EACH(lanes[i] / 32); break; /* %warpid */
    }
}

/* shfl.sync.MODE.b32 d[|p], a, b, c: as the general path (ptx_exec.c), reading a
 * from every thread of the warp. */
static void ptx__shfl(const ptx_block *b, const ptx_insn *in, const unsigned *lanes, uint64_t *const *rp,
                      unsigned n)
{
    uint64_t val[32], bv[PTX__LANES], cv[PTX__LANES];
    unsigned base = lanes[0] / 32 * 32, width = b->nthreads - base < 32 ? b->nthreads - base : 32;
    for (unsigned i = 0; i < width; i++)
        val[i] = b->regs[(size_t)(base + i) * b->reg_stride + b->rbase[base + i] + (size_t)in->o[1].reg];
    ptx__values(rp, n, &in->o[2], bv);
    ptx__values(rp, n, &in->o[3], cv);
    for (unsigned i = 0; i < n; i++) {
        int ok;
        unsigned j = ptx_shfl_source(in->sub, lanes[i] % 32, (uint32_t)bv[i], (uint32_t)cv[i], width, &ok);
        rp[i][in->o[0].reg] = val[j] & b->fast_mask[in->o[0].reg];
        if (in->pdst >= 0)
            rp[i][in->pdst] = (uint64_t)ok;
    }
}

/* PTX_F_ALU, PTX_F_CVT, PTX_F_BITS: the general path's computation per lane; 1
 * when it does not compute this form (the general path then reports it). */
static int ptx__computed(ptx_block *b, const ptx_insn *in, uint64_t *const *rp, unsigned n)
{
    uint64_t src[4][PTX__LANES], r[PTX__LANES];
    unsigned nsrc = in->nops - 1u;
    for (unsigned k = 0; k < nsrc && k < 4; k++)
        ptx__values(rp, n, &in->o[k + 1], src[k]);
    for (unsigned i = 0; i < n; i++) {
        uint64_t v[4] = {0};
        for (unsigned k = 0; k < nsrc && k < 4; k++)
            v[k] = src[k][i];
        int rc = in->fast == PTX_F_ALU ? ptx_alu(in, v[0], v[1], v[2], &r[i])
               : in->fast == PTX_F_CVT ? ptx_convert(in, v[0], &r[i]) : ptx_bits(in, v, &r[i]);
        if (rc != 0)
            return 1;
    }
    ptx__put(rp, n, in->o[0].reg, b->fast_mask[in->o[0].reg], r);
    return 0;
}

int ptx_fast_exec(ptx_block *b, const ptx_insn *in, const unsigned *lanes, uint64_t *const *rp, unsigned n)
{
    uint64_t a[PTX__LANES], c[PTX__LANES], r[PTX__LANES];
    int32_t d = in->o[0].reg;
    switch (in->fast) {
    case PTX_F_MOV_SREG:
        ptx__coordinates(b, (int)in->o[1].imm, lanes, n, r);
        break;
    case PTX_F_LD_PARAM: {
        enum ptx_type t = (enum ptx_type)in->type;
        unsigned size = ptx_type_size(t);
        uint64_t v = 0;
        memcpy(&v, b->params + b->m->syms[in->o[1].sym].offset + in->o[1].imm, size);
        if (ptx_type_is_signed(t) && size < 8)
            v = ptx__sext(v, size);
        PTX__EACH(v);
        break;
    }
    case PTX_F_MOV:
        ptx__values(rp, n, &in->o[1], r);
        break;
    case PTX_F_CVT_INT: {
        enum ptx_type st = (enum ptx_type)in->type2;
        unsigned sb = ptx_type_size(st);
        uint64_t dm = ptx__bytes_mask(ptx_type_size((enum ptx_type)in->type));
        ptx__values(rp, n, &in->o[1], a);
        if (ptx_type_is_signed(st))
            PTX__EACH(ptx__sext(a[i], sb) & dm);
        else
            PTX__EACH(a[i] & ptx__bytes_mask(sb) & dm);
        break;
    }
    case PTX_F_SELP: {
        uint64_t p[PTX__LANES];
        ptx__values(rp, n, &in->o[1], a);
        ptx__values(rp, n, &in->o[2], c);
        ptx_operand q = in->o[3];
        q.neg = 0;
        ptx__values(rp, n, &q, p);
        PTX__EACH((p[i] != 0) != (in->o[3].neg != 0) ? a[i] : c[i]);
        break;
    }
    case PTX_F_SETP_S:
    case PTX_F_SETP_U:
    case PTX_F_SETP_F32:
    case PTX_F_SETP_F64:
        ptx__values(rp, n, &in->o[1], a);
        ptx__values(rp, n, &in->o[2], c);
        ptx__setp(in, n, a, c, r);
        if (in->pdst >= 0)
            for (unsigned i = 0; i < n; i++)
                rp[i][in->pdst] = !r[i];
        break;
    case PTX_F_SHFL:
        ptx__shfl(b, in, lanes, rp, n);
        return 0;
    case PTX_F_ALU:
    case PTX_F_CVT:
    case PTX_F_BITS: return ptx__computed(b, in, rp, n);
    case PTX_F_LD_GLOBAL:
    case PTX_F_LD_SHARED: return ptx__ld(b, in, rp, n);
    case PTX_F_ST_GLOBAL:
    case PTX_F_ST_SHARED: return ptx__st(b, in, rp, n);
    default:
        ptx__arith(b, in, rp, n);
        return 0;
    }
    ptx__put(rp, n, d, b->fast_mask[d], r);
    return 0;
}
