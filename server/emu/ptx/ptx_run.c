/* ptx_run.c -- launches a kernel on the PTX engine: the parameter buffer from the
 * launch's arguments, then the blocks, shared out among worker threads (one per
 * core, CUDAREM_EMU_THREADS to choose), each with its own block memory; the
 * first fault stops the others. A block's warps run in lockstep:
 * each step executes the instruction of the lowest program counter among the
 * warp's runnable threads for every thread that is there, so threads that took
 * different sides of a branch run one side after the other and continue together
 * where the paths meet. A warp runs until all its threads have exited or wait at a
 * barrier; when every warp is there, the barrier releases. */
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "crm_ptx.h"
#include "ptx_block.h"
#include "ptx_fast.h"
#include "ptx_parse.h"
#include "ptx_printf.h"
#include "server/emu/crm_emu_watchdog.h"

int crm_ptx_load(const char *text, size_t len, crm_ptx_module **out, char *err, size_t errlen)
{
    if (ptx_parse(text, len, out, err, errlen) != 0)
        return -1;
    if (ptx_fast_prepare(*out) == 0)
        return 0;
    ptx_module_free(*out);
    *out = NULL;
    snprintf(err, errlen, "out of memory preparing the module");
    return -1;
}

void crm_ptx_free(crm_ptx_module *m)
{
    ptx_module_free(m);
}

int crm_ptx_runnable(const crm_ptx_module *m, const char *name, char *why, size_t whylen)
{
    const ptx_func *f = ptx_module_func(m, name);
    if (f == NULL)
        snprintf(why, whylen, "its module's PTX has no kernel %s", name);
    else if (f->unsupported != NULL)
        snprintf(why, whylen, "it uses %s (PTX line %u), which the PTX engine does not execute", f->unsupported,
                 f->unsupported_line);
    return f != NULL && f->unsupported == NULL;
}

/* Every 2^20 instructions: 0, or -1 (a fault) once the kernel ran too long or
 * another block faulted. */
static int ptx__watchdog(ptx_block *b, const ptx_insn *in)
{
    if ((b->clock & ((1u << 20) - 1)) != 0)
        return 0;
    if (__atomic_load_n(b->stop, __ATOMIC_RELAXED))
        return ptx_fault(b, cudaErrorLaunchFailure, in, "stopped: another block faulted");
    if (crm_emu_now() - b->started <= b->timeout)
        return 0;
    return ptx_fault(b, cudaErrorLaunchTimeout, in, "the kernel ran for more than %g s and was stopped",
                     b->timeout);
}

/* The threads of a warp executing together: at one instruction of one function.
 * While the group lasts, its pc is theirs (their own pc[] is written back when it
 * ends or the general path runs). */
typedef struct ptx__group {
    unsigned lane[32], n;
    uint64_t *rp[32];             /* each one's register frame */
    const ptx_func *f;
    uint32_t pc;
    uint32_t key;                 /* their instruction, numbered across the functions */
    uint32_t rest;                /* the lowest such number among the warp's other runnable threads */
} ptx__group;

static uint32_t ptx__key(const ptx_block *b, unsigned t)
{
    return b->ibase[b->fn[t]] + b->pc[t];
}

/* Gathers the runnable threads of [first, end) at the lowest instruction; 0 when none. */
static unsigned ptx__gather(ptx_block *b, unsigned first, unsigned end, ptx__group *g)
{
    uint32_t key = UINT32_MAX, rest = UINT32_MAX;
    for (unsigned t = first; t < end; t++)
        if (b->state[t] == PTX_LANE_RUN && ptx__key(b, t) < key)
            key = ptx__key(b, t);
    g->n = 0;
    for (unsigned t = first; key != UINT32_MAX && t < end; t++) {
        if (b->state[t] != PTX_LANE_RUN)
            continue;
        uint32_t k = ptx__key(b, t);
        if (k == key) {
            g->lane[g->n] = t;
            g->rp[g->n++] = &b->regs[(size_t)t * b->reg_stride + b->rbase[t]];
        } else if (k < rest) {
            rest = k;
        }
    }
    if (g->n > 0) {
        g->f = ptx_fn(b, g->lane[0]);
        g->pc = b->pc[g->lane[0]];
    }
    g->key = key;
    g->rest = rest;
    return g->n;
}

