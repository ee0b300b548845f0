/* crm_ptx.h -- the emulated device's PTX engine: runs the kernels of a module's PTX
 * with GPU semantics (warps of 32 lanes in lockstep, divergent branches
 * reconverging, block barriers, shared and local memory, the special registers),
 * the blocks of a grid in parallel on the machine's cores. A module is prepared
 * once (crm_ptx_load) and launched any number of times. */
#ifndef CRM_PTX_H
#define CRM_PTX_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>
#include "common/crm_fatbin.h"

typedef struct ptx_module crm_ptx_module;

/* What a launch needs from the device. */
typedef struct crm_ptx_launch {
    unsigned grid[3], block[3];
    void **args;          /* the kernel's arguments, one pointer per parameter (cudaLaunchKernel's) */
    const crm_kparam_info *arg_layout; /* the layout the launch was made with: the bytes each of args holds */
    unsigned nargs;
    size_t dyn_smem;      /* dynamic shared memory per block, bytes */
    /* 1 when [addr, addr + n) is device memory the kernel may use; then [*lo, *hi),
     * when not 0 0, is the whole allocation holding it, which stays valid for the
     * launch (the engine checks later accesses there itself). Called from several
     * threads at once. */
    int (*device_memory)(void *ctx, uint64_t addr, uint64_t n, uint64_t *lo, uint64_t *hi);
    /* the device address of module variable `name` (.global, .const), NULL if none;
     * called from several threads at once */
    void *(*variable)(void *ctx, const char *name, size_t *size);
    void *ctx;
    uint64_t *lane_insns; /* when not NULL: set to the instructions executed, counting each lane */
    /* when not NULL: receives the text the kernel printed (printf, failed asserts),
     * once, after the launch, as a GPU prints it at the next synchronisation */
    void (*output)(void *ctx, const char *text, size_t len);
    size_t printf_fifo;   /* bytes of printed text kept (cudaLimitPrintfFifoSize); 0: PTX_OUT_MAX */
} crm_ptx_launch;

/* Prepares the PTX text of a module: 0 and *out, or -1 with the reason in err. */
int crm_ptx_load(const char *text, size_t len, crm_ptx_module **out, char *err, size_t errlen);
void crm_ptx_free(crm_ptx_module *m);
/* 1 when the engine can run kernel `name`; 0 with the reason in why (the first
 * instruction it does not execute, or the kernel's absence). */
int crm_ptx_runnable(const crm_ptx_module *m, const char *name, char *why, size_t whylen);
/* Runs kernel `name`. cudaSuccess; cudaErrorNoKernelImageForDevice when it uses an
 * instruction the engine does not execute (msg names it); cudaErrorIllegalAddress,
 * cudaErrorMisalignedAddress or cudaErrorLaunchFailure for a fault of the kernel
 * (msg says where); cudaErrorLaunchFailure for `trap`; cudaErrorAssert for a
 * failed assert(); cudaErrorLaunchTimeout when it
 * ran longer than CUDAREM_EMU_KERNEL_TIMEOUT seconds (default 600);
 * cudaErrorInvalidValue when the arguments do not match the kernel's parameters
 * (their number, or a parameter larger than its argument); and
 * cudaErrorMemoryAllocation when the block's memory cannot be made. */
cudaError_t crm_ptx_run(const crm_ptx_module *m, const char *name, const crm_ptx_launch *l, char *msg,
                        size_t msglen);

#endif
