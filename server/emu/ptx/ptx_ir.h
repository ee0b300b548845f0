/* ptx_ir.h -- the PTX engine's prepared form of a module: functions whose bodies are
 * arrays of decoded instructions (opcode, types, modifiers, operands resolved to
 * register numbers, immediates, special registers, symbols and branch targets), so
 * execution never looks at text again. Internal to server/emu/ptx/. */
#ifndef PTX_IR_H
#define PTX_IR_H

#include <stddef.h>
#include <stdint.h>

/* Value types, by PTX suffix. */
enum ptx_type {
    PTX_T_NONE, PTX_T_PRED,
    PTX_T_B8, PTX_T_B16, PTX_T_B32, PTX_T_B64,
    PTX_T_U8, PTX_T_U16, PTX_T_U32, PTX_T_U64,
    PTX_T_S8, PTX_T_S16, PTX_T_S32, PTX_T_S64,
    PTX_T_F16, PTX_T_F16X2, PTX_T_BF16, PTX_T_F32, PTX_T_F64,
};

enum ptx_space { PTX_SP_GENERIC, PTX_SP_GLOBAL, PTX_SP_SHARED, PTX_SP_LOCAL, PTX_SP_PARAM, PTX_SP_CONST };

enum ptx_op {
    PTX_OP_INVALID,
    PTX_OP_MOV, PTX_OP_LD, PTX_OP_ST, PTX_OP_CVTA, PTX_OP_CVT,
    PTX_OP_ADD, PTX_OP_SUB, PTX_OP_MUL, PTX_OP_MAD, PTX_OP_FMA, PTX_OP_DIV, PTX_OP_REM,
    PTX_OP_MIN, PTX_OP_MAX, PTX_OP_NEG, PTX_OP_ABS,
    PTX_OP_AND, PTX_OP_OR, PTX_OP_XOR, PTX_OP_NOT, PTX_OP_SHL, PTX_OP_SHR,
    PTX_OP_POPC, PTX_OP_CLZ, PTX_OP_BREV,
    PTX_OP_SETP, PTX_OP_SELP,
    PTX_OP_RCP, PTX_OP_SQRT, PTX_OP_RSQRT, PTX_OP_EX2, PTX_OP_LG2, PTX_OP_SIN, PTX_OP_COS,
    PTX_OP_BRA, PTX_OP_RET, PTX_OP_EXIT, PTX_OP_BAR, PTX_OP_MEMBAR,
    PTX_OP_ATOM, PTX_OP_RED, PTX_OP_SHFL, PTX_OP_VOTE,
    PTX_OP_PRMT, PTX_OP_BFE, PTX_OP_BFI, PTX_OP_SHF, PTX_OP_BFIND, PTX_OP_COPYSIGN, PTX_OP_TESTP,
    PTX_OP_ACTIVEMASK, PTX_OP_REDUX, PTX_OP_MATCH, PTX_OP_CPASYNC, PTX_OP_NOP, PTX_OP_TRAP, PTX_OP_CALL,
    PTX_OP_BMSK, PTX_OP_DP4A, PTX_OP_DP2A,
    PTX_OP_VPRINTF, PTX_OP_ASSERTFAIL, /* calls of the CUDA runtime's device functions (printf, assert) */
    PTX_OP_SETCOND,    /* cudaGraphSetConditional (server/emu/ptx/ptx_devrt.h) */
    PTX_OP_BARRED,     /* bar.red: a block barrier that reduces a predicate (sub: enum ptx_barred) */
};

enum ptx_barred { PTX_BR_POPC, PTX_BR_AND, PTX_BR_OR };

