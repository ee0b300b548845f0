/* crm_drv_vmm.c -- the driver's virtual memory management on the server's device
 * (protocol/cudadrv_vmm.api): address reservations, physical allocations, their
 * mappings and access rights -- what torch's expandable segments
 * (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True) grow their memory with.
 *
 * Each call waits for the server's answer (an allocation on a full device fails at
 * cuMemCreate, as on a GPU). A physical allocation's handle is an id the client
 * chose; its properties are kept here. A mapped range enters the pointer table as
 * device memory, so copies classify it as local GPU memory is classified. Handles
 * cannot be exported (cuMemExportToShareableHandle): a file descriptor of the
 * server's machine means nothing to a client process. */
#include <pthread.h>
#include <stdlib.h>
#include <cuda.h>
#include "client/crm_conn.h"
#include "client/crm_handles.h"
#include "client/crm_ptrmap.h"
#include "common/crm_idmap.h"
#include "crm_client_gen.h"
#include "interpose/crm_drv.h"
#include "interpose/crm_export.h"

#define CRM__GRAN_CACHE 8 /* devices whose granularity answers are remembered */

static pthread_mutex_t crm__lock = PTHREAD_MUTEX_INITIALIZER;
static crm_idmap crm__allocs;          /* handle id -> CUmemAllocationProp (malloc'd) */
static size_t crm__gran[CRM__GRAN_CACHE][2]; /* [device][option]; 0 = not asked yet */

/* The checks the driver makes of a pinned device allocation's properties. */
static CUresult crm__check_prop(const CUmemAllocationProp *prop)
{
    if (prop == NULL || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
        prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    return crm_drv_check_device(prop->location.id);
}

/* The granularity of pooled device dev, asked of its server. */
static CUresult crm__granularity(int dev, int option, uint64_t *g)
{
    int local;
    int saved = crm_conn_device_begin(dev, &local);
    CUresult rc = crm_rpc_crm_vmm_granularity(local, option, g);
    crm_conn_device_end(saved);
    return rc;
}

CRM_EXPORT CUresult cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
                                                  CUmemAllocationGranularity_flags option)
{
    CUresult rc = crm_drv_check_init();
    if (rc == CUDA_SUCCESS)
        rc = crm__check_prop(prop);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (granularity == NULL || (unsigned)option > CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)
        return CUDA_ERROR_INVALID_VALUE;
    int dev = prop->location.id;
    pthread_mutex_lock(&crm__lock);
    size_t known = dev < CRM__GRAN_CACHE ? crm__gran[dev][option] : 0;
    pthread_mutex_unlock(&crm__lock);
    uint64_t g = known;
    if (known == 0 && (rc = crm__granularity(dev, (int)option, &g)) == CUDA_SUCCESS && dev < CRM__GRAN_CACHE) {
        pthread_mutex_lock(&crm__lock);
        crm__gran[dev][option] = g; /* fixed for a device: asked once */
        pthread_mutex_unlock(&crm__lock);
    }
    if (rc == CUDA_SUCCESS)
        *granularity = g;
    return rc;
}

/* addr is a hint the driver may ignore; so does the server. */
CRM_EXPORT CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                        unsigned long long flags)
{
    (void)addr;
    uint64_t p = 0;
    CUresult rc = crm_drv_need_ctx();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (ptr == NULL || size == 0 || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    rc = crm_rpc_crm_vmm_reserve(size, alignment, &p);
    if (rc == CUDA_SUCCESS)
        *ptr = (CUdeviceptr)p;
    return rc;
}

CRM_EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    CUresult rc = crm_drv_need_ctx();
    return rc != CUDA_SUCCESS ? rc : crm_rpc_crm_vmm_free(ptr, size);
}

