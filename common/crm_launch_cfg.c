/* crm_launch_cfg.c -- the per-thread stack of <<<>>> configurations that nvcc's
 * launch code pushes and pops (CUDA 13 ABI, crt/host_runtime.h): nested when a kernel
 * argument expression itself launches a kernel. */
#include "common/crm_nvcc_rt.h"

#define CRM__EXPORT __attribute__((visibility("default")))

typedef struct crm__launch_cfg {
    dim3 grid, block;
    size_t shmem;
    cudaStream_t stream;
} crm__launch_cfg;

static _Thread_local crm__launch_cfg crm__cfgs[CRM_LAUNCH_CFG_DEPTH];
static _Thread_local unsigned crm__ncfgs;

/* 1 refuses the launch, which the program's launch code then skips. */
CRM__EXPORT unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                                 struct CUstream_st *stream)
{
    if (crm__ncfgs == CRM_LAUNCH_CFG_DEPTH)
        return 1;
    crm__cfgs[crm__ncfgs++] = (crm__launch_cfg){gridDim, blockDim, sharedMem, stream};
    return 0;
}

CRM__EXPORT cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem, void *stream)
{
    if (crm__ncfgs == 0)
        return crm_nvcc_rt_error(cudaErrorMissingConfiguration);
    const crm__launch_cfg *c = &crm__cfgs[--crm__ncfgs];
    *gridDim = c->grid;
    *blockDim = c->block;
    *sharedMem = c->shmem;
    *(cudaStream_t *)stream = c->stream;
    return cudaSuccess;
}
