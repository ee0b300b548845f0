/* ptx_parse.c -- parses the PTX text nvcc and NVVM emit into a ptx_module
 * (server/emu/ptx/ptx_ir.h): module variables, `.entry` and `.func` bodies with
 * their register declarations, local and shared variables, labels and
 * instructions, operands resolved to numbers once. Directives that only carry debug
 * or tuning information (.file, .loc, .section, .pragma, .maxntid, ...) are
 * skipped. An instruction the engine cannot execute marks its function
 * unsupported, naming it; parsing goes on, so other kernels of the module run. */
#include "ptx_parse.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ptx_decode.h"
#include "ptx_lex.h"

/* A register declaration: `name` alone, or `name<count>` (name0 .. name{count-1}). */
typedef struct ptx__regdecl {
    char name[PTX_TOK_MAX];
    uint32_t count;    /* 0: a single register called `name` */
    uint32_t first;    /* its first register number */
} ptx__regdecl;

typedef struct ptx__parser {
    ptx_lex lx;
    ptx_module *m;
    ptx_func *f;                 /* function being parsed */
    ptx__regdecl *regs;
    size_t nregs, capregs;
    char **labels;               /* label names, with their instruction index */
    size_t *label_at, nlabels, caplabels;
    char **pending;              /* branch target names per instruction (NULL: none) */
    struct ptx__callsite { uint32_t func, insn; char *callee; } *calls;
    size_t ncalls, capcalls;     /* calls whose callee is named at the end of the module */
    char *err;
    size_t errlen;
    int failed;
    unsigned operand;            /* index of the operand being read in its instruction */
} ptx__parser;

static void ptx__fail(ptx__parser *P, const char *fmt, ...)
{
    if (P->failed)
        return;
    P->failed = 1;
    int n = snprintf(P->err, P->errlen, "PTX line %u: ", P->lx.line);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < P->errlen)
        vsnprintf(P->err + n, P->errlen - (size_t)n, fmt, ap);
    va_end(ap);
}

static void *ptx__grow(void *p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return p;
    size_t cap2 = *cap ? *cap * 2 : 16;
    while (cap2 < need)
        cap2 *= 2;
    void *q = realloc(p, cap2 * elem);
    if (q != NULL)
        *cap = cap2;
    return q;
}

static int ptx__next(ptx__parser *P)
{
    if (!ptx_lex_next(&P->lx))
        return 0;
    if (P->lx.too_long)
        ptx__fail(P, "a name longer than %d characters", PTX_TOK_MAX - 1);
    return !P->failed;
}

static int ptx__expect(ptx__parser *P, const char *s)
{
    if (!ptx_lex_is(&P->lx, s)) {
        ptx__fail(P, "expected '%s', found '%s'", s, P->lx.tok);
        return 0;
    }
    return ptx__next(P);
}

static uint64_t ptx__number(ptx__parser *P, const char *s)
{
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 0);
    if (end == s || (*end != '\0' && *end != 'U' && *end != 'u'))
        ptx__fail(P, "not a number: '%s'", s);
    return v;
}

/* ---- symbols ---------------------------------------------------------------------- */

static int32_t ptx__add_sym(ptx__parser *P, const char *name, enum ptx_space sp, uint64_t size, uint32_t align)
{
    ptx_module *m = P->m;
    ptx_sym *s = ptx__grow(m->syms, &m->capsyms, m->nsyms + 1, sizeof *s);
    if (s == NULL) {
        ptx__fail(P, "out of memory");
        return -1;
    }
    m->syms = s;
    m->syms[m->nsyms] = (ptx_sym){strdup(name), sp, 0, size, align ? align : 1,
                                  P->f != NULL ? (int32_t)(P->f - m->funcs) : -1, 0};
    return (int32_t)m->nsyms++;
}

/* The symbol `name` visible in the current function (its own, then the module's), or
 * -1. Of the function's own, the latest declared: nvcc declares each call's
 * `param0` anew in a nested block, with the type of that call's argument. */
static int32_t ptx__find_sym(const ptx__parser *P, const char *name)
{
    int32_t self = P->f != NULL ? (int32_t)(P->f - P->m->funcs) : -1, own = -1, module = -1;
    for (size_t i = 0; i < P->m->nsyms; i++) {
        const ptx_sym *s = &P->m->syms[i];
        if (strcmp(s->name, name) != 0 || (s->owner != -1 && s->owner != self))
            continue;
        if (s->owner == self)
            own = (int32_t)i;
        else
            module = (int32_t)i;
    }
    return own >= 0 ? own : module;
}

/* ---- types and declarations -------------------------------------------------------- */

static int ptx__type_of(const char *tok, enum ptx_type *out)
{
    ptx_insn probe;
    memset(&probe, 0, sizeof probe);
    char buf[PTX_TOK_MAX + 8];
    snprintf(buf, sizeof buf, "mov%s", tok);
    if (tok[0] != '.' || ptx_decode_opcode(buf, &probe) != 0 || probe.type == PTX_T_NONE || probe.type2 != 0)
        return 0;
    *out = (enum ptx_type)probe.type;
    return 1;
}

