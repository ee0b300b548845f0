/* ptx_exec.c -- executes one prepared instruction for the threads of a warp that
 * reached it together: operands (registers, immediates, special registers, symbol
 * addresses), memory in each state space with its bounds and alignment checked
 * (a fault stops the block with the error a GPU gives), and each instruction
 * family. Arithmetic itself is in ptx_alu.c. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "ptx_alu.h"
#include "ptx_bits.h"
#include "ptx_block.h"
#include "ptx_devrt.h"
#include "ptx_printf.h"

int ptx_fault(ptx_block *b, cudaError_t err, const ptx_insn *in, const char *fmt, ...)
{
    if (b->err != cudaSuccess)
        return -1;
    b->err = err;
    int n = snprintf(b->msg, b->msglen, "kernel %s, PTX line %u: ", b->f->name, in ? in->line : 0);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < b->msglen)
        vsnprintf(b->msg + n, b->msglen - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

/* ---- operands ----------------------------------------------------------------------- */

static uint64_t ptx__sreg(ptx_block *b, unsigned t, int sreg)
{
    const unsigned *bd = b->l->block, *gd = b->l->grid;
    unsigned lane = t % 32;
    switch (sreg) {
    case PTX_S_TID_X: return t % bd[0];
    case PTX_S_TID_Y: return t / bd[0] % bd[1];
    case PTX_S_TID_Z: return t / (bd[0] * bd[1]);
    case PTX_S_NTID_X: return bd[0];
    case PTX_S_NTID_Y: return bd[1];
    case PTX_S_NTID_Z: return bd[2];
    case PTX_S_CTAID_X: return b->ctaid[0];
    case PTX_S_CTAID_Y: return b->ctaid[1];
    case PTX_S_CTAID_Z: return b->ctaid[2];
    case PTX_S_NCTAID_X: return gd[0];
    case PTX_S_NCTAID_Y: return gd[1];
    case PTX_S_NCTAID_Z: return gd[2];
    case PTX_S_LANEID: return lane;
    case PTX_S_WARPID: return t / 32;
    case PTX_S_NWARPID: return b->nwarps;
    case PTX_S_CLOCK: return (uint32_t)b->clock;
    case PTX_S_CLOCK64: return b->clock;
    case PTX_S_GLOBALTIMER: {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    }
    case PTX_S_SMID: return 0;
    case PTX_S_NSMID: return 1;
    case PTX_S_LANEMASK_EQ: return 1u << lane;
    case PTX_S_LANEMASK_LT: return (1u << lane) - 1;
    case PTX_S_LANEMASK_LE: return (uint32_t)((2ull << lane) - 1);
    case PTX_S_LANEMASK_GT: return (uint32_t)~((2ull << lane) - 1);
    case PTX_S_LANEMASK_GE: return (uint32_t)~((1u << lane) - 1);
    case PTX_S_DYN_SMEM: return b->l->dyn_smem;
    default: return 0;
    }
}

/* The value a symbol names for thread t: its address in its own state space (an
 * offset for shared and param; for local, in the thread's local memory, where each
 * frame's variables follow its caller's; the device address of a module variable). */
static uint64_t ptx__sym_value(ptx_block *b, unsigned t, int32_t s)
{
    const ptx_sym *sym = &b->m->syms[s];
    switch (sym->space) {
    case PTX_SP_SHARED:
        if (sym->size == 0)
            return b->dyn_base;
        return sym->owner < 0 ? sym->offset : b->func_shared_base + sym->offset;
    case PTX_SP_GLOBAL:
    case PTX_SP_CONST:
        if (b->var_addr[s] == 0 && b->l->variable != NULL)
            b->var_addr[s] = (uint64_t)(uintptr_t)b->l->variable(b->l->ctx, sym->name, NULL);
        return b->var_addr[s];
    case PTX_SP_LOCAL:
        return b->lbase[t] + sym->offset;
    default:
        return sym->offset;
    }
}

static uint64_t ptx__src(ptx_block *b, unsigned t, const ptx_operand *o, enum ptx_type type)
{
    switch (o->kind) {
    case PTX_O_REG: {
        uint64_t v = o->reg >= 0 ? PTX_REG(b, t, o->reg) : 0;
        return o->neg ? !v : v;
    }
    case PTX_O_IMM: return (uint64_t)o->imm;
    case PTX_O_FIMM: return ptx_float_bits(o->fimm, type);
    case PTX_O_SREG: return ptx__sreg(b, t, (int)o->imm);
    case PTX_O_SYM: return ptx__sym_value(b, t, o->sym);
    default: return 0;
    }
}

