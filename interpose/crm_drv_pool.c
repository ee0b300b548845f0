/* crm_drv_pool.c -- the stream-ordered allocator and memory pools of the driver
 * (cuMemAllocAsync, cuMemFreeAsync, cuMemPool*) and the runtime calls on them.
 *
 * A pool is a client object holding its attributes and the bytes it has handed
 * out. Allocating in stream order allocates at once (memory ready earlier than the
 * stream needs it is still correct); freeing in stream order is the device free,
 * which the server performs after the device's earlier work, as cudaFree does. A
 * pool keeps nothing in reserve: what is freed goes back to the device, so
 * trimming has nothing to release and reserved memory equals used memory. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "common/crm_idmap.h"
#include "client/crm_graph_mem.h"
#include "interpose/crm_drv.h"
#include "interpose/crm_rt_graph.h"
#include "interpose/crm_export.h"

#define CRM__MAX_DEV 64

struct CUmemPoolHandle_st {
    CUdevice device;
    cuuint64_t release_threshold;
    int follow_events, opportunistic, internal_deps;  /* the reuse policies, kept as set */
    cuuint64_t used, used_high;
    int is_default;
};

static pthread_mutex_t crm__lock = PTHREAD_MUTEX_INITIALIZER;
static struct CUmemPoolHandle_st crm__defaults[CRM__MAX_DEV];
static CUmemoryPool crm__current[CRM__MAX_DEV];     /* cuDeviceSetMemPool */
static crm_idmap crm__pools;                         /* created pools */
static crm_idmap crm__allocs;                        /* pointer -> pool, size in a block */

typedef struct crm__alloc {
    CUmemoryPool pool;
    size_t size;
} crm__alloc;

static CUmemoryPool crm__default_pool(CUdevice dev)
{
    struct CUmemPoolHandle_st *p = &crm__defaults[dev];
    if (!p->is_default)
        *p = (struct CUmemPoolHandle_st){.device = dev, .follow_events = 1, .opportunistic = 1,
                                         .internal_deps = 1, .is_default = 1};
    return p;
}

/* 1 when pool is the default pool of a device or a live created pool; lock held. */
static int crm__valid(CUmemoryPool pool)
{
    void *v;
    if (pool >= crm__defaults && pool < crm__defaults + CRM__MAX_DEV)
        return pool->is_default;
    return pool != NULL && crm_idmap_get(&crm__pools, (uint64_t)(uintptr_t)pool, &v) == 0;
}

CRM_EXPORT CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
    CUresult rc = crm_drv_check_device(dev);
    if (rc == CUDA_SUCCESS && (pool_out == NULL || dev >= CRM__MAX_DEV))
        rc = CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS) {
        pthread_mutex_lock(&crm__lock);
        *pool_out = crm__default_pool(dev);
        pthread_mutex_unlock(&crm__lock);
    }
    return rc;
}

CRM_EXPORT CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
    CUresult rc = cuDeviceGetDefaultMemPool(pool, dev);
    pthread_mutex_lock(&crm__lock);
    if (rc == CUDA_SUCCESS && crm__current[dev] != NULL)
        *pool = crm__current[dev];
    pthread_mutex_unlock(&crm__lock);
    return rc;
}

CRM_EXPORT CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
    CUresult rc = crm_drv_check_device(dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    pthread_mutex_lock(&crm__lock);
    if (dev >= CRM__MAX_DEV || !crm__valid(pool) || pool->device != dev)
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        crm__current[dev] = pool;
    pthread_mutex_unlock(&crm__lock);
    return rc;
}