/* `.align N` and the type among other attributes (`.ptr`, `.global`,
 * `.attribute(.managed)`...), then `name`, `name[N]` or `name[]`: a variable or
 * parameter of space sp, made a symbol; what follows it (an initialiser, ',' or
 * ')') is the caller's. A managed variable is ordinary memory here: the client
 * keeps the host's view coherent (client/crm_managed.h). */
static int32_t ptx__declarator(ptx__parser *P, enum ptx_space sp)
{
    uint32_t align = 0;
    int pointer = 0;
    enum ptx_type t = PTX_T_NONE;
    while (P->lx.tok[0] == '.' && !P->failed) {
        if (ptx_lex_is(&P->lx, ".ptr")) {
            pointer = 1; /* `.ptr [.space] .align N`: N is what it points to's alignment */
        } else if (ptx_lex_is(&P->lx, ".attribute")) {
            ptx__next(P);
            ptx__expect(P, "(");
            while (!P->failed && !ptx_lex_is(&P->lx, ")") && P->lx.tok[0] != '\0')
                ptx__next(P);
        } else if (ptx_lex_is(&P->lx, ".align")) {
            ptx__next(P);
            if (!pointer)
                align = (uint32_t)ptx__number(P, P->lx.tok);
        } else {
            ptx__type_of(P->lx.tok, &t);
        }
        ptx__next(P);
    }
    char name[PTX_TOK_MAX];
    snprintf(name, sizeof name, "%s", P->lx.tok);
    uint64_t elem = t == PTX_T_NONE ? 1 : ptx_type_size(t), count = 1;
    ptx__next(P);
    if (ptx_lex_is(&P->lx, "[")) {
        ptx__next(P);
        count = ptx_lex_is(&P->lx, "]") ? 0 : ptx__number(P, P->lx.tok);
        if (!ptx_lex_is(&P->lx, "]"))
            ptx__next(P);
        ptx__expect(P, "]");
    }
    return ptx__add_sym(P, name, sp, elem * count, align ? align : (uint32_t)elem);
}

/* A declarator, then an optional initialiser (skipped: module globals are
 * initialised by the emulated device from the cubin or their own image), then ';'. */
static int32_t ptx__var_decl(ptx__parser *P, enum ptx_space sp)
{
    int32_t s = ptx__declarator(P, sp);
    while (!ptx_lex_is(&P->lx, ";") && P->lx.tok[0] != '\0' && !P->failed)
        ptx__next(P);
    ptx__next(P);
    return s;
}

static uint64_t ptx__align_up(uint64_t v, uint64_t a)
{
    return a > 1 ? (v + a - 1) / a * a : v;
}

/* `.reg .type name<N>, name2;` */
static void ptx__reg_decl(ptx__parser *P)
{
    enum ptx_type t = PTX_T_NONE;
    ptx__next(P);
    while (P->lx.tok[0] == '.' && !P->failed) {
        if (!ptx__type_of(P->lx.tok, &t) && !ptx_lex_is(&P->lx, ".v2") && !ptx_lex_is(&P->lx, ".v4"))
            ptx__fail(P, "unknown register type %s", P->lx.tok);
        ptx__next(P);
    }
    while (!P->failed && !ptx_lex_is(&P->lx, ";")) {
        if (P->lx.tok[0] == '\0') {
            ptx__fail(P, "the text ends inside a register declaration");
            return;
        }
        ptx__regdecl d = {.first = P->f->nregs};
        snprintf(d.name, sizeof d.name, "%s", P->lx.tok);
        ptx__next(P);
        if (ptx_lex_is(&P->lx, "<")) {
            ptx__next(P);
            d.count = (uint32_t)ptx__number(P, P->lx.tok);
            ptx__next(P);
            ptx__expect(P, ">");
        }
        uint32_t n = d.count ? d.count : 1;
        if (n > (1u << 20) || P->f->nregs > (1u << 24)) {
            ptx__fail(P, "too many registers");
            return;
        }
        ptx__regdecl *r = ptx__grow(P->regs, &P->capregs, P->nregs + 1, sizeof *r);
        if (r != NULL) /* kept at once: the old block may be gone */
            P->regs = r;
        size_t cap = P->f->nregs;
        uint8_t *types = r != NULL ? realloc(P->f->reg_type, cap + n) : NULL;
        if (types != NULL)
            P->f->reg_type = types;
        if (r == NULL || types == NULL) {
            ptx__fail(P, "out of memory");
            return;
        }
        P->regs[P->nregs++] = d;
        memset(types + cap, t, n);
        P->f->nregs += n;
        if (ptx_lex_is(&P->lx, ","))
            ptx__next(P);
    }
    ptx__next(P);
}

