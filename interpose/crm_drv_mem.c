/* crm_drv_mem.c -- driver memory calls: device and host allocations, address
 * ranges and pointer attributes (answered from the client's pointer table), on the
 * runtime layer's allocation calls, so a pointer from either layer is valid in both. */
#include <stdint.h>
#include <string.h>
#include "client/crm_ptrmap.h"
#include "interpose/crm_drv.h"
#include "interpose/crm_export.h"

#define CRM__PTR(d) ((void *)(uintptr_t)(d))

CRM_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    void *p = NULL;
    CUresult rc = crm_drv_need_ctx();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (dptr == NULL || bytesize == 0)
        return CUDA_ERROR_INVALID_VALUE;
    rc = CRM_DRV_RT(cudaMalloc(&p, bytesize));
    if (rc == CUDA_SUCCESS)
        *dptr = (CUdeviceptr)(uintptr_t)p;
    return rc;
}

CRM_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes, size_t Height,
                                       unsigned int ElementSizeBytes)
{
    void *p = NULL;
    CUresult rc = crm_drv_need_ctx();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (dptr == NULL || pPitch == NULL || WidthInBytes == 0 || Height == 0 ||
        (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16))
        return CUDA_ERROR_INVALID_VALUE;
    rc = CRM_DRV_RT(cudaMallocPitch(&p, pPitch, WidthInBytes, Height));
    if (rc == CUDA_SUCCESS)
        *dptr = (CUdeviceptr)(uintptr_t)p;
    return rc;
}

CRM_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
    CUresult rc = crm_drv_need_ctx();
    return rc != CUDA_SUCCESS ? rc : CRM_DRV_RT(cudaFree(CRM__PTR(dptr)));
}

CRM_EXPORT CUresult cuMemGetInfo_v2(size_t *free, size_t *total)
{
    size_t f = 0, t = 0;
    CUresult rc = crm_drv_need_ctx();
    if (rc == CUDA_SUCCESS)
        rc = CRM_DRV_RT(cudaMemGetInfo(&f, &t));
    if (rc == CUDA_SUCCESS && free != NULL)
        *free = f;
    if (rc == CUDA_SUCCESS && total != NULL)
        *total = t;
    return rc;
}

CRM_EXPORT CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
    crm_range r;
    CUresult rc = crm_drv_need_ctx();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (crm_ptrmap_classify(dptr, &r) != CRM_MEM_DEVICE)
        return CUDA_ERROR_NOT_FOUND;
    if (pbase != NULL)
        *pbase = r.base;
    if (psize != NULL)
        *psize = r.size;
    return CUDA_SUCCESS;
}

/* ---- host memory ------------------------------------------------------------------ */

CRM_EXPORT CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
    CUresult rc = crm_drv_need_ctx();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (pp == NULL || bytesize == 0)
        return CUDA_ERROR_INVALID_VALUE;
    return CRM_DRV_RT(cudaHostAlloc(pp, bytesize, Flags));
}

CRM_EXPORT CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
    return cuMemHostAlloc(pp, bytesize, 0);
}

CRM_EXPORT CUresult cuMemFreeHost(void *p)
{
    CUresult rc = crm_drv_need_ctx();
    return rc != CUDA_SUCCESS ? rc : CRM_DRV_RT(cudaFreeHost(p));
}

CRM_EXPORT CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)
{
    CUresult rc = crm_drv_need_ctx();
    if (rc != CUDA_SUCCESS)
        return rc;
    rc = CRM_DRV_RT(cudaHostRegister(p, bytesize, Flags));
    return rc == CUDA_ERROR_INVALID_VALUE && crm_ptrmap_classify((uint64_t)(uintptr_t)p, NULL) == CRM_MEM_REGISTERED
               ? CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED
               : rc;
}

CRM_EXPORT CUresult cuMemHostUnregister(void *p)
{
    CUresult rc = crm_drv_need_ctx();
    return rc != CUDA_SUCCESS ? rc : CRM_DRV_RT(cudaHostUnregister(p));
}