/* Writes a register, cut to its declared type (a predicate to 0 or 1). */
static void ptx__set(ptx_block *b, unsigned t, int32_t r, uint64_t v)
{
    if (r < 0)
        return;
    uint64_t mask = ptx_fn(b, t)->reg_mask[r];
    PTX_REG(b, t, r) = mask ? v & mask : v != 0;
}

/* ---- memory ------------------------------------------------------------------------- */

static uint64_t ptx__address(ptx_block *b, unsigned t, const ptx_operand *o)
{
    uint64_t a = (uint64_t)o->imm;
    if (o->reg >= 0)
        a += PTX_REG(b, t, o->reg);
    if (o->sym >= 0)
        a += ptx__sym_value(b, t, o->sym);
    return a;
}

/* A .func's parameters and its calls' variables: in the thread's current frame. */
#define PTX__SP_FRAME 100

static uint64_t ptx__frame_params(const ptx_func *f)
{
    return f->param_bytes + f->call_bytes;
}

/* The space an ld/st of operand o reaches: .param variables of a frame are there. */
static int ptx__space_of(const ptx_block *b, const ptx_insn *in, const ptx_operand *o)
{
    if (in->space == PTX_SP_PARAM && o->sym >= 0 && b->m->syms[o->sym].in_frame)
        return PTX__SP_FRAME;
    return in->space;
}

unsigned char *ptx_mem(ptx_block *b, unsigned t, const ptx_insn *in, int sp, uint64_t addr, unsigned n)
{
    unsigned char *all_local = b->local + (size_t)t * b->local_stride; /* local addresses count from here */
    if (n > 1 && addr % n != 0)
        return ptx_fault(b, cudaErrorMisalignedAddress, in, "misaligned %u-byte access at %#llx", n,
                         (unsigned long long)addr), NULL;
    if (sp == PTX_SP_GENERIC) { /* the shared window and this thread's local memory are inside the generic space */
        if (addr >= (uint64_t)(uintptr_t)b->shared && addr - (uint64_t)(uintptr_t)b->shared < b->shared_size) {
            sp = PTX_SP_SHARED;
            addr -= (uint64_t)(uintptr_t)b->shared;
        } else if (addr >= (uint64_t)(uintptr_t)all_local &&
                   addr - (uint64_t)(uintptr_t)all_local < b->local_stride) { /* any frame's: a pointer passed down */
            sp = PTX_SP_LOCAL;
            addr -= (uint64_t)(uintptr_t)all_local;
        } else if (addr >= (uint64_t)(uintptr_t)b->params &&
                   addr - (uint64_t)(uintptr_t)b->params < b->f->param_bytes) { /* cvta.param's */
            sp = PTX_SP_PARAM;
            addr -= (uint64_t)(uintptr_t)b->params;
        } else {
            sp = PTX_SP_GLOBAL;
        }
    }
    switch (sp) {
    case PTX_SP_PARAM:
        if (addr <= b->f->param_bytes && n <= b->f->param_bytes - addr)
            return (unsigned char *)b->params + addr;
        break;
    case PTX__SP_FRAME: {
        uint64_t size = ptx__frame_params(ptx_fn(b, t));
        if (addr <= size && n <= size - addr)
            return b->fparams + (size_t)t * b->param_stride + b->pbase[t] + addr;
        break;
    }
    case PTX_SP_SHARED:
        if (addr <= b->shared_size && n <= b->shared_size - addr)
            return b->shared + addr;
        break;
    case PTX_SP_LOCAL:
        if (addr <= b->local_stride && n <= b->local_stride - addr)
            return all_local + addr;
        break;
    default:
        if (addr >= b->mem_lo && addr < b->mem_hi && n <= b->mem_hi - addr)
            return (unsigned char *)(uintptr_t)addr;
        if (b->l->device_memory(b->l->ctx, addr, n, &b->mem_lo, &b->mem_hi))
            return (unsigned char *)(uintptr_t)addr;
        break;
    }
    ptx_fault(b, cudaErrorIllegalAddress, in, "%u-byte access at %#llx is outside the kernel's memory", n,
              (unsigned long long)addr);
    return NULL;
}

static uint64_t ptx__load(const unsigned char *p, unsigned n)
{
    uint64_t v = 0;
    memcpy(&v, p, n); /* little-endian, as the GPU */
    return v;
}