CRM_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
                                unsigned long long flags)
{
    CUresult rc = crm_drv_need_ctx();
    if (rc == CUDA_SUCCESS)
        rc = crm__check_prop(prop);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (handle == NULL || size == 0 || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUmemAllocationProp *kept = malloc(sizeof *kept);
    if (kept == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *kept = *prop;
    uint64_t id = crm_handle_new_id();
    int local;
    int saved = crm_conn_device_begin(prop->location.id, &local); /* made on that device's server */
    rc = crm_rpc_crm_vmm_create(id, size, local, (unsigned)prop->requestedHandleTypes);
    crm_conn_device_end(saved);
    if (rc == CUDA_SUCCESS) {
        pthread_mutex_lock(&crm__lock);
        int kept_ok = crm_idmap_put(&crm__allocs, id, kept) == 0;
        pthread_mutex_unlock(&crm__lock);
        if (!kept_ok) {
            crm_rpc_crm_vmm_release(id);
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        }
    }
    if (rc != CUDA_SUCCESS) {
        free(kept);
        return rc;
    }
    *handle = (CUmemGenericAllocationHandle)id;
    return CUDA_SUCCESS;
}

CRM_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
    void *kept = NULL;
    CUresult rc = crm_drv_need_ctx();
    if (rc != CUDA_SUCCESS)
        return rc;
    rc = crm_rpc_crm_vmm_release((uint64_t)handle);
    pthread_mutex_lock(&crm__lock);
    if (rc == CUDA_SUCCESS)
        crm_idmap_del(&crm__allocs, (uint64_t)handle, &kept);
    pthread_mutex_unlock(&crm__lock);
    free(kept);
    return rc;
}

CRM_EXPORT CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
                                                           CUmemGenericAllocationHandle handle)
{
    void *kept = NULL;
    CUresult rc = crm_drv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (prop == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&crm__lock);
    if (crm_idmap_get(&crm__allocs, (uint64_t)handle, &kept) == 0)
        *prop = *(const CUmemAllocationProp *)kept;
    pthread_mutex_unlock(&crm__lock);
    return kept != NULL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CRM_EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                             unsigned long long flags)
{
    void *kept = NULL;
    CUresult rc = crm_drv_need_ctx();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (flags != 0 || size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&crm__lock);
    int device = crm_idmap_get(&crm__allocs, (uint64_t)handle, &kept) == 0
                     ? ((const CUmemAllocationProp *)kept)->location.id : -1;
    pthread_mutex_unlock(&crm__lock);
    if (device < 0)
        return CUDA_ERROR_INVALID_HANDLE;
    rc = crm_rpc_crm_vmm_map(ptr, size, offset, (uint64_t)handle);
    if (rc == CUDA_SUCCESS && crm_ptrmap_add(CRM_MEM_DEVICE, ptr, size, device, CRM_PTRMAP_MAPPED) != 0) {
        crm_rpc_crm_vmm_unmap(ptr, size);
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    }
    return rc;
}

CRM_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    CUresult rc = crm_drv_need_ctx();
    if (rc == CUDA_SUCCESS)
        rc = crm_rpc_crm_vmm_unmap(ptr, size);
    for (uint64_t at = ptr; rc == CUDA_SUCCESS && at - ptr < size;) {
        crm_range gone;
        if (crm_ptrmap_remove(CRM_MEM_DEVICE, at, &gone) != 0)
            break; /* the server unmapped whole mappings, which this table mirrors */
        at += gone.size;
    }
    return rc;
}

/* Access for pooled device dev to a mapping, which lives on one server: a device
 * of another server of the pool cannot reach it. */
static CUresult crm__set_access(CUdeviceptr ptr, size_t size, int dev, int flags)
{
    crm_range r;
    int owner = crm_ptrmap_classify(ptr, &r) == CRM_MEM_DEVICE ? r.device : -1;
    if (owner >= 0 && crm_conn_server_of(owner) != crm_conn_server_of(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    int local;
    int saved = crm_conn_device_begin(dev, &local);
    CUresult rc = crm_rpc_crm_vmm_set_access(ptr, size, local, flags);
    crm_conn_device_end(saved);
    return rc;
}

/* One message per device named: a desc list is short (torch passes one). */
CRM_EXPORT CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
    CUresult rc = crm_drv_need_ctx();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (desc == NULL || count == 0)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < count && rc == CUDA_SUCCESS; i++) {
        if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE)
            return CUDA_ERROR_INVALID_VALUE;
        rc = crm__set_access(ptr, size, desc[i].location.id, (int)desc[i].flags);
    }
    return rc;
}