/* The register number of `name`, or -1. */
static int32_t ptx__reg(const ptx__parser *P, const char *name)
{
    size_t len = strlen(name), digits = 0;
    while (digits < len && isdigit((unsigned char)name[len - 1 - digits]))
        digits++;
    for (size_t i = P->nregs; i-- > 0;) {
        const ptx__regdecl *d = &P->regs[i];
        if (d->count == 0 && strcmp(d->name, name) == 0)
            return (int32_t)d->first;
        if (d->count > 0 && digits > 0 && strlen(d->name) == len - digits && memcmp(d->name, name, len - digits) == 0) {
            unsigned long k = strtoul(name + len - digits, NULL, 10);
            if (k < d->count)
                return (int32_t)(d->first + k);
        }
    }
    return -1;
}


/* ---- operands ----------------------------------------------------------------------- */

static const struct { const char *name; enum ptx_sreg sreg; } ptx__sregs[] = {
    {"%tid.x", PTX_S_TID_X}, {"%tid.y", PTX_S_TID_Y}, {"%tid.z", PTX_S_TID_Z},
    {"%ntid.x", PTX_S_NTID_X}, {"%ntid.y", PTX_S_NTID_Y}, {"%ntid.z", PTX_S_NTID_Z},
    {"%ctaid.x", PTX_S_CTAID_X}, {"%ctaid.y", PTX_S_CTAID_Y}, {"%ctaid.z", PTX_S_CTAID_Z},
    {"%nctaid.x", PTX_S_NCTAID_X}, {"%nctaid.y", PTX_S_NCTAID_Y}, {"%nctaid.z", PTX_S_NCTAID_Z},
    {"%laneid", PTX_S_LANEID}, {"%warpid", PTX_S_WARPID}, {"%nwarpid", PTX_S_NWARPID},
    {"%clock", PTX_S_CLOCK}, {"%clock64", PTX_S_CLOCK64}, {"%globaltimer", PTX_S_GLOBALTIMER},
    {"%smid", PTX_S_SMID}, {"%nsmid", PTX_S_NSMID}, {"%lanemask_eq", PTX_S_LANEMASK_EQ},
    {"%lanemask_lt", PTX_S_LANEMASK_LT}, {"%lanemask_le", PTX_S_LANEMASK_LE},
    {"%lanemask_gt", PTX_S_LANEMASK_GT}, {"%lanemask_ge", PTX_S_LANEMASK_GE},
    {"%dynamic_smem_size", PTX_S_DYN_SMEM},
};

/* A number: decimal, hex, octal, 0f and 8 hex digits (f32 bits), 0d and 16 hex
 * digits (f64 bits) or a decimal float; with an optional leading '-'. */
static void ptx__number_operand(ptx__parser *P, const char *tok, int negative, ptx_operand *o)
{
    if ((tok[0] == '0') && (tok[1] == 'f' || tok[1] == 'F' || tok[1] == 'd' || tok[1] == 'D')) {
        char hex[PTX_TOK_MAX + 2];
        snprintf(hex, sizeof hex, "0x%s", tok + 2);
        o->kind = PTX_O_IMM;
        o->imm = (int64_t)ptx__number(P, hex);
        if (negative) /* flips the sign bit of the float */
            o->imm ^= tok[1] == 'f' || tok[1] == 'F' ? (int64_t)0x80000000 : INT64_MIN;
        return;
    }
    if (strpbrk(tok, ".eE") != NULL && strncmp(tok, "0x", 2) != 0 && strncmp(tok, "0X", 2) != 0) {
        o->kind = PTX_O_FIMM;
        o->fimm = strtod(tok, NULL) * (negative ? -1 : 1);
        return;
    }
    o->kind = PTX_O_IMM;
    uint64_t v = ptx__number(P, tok);
    o->imm = negative ? -(int64_t)v : (int64_t)v;
}

/* `[reg]`, `[reg+imm]`, `[reg+-imm]`, `[sym]`, `[sym+imm]`, `[imm]`. */
static void ptx__address(ptx__parser *P, ptx_operand *o)
{
    o->kind = PTX_O_ADDR;
    o->reg = o->sym = -1;
    ptx__next(P);
    if (P->lx.tok[0] == '%') {
        o->reg = ptx__reg(P, P->lx.tok);
        if (o->reg < 0)
            ptx__fail(P, "unknown register %s", P->lx.tok);
        ptx__next(P);
    } else if (isdigit((unsigned char)P->lx.tok[0])) {
        o->imm = (int64_t)ptx__number(P, P->lx.tok);
        ptx__next(P);
    } else {
        o->sym = ptx__find_sym(P, P->lx.tok);
        if (o->sym < 0)
            ptx__fail(P, "unknown symbol %s", P->lx.tok);
        ptx__next(P);
    }
    if (ptx_lex_is(&P->lx, "+") || ptx_lex_is(&P->lx, "-")) {
        int neg = ptx_lex_is(&P->lx, "-");
        ptx__next(P);
        if (ptx_lex_is(&P->lx, "-")) { /* [%r+-4]: nvcc writes negative offsets so */
            neg = !neg;
            ptx__next(P);
        }
        int64_t off = (int64_t)ptx__number(P, P->lx.tok);
        o->imm += neg ? -off : off;
        ptx__next(P);
    }
    ptx__expect(P, "]");
}