static int ptx__ld(ptx_block *b, const ptx_insn *in, const unsigned *lanes, unsigned n)
{
    enum ptx_type ty = (enum ptx_type)in->type;
    unsigned size = ptx_type_size(ty), count = in->o[0].kind == PTX_O_VEC ? in->o[0].nvec : 1;
    for (unsigned i = 0; i < n; i++) {
        unsigned t = lanes[i];
        uint64_t a = ptx__address(b, t, &in->o[1]);
        unsigned char *p = ptx_mem(b, t, in, ptx__space_of(b, in, &in->o[1]), a, size * count);
        if (p == NULL)
            return -1;
        for (unsigned k = 0; k < count; k++) {
            uint64_t v = ptx_extend(ty, ptx__load(p + k * size, size));
            ptx__set(b, t, count > 1 ? in->o[0].regs[k] : in->o[0].reg, v);
        }
    }
    return 0;
}

/* A kernel's parameters are read-only: a write through their generic address
 * faults (-1), as on a GPU. */
static int ptx__read_only(ptx_block *b, const ptx_insn *in, const unsigned char *p)
{
    if (p < b->params || p >= b->params + b->f->param_bytes)
        return 0;
    return ptx_fault(b, cudaErrorIllegalAddress, in, "a write to the kernel's parameters");
}

static int ptx__st(ptx_block *b, const ptx_insn *in, const unsigned *lanes, unsigned n)
{
    enum ptx_type ty = (enum ptx_type)in->type;
    unsigned size = ptx_type_size(ty), count = in->o[1].kind == PTX_O_VEC ? in->o[1].nvec : 1;
    int sp = ptx__space_of(b, in, &in->o[0]);
    if (sp == PTX_SP_PARAM || sp == PTX_SP_CONST)
        return ptx_fault(b, cudaErrorNoKernelImageForDevice, in, "stores to .%s are not executed",
                         sp == PTX_SP_PARAM ? "param (a kernel's parameters)" : "const");
    for (unsigned i = 0; i < n; i++) {
        unsigned t = lanes[i];
        uint64_t a = ptx__address(b, t, &in->o[0]);
        unsigned char *p = ptx_mem(b, t, in, sp, a, size * count);
        if (p == NULL || ptx__read_only(b, in, p) != 0)
            return -1;
        for (unsigned k = 0; k < count; k++) {
            ptx_operand e = {.kind = PTX_O_REG, .reg = in->o[1].regs[k], .sym = -1};
            uint64_t v = ptx__src(b, t, count > 1 ? &e : &in->o[1], ty);
            memcpy(p + k * size, &v, size);
        }
    }
    return 0;
}

/* memory at p = op(old, bv[, cv]) as one atomic step (a compare-and-swap loop:
 * blocks run on several threads), old returned in *old; -1 when op is not computed
 * for the type. A 2-byte value is updated inside its aligned 4-byte word. */