/* Modifier bits (what an opcode's dotted suffixes said). */
enum {
    PTX_M_LO = 1u << 0, PTX_M_HI = 1u << 1, PTX_M_WIDE = 1u << 2, PTX_M_SAT = 1u << 3,
    PTX_M_TO = 1u << 4, PTX_M_FTZ = 1u << 5, PTX_M_APPROX = 1u << 6, PTX_M_UNI = 1u << 7,
    PTX_M_RZ = 1u << 8, PTX_M_RM = 1u << 9, PTX_M_RP = 1u << 10, PTX_M_RNI = 1u << 11,
    PTX_M_RZI = 1u << 12, PTX_M_RMI = 1u << 13, PTX_M_RPI = 1u << 14, PTX_M_FULL = 1u << 15,
    PTX_M_L = 1u << 16, PTX_M_R = 1u << 17, PTX_M_WRAP = 1u << 18, PTX_M_CLAMP = 1u << 19,
    PTX_M_SHIFTAMT = 1u << 20, PTX_M_ALL = 1u << 21,
};

/* testp's properties. */
enum ptx_testp { PTX_TP_FINITE, PTX_TP_INFINITE, PTX_TP_NUMBER, PTX_TP_NAN, PTX_TP_NORMAL, PTX_TP_SUBNORMAL };

/* setp comparisons; the unordered float forms have the U bit. */
enum ptx_cmp { PTX_C_EQ, PTX_C_NE, PTX_C_LT, PTX_C_LE, PTX_C_GT, PTX_C_GE, PTX_C_NUM, PTX_C_NAN };
#define PTX_C_UNORDERED 8

/* atom/red operations; shfl modes; vote modes. */
enum ptx_aop { PTX_A_ADD, PTX_A_MIN, PTX_A_MAX, PTX_A_EXCH, PTX_A_CAS, PTX_A_AND, PTX_A_OR, PTX_A_XOR,
               PTX_A_INC, PTX_A_DEC };
enum ptx_shfl { PTX_SH_UP, PTX_SH_DOWN, PTX_SH_BFLY, PTX_SH_IDX };
enum ptx_vote { PTX_V_ALL, PTX_V_ANY, PTX_V_UNI, PTX_V_BALLOT };

/* Special registers. */
enum ptx_sreg {
    PTX_S_TID_X, PTX_S_TID_Y, PTX_S_TID_Z, PTX_S_NTID_X, PTX_S_NTID_Y, PTX_S_NTID_Z,
    PTX_S_CTAID_X, PTX_S_CTAID_Y, PTX_S_CTAID_Z, PTX_S_NCTAID_X, PTX_S_NCTAID_Y, PTX_S_NCTAID_Z,
    PTX_S_LANEID, PTX_S_WARPID, PTX_S_NWARPID, PTX_S_CLOCK, PTX_S_CLOCK64, PTX_S_GLOBALTIMER,
    PTX_S_SMID, PTX_S_NSMID, PTX_S_LANEMASK_EQ, PTX_S_LANEMASK_LT, PTX_S_LANEMASK_LE,
    PTX_S_LANEMASK_GT, PTX_S_LANEMASK_GE, PTX_S_DYN_SMEM,
};

enum ptx_okind { PTX_O_NONE, PTX_O_REG, PTX_O_IMM, PTX_O_FIMM, PTX_O_SREG, PTX_O_ADDR, PTX_O_SYM, PTX_O_VEC,
                 PTX_O_LABEL };

/* A symbol an operand may name: a variable in a state space or a kernel parameter. */
typedef struct ptx_sym {
    char *name;
    enum ptx_space space;
    uint64_t offset;   /* param: offset in the parameter buffer; shared: in the block's
                          shared window; global/const: filled at launch from the module */
    uint64_t size;     /* bytes (0 for an extern unsized shared array: the dynamic part) */
    uint32_t align;
    int32_t owner;     /* the function it belongs to, -1 for module scope */
    uint8_t in_frame;  /* a .func's parameter or a call's argument: in the calling frame's
                          parameter area (an entry's parameters are in the launch's buffer) */
} ptx_sym;