static void ptx__unsupported(ptx__parser *P, const char *what);

/* A register, `_`, a special register or a symbol's address. */
static void ptx__name_operand(ptx__parser *P, const char *tok, ptx_operand *o)
{
    if (strcmp(tok, "_") == 0) {
        o->kind = PTX_O_REG;
        o->reg = -1;
        return;
    }
    for (size_t i = 0; i < sizeof ptx__sregs / sizeof ptx__sregs[0]; i++)
        if (strcmp(tok, ptx__sregs[i].name) == 0) {
            o->kind = PTX_O_SREG;
            o->imm = ptx__sregs[i].sreg;
            return;
        }
    int32_t r = ptx__reg(P, tok);
    if (r >= 0) {
        o->kind = PTX_O_REG;
        o->reg = r;
        return;
    }
    o->sym = ptx__find_sym(P, tok);
    if (o->sym >= 0) {
        o->kind = PTX_O_SYM;
        return;
    }
    if (strcmp(tok, "WARP_SZ") == 0) { /* PTX's predefined constant */
        o->kind = PTX_O_IMM;
        o->imm = 32;
        return;
    }
    if (tok[0] == '%' && P->operand > 0) { /* a special register the engine does not provide */
        char what[PTX_TOK_MAX + 32];
        snprintf(what, sizeof what, "special register %s", tok);
        ptx__unsupported(P, what);
        o->kind = PTX_O_IMM;
        return;
    }
    if (tok[0] == '%')
        ptx__fail(P, "unknown register %s", tok);
    o->kind = PTX_O_LABEL; /* resolved once the body is read */
}

static void ptx__vector(ptx__parser *P, ptx_operand *o)
{
    o->kind = PTX_O_VEC;
    ptx__next(P);
    while (!P->failed && !ptx_lex_is(&P->lx, "}")) {
        if (o->nvec == 4) {
            ptx__fail(P, "a vector of more than 4 registers");
            return;
        }
        ptx_operand e = {0};
        ptx__name_operand(P, P->lx.tok, &e);
        if (e.kind != PTX_O_REG)
            ptx__fail(P, "a vector element is not a register: %s", P->lx.tok);
        o->regs[o->nvec++] = e.reg;
        ptx__next(P);
        if (ptx_lex_is(&P->lx, ","))
            ptx__next(P);
        if (P->lx.tok[0] == '\0')
            ptx__fail(P, "the text ends inside a vector");
    }
    if (o->nvec == 0)
        ptx__fail(P, "an empty vector");
    ptx__next(P);
}

/* One operand; a label name is kept in *label for the second pass. */
static void ptx__operand(ptx__parser *P, ptx_operand *o, char **label)
{
    memset(o, 0, sizeof *o);
    o->reg = o->sym = -1;
    if (ptx_lex_is(&P->lx, "[")) {
        ptx__address(P, o);
    } else if (ptx_lex_is(&P->lx, "{")) {
        ptx__vector(P, o);
    } else if (ptx_lex_is(&P->lx, "-") || isdigit((unsigned char)P->lx.tok[0])) {
        int neg = ptx_lex_is(&P->lx, "-");
        if (neg)
            ptx__next(P);
        ptx__number_operand(P, P->lx.tok, neg, o);
        ptx__next(P);
    } else if (ptx_lex_is(&P->lx, "!")) {
        ptx__next(P);
        ptx__name_operand(P, P->lx.tok, o);
        o->neg = 1;
        ptx__next(P);
    } else {
        ptx__name_operand(P, P->lx.tok, o);
        if (o->kind == PTX_O_LABEL && *label == NULL)
            *label = strdup(P->lx.tok);
        ptx__next(P);
    }
}

/* ---- instructions ------------------------------------------------------------------- */

static ptx_insn *ptx__new_insn(ptx__parser *P)
{
    ptx_func *f = P->f;
    ptx_insn *v = ptx__grow(f->insns, &f->capinsns, f->ninsns + 1, sizeof *v);
    if (v != NULL) /* kept at once: the old block may be gone */
        f->insns = v;
    char **pend = v ? realloc(P->pending, f->capinsns * sizeof *pend) : NULL;
    if (pend != NULL)
        P->pending = pend;
    if (v == NULL || pend == NULL) {
        ptx__fail(P, "out of memory");
        return NULL;
    }
    P->pending[f->ninsns] = NULL;
    ptx_insn *in = &f->insns[f->ninsns++];
    memset(in, 0, sizeof *in);
    in->guard = in->pdst = -1;
    in->line = P->lx.line;
    return in;
}

static void ptx__unsupported(ptx__parser *P, const char *what)
{
    if (P->f->unsupported == NULL) {
        P->f->unsupported = strdup(what);
        P->f->unsupported_line = P->lx.line;
    }
}

