/* crm_emu_kernels.h -- internal interface between the emulated device's module
 * files: loaded libraries (cudaLibrary_t), their kernels (cudaKernel_t) and the
 * CPU implementations found in the --emu-kernels libraries. */
#ifndef CRM_EMU_KERNELS_H
#define CRM_EMU_KERNELS_H

#include <cuda_runtime_api.h>
#include "common/crm_fatbin.h"
#include "server/emu/crm_emu.h"
#include "server/emu/cudarem_emu_kernel.h"
#include "server/emu/ptx/crm_ptx.h"

/* A global of a module: emulated device memory per device, made at first use. */
typedef struct crm__eglobal {
    const crm_global_info *info;
    void *addr[CRM_EMU_MAX_DEVICES];
} crm__eglobal;

struct CUlib_st {
    crm_module_info info;          /* kernels, layouts, globals of the cubin */
    crm__eglobal *globals;         /* info.nglobals entries */
    char *ptx;                     /* the module's PTX text, NULL when it has none */
    size_t ptx_len;
    crm_ptx_module *engine;        /* ptx prepared for the PTX engine, at the first launch needing it */
    char *engine_err;              /* why ptx could not be prepared (then engine stays NULL) */
    struct CUkern_st **kernels;    /* handed out by cudaLibraryGetKernel, one per name */
    size_t nkernels;
};

struct CUkern_st {
    struct CUlib_st *lib;          /* owning library */
    const crm_kernel_info *k;      /* name and layout */
    cudarem_emu_kernel_fn fn;      /* CPU implementation, NULL when none */
    int max_dyn_smem;              /* cudaFuncAttributeMaxDynamicSharedMemorySize */
    int carveout;                  /* cudaFuncAttributePreferredSharedMemoryCarveout */
    int cache_config;              /* cudaFuncSetCacheConfig */
    int cluster[3];                /* cudaFuncAttributeRequiredCluster* */
    int warned;                    /* the missing implementation was logged */
};

/* The PTX engine's module of lib, prepared at the first call (exclusive lock held);
 * NULL when lib has no PTX or it could not be prepared (lib->engine_err says why). */
crm_ptx_module *crm__lib_engine(struct CUlib_st *lib);

/* The kernel that func stands for in *kernel when it is a host function nvcc's
 * program registered (crm_emu_register.c), else func itself: cudaSuccess, or why its
 * kernel cannot run here (*kernel NULL). Called without the emulated device's lock. */
cudaError_t crm__host_kernel(const void *func, const void **kernel);

/* 1 when k is a live kernel handle (lock held). */
int crm__kernel_live(const struct CUkern_st *k);

/* Address of global `name` of lib on the current device (allocated and initialised
 * on first use, again after a cudaDeviceReset freed it); NULL when there is none. */
void *crm__global_addr(struct CUlib_st *lib, const char *name, size_t *size);

#endif
