/* ptx_block.h -- one thread block being executed by the PTX engine: its threads'
 * registers, program counters and states, its shared memory and the threads'
 * local memory, and the fault that stopped it. Internal to server/emu/ptx/. */
#ifndef PTX_BLOCK_H
#define PTX_BLOCK_H

#include <stddef.h>
#include <stdint.h>
#include "crm_ptx.h"
#include "ptx_ir.h"

enum ptx_lane_state { PTX_LANE_RUN, PTX_LANE_BAR, PTX_LANE_EXIT };

typedef struct ptx_block {
    const ptx_module *m;
    const ptx_func *f;
    const crm_ptx_launch *l;
    const unsigned char *params;  /* the parameter buffer (f->param_bytes) */
    unsigned nthreads, nwarps, ctaid[3];
    uint64_t *regs;               /* nthreads x f->nregs */
    uint32_t *pc;                 /* per thread */
    uint8_t *state;               /* enum ptx_lane_state per thread */
    unsigned char *shared;        /* the block's window: module, function, dynamic */
    uint64_t shared_size, func_shared_base, dyn_base;
    unsigned char *local;         /* nthreads x f->local_bytes */
    uint64_t *var_addr;           /* module variables' device addresses (0: not looked up) */
    uint64_t clock;               /* instructions executed (%clock, and the watchdog's pace) */
    double started;               /* when the launch began, seconds (CLOCK_MONOTONIC) */
    double timeout;               /* seconds it may run (the watchdog) */
    cudaError_t err;              /* the first fault, cudaSuccess while none */
    char *msg;
    size_t msglen;
} ptx_block;

#define PTX_REG(b, lane, r) ((b)->regs[(size_t)(lane) * (b)->f->nregs + (size_t)(r)])

/* Records the block's first fault; returns -1 for the caller to stop with. */
int ptx_fault(ptx_block *b, cudaError_t err, const ptx_insn *in, const char *fmt, ...);

/* Executes `in` for the n threads in lanes[] (all at the same instruction, in one
 * warp, guard already applied), advancing their program counters. 0, or -1 after a
 * fault. */
int ptx_exec(ptx_block *b, const ptx_insn *in, const unsigned *lanes, unsigned n);

#endif