/* One argument of a call: a parameter-space variable of the calling function. */
static void ptx__call_arg(ptx__parser *P)
{
    ptx_func *f = P->f;
    int32_t s = ptx__find_sym(P, P->lx.tok);
    if (s < 0 || P->m->syms[s].space != PTX_SP_PARAM) {
        ptx__fail(P, "a call's argument is not a parameter variable: %s", P->lx.tok);
        return;
    }
    int32_t *v = realloc(f->call_args, (f->ncall_args + 1) * sizeof *v);
    if (v == NULL) {
        ptx__fail(P, "out of memory");
        return;
    }
    f->call_args = v;
    f->call_args[f->ncall_args++] = s;
    ptx__next(P);
}

/* call[.uni] [(result),] callee[, (arguments)]; -- a direct call, its callee named
 * at the end of the module. A call through a register (with a prototype) is not
 * executed. Returns 0, or -1 when the call is one the engine does not make. */
static int ptx__call(ptx__parser *P, ptx_insn *in)
{
    in->op = PTX_OP_CALL;
    in->nops = 4;
    in->o[0].kind = PTX_O_NONE;
    in->o[0].sym = in->o[0].reg = -1;
    if (ptx_lex_is(&P->lx, "(")) {
        ptx__next(P);
        in->o[0].kind = PTX_O_SYM;
        in->o[0].sym = ptx__find_sym(P, P->lx.tok);
        ptx__next(P);
        if (in->o[0].sym < 0 || !ptx_lex_is(&P->lx, ")")) /* several results, or an unknown one */
            return -1;
        ptx__next(P);
        if (ptx_lex_is(&P->lx, ","))
            ptx__next(P);
    }
    if (P->lx.tok[0] == '%' || P->lx.tok[0] == '\0' || P->lx.punct)
        return -1; /* through a register */
    struct ptx__callsite *c = ptx__grow(P->calls, &P->capcalls, P->ncalls + 1, sizeof *c);
    if (c == NULL) {
        ptx__fail(P, "out of memory");
        return -1;
    }
    P->calls = c;
    P->calls[P->ncalls++] = (struct ptx__callsite){P->f->index, (uint32_t)(P->f->ninsns - 1), strdup(P->lx.tok)};
    ptx__next(P);
    in->o[2].imm = P->f->ncall_args;
    if (ptx_lex_is(&P->lx, ",")) {
        ptx__next(P);
        ptx__expect(P, "(");
        while (!P->failed && !ptx_lex_is(&P->lx, ")") && P->lx.tok[0] != '\0') {
            ptx__call_arg(P);
            if (ptx_lex_is(&P->lx, ","))
                ptx__next(P);
        }
        ptx__expect(P, ")");
    }
    in->o[3].imm = (int64_t)(P->f->ncall_args - (uint32_t)in->o[2].imm);
    return ptx_lex_is(&P->lx, ";") ? 0 : -1; /* a prototype after the arguments: indirect */
}

/* [@[!]%p] opcode operand, operand ... ; -- the guard was read by the caller. */
static void ptx__instruction(ptx__parser *P, int32_t guard, int neg)
{
    ptx_insn *in = ptx__new_insn(P);
    if (in == NULL)
        return;
    in->guard = guard;
    in->guard_neg = (uint8_t)neg;
    char opcode[PTX_TOK_MAX];
    snprintf(opcode, sizeof opcode, "%s", P->lx.tok);
    ptx__next(P);
    if ((strcmp(opcode, "call") == 0 || strcmp(opcode, "call.uni") == 0) && ptx__call(P, in) == 0) {
        ptx__next(P);
        return;
    }
    if (in->op == PTX_OP_CALL || ptx_decode_opcode(opcode, in) != 0) { /* its operands may use syntax we do not read either */
        in->op = PTX_OP_INVALID;
        ptx__unsupported(P, opcode);
        while (!P->failed && !ptx_lex_is(&P->lx, ";") && P->lx.tok[0] != '\0')
            ptx__next(P);
        ptx__next(P);
        return;
    }
    char *label = NULL;
    while (!P->failed && !ptx_lex_is(&P->lx, ";") && P->lx.tok[0] != '\0') {
        if (in->nops == PTX_MAX_OPS) {
            ptx__fail(P, "too many operands for %s", opcode);
            break;
        }
        P->operand = in->nops;
        ptx__operand(P, &in->o[in->nops++], &label);
        if (ptx_lex_is(&P->lx, "|")) { /* a second destination: `%r|%p` */
            ptx__next(P);
            in->pdst = ptx__reg(P, P->lx.tok);
            ptx__next(P);
        }
        if (ptx_lex_is(&P->lx, ","))
            ptx__next(P);
    }
    P->pending[P->f->ninsns - 1] = label;
    ptx__next(P);
}

static void ptx__label(ptx__parser *P, const char *name)
{
    char **l = ptx__grow(P->labels, &P->caplabels, P->nlabels + 1, sizeof *l);
    size_t cap = P->caplabels;
    size_t *at = l ? realloc(P->label_at, cap * sizeof *at) : NULL;
    if (l == NULL || at == NULL) {
        ptx__fail(P, "out of memory");
        return;
    }
    P->labels = l;
    P->label_at = at;
    P->labels[P->nlabels] = strdup(name);
    P->label_at[P->nlabels++] = P->f->ninsns;
}

