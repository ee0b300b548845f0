/* crm_drv_graph.c -- the driver's graph API (cuGraph*) on the runtime's graphs: a
 * CUgraph is a cudaGraph_t, a CUgraphNode a cudaGraphNode_t, a CUgraphExec a
 * cudaGraphExec_t, so either API may build, launch or destroy what the other
 * made. The driver's own parameter structures are translated here. */
#include <string.h>
#include "interpose/crm_drv.h"
#include "interpose/crm_export.h"
#include "interpose/crm_rt_graph.h"
#include "client/crm_graph_exec.h"

#undef cuGraphInstantiate
#undef cuGraphAddKernelNode
#undef cuGraphExecUpdate
#undef cuGraphGetEdges
#undef cuGraphNodeGetDependencies
#undef cuGraphNodeGetDependentNodes
#undef cuGraphAddDependencies
#undef cuGraphRemoveDependencies
#undef cuGraphKernelNodeSetParams
#undef cuGraphExecKernelNodeSetParams

/* Runs a runtime call in a context, as a driver call: its error becomes the
 * driver's, the runtime's last error stays as it was. */
CRM_EXPORT CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags) { CRM_DRV_IN_CTX(cudaGraphCreate(phGraph, flags)); }
CRM_EXPORT CUresult cuGraphDestroy(CUgraph hGraph) { CRM_DRV_IN_CTX(cudaGraphDestroy(hGraph)); }
CRM_EXPORT CUresult cuGraphClone(CUgraph *phGraphClone, CUgraph originalGraph)
{ CRM_DRV_IN_CTX(cudaGraphClone(phGraphClone, originalGraph)); }
CRM_EXPORT CUresult cuGraphNodeFindInClone(CUgraphNode *phNode, CUgraphNode hOriginalNode, CUgraph hClonedGraph)
{ CRM_DRV_IN_CTX(cudaGraphNodeFindInClone(phNode, hOriginalNode, hClonedGraph)); }
CRM_EXPORT CUresult cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes)
{ CRM_DRV_IN_CTX(cudaGraphGetNodes(hGraph, nodes, numNodes)); }
CRM_EXPORT CUresult cuGraphGetRootNodes(CUgraph hGraph, CUgraphNode *rootNodes, size_t *numRootNodes)
{ CRM_DRV_IN_CTX(cudaGraphGetRootNodes(hGraph, rootNodes, numRootNodes)); }
CRM_EXPORT CUresult cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType *type)
{ CRM_DRV_IN_CTX(cudaGraphNodeGetType(hNode, (enum cudaGraphNodeType *)type)); }
CRM_EXPORT CUresult cuGraphGetEdges_v2(CUgraph hGraph, CUgraphNode *from, CUgraphNode *to, CUgraphEdgeData *edgeData,
                                       size_t *numEdges)
{ CRM_DRV_IN_CTX(cudaGraphGetEdges(hGraph, from, to, (cudaGraphEdgeData *)edgeData, numEdges)); }
CRM_EXPORT CUresult cuGraphGetEdges(CUgraph hGraph, CUgraphNode *from, CUgraphNode *to, size_t *numEdges)
{ return cuGraphGetEdges_v2(hGraph, from, to, NULL, numEdges); }
CRM_EXPORT CUresult cuGraphNodeGetDependencies_v2(CUgraphNode hNode, CUgraphNode *deps, CUgraphEdgeData *edgeData,
                                                  size_t *numDeps)
{ CRM_DRV_IN_CTX(cudaGraphNodeGetDependencies(hNode, deps, (cudaGraphEdgeData *)edgeData, numDeps)); }
CRM_EXPORT CUresult cuGraphNodeGetDependencies(CUgraphNode hNode, CUgraphNode *deps, size_t *numDeps)
{ return cuGraphNodeGetDependencies_v2(hNode, deps, NULL, numDeps); }
CRM_EXPORT CUresult cuGraphNodeGetDependentNodes_v2(CUgraphNode hNode, CUgraphNode *nodes, CUgraphEdgeData *edgeData,
                                                    size_t *numNodes)
{ CRM_DRV_IN_CTX(cudaGraphNodeGetDependentNodes(hNode, nodes, (cudaGraphEdgeData *)edgeData, numNodes)); }
CRM_EXPORT CUresult cuGraphNodeGetDependentNodes(CUgraphNode hNode, CUgraphNode *nodes, size_t *numNodes)
{ return cuGraphNodeGetDependentNodes_v2(hNode, nodes, NULL, numNodes); }
CRM_EXPORT CUresult cuGraphAddDependencies_v2(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to,
                                              const CUgraphEdgeData *edgeData, size_t n)
{ CRM_DRV_IN_CTX(cudaGraphAddDependencies(hGraph, from, to, (const cudaGraphEdgeData *)edgeData, n)); }
CRM_EXPORT CUresult cuGraphAddDependencies(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to, size_t n)
{ return cuGraphAddDependencies_v2(hGraph, from, to, NULL, n); }
CRM_EXPORT CUresult cuGraphRemoveDependencies_v2(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to,
                                                 const CUgraphEdgeData *edgeData, size_t n)
{ CRM_DRV_IN_CTX(cudaGraphRemoveDependencies(hGraph, from, to, (const cudaGraphEdgeData *)edgeData, n)); }
CRM_EXPORT CUresult cuGraphRemoveDependencies(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to,
                                              size_t n)
{ return cuGraphRemoveDependencies_v2(hGraph, from, to, NULL, n); }
CRM_EXPORT CUresult cuGraphDebugDotPrint(CUgraph hGraph, const char *path, unsigned int flags)
{ CRM_DRV_IN_CTX(cudaGraphDebugDotPrint(hGraph, path, flags)); }
CRM_EXPORT CUresult cuGraphChildGraphNodeGetGraph(CUgraphNode hNode, CUgraph *phGraph)
{ CRM_DRV_IN_CTX(cudaGraphChildGraphNodeGetGraph(hNode, phGraph)); }

