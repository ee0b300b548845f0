/* ptx_devrt.h -- device functions of the CUDA runtime a kernel calls to steer the
 * graph it runs in: cudaGraphSetConditional. On the emulated device a conditional
 * handle is the device address of the 32-bit value the conditional node reads
 * (client/crm_graph_cond.h), so setting it is a store there. Internal to
 * server/emu/ptx/. */
#ifndef PTX_DEVRT_H
#define PTX_DEVRT_H

#include "ptx_block.h"

/* cudaGraphSetConditional(handle, value) for each thread. 0, or -1 after a fault
 * (a handle that is no address of the kernel's memory). */
int ptx_setcond(ptx_block *b, const ptx_insn *in, const unsigned *lanes, unsigned n);

#endif