typedef struct ptx_operand {
    uint8_t kind;      /* enum ptx_okind */
    uint8_t nvec;      /* PTX_O_VEC: registers in regs[] */
    uint8_t neg;       /* a predicate source written `!%p` */
    int32_t reg;       /* PTX_O_REG, PTX_O_ADDR base (-1: none) */
    int32_t sym;       /* PTX_O_SYM, PTX_O_ADDR base symbol (-1: none) */
    int32_t regs[4];   /* PTX_O_VEC; -1 for a `_` sink */
    int64_t imm;       /* PTX_O_IMM value, PTX_O_ADDR offset, PTX_O_SREG number, PTX_O_LABEL target */
    double fimm;       /* PTX_O_FIMM (0f/0d immediates are PTX_O_IMM bit patterns) */
} ptx_operand;

#define PTX_MAX_OPS 6

typedef struct ptx_insn {
    uint16_t op;       /* enum ptx_op */
    uint8_t type;      /* the instruction's type (enum ptx_type) */
    uint8_t type2;     /* cvt's source type; setp's type is `type` */
    uint8_t space;     /* ld/st/atom/cvta state space */
    uint8_t vec;       /* .v2/.v4: 2 or 4, else 1 */
    uint8_t sub;       /* setp cmp | PTX_C_UNORDERED, atom op, shfl or vote mode */
    uint8_t nops;
    uint8_t fast;      /* enum ptx_fast_kind: a specialised handler, 0 for the general path */
    uint32_t mods;
    int32_t guard;     /* predicate register, -1 when unguarded */
    uint8_t guard_neg; /* @!%p */
    int32_t pdst;      /* second destination (shfl's |%p, setp's |%q), -1 when none */
    ptx_operand o[PTX_MAX_OPS];
    uint32_t line;     /* in the PTX text, for messages */
} ptx_insn;

typedef struct ptx_func {
    char *name;
    int is_entry;
    ptx_insn *insns;
    size_t ninsns, capinsns;
    uint32_t nregs;              /* registers of every declaration, numbered from 0 */
    uint8_t *reg_type;           /* enum ptx_type per register */
    uint64_t *reg_mask;          /* per register: the bits its type holds; 0 for a predicate */
    uint64_t param_bytes;        /* the entry's parameter buffer */
    uint64_t shared_bytes;       /* static shared memory of the function and the module */
    uint64_t local_bytes;        /* per-thread .local */
    int32_t *params;             /* symbol numbers of the parameters, in order (return ones first) */
    uint32_t nparams;
    uint32_t nrets;              /* a .func's return parameters: params[0 .. nrets) */
    uint64_t call_bytes;         /* its calls' argument and result variables, after param_bytes */
    int32_t *call_args;          /* argument symbols of its calls (a call's o[2] = start, o[3] = count) */
    uint32_t ncall_args;
    uint32_t index;              /* its place in the module's funcs[] */
    char *unsupported;           /* first instruction the engine cannot execute, NULL: none */
    uint32_t unsupported_line;
} ptx_func;

typedef struct ptx_module {
    ptx_func *funcs;
    size_t nfuncs;
    ptx_sym *syms;               /* module variables, then each function's (parameters, locals) */
    size_t nsyms, capsyms;
    uint64_t module_shared;      /* static shared memory declared at module scope */
} ptx_module;

const char *ptx_type_name(enum ptx_type t);

/* Per type: bytes (predicates count 1), and kind bits. Tables in ptx_types.c; the
 * queries are inline because every executed instruction asks them. */
#define PTX__TK_FLOAT 1
#define PTX__TK_SIGNED 2
extern const uint8_t ptx_type_sizes[PTX_T_F64 + 1], ptx_type_kinds[PTX_T_F64 + 1];

static inline unsigned ptx_type_size(enum ptx_type t)
{
    return (unsigned)t <= PTX_T_F64 ? ptx_type_sizes[t] : 0;
}

static inline int ptx_type_is_float(enum ptx_type t)
{
    return (unsigned)t <= PTX_T_F64 && (ptx_type_kinds[t] & PTX__TK_FLOAT);
}

static inline int ptx_type_is_signed(enum ptx_type t)
{
    return (unsigned)t <= PTX_T_F64 && (ptx_type_kinds[t] & PTX__TK_SIGNED);
}

#endif