CRM_EXPORT CUresult cuMemHostGetFlags(unsigned int *pFlags, void *p)
{
    CUresult rc = crm_drv_need_ctx();
    return rc != CUDA_SUCCESS ? rc : CRM_DRV_RT(cudaHostGetFlags(pFlags, p));
}

CRM_EXPORT CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int Flags)
{
    void *d = NULL;
    CUresult rc = crm_drv_need_ctx();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (pdptr == NULL || Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    rc = CRM_DRV_RT(cudaHostGetDevicePointer(&d, p, 0));
    if (rc == CUDA_SUCCESS)
        *pdptr = (CUdeviceptr)(uintptr_t)d;
    return rc;
}

/* ---- pointer attributes ----------------------------------------------------------- */

/* Writes attribute `a` of ptr (of kind k in range r) to data. */
static CUresult crm__attr(void *data, CUpointer_attribute a, CUdeviceptr ptr, enum crm_mem_kind k, const crm_range *r)
{
    int device = k == CRM_MEM_DEVICE ? r->device : 0;
    int mapped_host = k == CRM_MEM_DEVICE && ((r->kind >> 8) & CRM_PTRMAP_HOSTMAPPED);
    int managed = k == CRM_MEM_DEVICE && ((r->kind >> 8) & CRM_PTRMAP_MANAGED) && !mapped_host;
    switch (a) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
        *(CUcontext *)data = crm_drv_primary(device);
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *(unsigned *)data = k == CRM_MEM_DEVICE && !mapped_host ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
        if (k != CRM_MEM_DEVICE)
            return CUDA_ERROR_INVALID_VALUE; /* host memory is not mapped into a remote device */
        *(CUdeviceptr *)data = ptr;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        if (k == CRM_MEM_DEVICE && !managed && !mapped_host)
            return CUDA_ERROR_INVALID_VALUE;
        *(void **)data = CRM__PTR(ptr);
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
        *(int *)data = managed;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
        *(int *)data = 0;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        *(int *)data = device;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
        *(unsigned long long *)data = r->base; /* ranges never overlap while live */
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        *(CUdeviceptr *)data = r->base;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
        *(size_t *)data = r->size;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MAPPED:
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
        *(int *)data = 1;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
        *(unsigned long long *)data = CU_MEM_HANDLE_TYPE_NONE;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
        *(CUmemoryPool *)data = NULL;
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

CRM_EXPORT CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
    crm_range r;
    CUresult rc = crm_drv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (data == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    enum crm_mem_kind k = crm_ptrmap_classify(ptr, &r);
    if (k == CRM_MEM_NONE) /* memory the driver does not know */
        return CUDA_ERROR_INVALID_VALUE;
    return crm__attr(data, attribute, ptr, k, &r);
}

/* Attributes of memory the driver does not know are zero (MEMORY_TYPE 0 says so),
 * as the real call answers for plain host memory. */
CRM_EXPORT CUresult cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute *attributes, void **data,
                                           CUdeviceptr ptr)
{
    crm_range r;
    CUresult rc = crm_drv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (numAttributes > 0 && (attributes == NULL || data == NULL))
        return CUDA_ERROR_INVALID_VALUE;
    enum crm_mem_kind k = crm_ptrmap_classify(ptr, &r);
    for (unsigned i = 0; i < numAttributes; i++) {
        if (data[i] == NULL)
            continue;
        if (k == CRM_MEM_NONE || crm__attr(data[i], attributes[i], ptr, k, &r) != CUDA_SUCCESS) {
            /* the widest attribute value is 8 bytes */
            size_t size = attributes[i] == CU_POINTER_ATTRIBUTE_MEMORY_TYPE ||
                                  attributes[i] == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL ||
                                  attributes[i] == CU_POINTER_ATTRIBUTE_IS_MANAGED ||
                                  attributes[i] == CU_POINTER_ATTRIBUTE_MAPPED ||
                                  attributes[i] == CU_POINTER_ATTRIBUTE_SYNC_MEMOPS
                              ? sizeof(int)
                              : sizeof(uint64_t);
            if (attributes[i] == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL && k == CRM_MEM_NONE)
                *(int *)data[i] = -2;
            else
                memset(data[i], 0, size);
        }
    }
    return CUDA_SUCCESS;
}