/* Ends the group: its threads' own program counters say where they are. */
static void ptx__disband(ptx_block *b, ptx__group *g)
{
    for (unsigned i = 0; i < g->n; i++)
        b->pc[g->lane[i]] = g->pc;
    g->n = 0;
}

static int ptx__is_control(const ptx_insn *in)
{
    return in->op == PTX_OP_BRA || in->op == PTX_OP_BAR || in->op == PTX_OP_BARRED || in->op == PTX_OP_CALL ||
           in->op == PTX_OP_RET || in->op == PTX_OP_EXIT || in->op == PTX_OP_TRAP;
}

/* Executes the group's instruction for its threads whose guard holds. After it,
 * each thread's pc is right when the general path ran it (a control instruction
 * always takes that path); the fast path leaves them to the group. */
static int ptx__step(ptx_block *b, ptx__group *g, const ptx_insn *in)
{
    unsigned go[32], ngo = g->n;
    uint64_t *rgo[32];
    const unsigned *lanes = g->lane;
    uint64_t *const *rp = g->rp;
    if (in->guard >= 0) {
        ngo = 0;
        for (unsigned i = 0; i < g->n; i++)
            if ((g->rp[i][in->guard] != 0) != in->guard_neg) {
                go[ngo] = g->lane[i];
                rgo[ngo++] = g->rp[i];
            }
        lanes = go;
        rp = rgo;
    }
    if (ngo > 0 && in->fast != 0) {
        b->fast_mask = g->f->reg_mask;
        if (ptx_fast_exec(b, in, lanes, rp, ngo) == 0) {
            b->clock++;
            b->lane_insns += ngo;
            return 0;
        }
    }
    for (unsigned i = 0; i < g->n; i++) /* the threads the guard skipped move on; ptx_exec moves the others */
        b->pc[g->lane[i]] = g->pc + 1;
    for (unsigned i = 0; i < ngo; i++)
        b->pc[lanes[i]] = g->pc;
    return ngo > 0 ? ptx_exec(b, in, lanes, ngo) : 0;
}

/* A branch every thread of the group takes, or none does: the group moves on
 * whole (1), unless it reaches or passes where other threads wait (then it ends).
 * 0 when the threads diverge: the general path splits them. */
static int ptx__uniform_branch(ptx_block *b, ptx__group *g, const ptx_insn *in)
{
    unsigned taken = g->n;
    if (in->guard >= 0) {
        taken = 0;
        for (unsigned i = 0; i < g->n; i++)
            taken += (g->rp[i][in->guard] != 0) != in->guard_neg;
        if (taken != 0 && taken != g->n)
            return 0;
    }
    if (taken) {
        b->clock++;
        b->lane_insns += taken;
    }
    g->pc = taken ? (uint32_t)in->o[0].imm : g->pc + 1;
    g->key = b->ibase[g->f->index] + g->pc;
    if (g->key >= g->rest)
        ptx__disband(b, g);
    return 1;
}

/* Runs warp w until its threads have all exited or reached a barrier. Straight-line
 * code and uniform branches keep its group: it is gathered again only after
 * another control instruction, or when it reaches the instruction where other
 * threads of the warp wait. */
static int ptx__run_warp(ptx_block *b, unsigned w)
{
    unsigned first = w * 32, end = first + 32 < b->nthreads ? first + 32 : b->nthreads;
    ptx__group g = {.n = 0};
    for (;;) {
        if (g.n == 0 && ptx__gather(b, first, end, &g) == 0)
            return 0;
        if (g.pc >= g.f->ninsns) { /* ran off the end: as ret */
            for (unsigned i = 0; i < g.n; i++)
                ptx_return(b, g.lane[i]);
            g.n = 0;
            continue;
        }
        const ptx_insn *in = &g.f->insns[g.pc];
        if (in->op == PTX_OP_BRA && ptx__uniform_branch(b, &g, in)) {
            if (ptx__watchdog(b, in) != 0)
                return -1;
            continue;
        }
        if (ptx__step(b, &g, in) != 0 || ptx__watchdog(b, in) != 0)
            return -1;
        if (ptx__is_control(in)) {
            g.n = 0;
            continue;
        }
        g.pc++;
        if (++g.key >= g.rest)
            ptx__disband(b, &g);
    }
}

