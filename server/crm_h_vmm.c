/* crm_h_vmm.c -- handlers of the driver's virtual memory management (rows of
 * protocol/cudadrv_vmm.api): address reservations, physical allocations under the
 * client's ids (library handles of kind CRM_HANDLE_vmm_phys, released if the session
 * ends first), their mappings (ranges of kind CRM_RANGE_VMM in the allocation table,
 * so copies and memsets into them pass the session's checks) and access rights.
 * The backend's driver functions are NULL when it has none: "not supported". */
#include <stdlib.h>
#include "crm_server_gen.h"
#include "server/crm_backend.h"
#include "server/crm_monitor.h"
#include "server/crm_scrub.h"
#include "server/crm_session.h"
#include "server/crm_slot.h"

/* A physical allocation the client named. */
typedef struct crm__phys {
    CUmemGenericAllocationHandle handle;
    uint64_t size;
    int device;
} crm__phys;

static int crm__vmm_supported(void)
{
    return crm_rt.cuMemCreate != NULL && crm_rt.cuMemRelease != NULL && crm_rt.cuMemMap != NULL &&
           crm_rt.cuMemUnmap != NULL && crm_rt.cuMemSetAccess != NULL && crm_rt.cuMemAddressReserve != NULL &&
           crm_rt.cuMemAddressFree != NULL && crm_rt.cuMemGetAllocationGranularity != NULL;
}

static CUmemAllocationProp crm__prop(int device, unsigned handle_types)
{
    CUmemAllocationProp p = {0};
    p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = device;
    p.requestedHandleTypes = (CUmemAllocationHandleType)handle_types;
    return p;
}

CUresult crm_srv_crm_vmm_granularity(crm_session *s, int device, int option, uint64_t *granularity)
{
    (void)s;
    size_t g = 0;
    if (!crm__vmm_supported())
        return CUDA_ERROR_NOT_SUPPORTED;
    CUmemAllocationProp p = crm__prop(device, 0);
    CUresult rc = crm_rt.cuMemGetAllocationGranularity(&g, &p, (CUmemAllocationGranularity_flags)option);
    *granularity = g;
    return rc;
}

CUresult crm_srv_crm_vmm_reserve(crm_session *s, uint64_t size, uint64_t alignment, uint64_t *ptr)
{
    (void)s;
    CUdeviceptr p = 0;
    if (!crm__vmm_supported())
        return CUDA_ERROR_NOT_SUPPORTED;
    CUresult rc = crm_slot_active() ? crm_slot_reserve(size, alignment, &p) /* a pool's: in the slot */
                                    : crm_rt.cuMemAddressReserve(&p, size, alignment, 0, 0);
    *ptr = (uint64_t)p;
    return rc;
}

CUresult crm_srv_crm_vmm_free(crm_session *s, uint64_t ptr, uint64_t size)
{
    if (!crm__vmm_supported())
        return CUDA_ERROR_NOT_SUPPORTED;
    if (crm_rangemap_overlaps(&s->allocs, ptr, size))
        return CUDA_ERROR_INVALID_VALUE; /* still mapped: unmap first */
    return crm_rt.cuMemAddressFree((CUdeviceptr)ptr, size);
}

static void crm__phys_destroy(void *h)
{
    crm__phys *ph = h;
    crm_rt.cuMemRelease(ph->handle);
    crm_monitor_charge(ph->device, -(int64_t)ph->size);
    free(ph);
}

