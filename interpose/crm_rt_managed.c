/* crm_rt_managed.c -- exported managed memory calls of the runtime:
 * cudaMallocManaged, prefetches, advice and range attributes, and stream
 * attachment, on client/crm_managed.h. The device reports managed memory without
 * concurrent access (concurrentManagedAccess = 0), and every call answers as such
 * a GPU does. */
#include <stdint.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include "client/crm_conn.h"
#include "client/crm_graph.h"
#include "client/crm_handles.h"
#include "client/crm_managed.h"
#include "client/crm_ptrmap.h"
#include "common/crm_log.h"
#include "crm_client_gen.h"
#include "interpose/crm_drv.h"
#include "interpose/crm_export.h"
#include "interpose/crm_rt_managed.h"

/* Managed memory of size bytes whose pointer-table entry carries `ptrmap_flags`. */
static cudaError_t crm__alloc(void **devPtr, size_t size, uint32_t ptrmap_flags)
{
    uint64_t ptr = 0;
    int dev = crm_thread_device();
    cudaError_t err = crm_capture_refuse_sync(CRM_WIRE_BAD_HANDLE, CRM_WIRE_BAD_HANDLE);
    if (err == cudaSuccess)
        err = crm_rpc_crm_malloc_managed(size, &ptr);
    if (err != cudaSuccess)
        return err;
    if (crm_ptrmap_add_fresh(ptr, size, dev, ptrmap_flags, crm_conn_pooled()) != 0) {
        crm_rpc_cudaFree(ptr);
        return cudaErrorMemoryAllocation;
    }
    if (crm_managed_add(ptr, size, dev, 1) != 0) {
        crm_error("managed or mapped memory: the server's address 0x%llx cannot be mapped in this process "
                  "(its device address window is not reserved here)",
                  (unsigned long long)ptr);
        crm_ptrmap_remove(CRM_MEM_DEVICE, ptr, NULL);
        crm_rpc_cudaFree(ptr);
        return cudaErrorNotSupported;
    }
    *devPtr = (void *)(uintptr_t)ptr;
    return cudaSuccess;
}

cudaError_t crm_managed_alloc(void **devPtr, size_t size, unsigned int flags)
{
    if (devPtr == NULL || size == 0 || (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost))
        return cudaErrorInvalidValue;
    return crm__alloc(devPtr, size, CRM_PTRMAP_MANAGED);
}

cudaError_t crm_mapped_host_alloc(void **pHost, size_t size, unsigned int flags)
{
    return crm__alloc(pHost, size, CRM_PTRMAP_MANAGED | CRM_PTRMAP_HOSTMAPPED | (flags << 4));
}

cudaError_t crm_managed_adopt(uint64_t addr, size_t size)
{
    uint64_t base;
    int dev = crm_thread_device();
    if (crm_managed_find(addr, &base, NULL))
        return base == addr ? cudaSuccess : cudaErrorInvalidValue;
    if (crm_ptrmap_add_fresh(addr, size ? size : 1, dev, CRM_PTRMAP_MANAGED, crm_conn_pooled()) != 0)
        return cudaErrorMemoryAllocation;
    if (crm_managed_add(addr, size, dev, 0) != 0) {
        crm_ptrmap_add_fresh(addr, size ? size : 1, dev, 0, crm_conn_pooled());
        crm_error("__managed__ variable at 0x%llx: its address cannot be mapped in this process (only the "
                  "emulated device places module variables where the client can map them)",
                  (unsigned long long)addr);
        return cudaErrorNotSupported;
    }
    return cudaSuccess;
}

/* Size 0 succeeds with NULL, as NVIDIA's runtime answers (the driver's call refuses it). */
CRM_EXPORT cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
    crm_drv_runtime_bind();
    if (devPtr != NULL && size == 0 && (flags == cudaMemAttachGlobal || flags == cudaMemAttachHost)) {
        *devPtr = NULL;
        return cudaSuccess;
    }
    return crm_set_error(crm_managed_alloc(devPtr, size, flags));
}

/* ---- prefetches ------------------------------------------------------------------ */

/* 1 when [p, p + count) is managed memory from end to end. */
static int crm__managed_range(const void *p, size_t count)
{
    uint64_t base, size, a = (uint64_t)(uintptr_t)p;
    int registered;
    crm_managed_device_address(a, &registered);
    return !registered && crm_managed_find(a, &base, &size) && count <= size && a - base <= size - count;
}