/* Gives every branch its target instruction. */
static void ptx__resolve_labels(ptx__parser *P)
{
    ptx_func *f = P->f;
    for (size_t i = 0; i < f->ninsns && !P->failed; i++) {
        if (P->pending[i] == NULL)
            continue;
        size_t k = 0;
        while (k < P->nlabels && strcmp(P->labels[k], P->pending[i]) != 0)
            k++;
        for (int j = 0; j < f->insns[i].nops; j++)
            if (f->insns[i].o[j].kind == PTX_O_LABEL)
                f->insns[i].o[j].imm = k < P->nlabels ? (int64_t)P->label_at[k] : -1;
        if (k == P->nlabels && f->insns[i].op != PTX_OP_INVALID) {
            P->lx.line = f->insns[i].line;
            ptx__fail(P, "unknown label or symbol %s", P->pending[i]);
        }
    }
    for (size_t i = 0; i < f->ninsns; i++)
        free(P->pending[i]);
    for (size_t k = 0; k < P->nlabels; k++)
        free(P->labels[k]);
    P->nlabels = 0;
}

/* ---- functions ---------------------------------------------------------------------- */

/* Skips a directive's arguments up to the end of its line's statement: the debug
 * and tuning directives (.loc, .file, .pragma, .maxntid, ...). */
static void ptx__skip_directive(ptx__parser *P)
{
    unsigned line = P->lx.line;
    ptx__next(P);
    while (!P->failed && P->lx.tok[0] != '\0' && P->lx.line == line && !ptx_lex_is(&P->lx, ";") &&
           !ptx_lex_is(&P->lx, "{") && !ptx_lex_is(&P->lx, "}")) {
        ptx_lex_skip_string(&P->lx);
        ptx__next(P);
    }
    if (ptx_lex_is(&P->lx, ";"))
        ptx__next(P);
}

/* A function-scope variable: its place in the thread's local memory or the
 * block's shared memory. */
static void ptx__func_var(ptx__parser *P, enum ptx_space sp)
{
    ptx__next(P);
    int32_t s = ptx__var_decl(P, sp);
    if (s < 0)
        return;
    ptx_sym *sym = &P->m->syms[s];
    if (sp == PTX_SP_PARAM) { /* a call's argument or result: after the function's own parameters */
        sym->in_frame = 1;
        sym->offset = ptx__align_up(P->f->param_bytes + P->f->call_bytes, sym->align);
        P->f->call_bytes = sym->offset + sym->size - P->f->param_bytes;
        return;
    }
    uint64_t *used = sp == PTX_SP_LOCAL ? &P->f->local_bytes : &P->f->shared_bytes;
    sym->offset = ptx__align_up(*used, sym->align);
    *used = sym->offset + sym->size;
}

static void ptx__body_statement(ptx__parser *P)
{
    const char *t = P->lx.tok;
    if (ptx_lex_is(&P->lx, ".reg")) {
        ptx__reg_decl(P);
    } else if (ptx_lex_is(&P->lx, ".local")) {
        ptx__func_var(P, PTX_SP_LOCAL);
    } else if (ptx_lex_is(&P->lx, ".shared")) {
        ptx__func_var(P, PTX_SP_SHARED);
    } else if (ptx_lex_is(&P->lx, ".param")) {
        ptx__func_var(P, PTX_SP_PARAM); /* a call's argument or result */
    } else if (t[0] == '.') {
        ptx__skip_directive(P);
    } else if (ptx_lex_is(&P->lx, "{") || ptx_lex_is(&P->lx, "}")) {
        ptx__next(P); /* nested scopes: a name declared again in one is its latest declaration */
    } else if (ptx_lex_is(&P->lx, "@")) {
        ptx__next(P);
        int neg = ptx_lex_is(&P->lx, "!");
        if (neg)
            ptx__next(P);
        int32_t g = ptx__reg(P, P->lx.tok);
        if (g < 0)
            ptx__fail(P, "unknown predicate %s", P->lx.tok);
        ptx__next(P);
        ptx__instruction(P, g, neg);
    } else if (ptx_lex_peek(&P->lx) == ':') {
        ptx__label(P, t);
        ptx__next(P);
        ptx__next(P);
    } else {
        ptx__instruction(P, -1, 0);
    }
}

/* `( .param ... , .param ... )`: the parameters, laid out as the driver lays out an
 * entry's parameter buffer (each at the next multiple of its alignment). */
