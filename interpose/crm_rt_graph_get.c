/* crm_rt_graph_get.c -- reading a graph node's parameters back, at both APIs:
 * kernel nodes (what their launch was made from: the function as the program
 * named it, the geometry, a copy of the arguments), memset, memcpy and host nodes,
 * and the event of event record and wait nodes (decoded from the call each holds). */
#include <stdlib.h>
#include <string.h>
#include <rpc/rpc.h>
#include <cuda_runtime_api.h>
#include "client/crm_modules.h"
#include "interpose/crm_drv.h"
#include "interpose/crm_export.h"
#include "interpose/crm_rt_graph.h"
#include "interpose/crm_rt_launch.h"

#undef cuGraphKernelNodeGetParams

/* A kernel node's launch: this header, the pointers the getter hands out (into the
 * arguments' copy), the parameters' offsets, then that copy. */
typedef struct crm__kmeta {
    const void *func; /* first: the header's size is a multiple of a pointer's */
    dim3 grid, block;
    unsigned shmem;
    unsigned nparams;
    unsigned param_bytes;
    const void *kern; /* the driver's `kern` (a CUkernel) when it gave one, else NULL */
} crm__kmeta;

static size_t crm__kmeta_len(unsigned nparams, unsigned bytes)
{
    return sizeof(crm__kmeta) + nparams * (sizeof(uint32_t) + sizeof(void *)) + bytes;
}

void crm_graph_kernel_meta(crm_gnode *n, const crm_launch_req *r, const crm_kready *k, const char *blob)
{
    size_t len = crm__kmeta_len(k->nparams, k->param_bytes);
    char *m = calloc(1, len);
    if (m == NULL)
        return; /* the node works without: only reading its parameters back fails */
    crm__kmeta h = {r->origin, r->grid, r->block, (unsigned)r->shmem, k->nparams, k->param_bytes, NULL};
    memcpy(m, &h, sizeof h);
    uint32_t *offsets = (uint32_t *)(m + sizeof h + k->nparams * sizeof(void *));
    for (unsigned i = 0; i < k->nparams; i++)
        offsets[i] = k->params[i].offset;
    memcpy(m + len - k->param_bytes, blob, k->param_bytes);
    crm_gnode_set_meta(n, m, len);
    free(m);
}

void crm_graph_kernel_meta_kern(crm_gnode *n, const void *func, const void *kern)
{
    crm__kmeta h;
    if (n == NULL || n->meta == NULL || n->meta_len < sizeof h)
        return;
    memcpy(&h, n->meta, sizeof h);
    h.func = func;
    h.kern = kern;
    memcpy(n->meta, &h, sizeof h);
}

/* The kernel node's launch, its argument pointers made to point into its copy;
 * *kern: the driver's CUkernel when it gave one. */
static cudaError_t crm__kernel_params(cudaGraphNode_t node, struct cudaKernelNodeParams *out, const void **kern)
{
    if (node == NULL || out == NULL || node->type != CU_GRAPH_NODE_TYPE_KERNEL || node->meta == NULL)
        return cudaErrorInvalidValue;
    char *m = node->meta;
    crm__kmeta h;
    memcpy(&h, m, sizeof h);
    void **ptrs = (void **)(m + sizeof h); /* the header's size keeps pointers aligned */
    uint32_t *offsets = (uint32_t *)(ptrs + h.nparams);
    char *args = m + crm__kmeta_len(h.nparams, h.param_bytes) - h.param_bytes;
    for (unsigned i = 0; i < h.nparams; i++)
        ptrs[i] = args + offsets[i];
    *out = (struct cudaKernelNodeParams){(void *)h.func, h.grid, h.block, h.shmem, ptrs, NULL};
    if (kern != NULL)
        *kern = h.kern;
    return cudaSuccess;
}

CRM_EXPORT cudaError_t cudaGraphKernelNodeGetParams(cudaGraphNode_t node, struct cudaKernelNodeParams *pNodeParams)
{
    return crm_set_error(crm__kernel_params(node, pNodeParams, NULL));
}

