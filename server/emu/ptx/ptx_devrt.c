/* ptx_devrt.c -- cudaGraphSetConditional on the emulated device
 * (server/emu/ptx/ptx_devrt.h). */
#include <string.h>
#include "ptx_devrt.h"

/* The call's k-th argument in thread t, zero-extended. */
static uint64_t ptx__arg(ptx_block *b, unsigned t, const ptx_insn *in, unsigned k)
{
    uint64_t v = 0, size = 0;
    const unsigned char *p = ptx_call_arg(b, t, in, k, &size);
    if (p != NULL)
        memcpy(&v, p, size < 8 ? size : 8);
    return v;
}

int ptx_setcond(ptx_block *b, const ptx_insn *in, const unsigned *lanes, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        unsigned t = lanes[i];
        uint32_t value = (uint32_t)ptx__arg(b, t, in, 1);
        unsigned char *cell = ptx_mem(b, t, in, PTX_SP_GENERIC, ptx__arg(b, t, in, 0), sizeof value);
        if (cell == NULL)
            return -1;
        memcpy(cell, &value, sizeof value);
    }
    return 0;
}
