/* crm_rt_kernels.c -- exported kernel calls: launches (cudaLaunchKernel,
 * cudaLaunchKernelExC, the __cudaLaunchKernel of <<<>>> launches, and their _ptsz
 * twins), function attributes and occupancy, and where a __device__ variable lives
 * (crm_nvcc_rt_symbol, for the symbol calls of common/crm_symbol_copy.c).
 *
 * A launch is checked here as a local GPU checks it at the call (unknown function,
 * geometry against the cached device properties), then its parameters are packed
 * into one buffer at the kernel's own offsets and sent as one asynchronous call. */
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include "common/crm_nvcc_rt.h"
#include "client/crm_conn.h"
#include "client/crm_graph.h"
#include "client/crm_handles.h"
#include "client/crm_kattr.h"
#include "client/crm_modules.h"
#include "crm_client_gen.h"
#include "interpose/crm_drv.h"
#include "interpose/crm_export.h"
#include "interpose/crm_rt_graph.h"
#include "interpose/crm_rt_launch.h"

/* cudaErrorInvalidConfiguration when the geometry exceeds the device's limits. */
static cudaError_t crm__check_config(dim3 g, dim3 b)
{
    struct cudaDeviceProp p;
    cudaError_t err = cudaGetDeviceProperties(&p, crm_thread_device());
    if (err != cudaSuccess)
        return err;
    if (b.x == 0 || b.y == 0 || b.z == 0 || g.x == 0 || g.y == 0 || g.z == 0 ||
        b.x > (unsigned)p.maxThreadsDim[0] || b.y > (unsigned)p.maxThreadsDim[1] ||
        b.z > (unsigned)p.maxThreadsDim[2] || (unsigned long long)b.x * b.y * b.z > (unsigned)p.maxThreadsPerBlock ||
        g.x > (unsigned)p.maxGridSize[0] || g.y > (unsigned)p.maxGridSize[1] || g.z > (unsigned)p.maxGridSize[2])
        return cudaErrorInvalidConfiguration;
    return cudaSuccess;
}

/* Launch attributes that name a client object (an event) cannot travel. */
static cudaError_t crm__attrs(const cudaLaunchAttribute *attrs, unsigned n, crm_launch_attr *out)
{
    if (n > CRM_KATTRS_MAX || (n > 0 && attrs == NULL))
        return cudaErrorInvalidValue;
    for (unsigned i = 0; i < n; i++) {
        if (attrs[i].id == cudaLaunchAttributeProgrammaticEvent || attrs[i].id == cudaLaunchAttributeLaunchCompletionEvent ||
            attrs[i].id == cudaLaunchAttributeDeviceUpdatableKernelNode)
            return cudaErrorNotSupported;
        out[i].id = (int)attrs[i].id;
        memcpy(out[i].val, &attrs[i].val, sizeof out[i].val);
    }
    return cudaSuccess;
}

/* Packs the parameters into blob (k.param_bytes bytes): args[i] at the kernel's
 * offsets, or a buffer the caller packed already (cuLaunchKernel's `extra`). */
static cudaError_t crm__pack(const crm_kready *k, const crm_launch_req *r, char *blob)
{
    memset(blob, 0, k->param_bytes);
    if (r->packed != NULL) {
        if (r->packed_len < k->param_bytes)
            return cudaErrorInvalidValue;
        memcpy(blob, r->packed, k->param_bytes);
        return cudaSuccess;
    }
    if (k->nparams > 0 && r->args == NULL)
        return cudaErrorInvalidValue;
    for (uint32_t i = 0; i < k->nparams; i++) {
        if (r->args[i] == NULL)
            return cudaErrorInvalidValue;
        memcpy(blob + k->params[i].offset, r->args[i], k->params[i].size);
    }
    return cudaSuccess;
}