/* ---- nodes ------------------------------------------------------------------------- */

CRM_EXPORT CUresult cuGraphAddEmptyNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *deps, size_t n)
{ CRM_DRV_IN_CTX(cudaGraphAddEmptyNode(phGraphNode, hGraph, deps, n)); }
CRM_EXPORT CUresult cuGraphAddChildGraphNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *deps,
                                             size_t n, CUgraph childGraph)
{ CRM_DRV_IN_CTX(cudaGraphAddChildGraphNode(phGraphNode, hGraph, deps, n, childGraph)); }
CRM_EXPORT CUresult cuGraphAddEventRecordNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *deps,
                                              size_t n, CUevent event)
{ CRM_DRV_IN_CTX(cudaGraphAddEventRecordNode(phGraphNode, hGraph, deps, n, (cudaEvent_t)event)); }
CRM_EXPORT CUresult cuGraphAddEventWaitNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *deps,
                                            size_t n, CUevent event)
{ CRM_DRV_IN_CTX(cudaGraphAddEventWaitNode(phGraphNode, hGraph, deps, n, (cudaEvent_t)event)); }

CRM_EXPORT CUresult cuGraphAddHostNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *deps, size_t n,
                                       const CUDA_HOST_NODE_PARAMS *p)
{
    struct cudaHostNodeParams hp = {p != NULL ? p->fn : NULL, p != NULL ? p->userData : NULL};
    CRM_DRV_IN_CTX(cudaGraphAddHostNode(phGraphNode, hGraph, deps, n, &hp));
}