static const ptx_insn *ptx__insn_of(const ptx_block *b, unsigned t)
{
    return &ptx_fn(b, t)->insns[b->pc[t]];
}

/* The reduction bar.red gives every waiting thread: the count of true predicates
 * (popc), or whether all or any of them hold. */
static uint64_t ptx__bar_red(ptx_block *b, const ptx_insn *red)
{
    uint64_t count = 0, waiting = 0;
    for (unsigned t = 0; t < b->nthreads; t++)
        if (b->state[t] == PTX_LANE_BAR && ptx__insn_of(b, t)->op == PTX_OP_BARRED) {
            count += (uint64_t)ptx_bar_red_input(b, t, ptx__insn_of(b, t));
            waiting++;
        }
    return red->sub == PTX_BR_POPC ? count : red->sub == PTX_BR_AND ? count == waiting : count > 0;
}

/* Runs one block to its end. When every thread that has not exited waits at a
 * barrier, it releases them (bar.red's waiters with their reduction). */
static int ptx__run_block(ptx_block *b)
{
    for (;;) {
        for (unsigned w = 0; w < b->nwarps; w++)
            if (ptx__run_warp(b, w) != 0)
                return -1;
        int waiting = 0;
        const ptx_insn *red = NULL;
        for (unsigned t = 0; t < b->nthreads && red == NULL; t++)
            if (b->state[t] == PTX_LANE_BAR && ptx__insn_of(b, t)->op == PTX_OP_BARRED)
                red = ptx__insn_of(b, t);
        uint64_t result = red != NULL ? ptx__bar_red(b, red) : 0;
        for (unsigned t = 0; t < b->nthreads; t++)
            if (b->state[t] == PTX_LANE_BAR) {
                if (ptx__insn_of(b, t)->op == PTX_OP_BARRED)
                    ptx_bar_red_output(b, t, ptx__insn_of(b, t), result);
                b->state[t] = PTX_LANE_RUN;
                b->pc[t]++;
                waiting = 1;
            }
        if (!waiting)
            return 0;
    }
}

/* 1 when the launch's arguments cover f's parameters: the PTX says how large each
 * is, the launch how many bytes each argument has. */
static int ptx__args_fit(const ptx_module *m, const ptx_func *f, const crm_ptx_launch *l)
{
    if (l->nargs != f->nparams || (f->nparams > 0 && (l->args == NULL || l->arg_layout == NULL)))
        return 0;
    for (uint32_t i = 0; i < f->nparams; i++)
        if (m->syms[f->params[i]].size > l->arg_layout[i].size || l->args[i] == NULL)
            return 0;
    return 1;
}

/* The parameter buffer of f from the launch's arguments. */
static unsigned char *ptx__params(const ptx_module *m, const ptx_func *f, void **args)
{
    unsigned char *buf = calloc(1, f->param_bytes ? f->param_bytes : 1);
    for (uint32_t i = 0; buf != NULL && i < f->nparams; i++) {
        const ptx_sym *p = &m->syms[f->params[i]];
        memcpy(buf + p->offset, args[i], p->size);
    }
    return buf;
}

