/* ptx_decode.c -- turns a dotted PTX opcode (`ld.global.nc.v4.f32`,
 * `setp.lt.s32`, `shfl.sync.down.b32`) into an instruction's op, types, state
 * space and modifiers. Suffixes that only tune caching or memory ordering for a
 * real GPU (`.nc`, `.ca`, `.L1::...`, `.relaxed`, `.gpu`, `.sync`, `.aligned`) do
 * not change what the engine computes and are accepted. */
#include "ptx_decode.h"

#include <string.h>

typedef struct { const char *name; int value; } ptx__pair;

static const ptx__pair ptx__ops[] = {
    {"mov", PTX_OP_MOV}, {"ld", PTX_OP_LD}, {"ldu", PTX_OP_LD}, {"st", PTX_OP_ST}, {"cvta", PTX_OP_CVTA},
    {"cvt", PTX_OP_CVT}, {"add", PTX_OP_ADD}, {"sub", PTX_OP_SUB}, {"mul", PTX_OP_MUL}, {"mad", PTX_OP_MAD},
    {"fma", PTX_OP_FMA}, {"div", PTX_OP_DIV}, {"rem", PTX_OP_REM}, {"min", PTX_OP_MIN}, {"max", PTX_OP_MAX},
    {"neg", PTX_OP_NEG}, {"abs", PTX_OP_ABS}, {"and", PTX_OP_AND}, {"or", PTX_OP_OR}, {"xor", PTX_OP_XOR},
    {"not", PTX_OP_NOT}, {"shl", PTX_OP_SHL}, {"shr", PTX_OP_SHR}, {"popc", PTX_OP_POPC}, {"clz", PTX_OP_CLZ},
    {"brev", PTX_OP_BREV}, {"setp", PTX_OP_SETP}, {"selp", PTX_OP_SELP}, {"rcp", PTX_OP_RCP},
    {"sqrt", PTX_OP_SQRT}, {"rsqrt", PTX_OP_RSQRT}, {"ex2", PTX_OP_EX2}, {"lg2", PTX_OP_LG2},
    {"sin", PTX_OP_SIN}, {"cos", PTX_OP_COS}, {"bra", PTX_OP_BRA}, {"ret", PTX_OP_RET}, {"exit", PTX_OP_EXIT},
    {"bar", PTX_OP_BAR}, {"barrier", PTX_OP_BAR}, {"membar", PTX_OP_MEMBAR}, {"fence", PTX_OP_MEMBAR},
    {"atom", PTX_OP_ATOM}, {"red", PTX_OP_RED}, {"shfl", PTX_OP_SHFL}, {"vote", PTX_OP_VOTE},
    {"prmt", PTX_OP_PRMT}, {"bfe", PTX_OP_BFE}, {"bfi", PTX_OP_BFI}, {"shf", PTX_OP_SHF}, {"bfind", PTX_OP_BFIND},
    {"copysign", PTX_OP_COPYSIGN}, {"testp", PTX_OP_TESTP}, {"activemask", PTX_OP_ACTIVEMASK},
    {"redux", PTX_OP_REDUX}, {"match", PTX_OP_MATCH}, {"cp", PTX_OP_CPASYNC}, {"trap", PTX_OP_TRAP},
    {"prefetch", PTX_OP_NOP}, {"prefetchu", PTX_OP_NOP}, {"discard", PTX_OP_NOP},
    {"bmsk", PTX_OP_BMSK}, {"dp4a", PTX_OP_DP4A}, {"dp2a", PTX_OP_DP2A},
};

static const ptx__pair ptx__types[] = {
    {"pred", PTX_T_PRED}, {"b8", PTX_T_B8}, {"b16", PTX_T_B16}, {"b32", PTX_T_B32}, {"b64", PTX_T_B64},
    {"u8", PTX_T_U8}, {"u16", PTX_T_U16}, {"u32", PTX_T_U32}, {"u64", PTX_T_U64}, {"s8", PTX_T_S8},
    {"s16", PTX_T_S16}, {"s32", PTX_T_S32}, {"s64", PTX_T_S64}, {"f16", PTX_T_F16}, {"f16x2", PTX_T_F16X2},
    {"bf16", PTX_T_BF16}, {"f32", PTX_T_F32}, {"f64", PTX_T_F64},
};

static const ptx__pair ptx__spaces[] = {
    {"global", PTX_SP_GLOBAL}, {"shared", PTX_SP_SHARED}, {"local", PTX_SP_LOCAL}, {"param", PTX_SP_PARAM},
    {"const", PTX_SP_CONST},
};