static int ptx__rmw(unsigned char *p, unsigned size, enum ptx_aop op, enum ptx_type ty, uint64_t bv, uint64_t cv,
                    uint64_t *old)
{
    uint64_t nv;
    if (size == 8) {
        uint64_t o = __atomic_load_n((uint64_t *)(void *)p, __ATOMIC_RELAXED);
        do {
            if (ptx_atomic(op, ty, o, bv, cv, &nv) != 0)
                return -1;
        } while (!__atomic_compare_exchange_n((uint64_t *)(void *)p, &o, nv, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
        *old = o;
        return 0;
    }
    unsigned shift = size == 2 ? (unsigned)((uintptr_t)p & 2) * 8 : 0;
    uint32_t *word = (uint32_t *)(void *)(p - (size == 2 ? ((uintptr_t)p & 2) : 0));
    uint32_t mask = size == 2 ? 0xffffu << shift : 0xffffffffu;
    if (size != 2 && size != 4)
        return -1;
    uint32_t w = __atomic_load_n(word, __ATOMIC_RELAXED), nw;
    do {
        if (ptx_atomic(op, ty, (w & mask) >> shift, bv, cv, &nv) != 0)
            return -1;
        nw = (w & ~mask) | (((uint32_t)nv << shift) & mask);
    } while (!__atomic_compare_exchange_n(word, &w, nw, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
    *old = (w & mask) >> shift;
    return 0;
}

/* atom: d = old; memory = op(old, b[, c]). red: the same without d. Each
 * read-modify-write is one atomic step, also against blocks on other threads. */
static int ptx__atom(ptx_block *b, const ptx_insn *in, const unsigned *lanes, unsigned n)
{
    enum ptx_type ty = (enum ptx_type)in->type;
    unsigned size = ptx_type_size(ty), first = in->op == PTX_OP_ATOM ? 1 : 0;
    enum ptx_space sp = in->space == PTX_SP_SHARED ? PTX_SP_SHARED : in->space == PTX_SP_GLOBAL ? PTX_SP_GLOBAL
                                                                                                : PTX_SP_GENERIC;
    for (unsigned i = 0; i < n; i++) {
        unsigned t = lanes[i];
        unsigned char *p = ptx_mem(b, t, in, sp, ptx__address(b, t, &in->o[first]), size);
        if (p == NULL || ptx__read_only(b, in, p) != 0)
            return -1;
        uint64_t old;
        uint64_t bv = ptx__src(b, t, &in->o[first + 1], ty);
        uint64_t cv = in->nops > first + 2 ? ptx__src(b, t, &in->o[first + 2], ty) : 0;
        if (ptx__rmw(p, size, (enum ptx_aop)in->sub, ty, bv, cv, &old) != 0)
            return ptx_fault(b, cudaErrorNoKernelImageForDevice, in, "this atomic operation on .%s is not executed",
                             ptx_type_name(ty));
        if (first)
            ptx__set(b, t, in->o[0].reg, ptx_extend(ty, old));
    }
    return 0;
}

/* ---- conversions of addresses and values ------------------------------------------- */

static int ptx__cvta(ptx_block *b, const ptx_insn *in, const unsigned *lanes, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        unsigned t = lanes[i];
        uint64_t v = ptx__src(b, t, &in->o[1], (enum ptx_type)in->type), base = 0;
        if (in->space == PTX_SP_SHARED)
            base = (uint64_t)(uintptr_t)b->shared;
        else if (in->space == PTX_SP_LOCAL)
            base = (uint64_t)(uintptr_t)(b->local + (size_t)t * b->local_stride);
        else if (in->space == PTX_SP_PARAM) /* the kernel's parameters have generic addresses */
            base = (uint64_t)(uintptr_t)b->params;
        else if (in->space != PTX_SP_GLOBAL && in->space != PTX_SP_CONST)
            return ptx_fault(b, cudaErrorNoKernelImageForDevice, in, "cvta without a state space");
        ptx__set(b, t, in->o[0].reg, in->mods & PTX_M_TO ? v - base : v + base);
    }
    return 0;
}

static int ptx__cvt(ptx_block *b, const ptx_insn *in, const unsigned *lanes, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        uint64_t v;
        if (ptx_convert(in, ptx__src(b, lanes[i], &in->o[1], (enum ptx_type)in->type2), &v) != 0)
            return ptx_fault(b, cudaErrorNoKernelImageForDevice, in, "cvt.%s.%s is not executed",
                             ptx_type_name((enum ptx_type)in->type), ptx_type_name((enum ptx_type)in->type2));
        ptx__set(b, lanes[i], in->o[0].reg, v);
    }
    return 0;
}

/* mov: a value, or a vector packed into / unpacked from one wider register. */
static int ptx__mov(ptx_block *b, const ptx_insn *in, const unsigned *lanes, unsigned n)
{
    const ptx_operand *d = &in->o[0], *s = &in->o[1];
    unsigned whole = ptx_type_size((enum ptx_type)in->type);
    for (unsigned i = 0; i < n; i++) {
        unsigned t = lanes[i];
        if (s->kind == PTX_O_VEC) { /* mov.b64 %rd, {%r1, %r2}: element 0 in the low bits */
            unsigned part = whole / s->nvec;
            uint64_t v = 0;
            for (unsigned k = 0; k < s->nvec; k++)
                v |= (PTX_REG(b, t, s->regs[k]) & ((part >= 8 ? 0 : 1ull << (part * 8)) - 1)) << (k * part * 8);
            ptx__set(b, t, d->reg, v);
        } else if (d->kind == PTX_O_VEC) {
            unsigned part = whole / d->nvec;
            uint64_t v = ptx__src(b, t, s, (enum ptx_type)in->type);
            for (unsigned k = 0; k < d->nvec; k++)
                ptx__set(b, t, d->regs[k], v >> (k * part * 8));
        } else {
            ptx__set(b, t, d->reg, ptx__src(b, t, s, (enum ptx_type)in->type));
        }
    }
    return 0;
}

static int ptx__setp(ptx_block *b, const ptx_insn *in, const unsigned *lanes, unsigned n)
{
    if (in->nops > 3)
        return ptx_fault(b, cudaErrorNoKernelImageForDevice, in, "setp with a combining predicate is not executed");
    for (unsigned i = 0; i < n; i++) {
        unsigned t = lanes[i];
        int p = ptx_compare(in, ptx__src(b, t, &in->o[1], (enum ptx_type)in->type),
                            ptx__src(b, t, &in->o[2], (enum ptx_type)in->type));
        ptx__set(b, t, in->o[0].reg, (uint64_t)p);
        ptx__set(b, t, in->pdst, (uint64_t)!p);
    }
    return 0;
}

static int ptx__selp(ptx_block *b, const ptx_insn *in, const unsigned *lanes, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        unsigned t = lanes[i];
        enum ptx_type ty = (enum ptx_type)in->type;
        int p = ptx__src(b, t, &in->o[3], PTX_T_PRED) != 0;
        ptx__set(b, t, in->o[0].reg, ptx__src(b, t, &in->o[p ? 1 : 2], ty));
    }
    return 0;
}

static int ptx__arith(ptx_block *b, const ptx_insn *in, const unsigned *lanes, unsigned n)
{
    enum ptx_type ty = (enum ptx_type)in->type;
    for (unsigned i = 0; i < n; i++) {
        unsigned t = lanes[i];
        uint64_t a = in->nops > 1 ? ptx__src(b, t, &in->o[1], ty) : 0;
        uint64_t bb = in->nops > 2 ? ptx__src(b, t, &in->o[2], ty) : 0;
        uint64_t c = in->nops > 3 ? ptx__src(b, t, &in->o[3], ty) : 0, r;
        if (ptx_alu(in, a, bb, c, &r) != 0)
            return ptx_fault(b, cudaErrorNoKernelImageForDevice, in, "this instruction on .%s is not executed",
                             ptx_type_name(ty));
        ptx__set(b, t, in->o[0].reg, r);
    }
    return 0;
}

/* prmt, bfe, bfi, shf, bfind, copysign, testp: up to four sources. */
static int ptx__bitops(ptx_block *b, const ptx_insn *in, const unsigned *lanes, unsigned n)
{
    enum ptx_type ty = (enum ptx_type)in->type;
    for (unsigned i = 0; i < n; i++) {
        unsigned t = lanes[i];
        uint64_t src[4] = {0}, r;
        for (unsigned k = 1; k < in->nops && k <= 4; k++)
            src[k - 1] = ptx__src(b, t, &in->o[k], ty);
        if (ptx_bits(in, src, &r) != 0)
            return ptx_fault(b, cudaErrorNoKernelImageForDevice, in, "this form on .%s is not executed",
                             ptx_type_name(ty));
        ptx__set(b, t, in->o[0].reg, r);
    }
    return 0;
}

/* cp.async.{ca,cg}.shared.global [dst], [src], size[, src-size]: copied at once,
 * bytes past src-size zero. */
static int ptx__cp_async(ptx_block *b, const ptx_insn *in, const unsigned *lanes, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        unsigned t = lanes[i];
        uint64_t size = (uint64_t)in->o[2].imm, from = in->nops > 3 ? ptx__src(b, t, &in->o[3], PTX_T_U32) : size;
        if (size == 0 || size > 16 || from > size)
            return ptx_fault(b, cudaErrorNoKernelImageForDevice, in, "cp.async of %llu bytes",
                             (unsigned long long)size);
        unsigned char *dst = ptx_mem(b, t, in, PTX_SP_SHARED, ptx__address(b, t, &in->o[0]), (unsigned)size);
        unsigned char *src = from ? ptx_mem(b, t, in, PTX_SP_GLOBAL, ptx__address(b, t, &in->o[1]), (unsigned)from)
                                  : dst;
        if (dst == NULL || src == NULL)
            return -1;
        memmove(dst, src, from);
        memset(dst + from, 0, size - from);
    }
    return 0;
}

