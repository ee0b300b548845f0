/* crm_rt_managed.h -- the managed memory calls of interpose/crm_rt_managed.c in
 * the form both layers call them: results as cudaError_t, locations as a device
 * number or cudaCpuDeviceId (cudaInvalidDeviceId: neither), errors not recorded. */
#ifndef CRM_RT_MANAGED_H
#define CRM_RT_MANAGED_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

cudaError_t crm_managed_alloc(void **devPtr, size_t size, unsigned int flags);
/* Mapped host memory (cudaHostAllocMapped): managed memory the program knows as
 * page-locked host memory, its host pointer also its device pointer. */
cudaError_t crm_mapped_host_alloc(void **pHost, size_t size, unsigned int flags);
/* ptds: stream 0 names the per-thread default stream. */
cudaError_t crm_managed_prefetch(const void *devPtr, size_t count, int where, cudaStream_t stream, int ptds);
/* advice: a cudaMemoryAdvise (the driver's CUmem_advise has the same values). */
cudaError_t crm_managed_advice(const void *devPtr, size_t count, int advice, int where);
/* attribute: a cudaMemRangeAttribute (the driver's CUmem_range_attribute has the same values). */
cudaError_t crm_managed_range_attribute(void *data, size_t dataSize, int attribute, const void *devPtr,
                                        size_t count);
/* Makes a module's variable at [addr, addr + size), already known as device
 * memory, managed (a __managed__ variable): its first host touch fetches it. */
cudaError_t crm_managed_adopt(uint64_t addr, size_t size);
cudaError_t crm_managed_attach(cudaStream_t stream, void *devPtr, size_t length, unsigned int flags);

#endif
