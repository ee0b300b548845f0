/* crm_nvcc_rt.h -- runtime entry points that nvcc's host code calls, shared by the
 * two libraries that take a program's runtime over, the shim and the emulated
 * device in process: the per-thread <<<>>> configuration (crm_launch_cfg.c) and the
 * copies to and from __device__ variables (crm_symbol_copy.c). Each library that
 * links them defines the hooks below. */
#ifndef CRM_NVCC_RT_H
#define CRM_NVCC_RT_H

#include <stddef.h>
#include <cuda_runtime_api.h>

#define CRM_LAUNCH_CFG_DEPTH 16 /* <<<>>> configurations pending at once; a push beyond is refused */

/* Hook: records err as the calling thread's last error and returns it. */
cudaError_t crm_nvcc_rt_error(cudaError_t err);

/* Hook: the __device__ variable the program registered at host address symbol:
 * its size, and with resolve its device address too (which may load its module).
 * cudaErrorInvalidSymbol when the program registered no such variable. */
cudaError_t crm_nvcc_rt_symbol(const void *symbol, int resolve, void **addr, size_t *size);

#endif
