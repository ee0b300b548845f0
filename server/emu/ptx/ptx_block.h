/* ptx_block.h -- one thread block being executed by the PTX engine: its threads'
 * call stacks (each frame: a function's registers, parameters and local memory),
 * program counters and states, its shared memory, and the fault that stopped it.
 * Internal to server/emu/ptx/. */
#ifndef PTX_BLOCK_H
#define PTX_BLOCK_H

#include <stddef.h>
#include <stdint.h>
#include "crm_ptx.h"
#include "ptx_ir.h"

enum ptx_lane_state { PTX_LANE_RUN, PTX_LANE_BAR, PTX_LANE_EXIT };

/* Where a call returns to: the caller's function, call instruction and frame. */
typedef struct ptx_frame {
    uint32_t fn, pc, rbase;
    uint64_t pbase, lbase;
    int32_t ret_sym;              /* the caller's result variable, -1 when none */
} ptx_frame;

typedef struct ptx_block {
    const ptx_module *m;
    const ptx_func *f;            /* the kernel */
    const crm_ptx_launch *l;
    const unsigned char *params;  /* the parameter buffer (f->param_bytes) */
    unsigned nthreads, nwarps, ctaid[3];
    uint64_t *regs;               /* nthreads x reg_stride: each thread's register stack */
    uint32_t *pc;                 /* per thread, in its current function */
    uint8_t *state;               /* enum ptx_lane_state per thread */
    uint32_t *fn;                 /* per thread: the function it is in (index in m->funcs) */
    uint32_t *rbase;              /* per thread: its current frame's first register */
    uint64_t *pbase, *lbase;      /* per thread: its frame's parameter and local memory */
    uint16_t *depth;              /* per thread: calls in progress */
    ptx_frame *frames;            /* nthreads x max_depth */
    unsigned max_depth;
    size_t reg_stride;
    uint64_t param_stride, local_stride;
    unsigned char *fparams;       /* nthreads x param_stride: frames' parameters and call variables */
    const uint64_t *fast_mask;    /* reg_mask of the function the fast path is running */
    uint32_t *ibase;              /* each function's first instruction in one numbering, for scheduling */
    unsigned char *shared;        /* the block's window: module, function, dynamic */
    uint64_t shared_size, func_shared_base, dyn_base;
    unsigned char *local;         /* nthreads x local_stride */
    uint64_t *var_addr;           /* module variables' device addresses (0: not looked up) */
    uint64_t mem_lo, mem_hi;      /* the device allocation accessed last, checked already */
    uint64_t clock;               /* instructions executed (%clock, and the watchdog's pace) */
    uint64_t lane_insns;          /* the same, counting each lane that executed them */
    double started;               /* when the launch began, seconds (CLOCK_MONOTONIC) */
    double timeout;               /* seconds it may run (the watchdog) */
    const int *stop;              /* set when another block's fault ends the launch */
    struct ptx_out *out;          /* the launch's printf output */
    cudaError_t err;              /* the first fault, cudaSuccess while none */
    char *msg;
    size_t msglen;
} ptx_block;

#define PTX_REG(b, lane, r) ((b)->regs[(size_t)(lane) * (b)->reg_stride + (b)->rbase[lane] + (size_t)(r)])

/* The function thread t is executing. */
static inline const ptx_func *ptx_fn(const ptx_block *b, unsigned t)
{
    return &b->m->funcs[b->fn[t]];
}

/* Returns thread t from its current function (to its caller, or out of the kernel). */
int ptx_return(ptx_block *b, unsigned t);

/* Where n bytes at addr of state space sp are in this process for thread t, or
 * NULL after a fault (out of bounds, misaligned: recorded for `in`). */
unsigned char *ptx_mem(ptx_block *b, unsigned t, const ptx_insn *in, int sp, uint64_t addr, unsigned n);

/* The k-th argument variable of call `in` in thread t's frame (k = UINT32_MAX: its
 * result variable), with its size; NULL when it has none. */
unsigned char *ptx_call_arg(ptx_block *b, unsigned t, const ptx_insn *in, unsigned k, uint64_t *size);
/* The bytes of that argument (8 at most), little-endian; 0 when it has none. */
uint64_t ptx_call_arg_bits(ptx_block *b, unsigned t, const ptx_insn *in, unsigned k);

/* bar.red: thread t's predicate, and its result written. */
int ptx_bar_red_input(ptx_block *b, unsigned t, const ptx_insn *in);
void ptx_bar_red_output(ptx_block *b, unsigned t, const ptx_insn *in, uint64_t v);

/* Records the block's first fault; returns -1 for the caller to stop with. */
int ptx_fault(ptx_block *b, cudaError_t err, const ptx_insn *in, const char *fmt, ...);

/* Executes `in` for the n threads in lanes[] (all at the same instruction, in one
 * warp, guard already applied), advancing their program counters. 0, or -1 after a
 * fault. */
int ptx_exec(ptx_block *b, const ptx_insn *in, const unsigned *lanes, unsigned n);

#endif
