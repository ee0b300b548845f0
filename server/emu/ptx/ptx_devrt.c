/* ptx_devrt.c -- cudaGraphSetConditional on the emulated device
 * (server/emu/ptx/ptx_devrt.h). */
#include <string.h>
#include "ptx_devrt.h"

int ptx_setcond(ptx_block *b, const ptx_insn *in, const unsigned *lanes, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        unsigned t = lanes[i];
        uint64_t handle = ptx_call_arg_bits(b, t, in, 0);
        uint32_t value = (uint32_t)ptx_call_arg_bits(b, t, in, 1);
        unsigned char *cell = ptx_mem(b, t, in, PTX_SP_GENERIC, handle, sizeof value);
        if (cell == NULL)
            return -1;
        memcpy(cell, &value, sizeof value);
    }
    return 0;
}