cudaError_t crm_kernel_launch(const crm_launch_req *r)
{
    crm_launch_attr attrs[CRM_KATTRS_MAX];
    char small[4096];
    crm_kready k;
    if (r->func == NULL)
        return cudaErrorInvalidDeviceFunction;
    cudaError_t err = crm__check_config(r->grid, r->block);
    if (err == cudaSuccess)
        err = crm__attrs(r->attrs, r->nattrs, attrs);
    if (err == cudaSuccess)
        err = crm_modules_prepare(r->func, &k);
    if (err != cudaSuccess)
        return err;
    char *blob = k.param_bytes <= sizeof small ? small : malloc(k.param_bytes);
    if (blob == NULL)
        return cudaErrorMemoryAllocation;
    if ((err = crm__pack(&k, r, blob)) == cudaSuccess) {
        crm_call call = {.api = CRM_API_crm_launch};
        crm_launch *l = &call.crm_call_u.crm_launch.launch;
        *l = (crm_launch){
            .func = k.id, .grid = {r->grid.x, r->grid.y, r->grid.z}, .block = {r->block.x, r->block.y, r->block.z},
            .shmem = r->shmem, .stream = crm_stream_wire(r->stream, r->ptds),
            .params = {k.nparams, (crm_kparam *)k.params}, .blob = {k.param_bytes, blob},
            .attrs = {r->nattrs, attrs},
        };
        if (r->node != NULL)
            err = crm_gnode_set_record(r->node, &call) == 0 ? cudaSuccess : cudaErrorMemoryAllocation;
        else
            err = crm_conn_async_on(&call, l->stream);
        crm_gnode *node = r->node != NULL ? r->node : crm_capture_last(l->stream); /* NULL: not in a graph */
        if (err == cudaSuccess && node != NULL && node->type == CU_GRAPH_NODE_TYPE_KERNEL)
            crm_graph_kernel_meta(node, r, &k, blob);
    }
    if (blob != small)
        free(blob);
    return err;
}

static cudaError_t crm__launch_kernel(const void *func, dim3 g, dim3 b, void **args, size_t shmem,
                                      cudaStream_t stream, int ptds)
{
    crm_drv_runtime_bind();
    crm_launch_req r = {crm_modules_func(func), g, b, shmem, stream, args, NULL, 0, NULL, 0, ptds, NULL, func};
    return crm_set_error(crm_kernel_launch(&r));
}

CRM_EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                                        cudaStream_t stream)
{
    return crm__launch_kernel(func, gridDim, blockDim, args, sharedMem, stream, CRM_PTDS_OFF);
}

CRM_EXPORT cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                             size_t sharedMem, cudaStream_t stream)
{
    return crm__launch_kernel(func, gridDim, blockDim, args, sharedMem, stream, CRM_PTDS_ON);
}

CRM_EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                                          size_t sharedMem, cudaStream_t stream)
{
    return crm__launch_kernel(kernel, gridDim, blockDim, args, sharedMem, stream, CRM_PTDS_OFF);
}

CRM_EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                                               size_t sharedMem, cudaStream_t stream)
{
    return crm__launch_kernel(kernel, gridDim, blockDim, args, sharedMem, stream, CRM_PTDS_ON);
}

static cudaError_t crm__launch_ex(const cudaLaunchConfig_t *c, const void *func, void **args, int ptds)
{
    crm_drv_runtime_bind();
    if (c == NULL)
        return crm_set_error(cudaErrorInvalidValue);
    crm_launch_req r = {crm_modules_func(func), c->gridDim, c->blockDim, c->dynamicSmemBytes, c->stream, args, NULL, 0,
                        c->attrs, c->numAttrs, ptds, NULL, func};
    return crm_set_error(crm_kernel_launch(&r));
}

CRM_EXPORT cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func, void **args)
{
    return crm__launch_ex(config, func, args, CRM_PTDS_OFF);
}

CRM_EXPORT cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config, const void *func, void **args)
{
    return crm__launch_ex(config, func, args, CRM_PTDS_ON);
}

/* The function's wire id, after loading its module if needed. */
static cudaError_t crm__func_id(const void *func, uint64_t *id)
{
    crm_kready k;
    crm_kfunc *f = crm_modules_func(func);
    if (f == NULL)
        return cudaErrorInvalidDeviceFunction;
    cudaError_t err = crm_modules_prepare(f, &k);
    if (err == cudaSuccess)
        *id = k.id;
    return err;
}