CRM_EXPORT CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props)
{
    if (pool == NULL || props == NULL || props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
        props->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    if (props->handleTypes != CU_MEM_HANDLE_TYPE_NONE)
        return CUDA_ERROR_NOT_SUPPORTED; /* memory is not shared outside the session */
    CUresult rc = crm_drv_check_device(props->location.id);
    if (rc != CUDA_SUCCESS)
        return rc;
    struct CUmemPoolHandle_st *p = calloc(1, sizeof *p);
    if (p == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *p = (struct CUmemPoolHandle_st){.device = props->location.id, .follow_events = 1, .opportunistic = 1,
                                     .internal_deps = 1};
    pthread_mutex_lock(&crm__lock);
    if (crm_idmap_put(&crm__pools, (uint64_t)(uintptr_t)p, p) != 0)
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_unlock(&crm__lock);
    if (rc != CUDA_SUCCESS)
        free(p);
    else
        *pool = p;
    return rc;
}

CRM_EXPORT CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
    void *v;
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&crm__lock);
    if (crm_idmap_del(&crm__pools, (uint64_t)(uintptr_t)pool, &v) != 0)
        rc = CUDA_ERROR_INVALID_VALUE;
    for (int d = 0; rc == CUDA_SUCCESS && d < CRM__MAX_DEV; d++)
        if (crm__current[d] == pool)
            crm__current[d] = NULL;
    pthread_mutex_unlock(&crm__lock);
    if (rc == CUDA_SUCCESS)
        free(v); /* allocations still out stay valid until freed, as CUDA promises */
    return rc;
}

/* Reads (set = 0) or writes attribute a of pool p from/to value; lock held. */
static CUresult crm__attr(CUmemoryPool p, CUmemPool_attribute a, void *value, int set)
{
    cuuint64_t *u64 = value;
    int *flag = value;
    switch (a) {
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
        set ? (void)(p->release_threshold = *u64) : (void)(*u64 = p->release_threshold);
        return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
        set ? (void)(p->follow_events = *flag) : (void)(*flag = p->follow_events);
        return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
        set ? (void)(p->opportunistic = *flag) : (void)(*flag = p->opportunistic);
        return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
        set ? (void)(p->internal_deps = *flag) : (void)(*flag = p->internal_deps);
        return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT: /* nothing is held in reserve */
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
        if (set)
            return CUDA_ERROR_INVALID_VALUE;
        *u64 = p->used;
        return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: /* only a reset to 0 may be written */
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
        if (set && *u64 != 0)
            return CUDA_ERROR_INVALID_VALUE;
        set ? (void)(p->used_high = p->used) : (void)(*u64 = p->used_high);
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

static CUresult crm__pool_attr(CUmemoryPool pool, CUmemPool_attribute a, void *value, int set)
{
    if (value == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&crm__lock);
    CUresult rc = crm__valid(pool) ? crm__attr(pool, a, value, set) : CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_unlock(&crm__lock);
    return rc;
}

CRM_EXPORT CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    return crm__pool_attr(pool, attr, value, 0);
}

CRM_EXPORT CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    return crm__pool_attr(pool, attr, value, 1);
}

CRM_EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
    (void)minBytesToKeep;
    pthread_mutex_lock(&crm__lock);
    CUresult rc = crm__valid(pool) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_unlock(&crm__lock);
    return rc;
}

/* ---- allocations in stream order -------------------------------------------------- */

static CUresult crm__alloc_from(CUdeviceptr *dptr, size_t size, CUmemoryPool pool)
{
    crm__alloc *a = malloc(sizeof *a);
    if (a == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    void *p = NULL;
    CUresult rc = crm_drv_err(crm_device_alloc(&p, size)); /* stream-ordered: allowed in a capture */
    *dptr = (CUdeviceptr)(uintptr_t)p;
    pthread_mutex_lock(&crm__lock);
    if (rc == CUDA_SUCCESS && crm_idmap_put(&crm__allocs, *dptr, a) == 0) {
        *a = (crm__alloc){pool, size};
        pool->used += size;
        if (pool->used > pool->used_high)
            pool->used_high = pool->used;
        a = NULL;
    }
    pthread_mutex_unlock(&crm__lock);
    free(a); /* not NULL only when the pointer could not be recorded */
    return rc;
}

static CUresult crm__alloc_async(CUdeviceptr *dptr, size_t size, CUmemoryPool pool, CUstream s, int ptsz)
{
    CUresult rc = crm_drv_need_ctx();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (dptr == NULL || size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    cudaError_t captured;
    if (crm_graph_capture_alloc(crm_stream_wire((cudaStream_t)s, ptsz), dptr, size, &captured))
        return crm_drv_err(captured); /* an alloc node of the capture's graph */
    if (pool == NULL)
        rc = cuDeviceGetMemPool(&pool, crm_drv_ctx_device(crm_drv_ctx_current()));
    pthread_mutex_lock(&crm__lock);
    if (rc == CUDA_SUCCESS && !crm__valid(pool))
        rc = CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_unlock(&crm__lock);
    return rc == CUDA_SUCCESS ? crm__alloc_from(dptr, size, pool) : rc;
}

CRM_EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t size, CUstream s)
{
    return crm__alloc_async(dptr, size, NULL, s, CRM_PTDS_OFF);
}

CRM_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t size, CUstream s)
{
    return crm__alloc_async(dptr, size, NULL, s, CRM_PTDS_ON);
}