/* ---- warp-wide ---------------------------------------------------------------------- */

/* activemask: the lanes executing together. */
static uint32_t ptx__mask_of(const unsigned *lanes, unsigned n)
{
    uint32_t m = 0;
    for (unsigned i = 0; i < n; i++)
        m |= 1u << (lanes[i] % 32);
    return m;
}

/* The lanes of (lanes, n) that thread t's membermask operand o names (all of them
 * when the instruction has none): a mask of lane numbers. */
static uint32_t ptx__members(ptx_block *b, unsigned t, const ptx_insn *in, unsigned k, const unsigned *lanes,
                             unsigned n)
{
    uint32_t all = ptx__mask_of(lanes, n);
    return in->nops > k ? all & (uint32_t)ptx__src(b, t, &in->o[k], PTX_T_B32) : all;
}

/* redux.sync.OP.type d, a, membermask: each lane gets OP over the lanes of its
 * membermask executing with it (cooperative groups' labeled partitions give the
 * lanes of one warp different masks). */
static int ptx__redux(ptx_block *b, const ptx_insn *in, const unsigned *lanes, unsigned n)
{
    enum ptx_type ty = (enum ptx_type)in->type;
    uint64_t v[32], r[32];
    for (unsigned i = 0; i < n; i++)
        v[i] = ptx__src(b, lanes[i], &in->o[1], ty);
    for (unsigned i = 0; i < n; i++) {
        uint32_t members = ptx__members(b, lanes[i], in, 2, lanes, n);
        int first = 1;
        for (unsigned k = 0; k < n; k++) {
            if (!(members >> (lanes[k] % 32) & 1))
                continue;
            if (first)
                r[i] = v[k];
            else if (ptx_atomic((enum ptx_aop)in->sub, ty, r[i], v[k], 0, &r[i]) != 0)
                return ptx_fault(b, cudaErrorNoKernelImageForDevice, in, "redux of this operation on .%s",
                                 ptx_type_name(ty));
            first = 0;
        }
        if (first)
            r[i] = v[i];
    }
    for (unsigned i = 0; i < n; i++)
        ptx__set(b, lanes[i], in->o[0].reg, r[i]);
    return 0;
}