CRM_EXPORT CUresult cuGraphAddMemsetNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *deps, size_t n,
                                         const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx)
{
    (void)ctx; /* the session's one context per device */
    if (p == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    struct cudaMemsetParams mp = {(void *)(uintptr_t)p->dst, p->pitch, p->value, p->elementSize, p->width, p->height};
    CRM_DRV_IN_CTX(crm_graph_memset_node(phGraphNode, hGraph, deps, n, &mp));
}

/* A host address of a CUDA_MEMCPY3D side, or a device one (unified addressing). */
static const char *crm__side(CUmemorytype type, const void *host, CUdeviceptr dev, size_t x, size_t y, size_t pitch)
{
    const char *base = type == CU_MEMORYTYPE_HOST ? (const char *)host : (const char *)(uintptr_t)dev;
    return base + y * pitch + x;
}

/* A CUDA_MEMCPY3D of one slice between linear memory as a pitched copy. */
typedef struct crm__copy2d {
    void *dst;
    const void *src;
    size_t dpitch, spitch, width, height;
} crm__copy2d;

static CUresult crm__copy_of(const CUDA_MEMCPY3D *p, crm__copy2d *c)
{
    if (p == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (p->srcMemoryType == CU_MEMORYTYPE_ARRAY || p->dstMemoryType == CU_MEMORYTYPE_ARRAY || p->Depth > 1 ||
        p->srcZ != 0 || p->dstZ != 0)
        return CUDA_ERROR_NOT_SUPPORTED; /* arrays and several slices are not remoted */
    c->height = p->Height ? p->Height : 1;
    c->src = crm__side(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcXInBytes, p->srcY, p->srcPitch);
    c->dst = (void *)crm__side(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstXInBytes, p->dstY, p->dstPitch);
    c->dpitch = c->height > 1 ? p->dstPitch : p->WidthInBytes;
    c->spitch = c->height > 1 ? p->srcPitch : p->WidthInBytes;
    c->width = p->WidthInBytes;
    return CUDA_SUCCESS;
}

/* A memcpy node made or changed from the driver's parameters keeps them, to give
 * them back as given (cuGraphMemcpyNodeGetParams). */
static CUresult crm__copy_kept(CUgraphNode node, const CUDA_MEMCPY3D *p, cudaError_t err)
{
    if (err == cudaSuccess && crm_gnode_set_meta(node, p, sizeof *p) != 0)
        err = cudaErrorMemoryAllocation;
    return crm_drv_err(err);
}

CRM_EXPORT CUresult cuGraphAddMemcpyNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *deps, size_t n,
                                         const CUDA_MEMCPY3D *p, CUcontext ctx)
{
    crm__copy2d c;
    (void)ctx;
    CUresult rc = crm__copy_of(p, &c);
    if (rc == CUDA_SUCCESS)
        rc = crm_drv_need_ctx();
    if (rc != CUDA_SUCCESS)
        return rc;
    cudaError_t err = crm_graph_memcpy_node(phGraphNode, hGraph, deps, n, c.dst, c.dpitch, c.src, c.spitch, c.width,
                                            c.height, cudaMemcpyDefault);
    return crm__copy_kept(err == cudaSuccess ? *phGraphNode : NULL, p, err);
}

CRM_EXPORT CUresult cuGraphMemcpyNodeSetParams(CUgraphNode hNode, const CUDA_MEMCPY3D *p)
{
    crm__copy2d c;
    CUresult rc = crm__copy_of(p, &c);
    if (rc == CUDA_SUCCESS && (hNode == NULL || hNode->type != CU_GRAPH_NODE_TYPE_MEMCPY))
        rc = CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS)
        rc = crm_drv_need_ctx();
    if (rc != CUDA_SUCCESS)
        return rc;
    return crm__copy_kept(hNode, p,
                          crm_graph_copy_node(hNode, c.dst, c.dpitch, c.src, c.spitch, c.width, c.height,
                                              cudaMemcpyDefault));
}