CRM_EXPORT CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS *out)
{
    struct cudaKernelNodeParams k;
    const void *kern = NULL;
    if (out == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = crm_drv_err(crm__kernel_params(hNode, &k, &kern));
    if (rc != CUDA_SUCCESS)
        return rc;
    memset(out, 0, sizeof *out);
    out->func = (CUfunction)k.func; /* as the driver was given them: a CUfunction, a CUkernel or both */
    out->kern = (CUkernel)kern;
    out->gridDimX = k.gridDim.x, out->gridDimY = k.gridDim.y, out->gridDimZ = k.gridDim.z;
    out->blockDimX = k.blockDim.x, out->blockDimY = k.blockDim.y, out->blockDimZ = k.blockDim.z;
    out->sharedMemBytes = k.sharedMemBytes, out->kernelParams = k.kernelParams;
    return CUDA_SUCCESS;
}

/* A memset node's parameters, as its call set bytes (elementSize 1). */
CRM_EXPORT cudaError_t cudaGraphMemsetNodeGetParams(cudaGraphNode_t node, struct cudaMemsetParams *out)
{
    crm_call call;
    if (out == NULL || node == NULL || node->type != CU_GRAPH_NODE_TYPE_MEMSET ||
        crm_gnode_decode(node, CRM_API_crm_memset, &call) != 0)
        return crm_set_error(cudaErrorInvalidValue);
    const crm_args_crm_memset *a = &call.crm_call_u.crm_memset;
    *out = (struct cudaMemsetParams){(void *)(uintptr_t)a->dst, a->pitch, (unsigned)a->value & 0xffu, 1, a->width,
                                     a->height};
    xdr_free((xdrproc_t)xdr_crm_call, (char *)&call);
    return cudaSuccess;
}

/* A memcpy node keeps the parameters it was given at either API (its meta); a
 * node made by a 1D or 2D call or by a capture has its copy's. */
_Static_assert(sizeof(CUDA_MEMCPY3D) != sizeof(struct cudaMemcpy3DParms), "the two forms tell apart by size");

static int crm__is_copy(cudaGraphNode_t node)
{
    return node != NULL && crm_graph_has(node->graph, node) && node->type == CU_GRAPH_NODE_TYPE_MEMCPY;
}

/* The runtime's form of the driver's parameters. */
static void crm__from_driver(const CUDA_MEMCPY3D *d, struct cudaMemcpy3DParms *out)
{
    int src_host = d->srcMemoryType == CU_MEMORYTYPE_HOST, dst_host = d->dstMemoryType == CU_MEMORYTYPE_HOST;
    memset(out, 0, sizeof *out);
    out->srcPtr = (struct cudaPitchedPtr){src_host ? (void *)d->srcHost : (void *)(uintptr_t)d->srcDevice,
                                          d->srcPitch, d->WidthInBytes, d->srcHeight};
    out->srcPos = (struct cudaPos){d->srcXInBytes, d->srcY, d->srcZ};
    out->dstPtr = (struct cudaPitchedPtr){dst_host ? d->dstHost : (void *)(uintptr_t)d->dstDevice, d->dstPitch,
                                          d->WidthInBytes, d->dstHeight};
    out->dstPos = (struct cudaPos){d->dstXInBytes, d->dstY, d->dstZ};
    out->extent = (struct cudaExtent){d->WidthInBytes, d->Height, d->Depth};
    out->kind = src_host ? (dst_host ? cudaMemcpyHostToHost : cudaMemcpyHostToDevice)
                         : (dst_host ? cudaMemcpyDeviceToHost : cudaMemcpyDeviceToDevice);
}

CRM_EXPORT cudaError_t cudaGraphMemcpyNodeGetParams(cudaGraphNode_t node, struct cudaMemcpy3DParms *out)
{
    if (out == NULL || !crm__is_copy(node))
        return crm_set_error(cudaErrorInvalidValue);
    if (node->meta != NULL && node->meta_len == sizeof *out) {
        memcpy(out, node->meta, sizeof *out);
        return cudaSuccess;
    }
    if (node->meta != NULL && node->meta_len == sizeof(CUDA_MEMCPY3D)) {
        crm__from_driver(node->meta, out);
        return cudaSuccess;
    }
    return crm_graph_copy_params(node, out) == 0 ? cudaSuccess : crm_set_error(cudaErrorInvalidValue);
}

/* One side of a copy in the driver's terms. */
typedef struct crm__side {
    size_t x, y, z, pitch, height;
    CUmemorytype type;
    void *host;
    CUdeviceptr device;
} crm__side;

static crm__side crm__to_side(const struct cudaPitchedPtr *ptr, const struct cudaPos *pos, int host)
{
    crm__side s = {pos->x, pos->y, pos->z, ptr->pitch, ptr->ysize, host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE,
                   host ? ptr->ptr : NULL, host ? 0 : (CUdeviceptr)(uintptr_t)ptr->ptr};
    return s;
}

/* The driver's form: where each side lies (host, device) follows from the kind. */
CRM_EXPORT CUresult cuGraphMemcpyNodeGetParams(CUgraphNode hNode, CUDA_MEMCPY3D *out)
{
    struct cudaMemcpy3DParms p;
    if (out == NULL || !crm__is_copy(hNode))
        return CUDA_ERROR_INVALID_VALUE;
    if (hNode->meta != NULL && hNode->meta_len == sizeof *out) {
        memcpy(out, hNode->meta, sizeof *out);
        return CUDA_SUCCESS;
    }
    cudaError_t err = cudaGraphMemcpyNodeGetParams(hNode, &p);
    if (err != cudaSuccess)
        return crm_drv_err(err);
    int src_host = p.kind == cudaMemcpyHostToDevice || p.kind == cudaMemcpyHostToHost;
    int dst_host = p.kind == cudaMemcpyDeviceToHost || p.kind == cudaMemcpyHostToHost;
    crm__side src = crm__to_side(&p.srcPtr, &p.srcPos, src_host), dst = crm__to_side(&p.dstPtr, &p.dstPos, dst_host);
    memset(out, 0, sizeof *out);
    out->srcXInBytes = src.x, out->srcY = src.y, out->srcZ = src.z, out->srcMemoryType = src.type;
    out->srcHost = src.host, out->srcDevice = src.device, out->srcPitch = src.pitch, out->srcHeight = src.height;
    out->dstXInBytes = dst.x, out->dstY = dst.y, out->dstZ = dst.z, out->dstMemoryType = dst.type;
    out->dstHost = dst.host, out->dstDevice = dst.device, out->dstPitch = dst.pitch, out->dstHeight = dst.height;
    out->WidthInBytes = p.extent.width, out->Height = p.extent.height, out->Depth = p.extent.depth;
    return CUDA_SUCCESS;
}

/* A host node's step arguments start with the function and its data
 * (interpose/crm_drv_stream.c). */
typedef struct crm__host_args {
    cudaHostFn_t fn;
    void *data;
} crm__host_args;

CRM_EXPORT cudaError_t cudaGraphHostNodeGetParams(cudaGraphNode_t node, struct cudaHostNodeParams *out)
{
    if (out == NULL || node == NULL || node->type != CU_GRAPH_NODE_TYPE_HOST || node->args == NULL ||
        node->args_len < sizeof(crm__host_args))
        return crm_set_error(cudaErrorInvalidValue);
    crm__host_args h;
    memcpy(&h, node->args, sizeof h);
    *out = (struct cudaHostNodeParams){h.fn, h.data};
    return cudaSuccess;
}

/* The event an event record or wait node names. */
static cudaError_t crm__event(cudaGraphNode_t node, CUgraphNodeType type, cudaEvent_t *out)
{
    crm_call call;
    if (out == NULL || node == NULL || node->type != type || crm_gnode_decode(node, -1, &call) != 0)
        return cudaErrorInvalidValue;
    uint64_t id = call.api == CRM_API_cudaEventRecord            ? call.crm_call_u.cudaEventRecord.event
                  : call.api == CRM_API_cudaEventRecordWithFlags ? call.crm_call_u.cudaEventRecordWithFlags.event
                  : call.api == CRM_API_cudaStreamWaitEvent      ? call.crm_call_u.cudaStreamWaitEvent.event
                                                                 : 0;
    xdr_free((xdrproc_t)xdr_crm_call, (char *)&call);
    *out = (cudaEvent_t)(uintptr_t)id; /* an event's handle is its wire id */
    return id != 0 ? cudaSuccess : cudaErrorInvalidValue;
}

CRM_EXPORT cudaError_t cudaGraphEventRecordNodeGetEvent(cudaGraphNode_t node, cudaEvent_t *event_out)
{
    return crm_set_error(crm__event(node, CU_GRAPH_NODE_TYPE_EVENT_RECORD, event_out));
}

CRM_EXPORT cudaError_t cudaGraphEventWaitNodeGetEvent(cudaGraphNode_t node, cudaEvent_t *event_out)
{
    return crm_set_error(crm__event(node, CU_GRAPH_NODE_TYPE_WAIT_EVENT, event_out));
}

CRM_EXPORT CUresult cuGraphMemsetNodeGetParams(CUgraphNode hNode, CUDA_MEMSET_NODE_PARAMS *out)
{
    struct cudaMemsetParams m;
    if (out == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = CRM_DRV_RT(cudaGraphMemsetNodeGetParams(hNode, &m));
    if (rc == CUDA_SUCCESS)
        *out = (CUDA_MEMSET_NODE_PARAMS){(CUdeviceptr)(uintptr_t)m.dst, m.pitch, m.value, m.elementSize, m.width,
                                         m.height};
    return rc;
}

CRM_EXPORT CUresult cuGraphHostNodeGetParams(CUgraphNode hNode, CUDA_HOST_NODE_PARAMS *out)
{
    struct cudaHostNodeParams h;
    if (out == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = CRM_DRV_RT(cudaGraphHostNodeGetParams(hNode, &h));
    if (rc == CUDA_SUCCESS)
        *out = (CUDA_HOST_NODE_PARAMS){h.fn, h.userData};
    return rc;
}

CRM_EXPORT CUresult cuGraphEventRecordNodeGetEvent(CUgraphNode hNode, CUevent *event_out)
{
    return CRM_DRV_RT(cudaGraphEventRecordNodeGetEvent(hNode, (cudaEvent_t *)event_out));
}

CRM_EXPORT CUresult cuGraphEventWaitNodeGetEvent(CUgraphNode hNode, CUevent *event_out)
{
    return CRM_DRV_RT(cudaGraphEventWaitNodeGetEvent(hNode, (cudaEvent_t *)event_out));
}