static void ptx__params(ptx__parser *P)
{
    ptx__next(P);
    while (!P->failed && !ptx_lex_is(&P->lx, ")") && P->lx.tok[0] != '\0') {
        if (!ptx_lex_is(&P->lx, ".param") && !ptx_lex_is(&P->lx, ".reg")) {
            ptx__fail(P, "expected a parameter, found '%s'", P->lx.tok);
            return;
        }
        ptx__next(P);
        int32_t s = ptx__declarator(P, PTX_SP_PARAM);
        if (s >= 0)
            P->m->syms[s].in_frame = !P->f->is_entry;
        int32_t *ps = s >= 0 ? realloc(P->f->params, (P->f->nparams + 1) * sizeof *ps) : NULL;
        if (ps == NULL) {
            ptx__fail(P, "out of memory");
            return;
        }
        P->f->params = ps;
        ptx_sym *sym = &P->m->syms[s];
        sym->offset = ptx__align_up(P->f->param_bytes, sym->align);
        P->f->param_bytes = sym->offset + sym->size;
        P->f->params[P->f->nparams++] = s;
        if (ptx_lex_is(&P->lx, ","))
            ptx__next(P);
    }
    ptx__expect(P, ")");
}

static void ptx__func_reset(ptx__parser *P)
{
    P->nregs = 0;
    P->nlabels = 0;
}

/* `.entry name (params) [tuning] { body }` or `.func [(ret)] name (params) {body}`;
 * a declaration without a body (`.extern .func vprintf (...);`) is skipped. */
static void ptx__function(ptx__parser *P, int is_entry)
{
    ptx_module *m = P->m;
    ptx_func *fs = ptx__grow(m->funcs, &(size_t){m->nfuncs}, m->nfuncs + 1, sizeof *fs);
    if (fs == NULL) {
        ptx__fail(P, "out of memory");
        return;
    }
    m->funcs = fs;
    ptx_func *f = &m->funcs[m->nfuncs++];
    memset(f, 0, sizeof *f);
    f->is_entry = is_entry;
    f->index = (uint32_t)(m->nfuncs - 1);
    P->f = f;
    ptx__func_reset(P);
    ptx__next(P);
    if (ptx_lex_is(&P->lx, "(")) { /* .func return parameters: the first parameters */
        ptx__params(P);
        f->nrets = f->nparams;
    }
    f->name = strdup(P->lx.tok);
    ptx__next(P);
    if (ptx_lex_is(&P->lx, "("))
        ptx__params(P);
    while (!P->failed && P->lx.tok[0] == '.')
        ptx__skip_directive(P);
    if (ptx_lex_is(&P->lx, ";")) { /* a declaration */
        ptx__next(P);
        f->unsupported = strdup("a function without a body");
        P->f = NULL;
        return;
    }
    ptx__expect(P, "{");
    int depth = 1;
    while (!P->failed && P->lx.tok[0] != '\0') {
        if (ptx_lex_is(&P->lx, "{"))
            depth++;
        if (ptx_lex_is(&P->lx, "}") && --depth == 0)
            break;
        ptx__body_statement(P);
    }
    ptx__expect(P, "}");
    ptx__resolve_labels(P);
    P->f = NULL;
}

/* ---- the module --------------------------------------------------------------------- */

/* A module-scope variable; shared ones get their place in every block's window. */
static void ptx__module_var(ptx__parser *P, enum ptx_space sp)
{
    ptx__next(P);
    int32_t s = ptx__var_decl(P, sp);
    if (s < 0 || sp != PTX_SP_SHARED || P->m->syms[s].size == 0)
        return;
    ptx_sym *sym = &P->m->syms[s];
    sym->offset = ptx__align_up(P->m->module_shared, sym->align);
    P->m->module_shared = sym->offset + sym->size;
}

static void ptx__skip_braces(ptx__parser *P)
{
    int depth = 0;
    do {
        if (ptx_lex_is(&P->lx, "{"))
            depth++;
        else if (ptx_lex_is(&P->lx, "}"))
            depth--;
        ptx_lex_skip_string(&P->lx);
    } while (ptx__next(P) && depth > 0);
}

static void ptx__module_statement(ptx__parser *P)
{
    if (ptx_lex_is(&P->lx, ".visible") || ptx_lex_is(&P->lx, ".extern") || ptx_lex_is(&P->lx, ".weak") ||
        ptx_lex_is(&P->lx, ".common")) {
        ptx__next(P); /* linkage: the next directive says what */
    } else if (ptx_lex_is(&P->lx, ".entry") || ptx_lex_is(&P->lx, ".func")) {
        ptx__function(P, ptx_lex_is(&P->lx, ".entry"));
    } else if (ptx_lex_is(&P->lx, ".global")) {
        ptx__module_var(P, PTX_SP_GLOBAL);
    } else if (ptx_lex_is(&P->lx, ".const")) {
        ptx__module_var(P, PTX_SP_CONST);
    } else if (ptx_lex_is(&P->lx, ".shared")) {
        ptx__module_var(P, PTX_SP_SHARED);
    } else if (ptx_lex_is(&P->lx, ".section")) {
        while (!P->failed && !ptx_lex_is(&P->lx, "{") && P->lx.tok[0] != '\0')
            ptx__next(P);
        ptx__skip_braces(P);
    } else if (P->lx.tok[0] == '.') {
        ptx__skip_directive(P); /* .version .target .address_size .file .pragma */
    } else {
        ptx__fail(P, "unexpected '%s' at module scope", P->lx.tok);
    }
}