static uint64_t ptx__align(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

#define PTX__MAX_DEPTH 32 /* calls a thread may nest (a GPU's default stack holds about as many small frames) */

/* The call stack each thread gets: the kernel's frame, then room for the deepest
 * frames the module's functions make, when it has any. */
static void ptx__stack_size(ptx_block *b)
{
    const ptx_func *f = b->f;
    size_t regs = 0;
    uint64_t params = 0, local = 0;
    int calls = 0;
    for (size_t i = 0; i < b->m->nfuncs; i++) {
        const ptx_func *g = &b->m->funcs[i];
        if (g->is_entry || g->ninsns == 0)
            continue;
        calls = 1;
        regs = g->nregs > regs ? g->nregs : regs;
        params = g->param_bytes + g->call_bytes > params ? g->param_bytes + g->call_bytes : params;
        local = g->local_bytes > local ? g->local_bytes : local;
    }
    b->max_depth = calls ? PTX__MAX_DEPTH : 1;
    b->reg_stride = (f->nregs ? f->nregs : 1) + (b->max_depth - 1) * regs;
    b->param_stride = ptx__align(f->param_bytes + f->call_bytes + (b->max_depth - 1) * params + 1, 8);
    b->local_stride = ptx__align(f->local_bytes + (b->max_depth - 1) * local + 1, 16);
}

/* Sizes the block's memory and allocates it. */
static int ptx__block_alloc(ptx_block *b)
{
    const ptx_func *f = b->f;
    size_t n = b->nthreads;
    ptx__stack_size(b);
    b->func_shared_base = ptx__align(b->m->module_shared, 16);
    b->dyn_base = ptx__align(b->func_shared_base + f->shared_bytes, 16);
    b->shared_size = b->dyn_base + b->l->dyn_smem;
    b->regs = calloc(n * b->reg_stride, sizeof *b->regs);
    b->pc = calloc(n, sizeof *b->pc);
    b->state = calloc(n, sizeof *b->state);
    b->fn = calloc(n, sizeof *b->fn);
    b->rbase = calloc(n, sizeof *b->rbase);
    b->pbase = calloc(n, sizeof *b->pbase);
    b->lbase = calloc(n, sizeof *b->lbase);
    b->depth = calloc(n, sizeof *b->depth);
    b->frames = calloc(n * b->max_depth, sizeof *b->frames);
    b->fparams = calloc(n, b->param_stride);
    b->ibase = calloc(b->m->nfuncs ? b->m->nfuncs : 1, sizeof *b->ibase);
    b->shared = calloc(1, b->shared_size ? b->shared_size : 1);
    b->local = calloc(n, b->local_stride);
    b->var_addr = calloc(b->m->nsyms ? b->m->nsyms : 1, sizeof *b->var_addr);
    for (size_t i = 1; b->ibase != NULL && i < b->m->nfuncs; i++) /* one number apart: "past the end" is its own */
        b->ibase[i] = b->ibase[i - 1] + (uint32_t)b->m->funcs[i - 1].ninsns + 1;
    return b->regs && b->pc && b->state && b->fn && b->rbase && b->pbase && b->lbase && b->depth && b->frames &&
           b->fparams && b->ibase && b->shared && b->local && b->var_addr ? 0 : -1;
}

static void ptx__block_free(ptx_block *b)
{
    void *all[] = {b->regs, b->pc, b->state, b->fn, b->rbase, b->pbase, b->lbase, b->depth, b->frames,
                   b->fparams, b->ibase, b->shared, b->local, b->var_addr};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free(all[i]);
}

/* Back to the start for the next block: the kernel's frame, counters, registers and
 * shared memory zeroed (a GPU does not promise zeroes; this makes runs repeatable). */
static void ptx__block_reset(ptx_block *b)
{
    size_t n = b->nthreads;
    memset(b->regs, 0, n * b->reg_stride * sizeof *b->regs);
    memset(b->pc, 0, n * sizeof *b->pc);
    memset(b->state, PTX_LANE_RUN, n);
    for (size_t t = 0; t < n; t++)
        b->fn[t] = b->f->index;
    memset(b->rbase, 0, n * sizeof *b->rbase);
    memset(b->pbase, 0, n * sizeof *b->pbase);
    memset(b->lbase, 0, n * sizeof *b->lbase);
    memset(b->depth, 0, n * sizeof *b->depth);
    memset(b->shared, 0, b->shared_size ? b->shared_size : 1);
}

/* A launch's blocks, handed out to the workers one at a time. */
typedef struct ptx__grid {
    ptx_block proto;              /* what every worker's block starts from */
    uint64_t next, total;         /* the next block to hand out, and how many */
    uint64_t lane_insns;          /* every worker's count, summed */
    int stop;                     /* a block faulted: the others end */
    pthread_mutex_t lock;
    cudaError_t err;              /* the first fault */
    char *msg;
    size_t msglen;
    ptx_out out;                  /* what the kernel printed */
} ptx__grid;

/* Runs blocks until there are none left or one faults. */
static void *ptx__worker(void *arg)
{
    ptx__grid *g = arg;
    char msg[512] = "";
    ptx_block b = g->proto;
    b.msg = msg;
    b.msglen = sizeof msg;
    b.stop = &g->stop;
    const unsigned *gd = b.l->grid;
    cudaError_t err = ptx__block_alloc(&b) == 0 ? cudaSuccess : cudaErrorMemoryAllocation;
    while (err == cudaSuccess && !__atomic_load_n(&g->stop, __ATOMIC_RELAXED)) {
        uint64_t i = __atomic_fetch_add(&g->next, 1, __ATOMIC_RELAXED);
        if (i >= g->total)
            break;
        b.ctaid[0] = (unsigned)(i % gd[0]);
        b.ctaid[1] = (unsigned)(i / gd[0] % gd[1]);
        b.ctaid[2] = (unsigned)(i / ((uint64_t)gd[0] * gd[1]));
        ptx__block_reset(&b);
        if (ptx__run_block(&b) != 0)
            err = b.err;
    }
    ptx__block_free(&b);
    __atomic_add_fetch(&g->lane_insns, b.lane_insns, __ATOMIC_RELAXED);
    if (err != cudaSuccess) { /* the first fault is the launch's; the others only echo it */
        pthread_mutex_lock(&g->lock);
        if (g->err == cudaSuccess) {
            g->err = err;
            snprintf(g->msg, g->msglen, "%s", msg[0] ? msg : "out of memory for the block");
        }
        __atomic_store_n(&g->stop, 1, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&g->lock);
    }
    return NULL;
}

/* Worker threads for n blocks: one per core (CUDAREM_EMU_THREADS), at most n. */
static unsigned ptx__workers(uint64_t n)
{
    const char *s = getenv("CUDAREM_EMU_THREADS");
    long w = s != NULL ? strtol(s, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
    if (w < 1)
        w = 1;
    if (w > 64)
        w = 64;
    return (uint64_t)w < n ? (unsigned)w : (unsigned)n;
}

static cudaError_t ptx__run_grid(ptx__grid *g)
{
    pthread_t th[64];
    unsigned n = ptx__workers(g->total), started = 0;
    for (; started + 1 < n; started++)
        if (pthread_create(&th[started], NULL, ptx__worker, g) != 0)
            break;
    ptx__worker(g); /* this thread is a worker too */
    for (unsigned i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    return g->err;
}

cudaError_t crm_ptx_run(const crm_ptx_module *m, const char *name, const crm_ptx_launch *l, char *msg,
                        size_t msglen)
{
    const ptx_func *f = ptx_module_func(m, name);
    if (msglen > 0)
        msg[0] = '\0';
    if (f == NULL)
        return cudaErrorInvalidDeviceFunction;
    if (f->unsupported != NULL) {
        snprintf(msg, msglen, "kernel %s uses %s (PTX line %u), which the emulated device does not execute", name,
                 f->unsupported, f->unsupported_line);
        return cudaErrorNoKernelImageForDevice;
    }
    if (!ptx__args_fit(m, f, l)) {
        snprintf(msg, msglen, "kernel %s: the arguments do not match its %u PTX parameters", name, f->nparams);
        return cudaErrorInvalidValue;
    }
    ptx__grid g = {.proto = {.m = m, .f = f, .l = l, .started = crm_emu_now(), .timeout = crm_emu_watchdog_limit()},
                   .lock = PTHREAD_MUTEX_INITIALIZER, .msg = msg, .msglen = msglen,
                   .out = {.lock = PTHREAD_MUTEX_INITIALIZER, .max = l->printf_fifo ? l->printf_fifo : PTX_OUT_MAX}};
    g.proto.out = &g.out;
    g.proto.nthreads = l->block[0] * l->block[1] * l->block[2];
    g.proto.nwarps = (g.proto.nthreads + 31) / 32;
    g.total = (uint64_t)l->grid[0] * l->grid[1] * l->grid[2];
    unsigned char *params = ptx__params(m, f, l->args);
    cudaError_t err = cudaErrorMemoryAllocation;
    if (params != NULL) {
        g.proto.params = params;
        err = ptx__run_grid(&g);
    }
    if (l->lane_insns != NULL)
        *l->lane_insns = g.lane_insns;
    if (l->output != NULL && g.out.len > 0)
        l->output(l->ctx, g.out.text, g.out.len);
    if (g.out.dropped > 0)
        fprintf(stderr, "cudarem-emu: kernel %s: %zu bytes of printf output past the %zu-byte FIFO dropped\n", name,
                g.out.dropped, g.out.max);
    ptx_out_free(&g.out);
    free(params);
    return err;
}