CRM_EXPORT CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec hExec, CUgraphNode hNode, const CUDA_MEMCPY3D *p,
                                                   CUcontext ctx)
{
    crm__copy2d c;
    crm_gnode *copy = NULL;
    (void)ctx;
    CUresult rc = crm__copy_of(p, &c);
    if (rc == CUDA_SUCCESS && (!crm_gexec_live(hExec) || (copy = crm_gexec_node(hExec, hNode)) == NULL ||
                               copy->type != CU_GRAPH_NODE_TYPE_MEMCPY))
        rc = CUDA_ERROR_INVALID_VALUE;
    if (rc != CUDA_SUCCESS)
        return rc;
    cudaError_t err = crm_graph_copy_node(copy, c.dst, c.dpitch, c.src, c.spitch, c.width, c.height, cudaMemcpyDefault);
    if (err == cudaSuccess && crm_gnode_set_meta(copy, p, sizeof *p) != 0)
        err = cudaErrorMemoryAllocation;
    return crm_drv_err(err == cudaSuccess ? crm_gexec_rebuild(hExec) : err);
}

CRM_EXPORT CUresult cuGraphMemsetNodeSetParams(CUgraphNode hNode, const CUDA_MEMSET_NODE_PARAMS *p)
{
    if (p == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    struct cudaMemsetParams mp = {(void *)(uintptr_t)p->dst, p->pitch, p->value, p->elementSize, p->width, p->height};
    CRM_DRV_IN_CTX(cudaGraphMemsetNodeSetParams(hNode, &mp));
}

CRM_EXPORT CUresult cuGraphHostNodeSetParams(CUgraphNode hNode, const CUDA_HOST_NODE_PARAMS *p)
{
    struct cudaHostNodeParams hp = {p != NULL ? p->fn : NULL, p != NULL ? p->userData : NULL};
    CRM_DRV_IN_CTX(cudaGraphHostNodeSetParams(hNode, &hp));
}

/* The runtime's form of a kernel node's parameters: its func may be a CUfunction
 * or a CUkernel, both of which the shim's module table knows. */
static struct cudaKernelNodeParams crm__kparams(const CUDA_KERNEL_NODE_PARAMS *p)
{
    struct cudaKernelNodeParams k = {
        .func = p->func != NULL ? (void *)p->func : (void *)p->kern,
        .gridDim = {p->gridDimX, p->gridDimY, p->gridDimZ},
        .blockDim = {p->blockDimX, p->blockDimY, p->blockDimZ},
        .sharedMemBytes = p->sharedMemBytes, .kernelParams = p->kernelParams, .extra = p->extra,
    };
    return k;
}

CRM_EXPORT CUresult cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *deps,
                                            size_t n, const CUDA_KERNEL_NODE_PARAMS *p)
{
    if (p == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    struct cudaKernelNodeParams k = crm__kparams(p);
    CUresult rc = crm_drv_need_ctx();
    if (rc == CUDA_SUCCESS)
        rc = CRM_DRV_RT(cudaGraphAddKernelNode(phGraphNode, hGraph, deps, n, &k));
    if (rc == CUDA_SUCCESS)
        crm_graph_kernel_meta_kern(*phGraphNode, p->func, p->kern); /* read back as given */
    return rc;
}

CRM_EXPORT CUresult cuGraphKernelNodeSetParams_v2(CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS *p)
{
    if (p == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    struct cudaKernelNodeParams k = crm__kparams(p);
    CUresult rc = crm_drv_need_ctx();
    if (rc == CUDA_SUCCESS)
        rc = CRM_DRV_RT(cudaGraphKernelNodeSetParams(hNode, &k));
    if (rc == CUDA_SUCCESS)
        crm_graph_kernel_meta_kern(hNode, p->func, p->kern);
    return rc;
}

CRM_EXPORT CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec hExec, CUgraphNode hNode,
                                                      const CUDA_KERNEL_NODE_PARAMS *p)
{
    if (p == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    struct cudaKernelNodeParams k = crm__kparams(p);
    CRM_DRV_IN_CTX(cudaGraphExecKernelNodeSetParams(hExec, hNode, &k));
}

CRM_EXPORT CUresult cuGraphExecMemsetNodeSetParams(CUgraphExec hExec, CUgraphNode hNode,
                                                   const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx)
{
    (void)ctx;
    if (p == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    struct cudaMemsetParams mp = {(void *)(uintptr_t)p->dst, p->pitch, p->value, p->elementSize, p->width, p->height};
    CRM_DRV_IN_CTX(cudaGraphExecMemsetNodeSetParams(hExec, hNode, &mp));
}

CRM_EXPORT CUresult cuGraphExecHostNodeSetParams(CUgraphExec hExec, CUgraphNode hNode, const CUDA_HOST_NODE_PARAMS *p)
{
    struct cudaHostNodeParams hp = {p != NULL ? p->fn : NULL, p != NULL ? p->userData : NULL};
    CRM_DRV_IN_CTX(cudaGraphExecHostNodeSetParams(hExec, hNode, &hp));
}

CRM_EXPORT CUresult cuGraphAddKernelNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *deps, size_t n,
                                         const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
    if (p == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUDA_KERNEL_NODE_PARAMS v2;
    memset(&v2, 0, sizeof v2);
    v2.func = p->func, v2.gridDimX = p->gridDimX, v2.gridDimY = p->gridDimY, v2.gridDimZ = p->gridDimZ;
    v2.blockDimX = p->blockDimX, v2.blockDimY = p->blockDimY, v2.blockDimZ = p->blockDimZ;
    v2.sharedMemBytes = p->sharedMemBytes, v2.kernelParams = p->kernelParams, v2.extra = p->extra;
    return cuGraphAddKernelNode_v2(phGraphNode, hGraph, deps, n, &v2);
}

/* ---- executable graphs ------------------------------------------------------------ */

CRM_EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags)
{ CRM_DRV_IN_CTX(crm_graph_instantiate_rt(phGraphExec, hGraph, flags)); }

/* The first form: no flags, and where an error lies said in a log buffer. */
CRM_EXPORT CUresult cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
                                          char *logBuffer, size_t bufferSize)
{
    if (phErrorNode != NULL)
        *phErrorNode = NULL;
    if (logBuffer != NULL && bufferSize > 0)
        logBuffer[0] = '\0';
    return cuGraphInstantiateWithFlags(phGraphExec, hGraph, 0);
}

CRM_EXPORT CUresult cuGraphInstantiateWithParams(CUgraphExec *phGraphExec, CUgraph hGraph,
                                                 CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{ CRM_DRV_IN_CTX(cudaGraphInstantiateWithParams(phGraphExec, hGraph, (cudaGraphInstantiateParams *)p)); }
CRM_EXPORT CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *phGraphExec, CUgraph hGraph,
                                                      CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{ CRM_DRV_IN_CTX(cudaGraphInstantiateWithParams(phGraphExec, hGraph, (cudaGraphInstantiateParams *)p)); }

CRM_EXPORT CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{ CRM_DRV_IN_CTX(crm_graph_launch_rt(hGraphExec, (cudaStream_t)hStream, CRM_PTDS_OFF)); }
CRM_EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{ CRM_DRV_IN_CTX(crm_graph_launch_rt(hGraphExec, (cudaStream_t)hStream, CRM_PTDS_ON)); }
CRM_EXPORT CUresult cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream)
{ CRM_DRV_IN_CTX(cudaGraphUpload(hGraphExec, (cudaStream_t)hStream)); }
CRM_EXPORT CUresult cuGraphUpload_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{ CRM_DRV_IN_CTX(cudaGraphUpload(hGraphExec, (cudaStream_t)hStream)); }
CRM_EXPORT CUresult cuGraphExecDestroy(CUgraphExec hGraphExec) { CRM_DRV_IN_CTX(cudaGraphExecDestroy(hGraphExec)); }
CRM_EXPORT CUresult cuGraphExecGetFlags(CUgraphExec hGraphExec, cuuint64_t *flags)
{ CRM_DRV_IN_CTX(cudaGraphExecGetFlags(hGraphExec, (unsigned long long *)flags)); }
CRM_EXPORT CUresult cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphExecUpdateResultInfo *info)
{ CRM_DRV_IN_CTX(crm_graph_update_rt(hGraphExec, hGraph, (cudaGraphExecUpdateResultInfo *)info)); }
