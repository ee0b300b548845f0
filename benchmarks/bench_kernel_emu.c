/* bench_kernel_emu.c -- the CPU twin of bench_kernel.cu's crm_bench_touch, loaded
 * with `cudarem-server --emu-kernels` where the emulated device runs the benchmark
 * (contract: server/emu/cudarem_emu_kernel.h; called once per thread). */
#include "server/emu/cudarem_emu_kernel.h"

/* Thread 0 of block 0 bumps the counter, as the CUDA kernel's atomicAdd does. */
static void crm__bench_touch(const cudarem_emu_ctx *ctx, void **args)
{
    int *counter = *(int **)args[0];
    if (ctx->threadIdx.x == 0 && ctx->blockIdx.x == 0)
        __atomic_add_fetch(counter, 1, __ATOMIC_RELAXED);
}

CUDAREM_EMU_KERNELS_BEGIN
    CUDAREM_EMU_KERNEL("crm_bench_touch", crm__bench_touch), /* extern "C": not mangled */
CUDAREM_EMU_KERNELS_END