static const ptx__pair ptx__mods[] = {
    {"lo", PTX_M_LO}, {"hi", PTX_M_HI}, {"wide", PTX_M_WIDE}, {"sat", PTX_M_SAT}, {"to", PTX_M_TO},
    {"ftz", PTX_M_FTZ}, {"approx", PTX_M_APPROX}, {"uni", PTX_M_UNI}, {"rn", 0}, {"rz", PTX_M_RZ},
    {"rm", PTX_M_RM}, {"rp", PTX_M_RP}, {"rni", PTX_M_RNI}, {"rzi", PTX_M_RZI}, {"rmi", PTX_M_RMI},
    {"rpi", PTX_M_RPI}, {"full", PTX_M_FULL},
    /* caching, ordering and convergence hints: nothing to do for one CPU executing in order */
    {"nc", 0}, {"ca", 0}, {"cg", 0}, {"cs", 0}, {"lu", 0}, {"cv", 0}, {"wb", 0}, {"wt", 0},
    {"volatile", 0}, {"relaxed", 0}, {"acquire", 0}, {"release", 0}, {"acq_rel", 0}, {"sc", 0},
    {"weak", 0}, {"cta", 0}, {"gpu", 0}, {"sys", 0}, {"cluster", 0}, {"sync", 0}, {"aligned", 0},
    {"gl", 0},
};

static const ptx__pair ptx__cmps[] = {
    {"eq", PTX_C_EQ}, {"ne", PTX_C_NE}, {"lt", PTX_C_LT}, {"le", PTX_C_LE}, {"gt", PTX_C_GT},
    {"ge", PTX_C_GE}, {"lo", PTX_C_LT}, {"ls", PTX_C_LE}, {"hi", PTX_C_GT}, {"hs", PTX_C_GE},
    {"num", PTX_C_NUM}, {"nan", PTX_C_NAN},
    {"equ", PTX_C_EQ | PTX_C_UNORDERED}, {"neu", PTX_C_NE | PTX_C_UNORDERED},
    {"ltu", PTX_C_LT | PTX_C_UNORDERED}, {"leu", PTX_C_LE | PTX_C_UNORDERED},
    {"gtu", PTX_C_GT | PTX_C_UNORDERED}, {"geu", PTX_C_GE | PTX_C_UNORDERED},
};

static const ptx__pair ptx__aops[] = {
    {"add", PTX_A_ADD}, {"min", PTX_A_MIN}, {"max", PTX_A_MAX}, {"exch", PTX_A_EXCH}, {"cas", PTX_A_CAS},
    {"and", PTX_A_AND}, {"or", PTX_A_OR}, {"xor", PTX_A_XOR}, {"inc", PTX_A_INC}, {"dec", PTX_A_DEC},
};

static const ptx__pair ptx__testps[] = {{"finite", PTX_TP_FINITE}, {"infinite", PTX_TP_INFINITE},
                                        {"number", PTX_TP_NUMBER}, {"notanumber", PTX_TP_NAN},
                                        {"normal", PTX_TP_NORMAL}, {"subnormal", PTX_TP_SUBNORMAL}};

static const ptx__pair ptx__shfls[] = {{"up", PTX_SH_UP}, {"down", PTX_SH_DOWN}, {"bfly", PTX_SH_BFLY},
                                       {"idx", PTX_SH_IDX}};
static const ptx__pair ptx__votes[] = {{"all", PTX_V_ALL}, {"any", PTX_V_ANY}, {"uni", PTX_V_UNI},
                                       {"ballot", PTX_V_BALLOT}};

#define PTX__N(a) (sizeof(a) / sizeof((a)[0]))

static int ptx__find(const ptx__pair *t, size_t n, const char *s, size_t len, int *out)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(t[i].name) == len && memcmp(t[i].name, s, len) == 0) {
            *out = t[i].value;
            return 1;
        }
    return 0;
}

/* Reads one suffix into insn; 0 when it means nothing to the engine for this op. */
static int ptx__suffix(ptx_insn *in, const char *s, size_t len, int *ntypes)
{
    int v;
    if (memchr(s, ':', len) != NULL) /* .L1::evict_last, .L2::128B: cache policy */
        return 1;
    if (len == 2 && s[0] == 'v' && (s[1] == '2' || s[1] == '4')) {
        in->vec = (uint8_t)(s[1] - '0');
        return 1;
    }
    if (in->op == PTX_OP_SETP && ptx__find(ptx__cmps, PTX__N(ptx__cmps), s, len, &v)) {
        in->sub = (uint8_t)v;
        return 1;
    }
    if ((in->op == PTX_OP_ATOM || in->op == PTX_OP_RED) && ptx__find(ptx__aops, PTX__N(ptx__aops), s, len, &v)) {
        in->sub = (uint8_t)v;
        return 1;
    }
    if (in->op == PTX_OP_SHFL && ptx__find(ptx__shfls, PTX__N(ptx__shfls), s, len, &v)) {
        in->sub = (uint8_t)v;
        return 1;
    }
    if (in->op == PTX_OP_VOTE && ptx__find(ptx__votes, PTX__N(ptx__votes), s, len, &v)) {
        in->sub = (uint8_t)v;
        return 1;
    }
    if (in->op == PTX_OP_REDUX && ptx__find(ptx__aops, PTX__N(ptx__aops), s, len, &v)) {
        in->sub = (uint8_t)v;
        return 1;
    }
    if (in->op == PTX_OP_TESTP && ptx__find(ptx__testps, PTX__N(ptx__testps), s, len, &v)) {
        in->sub = (uint8_t)v;
        return 1;
    }
    if (in->op == PTX_OP_SHF || in->op == PTX_OP_MATCH || in->op == PTX_OP_BFIND || in->op == PTX_OP_BMSK) {
        static const ptx__pair extra[] = {{"l", PTX_M_L}, {"r", PTX_M_R}, {"wrap", PTX_M_WRAP},
                                          {"clamp", PTX_M_CLAMP}, {"shiftamt", PTX_M_SHIFTAMT},
                                          {"any", 0}, {"all", PTX_M_ALL}};
        if (ptx__find(extra, PTX__N(extra), s, len, &v)) {
            in->mods |= (uint32_t)v;
            return 1;
        }
    }
    if (ptx__find(ptx__types, PTX__N(ptx__types), s, len, &v)) {
        if ((*ntypes)++ == 0)
            in->type = (uint8_t)v;
        else
            in->type2 = (uint8_t)v;
        return 1;
    }
    if (ptx__find(ptx__spaces, PTX__N(ptx__spaces), s, len, &v)) {
        in->space = (uint8_t)v;
        return 1;
    }
    if (ptx__find(ptx__mods, PTX__N(ptx__mods), s, len, &v)) {
        in->mods |= (uint32_t)v;
        return 1;
    }
    return 0;
}