CUresult crm_srv_crm_vmm_create(crm_session *s, uint64_t id, uint64_t size, int device, unsigned int handleTypes)
{
    void *old;
    if (!crm__vmm_supported())
        return CUDA_ERROR_NOT_SUPPORTED;
    if (id == 0 || crm_idmap_get(&s->handles, id, &old) == 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (crm_session_room(s, CRM_LIMIT_ALLOCATIONS, 1) != 0) /* --session-limits allocations */
        return CUDA_ERROR_OUT_OF_MEMORY;
    crm__phys *ph = calloc(1, sizeof *ph);
    if (ph == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (crm_session_charge(s, device, size) != 0) { /* past the user's --quota */
        free(ph);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    CUmemAllocationProp p = crm__prop(device, handleTypes);
    CUresult rc = crm_rt.cuMemCreate(&ph->handle, size, &p, 0);
    if (rc == CUDA_SUCCESS) {
        *ph = (crm__phys){ph->handle, size, device};
        if (crm_session_handle_add(s, CRM_HANDLE_vmm_phys, id, ph, crm__phys_destroy) == 0) {
            s->allocated += size;
            return CUDA_SUCCESS;
        }
        crm__phys_destroy(ph);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    crm_monitor_charge(device, -(int64_t)size);
    free(ph);
    return rc;
}

CUresult crm_srv_crm_vmm_release(crm_session *s, uint64_t id)
{
    void *ph;
    if (!crm__vmm_supported())
        return CUDA_ERROR_NOT_SUPPORTED;
    if (crm_session_handle_del(s, CRM_HANDLE_vmm_phys, id, &ph) != 0)
        return CUDA_ERROR_INVALID_VALUE;
    crm__phys_destroy(ph); /* mapped memory stays until it is unmapped, as with the driver */
    return CUDA_SUCCESS;
}

CUresult crm_srv_crm_vmm_map(crm_session *s, uint64_t ptr, uint64_t size, uint64_t offset, uint64_t id)
{
    void *v;
    if (!crm__vmm_supported())
        return CUDA_ERROR_NOT_SUPPORTED;
    if (crm_session_handle(s, CRM_HANDLE_vmm_phys, id, &v) != 0)
        return CUDA_ERROR_INVALID_HANDLE;
    crm__phys *ph = v;
    if (size == 0 || crm_rangemap_overlaps(&s->allocs, ptr, size))
        return CUDA_ERROR_INVALID_VALUE; /* already mapped there */
    if (crm_session_room(s, CRM_LIMIT_ALLOCATIONS, 1) != 0) /* --session-limits allocations */
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult rc = crm_rt.cuMemMap((CUdeviceptr)ptr, size, offset, ph->handle, 0);
    crm_range r = {.base = ptr, .size = size, .kind = CRM_RANGE_VMM, .device = ph->device};
    if (rc == CUDA_SUCCESS && crm_rangemap_add(&s->allocs, r) != 0) {
        crm_rt.cuMemUnmap((CUdeviceptr)ptr, size);
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    }
    return rc;
}

/* 1 when [ptr, ptr + size) is exactly a run of the session's mappings. */
static int crm__whole_mappings(crm_session *s, uint64_t ptr, uint64_t size)
{
    uint64_t at = ptr;
    while (at - ptr < size) {
        const crm_range *r = crm_rangemap_find(&s->allocs, at);
        if (r == NULL || r->base != at || r->kind != CRM_RANGE_VMM || r->size > size - (at - ptr))
            return 0;
        at += r->size;
    }
    return size > 0;
}

CUresult crm_srv_crm_vmm_unmap(crm_session *s, uint64_t ptr, uint64_t size)
{
    if (!crm__vmm_supported())
        return CUDA_ERROR_NOT_SUPPORTED;
    if (!crm__whole_mappings(s, ptr, size))
        return CUDA_ERROR_INVALID_VALUE;
    crm_scrub(s, crm_rangemap_find(&s->allocs, ptr)->device, ptr, size); /* through the mapping: the memory */
    CUresult rc = crm_rt.cuMemUnmap((CUdeviceptr)ptr, size);
    for (uint64_t at = ptr; rc == CUDA_SUCCESS && at - ptr < size;) {
        crm_range gone;
        crm_rangemap_remove(&s->allocs, at, &gone);
        at += gone.size;
    }
    return rc;
}

CUresult crm_srv_crm_vmm_set_access(crm_session *s, uint64_t ptr, uint64_t size, int device, int flags)
{
    if (!crm__vmm_supported())
        return CUDA_ERROR_NOT_SUPPORTED;
    if (!crm__whole_mappings(s, ptr, size))
        return CUDA_ERROR_INVALID_VALUE;
    CUmemAccessDesc d = {.location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = device},
                         .flags = (CUmemAccess_flags)flags};
    return crm_rt.cuMemSetAccess((CUdeviceptr)ptr, size, &d, 1);
}