/* match.{any,all}.sync.bN d[|p], a, membermask: among the lanes of each lane's mask. */
static int ptx__match(ptx_block *b, const ptx_insn *in, const unsigned *lanes, unsigned n)
{
    enum ptx_type ty = (enum ptx_type)in->type;
    uint64_t v[32];
    for (unsigned i = 0; i < n; i++)
        v[i] = ptx__src(b, lanes[i], &in->o[1], ty);
    for (unsigned i = 0; i < n; i++) {
        uint32_t all = ptx__members(b, lanes[i], in, 2, lanes, n), same = 0;
        for (unsigned k = 0; k < n; k++)
            same |= (uint32_t)(v[k] == v[i]) << (lanes[k] % 32);
        same &= all;
        int equal = same == all;
        ptx__set(b, lanes[i], in->o[0].reg, in->mods & PTX_M_ALL ? (equal ? all : 0) : same);
        ptx__set(b, lanes[i], in->pdst, (uint64_t)equal);
    }
    return 0;
}

/* shfl.sync.MODE.b32 d[|p], a, b, c, membermask: each lane reads a from the lane its
 * mode names (clamped within its segment: c's low 5 bits and bits 8-12). */
static int ptx__shfl(ptx_block *b, const ptx_insn *in, const unsigned *lanes, unsigned n)
{
    uint64_t val[32];
    unsigned base = lanes[0] / 32 * 32, width = b->nthreads - base < 32 ? b->nthreads - base : 32;
    for (unsigned i = 0; i < width; i++)
        val[i] = ptx__src(b, base + i, &in->o[1], PTX_T_B32);
    for (unsigned i = 0; i < n; i++) {
        unsigned t = lanes[i];
        int ok;
        unsigned j = ptx_shfl_source(in->sub, t % 32, (uint32_t)ptx__src(b, t, &in->o[2], PTX_T_B32),
                                     (uint32_t)ptx__src(b, t, &in->o[3], PTX_T_B32), width, &ok);
        ptx__set(b, t, in->o[0].reg, val[j]);
        ptx__set(b, t, in->pdst, (uint64_t)ok);
    }
    return 0;
}

/* vote.sync.{all,any,uni}.pred d, p, mask; vote.sync.ballot.b32 d, p, mask -- over
 * the lanes of each lane's mask executing together. */
static int ptx__vote(ptx_block *b, const ptx_insn *in, const unsigned *lanes, unsigned n)
{
    uint32_t ballot = 0;
    for (unsigned i = 0; i < n; i++)
        if (ptx__src(b, lanes[i], &in->o[1], PTX_T_PRED) != 0)
            ballot |= 1u << (lanes[i] % 32);
    for (unsigned i = 0; i < n; i++) {
        uint32_t members = ptx__members(b, lanes[i], in, 2, lanes, n), yes = ballot & members;
        uint64_t r = in->sub == PTX_V_BALLOT ? yes : in->sub == PTX_V_ALL ? yes == members
                   : in->sub == PTX_V_ANY ? yes != 0 : (yes == 0 || yes == members);
        ptx__set(b, lanes[i], in->o[0].reg, r);
    }
    return 0;
}

