/* crm_kattr.h -- the client's memory of what the server said about a kernel: its
 * attributes (cudaFuncGetAttributes, cuFuncGetAttribute) and occupancy answers
 * (cudaOccupancyMaxActiveBlocksPerMultiprocessor*). Both are fixed for a loaded
 * function until the program sets one of its attributes, and frameworks ask them
 * before launches (NVIDIA's cuDNN and cuBLAS through the driver layer, torch's
 * kernels), so each costs one round trip per function and question, not one per
 * launch. So does setting an attribute to the value it was last set to (cuDNN and
 * torch set the dynamic shared memory size before launches). Keyed by the
 * function's wire id, which a reloaded module renews. Locked. */
#ifndef CRM_KATTR_H
#define CRM_KATTR_H

#include <stddef.h>
#include <stdint.h>
#include "crm_api.h"

/* 1 and *out when the attributes of function id are known. */
int crm_kattr_get(uint64_t id, crm_func_attrs *out);
/* Remembers them (silently not, when memory runs out). */
void crm_kattr_put(uint64_t id, const crm_func_attrs *attrs);
/* 1 and *blocks when this occupancy question was answered for function id. */
int crm_kattr_get_occupancy(uint64_t id, int block_size, size_t dyn_smem, unsigned flags, int *blocks);
void crm_kattr_put_occupancy(uint64_t id, int block_size, size_t dyn_smem, unsigned flags, int blocks);
/* 1 when setting attribute attr (a cudaFuncAttribute; -1: the cache configuration)
 * of function id to value was the last thing that succeeded for it. */
int crm_kattr_was_set(uint64_t id, int attr, int value);
/* Records that setting attr to value succeeded; forgets the answers it may change. */
void crm_kattr_set(uint64_t id, int attr, int value);

#endif