static int ptx__cp_async(const char *opcode, ptx_insn *in);

/* bar.red.popc.u32, bar.red.{and,or}.pred (__syncthreads_count/_and/_or): a block
 * barrier whose result is the reduction of every waiting thread's predicate. */
static int ptx__bar_red(const char *opcode, ptx_insn *in)
{
    static const struct { const char *tail; uint8_t sub; uint8_t type; } forms[] = {
        {".red.popc.u32", PTX_BR_POPC, PTX_T_U32}, {".red.and.pred", PTX_BR_AND, PTX_T_PRED},
        {".red.or.pred", PTX_BR_OR, PTX_T_PRED}};
    const char *tail = strchr(opcode, '.');
    in->vec = 1;
    for (size_t i = 0; i < PTX__N(forms); i++)
        if (strcmp(tail, forms[i].tail) == 0) {
            in->op = PTX_OP_BARRED;
            in->sub = forms[i].sub;
            in->type = forms[i].type;
            return 0;
        }
    return -1;
}

/* Whole instructions that have nothing to do in an engine that runs a warp's lanes
 * in lockstep, the lowest program counter first, and grids one after the other. */
static const char *const ptx__nothing_here[] = {
    "bar.warp.sync",                    /* __syncwarp: the lanes it names have arrived */
    "griddepcontrol.wait",              /* the grids a kernel depends on have completed */
    "griddepcontrol.launch_dependents",
    "nanosleep.u32",                    /* a hint: the warp may sleep up to t ns */
    "cp.async.commit_group",            /* cp.async copies at once: groups are always done */
    "cp.async.wait_group", "cp.async.wait_all",
};

int ptx_decode_opcode(const char *opcode, ptx_insn *in)
{
    for (size_t i = 0; i < PTX__N(ptx__nothing_here); i++)
        if (strcmp(opcode, ptx__nothing_here[i]) == 0) {
            in->vec = 1;
            in->op = PTX_OP_NOP;
            return 0;
        }
    if (strncmp(opcode, "bar.red.", 8) == 0 || strncmp(opcode, "barrier.red.", 12) == 0)
        return ptx__bar_red(opcode, in);
    if (strncmp(opcode, "cp.", 3) == 0) {
        in->vec = 1;
        return ptx__cp_async(opcode, in);
    }
    const char *dot = strchr(opcode, '.');
    size_t blen = dot ? (size_t)(dot - opcode) : strlen(opcode);
    int op, ntypes = 0;
    in->vec = 1;
    if (!ptx__find(ptx__ops, PTX__N(ptx__ops), opcode, blen, &op))
        return -1;
    in->op = (uint16_t)op;
    while (dot != NULL) {
        const char *s = dot + 1;
        dot = strchr(s, '.');
        size_t len = dot ? (size_t)(dot - s) : strlen(s);
        if (!ptx__suffix(in, s, len, &ntypes))
            return -1;
    }
    /* `bar.sync` and `barrier.sync`: a block-wide barrier; `bar.arrive` and
     * `bar.red` are other operations */
    if (in->op == PTX_OP_BAR && strstr(opcode, ".sync") == NULL)
        return -1;
    return 0;
}

/* cp.async: a copy from global to shared memory made at once (so its groups are
 * always complete: committing and waiting do nothing); the bulk (TMA) forms are
 * not executed. */
static int ptx__cp_async(const char *opcode, ptx_insn *in)
{
    if (strncmp(opcode, "cp.async.ca.", 12) != 0 && strncmp(opcode, "cp.async.cg.", 12) != 0)
        return -1;
    in->op = PTX_OP_CPASYNC;
    in->space = PTX_SP_SHARED;
    return 0;
}