/* ---- calls -------------------------------------------------------------------------- */

/* Copies n bytes of variable `from` (in the frame at pfrom) to `to` (at pto). */
static void ptx__copy_param(ptx_block *b, unsigned t, int32_t from, uint64_t pfrom, int32_t to, uint64_t pto)
{
    const ptx_sym *s = &b->m->syms[from], *d = &b->m->syms[to];
    unsigned char *frames = b->fparams + (size_t)t * b->param_stride;
    memcpy(frames + pto + d->offset, frames + pfrom + s->offset, s->size < d->size ? s->size : d->size);
}

/* call: a new frame above the caller's, the arguments copied into the callee's
 * parameters, and the callee's first instruction next. */
static int ptx__call(ptx_block *b, const ptx_insn *in, unsigned t)
{
    const ptx_func *caller = ptx_fn(b, t), *callee = &b->m->funcs[in->o[1].imm];
    uint32_t first = (uint32_t)in->o[2].imm, nargs = (uint32_t)in->o[3].imm;
    size_t rb = b->rbase[t] + caller->nregs;
    uint64_t pb = b->pbase[t] + ptx__frame_params(caller), lb = b->lbase[t] + caller->local_bytes;
    if (b->depth[t] + 1u >= b->max_depth || rb + callee->nregs > b->reg_stride ||
        pb + ptx__frame_params(callee) > b->param_stride || lb + callee->local_bytes > b->local_stride)
        return ptx_fault(b, cudaErrorLaunchFailure, in, "the call stack is full (%u calls deep)", b->depth[t]);
    if (nargs > callee->nparams - callee->nrets)
        return ptx_fault(b, cudaErrorLaunchFailure, in, "%u arguments for %s, which takes %u", nargs, callee->name,
                         callee->nparams - callee->nrets);
    b->frames[(size_t)t * b->max_depth + b->depth[t]] =
        (ptx_frame){b->fn[t], b->pc[t], b->rbase[t], b->pbase[t], b->lbase[t], in->o[0].sym};
    for (uint32_t i = 0; i < nargs; i++)
        ptx__copy_param(b, t, caller->call_args[first + i], b->pbase[t], callee->params[callee->nrets + i], pb);
    memset(&b->regs[(size_t)t * b->reg_stride + rb], 0, callee->nregs * sizeof *b->regs);
    b->depth[t]++;
    b->fn[t] = callee->index;
    b->pc[t] = 0;
    b->rbase[t] = (uint32_t)rb;
    b->pbase[t] = pb;
    b->lbase[t] = lb;
    return 0;
}

int ptx_return(ptx_block *b, unsigned t)
{
    if (b->depth[t] == 0) {
        b->state[t] = PTX_LANE_EXIT;
        return 0;
    }
    const ptx_func *callee = ptx_fn(b, t);
    const ptx_frame *fr = &b->frames[(size_t)t * b->max_depth + b->depth[t] - 1];
    if (fr->ret_sym >= 0 && callee->nrets > 0)
        ptx__copy_param(b, t, callee->params[0], b->pbase[t], fr->ret_sym, fr->pbase);
    b->depth[t]--;
    b->fn[t] = fr->fn;
    b->pc[t] = fr->pc + 1;
    b->rbase[t] = fr->rbase;
    b->pbase[t] = fr->pbase;
    b->lbase[t] = fr->lbase;
    return 0;
}

int ptx_bar_red_input(ptx_block *b, unsigned t, const ptx_insn *in)
{
    return ptx__src(b, t, &in->o[in->nops - 1], PTX_T_PRED) != 0;
}

void ptx_bar_red_output(ptx_block *b, unsigned t, const ptx_insn *in, uint64_t v)
{
    ptx__set(b, t, in->o[0].reg, v);
}

unsigned char *ptx_call_arg(ptx_block *b, unsigned t, const ptx_insn *in, unsigned k, uint64_t *size)
{
    const ptx_func *caller = ptx_fn(b, t);
    int32_t s = k == UINT32_MAX ? in->o[0].sym : caller->call_args[in->o[2].imm + k];
    if (s < 0)
        return NULL;
    *size = b->m->syms[s].size;
    return b->fparams + (size_t)t * b->param_stride + b->pbase[t] + b->m->syms[s].offset;
}

