/* crm_drv_managed.c -- the driver's managed memory calls (cuMemAllocManaged,
 * prefetches old and new, advice, range attributes, stream attachment), on the
 * runtime layer's (interpose/crm_rt_managed.h): one allocation, whichever layer made it. */
#include <stdint.h>
#include <cuda.h>
#include "client/crm_handles.h"
#include "interpose/crm_drv.h"
#include "interpose/crm_export.h"
#include "interpose/crm_rt_managed.h"

/* cuda.h maps these names to their _v2 forms; the older forms are defined here too */
#undef cuMemPrefetchAsync
#undef cuMemAdvise

#define CRM__PTR(d) ((void *)(uintptr_t)(d))

CRM_EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
    void *p = NULL;
    CUresult rc = crm_drv_need_ctx();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (dptr == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    rc = crm_drv_err(crm_managed_alloc(&p, bytesize, flags));
    if (rc == CUDA_SUCCESS)
        *dptr = (CUdeviceptr)(uintptr_t)p;
    return rc;
}

/* A CUmemLocation as a device number or cudaCpuDeviceId (cudaInvalidDeviceId: neither). */
static int crm__where(CUmemLocation loc)
{
    int ndev = 0;
    if (loc.type == CU_MEM_LOCATION_TYPE_DEVICE)
        return cuDeviceGetCount(&ndev) == CUDA_SUCCESS && loc.id >= 0 && loc.id < ndev ? loc.id : cudaInvalidDeviceId;
    if (loc.type == CU_MEM_LOCATION_TYPE_HOST || loc.type == CU_MEM_LOCATION_TYPE_HOST_NUMA ||
        loc.type == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT)
        return cudaCpuDeviceId;
    return cudaInvalidDeviceId;
}

/* The old calls name a device, or CU_DEVICE_CPU for the host. */
static int crm__where_device(CUdevice dev)
{
    int ndev = 0;
    if (dev == CU_DEVICE_CPU)
        return cudaCpuDeviceId;
    return cuDeviceGetCount(&ndev) == CUDA_SUCCESS && dev >= 0 && dev < ndev ? dev : cudaInvalidDeviceId;
}

static CUresult crm__prefetch(CUdeviceptr p, size_t n, int where, CUstream s, int ptds)
{
    CUresult rc = crm_drv_need_ctx();
    return rc != CUDA_SUCCESS ? rc : crm_drv_err(crm_managed_prefetch(CRM__PTR(p), n, where, (cudaStream_t)s, ptds));
}

CRM_EXPORT CUresult cuMemPrefetchAsync(CUdeviceptr p, size_t n, CUdevice dst, CUstream s)
{ return crm__prefetch(p, n, crm__where_device(dst), s, CRM_PTDS_OFF); }
CRM_EXPORT CUresult cuMemPrefetchAsync_ptsz(CUdeviceptr p, size_t n, CUdevice dst, CUstream s)
{ return crm__prefetch(p, n, crm__where_device(dst), s, CRM_PTDS_ON); }

CRM_EXPORT CUresult cuMemPrefetchAsync_v2(CUdeviceptr p, size_t n, CUmemLocation loc, unsigned int flags, CUstream s)
{ return flags != 0 ? CUDA_ERROR_INVALID_VALUE : crm__prefetch(p, n, crm__where(loc), s, CRM_PTDS_OFF); }
CRM_EXPORT CUresult cuMemPrefetchAsync_v2_ptsz(CUdeviceptr p, size_t n, CUmemLocation loc, unsigned int flags,
                                               CUstream s)
{ return flags != 0 ? CUDA_ERROR_INVALID_VALUE : crm__prefetch(p, n, crm__where(loc), s, CRM_PTDS_ON); }

static CUresult crm__advise(CUdeviceptr p, size_t n, CUmem_advise advice, int where)
{
    CUresult rc = crm_drv_need_ctx();
    return rc != CUDA_SUCCESS ? rc : crm_drv_err(crm_managed_advice(CRM__PTR(p), n, (int)advice, where));
}

CRM_EXPORT CUresult cuMemAdvise(CUdeviceptr p, size_t n, CUmem_advise advice, CUdevice dev)
{ return crm__advise(p, n, advice, crm__where_device(dev)); }
CRM_EXPORT CUresult cuMemAdvise_v2(CUdeviceptr p, size_t n, CUmem_advise advice, CUmemLocation loc)
{ return crm__advise(p, n, advice, crm__where(loc)); }

CRM_EXPORT CUresult cuMemRangeGetAttribute(void *data, size_t dataSize, CUmem_range_attribute attribute,
                                           CUdeviceptr p, size_t n)
{
    CUresult rc = crm_drv_need_ctx();
    return rc != CUDA_SUCCESS ? rc : crm_drv_err(crm_managed_range_attribute(data, dataSize, (int)attribute,
                                                                             CRM__PTR(p), n));
}

CRM_EXPORT CUresult cuMemRangeGetAttributes(void **data, size_t *dataSizes, CUmem_range_attribute *attributes,
                                            size_t numAttributes, CUdeviceptr p, size_t n)
{
    CUresult rc = crm_drv_need_ctx();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (numAttributes == 0 || data == NULL || dataSizes == NULL || attributes == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < numAttributes && rc == CUDA_SUCCESS; i++)
        rc = crm_drv_err(crm_managed_range_attribute(data[i], dataSizes[i], (int)attributes[i], CRM__PTR(p), n));
    return rc;
}

CRM_EXPORT CUresult cuStreamAttachMemAsync(CUstream s, CUdeviceptr p, size_t length, unsigned int flags)
{
    CUresult rc = crm_drv_need_ctx();
    return rc != CUDA_SUCCESS ? rc : crm_drv_err(crm_managed_attach((cudaStream_t)s, CRM__PTR(p), length, flags));
}

CRM_EXPORT CUresult cuStreamAttachMemAsync_ptsz(CUstream s, CUdeviceptr p, size_t length, unsigned int flags)
{
    CUresult rc = crm_drv_need_ctx();
    return rc != CUDA_SUCCESS ? rc
                              : crm_drv_err(crm_managed_attach(s == NULL ? (cudaStream_t)cudaStreamPerThread
                                                                         : (cudaStream_t)s,
                                                               CRM__PTR(p), length, flags));
}