/* The location a cudaMemLocation names: a device, cudaCpuDeviceId for the host, or
 * cudaInvalidDeviceId when it names neither. */
static int crm__location(struct cudaMemLocation loc)
{
    int ndev = 0;
    switch (loc.type) {
    case cudaMemLocationTypeDevice:
        return cudaGetDeviceCount(&ndev) == cudaSuccess && loc.id >= 0 && loc.id < ndev ? loc.id
                                                                                        : cudaInvalidDeviceId;
    case cudaMemLocationTypeHost:
    case cudaMemLocationTypeHostNuma:
    case cudaMemLocationTypeHostNumaCurrent:
        return cudaCpuDeviceId;
    default:
        return cudaInvalidDeviceId;
    }
}

cudaError_t crm_managed_prefetch(const void *devPtr, size_t count, int where, cudaStream_t stream, int ptds)
{
    if (count == 0 || !crm__managed_range(devPtr, count) || where == cudaInvalidDeviceId)
        return cudaErrorInvalidValue;
    uint64_t a = (uint64_t)(uintptr_t)devPtr;
    if (where == cudaCpuDeviceId)
        return crm_managed_to_host(a, count, crm_stream_wire(stream, ptds));
    return crm_managed_to_device(a, count);
}

CRM_EXPORT cudaError_t cudaMemPrefetchAsync(const void *devPtr, size_t count, struct cudaMemLocation location,
                                            unsigned int flags, cudaStream_t stream)
{
    if (flags != 0)
        return crm_set_error(cudaErrorInvalidValue);
    return crm_set_error(crm_managed_prefetch(devPtr, count, crm__location(location), stream, CRM_PTDS_OFF));
}

CRM_EXPORT cudaError_t cudaMemPrefetchAsync_ptsz(const void *devPtr, size_t count, struct cudaMemLocation location,
                                                 unsigned int flags, cudaStream_t stream)
{
    if (flags != 0)
        return crm_set_error(cudaErrorInvalidValue);
    return crm_set_error(crm_managed_prefetch(devPtr, count, crm__location(location), stream, CRM_PTDS_ON));
}

/* ---- advice ---------------------------------------------------------------------- */

cudaError_t crm_managed_advice(const void *devPtr, size_t count, int advice, int where)
{
    static const struct {
        enum crm_managed_advice what;
        int set, needs_location;
    } table[] = {
        [cudaMemAdviseSetReadMostly] = {CRM_ADV_READ_MOSTLY, 1, 0},
        [cudaMemAdviseUnsetReadMostly] = {CRM_ADV_READ_MOSTLY, 0, 0},
        [cudaMemAdviseSetPreferredLocation] = {CRM_ADV_PREFERRED, 1, 1},
        [cudaMemAdviseUnsetPreferredLocation] = {CRM_ADV_PREFERRED, 0, 0},
        [cudaMemAdviseSetAccessedBy] = {CRM_ADV_ACCESSED_BY, 1, 1},
        [cudaMemAdviseUnsetAccessedBy] = {CRM_ADV_ACCESSED_BY, 0, 1},
    };
    if (advice < cudaMemAdviseSetReadMostly || advice > cudaMemAdviseUnsetAccessedBy || count == 0 ||
        !crm__managed_range(devPtr, count))
        return cudaErrorInvalidValue;
    if (table[advice].needs_location && where == cudaInvalidDeviceId)
        return cudaErrorInvalidDevice;
    return crm_managed_advise((uint64_t)(uintptr_t)devPtr, count, table[advice].what, where, table[advice].set);
}

CRM_EXPORT cudaError_t cudaMemAdvise(const void *devPtr, size_t count, enum cudaMemoryAdvise advice,
                                     struct cudaMemLocation location)
{
    return crm_set_error(crm_managed_advice(devPtr, count, (int)advice, crm__location(location)));
}

/* ---- range attributes ------------------------------------------------------------ */

/* The type and id a location number has in a cudaMemLocation. */
static void crm__as_location(int loc, int *type, int *id)
{
    *type = loc == cudaCpuDeviceId ? cudaMemLocationTypeHost
            : loc >= 0             ? cudaMemLocationTypeDevice
                                   : cudaMemLocationTypeInvalid;
    *id = loc >= 0 ? loc : 0;
}