uint64_t ptx_call_arg_bits(ptx_block *b, unsigned t, const ptx_insn *in, unsigned k)
{
    uint64_t v = 0, size = 0;
    const unsigned char *p = ptx_call_arg(b, t, in, k, &size);
    if (p != NULL)
        memcpy(&v, p, size < 8 ? size : 8);
    return v;
}

/* ---- dispatch ----------------------------------------------------------------------- */

static int ptx__control(ptx_block *b, const ptx_insn *in, const unsigned *lanes, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        unsigned t = lanes[i];
        switch (in->op) {
        case PTX_OP_BRA: b->pc[t] = (uint32_t)in->o[0].imm; break;
        case PTX_OP_BAR:
        case PTX_OP_BARRED: b->state[t] = PTX_LANE_BAR; break; /* released past it by the scheduler */
        case PTX_OP_CALL:
            if (ptx__call(b, in, t) != 0)
                return -1;
            break;
        case PTX_OP_RET: ptx_return(b, t); break;
        default: b->state[t] = PTX_LANE_EXIT; break;         /* exit: out of the kernel from any depth */
        }
    }
    return 0;
}

int ptx_exec(ptx_block *b, const ptx_insn *in, const unsigned *lanes, unsigned n)
{
    int rc;
    b->clock++;
    b->lane_insns += n;
    switch (in->op) {
    case PTX_OP_BRA:
    case PTX_OP_BAR:
    case PTX_OP_BARRED:
    case PTX_OP_CALL:
    case PTX_OP_RET:
    case PTX_OP_EXIT: return ptx__control(b, in, lanes, n);
    case PTX_OP_MOV: rc = ptx__mov(b, in, lanes, n); break;
    case PTX_OP_LD: rc = ptx__ld(b, in, lanes, n); break;
    case PTX_OP_ST: rc = ptx__st(b, in, lanes, n); break;
    case PTX_OP_CVTA: rc = ptx__cvta(b, in, lanes, n); break;
    case PTX_OP_CVT: rc = ptx__cvt(b, in, lanes, n); break;
    case PTX_OP_SETP: rc = ptx__setp(b, in, lanes, n); break;
    case PTX_OP_SELP: rc = ptx__selp(b, in, lanes, n); break;
    case PTX_OP_ATOM:
    case PTX_OP_RED: rc = ptx__atom(b, in, lanes, n); break;
    case PTX_OP_SHFL: rc = ptx__shfl(b, in, lanes, n); break;
    case PTX_OP_VOTE: rc = ptx__vote(b, in, lanes, n); break;
    case PTX_OP_MEMBAR:
    case PTX_OP_NOP: rc = 0; break; /* one thread at a time: every access is already ordered */
    case PTX_OP_PRMT:
    case PTX_OP_BFE:
    case PTX_OP_BFI:
    case PTX_OP_SHF:
    case PTX_OP_BFIND:
    case PTX_OP_COPYSIGN:
    case PTX_OP_BMSK:
    case PTX_OP_DP4A:
    case PTX_OP_DP2A:
    case PTX_OP_TESTP: rc = ptx__bitops(b, in, lanes, n); break;
    case PTX_OP_CPASYNC: rc = ptx__cp_async(b, in, lanes, n); break;
    case PTX_OP_REDUX: rc = ptx__redux(b, in, lanes, n); break;
    case PTX_OP_MATCH: rc = ptx__match(b, in, lanes, n); break;
    case PTX_OP_ACTIVEMASK:
        for (unsigned i = 0; i < n; i++)
            ptx__set(b, lanes[i], in->o[0].reg, ptx__mask_of(lanes, n));
        rc = 0;
        break;
    case PTX_OP_TRAP: return ptx_fault(b, cudaErrorLaunchFailure, in, "trap");
    case PTX_OP_VPRINTF: rc = ptx_vprintf(b, in, lanes, n); break;
    case PTX_OP_ASSERTFAIL: return ptx_assertfail(b, in, lanes, n);
    case PTX_OP_SETCOND: rc = ptx_setcond(b, in, lanes, n); break;
    default: rc = ptx__arith(b, in, lanes, n); break;
    }
    for (unsigned i = 0; rc == 0 && i < n; i++)
        b->pc[lanes[i]]++;
    return rc;
}