CRM_EXPORT cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func)
{
    uint64_t id;
    crm_func_attrs a;
    if (attr == NULL)
        return crm_set_error(cudaErrorInvalidValue);
    cudaError_t err = crm__func_id(func, &id);
    if (err == cudaSuccess && !crm_kattr_get(id, &a)) {
        err = crm_rpc_crm_func_get_attributes(id, &a);
        if (err == cudaSuccess)
            crm_kattr_put(id, &a);
    }
    if (err != cudaSuccess)
        return crm_set_error(err);
    memset(attr, 0, sizeof *attr);
    attr->sharedSizeBytes = a.sharedSizeBytes;
    attr->constSizeBytes = a.constSizeBytes;
    attr->localSizeBytes = a.localSizeBytes;
    attr->maxThreadsPerBlock = a.maxThreadsPerBlock;
    attr->numRegs = a.numRegs;
    attr->ptxVersion = a.ptxVersion;
    attr->binaryVersion = a.binaryVersion;
    attr->cacheModeCA = a.cacheModeCA;
    attr->maxDynamicSharedSizeBytes = a.maxDynamicSharedSizeBytes;
    attr->preferredShmemCarveout = a.preferredShmemCarveout;
    attr->clusterDimMustBeSet = a.clusterDimMustBeSet;
    attr->requiredClusterWidth = a.requiredClusterWidth;
    attr->requiredClusterHeight = a.requiredClusterHeight;
    attr->requiredClusterDepth = a.requiredClusterDepth;
    attr->clusterSchedulingPolicyPreference = a.clusterSchedulingPolicyPreference;
    attr->nonPortableClusterSizeAllowed = a.nonPortableClusterSizeAllowed;
    return cudaSuccess;
}

CRM_EXPORT cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value)
{
    uint64_t id;
    cudaError_t err = crm__func_id(func, &id);
    if (err != cudaSuccess || crm_kattr_was_set(id, (int)attr, value))
        return crm_set_error(err);
    err = crm_rpc_crm_func_set_attribute(id, (int)attr, value);
    if (err == cudaSuccess)
        crm_kattr_set(id, (int)attr, value);
    return crm_set_error(err);
}

CRM_EXPORT cudaError_t cudaFuncSetCacheConfig(const void *func, enum cudaFuncCache cacheConfig)
{
    uint64_t id;
    cudaError_t err = crm__func_id(func, &id);
    if (err != cudaSuccess || crm_kattr_was_set(id, -1, (int)cacheConfig))
        return crm_set_error(err);
    err = crm_rpc_crm_func_set_cache_config(id, (int)cacheConfig);
    if (err == cudaSuccess)
        crm_kattr_set(id, -1, (int)cacheConfig);
    return crm_set_error(err);
}

CRM_EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, const void *func,
                                                                               int blockSize, size_t dynamicSMemSize,
                                                                               unsigned int flags)
{
    uint64_t id;
    int n = 0;
    if (numBlocks == NULL)
        return crm_set_error(cudaErrorInvalidValue);
    cudaError_t err = crm__func_id(func, &id);
    if (err == cudaSuccess && !crm_kattr_get_occupancy(id, blockSize, dynamicSMemSize, flags, &n)) {
        err = crm_rpc_crm_occupancy(id, blockSize, dynamicSMemSize, flags, &n);
        if (err == cudaSuccess)
            crm_kattr_put_occupancy(id, blockSize, dynamicSMemSize, flags, n);
    }
    if (err == cudaSuccess)
        *numBlocks = n;
    return crm_set_error(err);
}

CRM_EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, const void *func, int blockSize,
                                                                      size_t dynamicSMemSize)
{
    return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize, dynamicSMemSize, 0);
}

/* The __device__ variable at host address symbol (common/crm_symbol_copy.c): its
 * size, and with resolve its device address (shipping its module at first use). */
cudaError_t crm_nvcc_rt_symbol(const void *symbol, int resolve, void **addr, size_t *size)
{
    crm_kvar *v = crm_modules_var(symbol);
    uint64_t at;
    if (v == NULL)
        return cudaErrorInvalidSymbol;
    if (!resolve) {
        *size = crm_modules_var_size(v);
        return cudaSuccess;
    }
    cudaError_t err = crm_modules_var_resolve(v, &at, size);
    if (err == cudaSuccess)
        *addr = (void *)(uintptr_t)at;
    return err;
}
