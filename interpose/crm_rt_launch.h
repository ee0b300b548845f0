/* crm_rt_launch.h -- the one launch path of the shim (interpose/crm_rt_kernels.c),
 * which the runtime's launches and the driver's cuLaunchKernel* share: checked on
 * the client as a GPU checks a launch at the call, then queued. */
#ifndef CRM_RT_LAUNCH_H
#define CRM_RT_LAUNCH_H

#include <stddef.h>
#include <cuda_runtime_api.h>
#include "client/crm_modules.h"

typedef struct crm_launch_req {
    crm_kfunc *func;                  /* NULL: cudaErrorInvalidDeviceFunction */
    dim3 grid, block;
    size_t shmem;                     /* dynamic shared memory bytes */
    cudaStream_t stream;
    void **args;                      /* parameter i at args[i], or */
    const void *packed;               /* the parameters already packed at their offsets */
    size_t packed_len;
    const cudaLaunchAttribute *attrs; /* launch attributes (cudaLaunchKernelExC) */
    unsigned nattrs;
    int ptds;                         /* stream 0 is the per-thread default stream */
    struct CUgraphNode_st *node;      /* not NULL: the launch becomes this graph node's work */
    const void *origin;               /* the function as the program named it (a graph kernel
                                         node's GetParams gives it back) */
} crm_launch_req;

/* Queues the launch; returns the error a GPU gives at the call (unknown function,
 * bad geometry or attributes, module that cannot load). */
cudaError_t crm_kernel_launch(const crm_launch_req *r);

#endif