CRM_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t size, CUmemoryPool pool, CUstream s)
{
    return pool == NULL ? CUDA_ERROR_INVALID_VALUE : crm__alloc_async(dptr, size, pool, s, CRM_PTDS_OFF);
}

CRM_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t size, CUmemoryPool pool, CUstream s)
{
    return cuMemAllocFromPoolAsync(dptr, size, pool, s);
}

static CUresult crm__free_async(CUdeviceptr dptr, CUstream s, int ptsz)
{
    void *v = NULL;
    CUresult rc = crm_drv_need_ctx();
    if (rc != CUDA_SUCCESS)
        return rc;
    cudaError_t captured;
    if (crm_graph_capture_free(crm_stream_wire((cudaStream_t)s, ptsz), dptr, &captured))
        return crm_drv_err(captured); /* a free node of the capture's graph */
    if (crm_gmem_free(dptr))
        return CUDA_SUCCESS; /* a graph's memory: free once no graph holds it */
    pthread_mutex_lock(&crm__lock);
    if (crm_idmap_del(&crm__allocs, dptr, &v) == 0 && crm__valid(((crm__alloc *)v)->pool))
        ((crm__alloc *)v)->pool->used -= ((crm__alloc *)v)->size;
    pthread_mutex_unlock(&crm__lock);
    free(v);
    return cuMemFree_v2(dptr); /* after the device's earlier work, as the server frees */
}

CRM_EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream s) { return crm__free_async(dptr, s, CRM_PTDS_OFF); }
CRM_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream s)
{
    return crm__free_async(dptr, s, CRM_PTDS_ON);
}

/* ---- the runtime's calls on them (one object: a cudaMemPool_t is a CUmemoryPool) --- */

CRM_EXPORT cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t s)
{
    crm_drv_runtime_bind();
    return crm_set_error((cudaError_t)cuMemAllocAsync((CUdeviceptr *)devPtr, size, (CUstream)s));
}

CRM_EXPORT cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t s)
{
    crm_drv_runtime_bind();
    return crm_set_error((cudaError_t)cuMemFreeAsync((CUdeviceptr)(uintptr_t)devPtr, (CUstream)s));
}

CRM_EXPORT cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool, int device)
{
    crm_drv_runtime_bind();
    return crm_set_error((cudaError_t)cuDeviceGetDefaultMemPool((CUmemoryPool *)memPool, device));
}

CRM_EXPORT cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value)
{
    return crm_set_error((cudaError_t)cuMemPoolSetAttribute((CUmemoryPool)memPool, (CUmemPool_attribute)attr, value));
}

CRM_EXPORT cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value)
{
    return crm_set_error((cudaError_t)cuMemPoolGetAttribute((CUmemoryPool)memPool, (CUmemPool_attribute)attr, value));
}

CRM_EXPORT cudaError_t cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep)
{
    return crm_set_error((cudaError_t)cuMemPoolTrimTo((CUmemoryPool)memPool, minBytesToKeep));
}
