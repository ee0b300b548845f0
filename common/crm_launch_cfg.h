/* crm_launch_cfg.h -- the <<<grid, block, shmem, stream>>> of launches being set
 * up, per thread, as nvcc's launch stubs push and pop it: nested when a kernel
 * argument expression itself launches a kernel. crm_launch_cfg.c defines the two
 * entry points (__cudaPushCallConfiguration, __cudaPopCallConfiguration) for the
 * library that links it, the shim or the emulated device, which says how a failure
 * becomes the runtime's last error. */
#ifndef CRM_LAUNCH_CFG_H
#define CRM_LAUNCH_CFG_H

#include <cuda_runtime_api.h>

#define CRM_LAUNCH_CFG_DEPTH 16 /* configurations pending at once; a push beyond is refused */

/* Records err as the calling thread's last error and returns it: defined by the
 * library that links crm_launch_cfg.o. */
cudaError_t crm_launch_cfg_error(cudaError_t err);

#endif
