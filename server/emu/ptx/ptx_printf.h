/* ptx_printf.h -- the device functions of the CUDA runtime a kernel calls for
 * printf (vprintf: the format and a buffer of its arguments, each aligned to its
 * size) and assert (__assertfail), and the launch's output they write to.
 * Internal to server/emu/ptx/. */
#ifndef PTX_PRINTF_H
#define PTX_PRINTF_H

#include <pthread.h>
#include "ptx_block.h"

/* What a GPU's printf FIFO holds by default (cudaLimitPrintfFifoSize): text past it
 * is dropped, counted in `dropped`. */
#define PTX_OUT_MAX (1u << 20)

/* A launch's printed text, shared by the blocks that run on several threads. */
typedef struct ptx_out {
    pthread_mutex_t lock;
    char *text;
    size_t len, cap;
    size_t dropped;               /* bytes that did not fit */
    size_t max;                   /* bytes kept at most: the launch's FIFO size */
} ptx_out;

/* vprintf(format, args) for each thread: its text appended to b->out, its result
 * (the arguments it read, -1 for a NULL format) in the call's result variable. 0,
 * or -1 after a fault (a format or %s string outside the kernel's memory). */
int ptx_vprintf(ptx_block *b, const ptx_insn *in, const unsigned *lanes, unsigned n);

/* __assertfail(message, file, line, function, charsize): each thread's line, as a
 * GPU prints it, then the launch fails with cudaErrorAssert. Returns -1. */
int ptx_assertfail(ptx_block *b, const ptx_insn *in, const unsigned *lanes, unsigned n);

void ptx_out_free(ptx_out *o);

#endif