/* The function called `name` that has a body, or NULL. */
static ptx_func *ptx__defined(ptx_module *m, const char *name)
{
    for (size_t i = 0; i < m->nfuncs; i++)
        if (m->funcs[i].ninsns > 0 && strcmp(m->funcs[i].name, name) == 0)
            return &m->funcs[i];
    return NULL;
}

static void ptx__mark(ptx_func *f, const char *what, const char *name, uint32_t line)
{
    char buf[PTX_TOK_MAX + 64];
    if (f->unsupported != NULL)
        return;
    snprintf(buf, sizeof buf, "%s %s", what, name);
    f->unsupported = strdup(buf);
    f->unsupported_line = line;
}

/* A call of a device function the CUDA runtime provides (printf's vprintf, assert's
 * __assertfail, a graph's cudaGraphSetConditional) with the arguments it takes: the engine's own instruction. 0 when
 * `name` is no such function. */
static int ptx__builtin(ptx_insn *in, const char *name)
{
    static const struct { const char *name; uint16_t op; int64_t nargs; } builtins[] = {
        {"vprintf", PTX_OP_VPRINTF, 2}, {"__assertfail", PTX_OP_ASSERTFAIL, 5},
        {"cudaGraphSetConditional", PTX_OP_SETCOND, 2}};
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
        if (strcmp(name, builtins[i].name) == 0 && in->o[3].imm == builtins[i].nargs) {
            in->op = builtins[i].op;
            return 1;
        }
    return 0;
}

/* Gives each call its callee; a function calling one the engine cannot run (one
 * without a body here other than the runtime's printf and assert, or one that is
 * itself unsupported) is unsupported too. */
static void ptx__resolve_calls(ptx__parser *P)
{
    ptx_module *m = P->m;
    for (size_t i = 0; i < P->ncalls; i++) {
        ptx_func *caller = &m->funcs[P->calls[i].func];
        ptx_insn *in = &caller->insns[P->calls[i].insn];
        ptx_func *callee = in->op == PTX_OP_CALL ? ptx__defined(m, P->calls[i].callee) : NULL;
        if (callee != NULL) {
            in->o[1].kind = PTX_O_IMM;
            in->o[1].imm = callee->index;
        } else if (in->op == PTX_OP_CALL && ptx__builtin(in, P->calls[i].callee)) {
            in->o[1].kind = PTX_O_NONE;
        } else if (in->op == PTX_OP_CALL) {
            in->op = PTX_OP_INVALID;
            ptx__mark(caller, "call to", P->calls[i].callee, in->line);
        }
        free(P->calls[i].callee);
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t i = 0; i < P->ncalls; i++) {
            ptx_func *caller = &m->funcs[P->calls[i].func];
            ptx_insn *in = &caller->insns[P->calls[i].insn];
            if (in->op != PTX_OP_CALL || caller->unsupported != NULL)
                continue;
            const ptx_func *callee = &m->funcs[in->o[1].imm];
            if (callee->unsupported != NULL) {
                ptx__mark(caller, "a call of", callee->name, in->line);
                changed = 1;
            }
        }
    }
    free(P->calls);
}

int ptx_parse(const char *text, size_t len, ptx_module **out, char *err, size_t errlen)
{
    ptx__parser P;
    memset(&P, 0, sizeof P);
    P.err = err;
    P.errlen = errlen;
    P.m = calloc(1, sizeof *P.m);
    if (P.m == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    ptx_lex_init(&P.lx, text, len);
    ptx__next(&P);
    while (!P.failed && P.lx.tok[0] != '\0')
        ptx__module_statement(&P);
    if (!P.failed)
        ptx__resolve_calls(&P);
    else {
        for (size_t i = 0; i < P.ncalls; i++)
            free(P.calls[i].callee);
        free(P.calls);
    }
    free(P.regs);
    free(P.labels);
    free(P.label_at);
    free(P.pending);
    if (P.failed) {
        ptx_module_free(P.m);
        return -1;
    }
    *out = P.m;
    return 0;
}

void ptx_module_free(ptx_module *m)
{
    if (m == NULL)
        return;
    for (size_t i = 0; i < m->nfuncs; i++) {
        ptx_func *f = &m->funcs[i];
        free(f->name);
        free(f->insns);
        free(f->reg_type);
        free(f->reg_mask);
        free(f->params);
        free(f->call_args);
        free(f->unsupported);
    }
    for (size_t i = 0; i < m->nsyms; i++)
        free(m->syms[i].name);
    free(m->funcs);
    free(m->syms);
    free(m);
}

const ptx_func *ptx_module_func(const ptx_module *m, const char *name)
{
    for (size_t i = 0; i < m->nfuncs; i++)
        if (m->funcs[i].is_entry && strcmp(m->funcs[i].name, name) == 0)
            return &m->funcs[i];
    return NULL;
}
