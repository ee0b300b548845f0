/* cudarem_emu_kernel.h -- public interface for CPU implementations of CUDA kernels,
 * run by cudarem's emulated device (libcudarem-emu.so).
 *
 * The emulated device has no GPU to run a program's kernels on. Instead, a shared
 * library given to the server (`cudarem-server --emu-kernels libmykernels.so`,
 * repeatable) provides a C function per kernel, found by the kernel's mangled name
 * (as `cuobjdump -symbols` or `nm` on the object show it, e.g. _Z4vaddPKfS0_Pfi).
 * A launch calls the function once per thread of the grid, block after block,
 * threads in x, y, z order, with the launch geometry and the thread's indices in
 * `ctx`; there is no __syncthreads (kernels that need one are not supported).
 *
 * `args` is the launch's `void **args`: args[i] points to the value of parameter i,
 * e.g. `float *out = *(float **)args[2]; int n = *(int *)args[3];`. Device
 * pointers are plain addresses in the emulated device's process, so the function
 * dereferences them directly. ctx->symbol() gives the address of a __device__ or
 * __constant__ global of the kernel's module, by the name nvcc gives it in the
 * cubin (the variable's name; mangled when it lives in a namespace).
 *
 * The library exports a table named `cudarem_emu_kernels`, ended by {NULL, NULL}:
 *
 *   #include "cudarem_emu_kernel.h"
 *   static void vadd(const cudarem_emu_ctx *ctx, void **args)
 *   {
 *       unsigned i = ctx->blockIdx.x * ctx->blockDim.x + ctx->threadIdx.x;
 *       const float *a = *(const float **)args[0], *b = *(const float **)args[1];
 *       float *c = *(float **)args[2];
 *       if ((int)i < *(int *)args[3])
 *           c[i] = a[i] + b[i];
 *   }
 *   CUDAREM_EMU_KERNELS_BEGIN
 *       CUDAREM_EMU_KERNEL("_Z4vaddPKfS0_Pfi", vadd),
 *   CUDAREM_EMU_KERNELS_END
 *
 * A kernel without an implementation fails its launch with
 * cudaErrorInvalidDeviceFunction and one line in the server log naming it. Modules
 * holding only PTX (no cubin) are refused with cudaErrorNoKernelImageForDevice.
 */
#ifndef CUDAREM_EMU_KERNEL_H
#define CUDAREM_EMU_KERNEL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cudarem_dim3 {
    unsigned int x, y, z;
} cudarem_dim3;

/* What a kernel function knows about the thread it runs as. */
typedef struct cudarem_emu_ctx {
    cudarem_dim3 gridDim;          /* blocks in the grid */
    cudarem_dim3 blockDim;         /* threads per block */
    cudarem_dim3 blockIdx;         /* this thread's block */
    cudarem_dim3 threadIdx;        /* this thread within its block */
    void *dynamicSmem;             /* the block's dynamic shared memory (extern __shared__) */
    size_t dynamicSmemBytes;       /* its size, the launch's sharedMem argument */
    /* Address of global `name` of the kernel's module in emulated device memory, and
     * its size in *size (may be NULL); NULL when the module has no such global. */
    void *(*symbol)(const struct cudarem_emu_ctx *ctx, const char *name, size_t *size);
    void *priv;                    /* the emulated device's; do not touch */
} cudarem_emu_ctx;

/* A CPU implementation of one kernel; called once per thread of a launch. */
typedef void (*cudarem_emu_kernel_fn)(const cudarem_emu_ctx *ctx, void **args);

typedef struct cudarem_emu_kernel {
    const char *name;              /* the kernel's mangled name */
    cudarem_emu_kernel_fn fn;
} cudarem_emu_kernel;

/* Name of the table a kernel library exports. */
#define CUDAREM_EMU_KERNELS_TABLE "cudarem_emu_kernels"

#define CUDAREM_EMU_KERNELS_BEGIN \
    __attribute__((visibility("default"))) const cudarem_emu_kernel cudarem_emu_kernels[] = {
#define CUDAREM_EMU_KERNEL(mangled, fn) {(mangled), (fn)}
#define CUDAREM_EMU_KERNELS_END {NULL, NULL}};

#ifdef __cplusplus
}
#endif

#endif