cudaError_t crm_managed_range_attribute(void *data, size_t dataSize, int attribute, const void *devPtr,
                                        size_t count)
{
    int value = 0, type, id;
    if (data == NULL || count == 0 || !crm__managed_range(devPtr, count))
        return cudaErrorInvalidValue;
    uint64_t a = (uint64_t)(uintptr_t)devPtr;
    if (attribute == cudaMemRangeAttributeAccessedBy) {
        if (dataSize == 0 || dataSize % 4 != 0)
            return cudaErrorInvalidValue;
        return crm_managed_range_attr(a, count, CRM_ADV_ACCESSED_BY, data, dataSize / 4);
    }
    if (dataSize != 4)
        return cudaErrorInvalidValue;
    enum crm_managed_advice what;
    switch (attribute) {
    case cudaMemRangeAttributeReadMostly: what = CRM_ADV_READ_MOSTLY; break;
    case cudaMemRangeAttributePreferredLocation:
    case cudaMemRangeAttributePreferredLocationType:
    case cudaMemRangeAttributePreferredLocationId: what = CRM_ADV_PREFERRED; break;
    case cudaMemRangeAttributeLastPrefetchLocation:
    case cudaMemRangeAttributeLastPrefetchLocationType:
    case cudaMemRangeAttributeLastPrefetchLocationId: what = CRM_ADV_LAST_PREFETCH; break;
    default: return cudaErrorInvalidValue;
    }
    cudaError_t err = crm_managed_range_attr(a, count, what, &value, 1);
    if (err != cudaSuccess)
        return err;
    crm__as_location(value, &type, &id);
    if (attribute == cudaMemRangeAttributePreferredLocationType ||
        attribute == cudaMemRangeAttributeLastPrefetchLocationType)
        value = type;
    else if (attribute == cudaMemRangeAttributePreferredLocationId ||
             attribute == cudaMemRangeAttributeLastPrefetchLocationId)
        value = id;
    memcpy(data, &value, 4);
    return cudaSuccess;
}

CRM_EXPORT cudaError_t cudaMemRangeGetAttribute(void *data, size_t dataSize, enum cudaMemRangeAttribute attribute,
                                                const void *devPtr, size_t count)
{
    return crm_set_error(crm_managed_range_attribute(data, dataSize, (int)attribute, devPtr, count));
}

CRM_EXPORT cudaError_t cudaMemRangeGetAttributes(void **data, size_t *dataSizes,
                                                 enum cudaMemRangeAttribute *attributes, size_t numAttributes,
                                                 const void *devPtr, size_t count)
{
    if (numAttributes == 0 || data == NULL || dataSizes == NULL || attributes == NULL)
        return crm_set_error(cudaErrorInvalidValue);
    for (size_t i = 0; i < numAttributes; i++) {
        cudaError_t err = crm_managed_range_attribute(data[i], dataSizes[i], (int)attributes[i], devPtr, count);
        if (err != cudaSuccess)
            return crm_set_error(err);
    }
    return cudaSuccess;
}

/* ---- stream attachment ----------------------------------------------------------- */

/* Which streams may touch an allocation is a promise that lets a GPU skip work;
 * coherence here does not depend on it (every call that may write device memory
 * invalidates the host's copies), so an attachment is checked and kept as a GPU
 * checks it: a managed allocation, whole (length 0 or its size), known flags. */
cudaError_t crm_managed_attach(cudaStream_t stream, void *devPtr, size_t length, unsigned int flags)
{
    uint64_t base, size;
    if (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost && flags != cudaMemAttachSingle)
        return cudaErrorInvalidValue;
    if (!crm_managed_find((uint64_t)(uintptr_t)devPtr, &base, &size) || base != (uint64_t)(uintptr_t)devPtr ||
        (length != 0 && length != size))
        return cudaErrorInvalidValue;
    if (flags == cudaMemAttachSingle && stream == NULL)
        return cudaErrorInvalidValue;
    return cudaSuccess;
}

CRM_EXPORT cudaError_t cudaStreamAttachMemAsync(cudaStream_t stream, void *devPtr, size_t length, unsigned int flags)
{
    return crm_set_error(crm_managed_attach(stream, devPtr, length, flags));
}

CRM_EXPORT cudaError_t cudaStreamAttachMemAsync_ptsz(cudaStream_t stream, void *devPtr, size_t length,
                                                     unsigned int flags)
{
    return crm_set_error(crm_managed_attach(stream == NULL ? cudaStreamPerThread : stream, devPtr, length, flags));
}
