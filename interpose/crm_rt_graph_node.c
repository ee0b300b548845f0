/* crm_rt_graph_node.c -- the generic node API of both APIs (cudaGraphAddNode,
 * cudaGraphNodeSetParams, cudaGraphExecNodeSetParams and the driver's): a node's
 * type and parameters in one structure, dispatched to the per-type calls of
 * interpose/crm_rt_graph*.c and crm_drv_graph.c. External-semaphore and batch
 * memory-operation nodes are not remoted. */
#include <string.h>
#include <cuda_runtime_api.h>
#include "interpose/crm_drv.h"
#include "interpose/crm_export.h"
#include "interpose/crm_rt_graph.h"
#include "interpose/crm_unsupported.h"

#undef cuGraphAddNode
#undef cuGraphAddKernelNode
#undef cuGraphKernelNodeSetParams
#undef cuGraphExecKernelNodeSetParams

CUresult cuGraphAddKernelNode_v2(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, const CUDA_KERNEL_NODE_PARAMS *);
CUresult cuGraphKernelNodeSetParams_v2(CUgraphNode, const CUDA_KERNEL_NODE_PARAMS *);
CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec, CUgraphNode, const CUDA_KERNEL_NODE_PARAMS *);

/* Logs once that nodes of `type` are not remoted; the status to return. */
static int crm__unsupported_type(int type)
{
    static int logged;
    (void)type;
    return crm_unsupported("a graph node of this type (external semaphore, batch memory operation)",
                           &logged, cudaErrorNotSupported, 0);
}

/* Only default edges: the programmatic ones are not remoted. */
static int crm__default_edges(const cudaGraphEdgeData *edges, size_t n)
{
    for (size_t i = 0; edges != NULL && i < n; i++)
        if (edges[i].type != cudaGraphDependencyTypeDefault || edges[i].from_port != 0 || edges[i].to_port != 0)
            return 0;
    return 1;
}

static struct cudaKernelNodeParams crm__kernel(const struct cudaKernelNodeParamsV2 *k)
{
    struct cudaKernelNodeParams p = {k->func, k->gridDim, k->blockDim, k->sharedMemBytes, k->kernelParams, k->extra};
    return p;
}

static struct cudaMemsetParams crm__memset(const struct cudaMemsetParamsV2 *m)
{
    struct cudaMemsetParams p = {m->dst, m->pitch, m->value, m->elementSize, m->width, m->height};
    return p;
}

static cudaError_t crm__add(cudaGraphNode_t *pNode, cudaGraph_t graph, const cudaGraphNode_t *deps, size_t n,
                            struct cudaGraphNodeParams *p)
{
    switch (p->type) {
    case cudaGraphNodeTypeKernel: {
        struct cudaKernelNodeParams k = crm__kernel(&p->kernel);
        return cudaGraphAddKernelNode(pNode, graph, deps, n, &k);
    }
    case cudaGraphNodeTypeMemcpy:
        return p->memcpy.flags != 0 ? cudaErrorInvalidValue
                                    : cudaGraphAddMemcpyNode(pNode, graph, deps, n, &p->memcpy.copyParams);
    case cudaGraphNodeTypeMemset: {
        struct cudaMemsetParams m = crm__memset(&p->memset);
        return cudaGraphAddMemsetNode(pNode, graph, deps, n, &m);
    }
    case cudaGraphNodeTypeHost: {
        struct cudaHostNodeParams h = {p->host.fn, p->host.userData};
        return cudaGraphAddHostNode(pNode, graph, deps, n, &h);
    }
    case cudaGraphNodeTypeGraph:
        if (p->graph.ownership != cudaGraphChildGraphOwnershipClone)
            return (cudaError_t)crm__unsupported_type(p->type);
        return cudaGraphAddChildGraphNode(pNode, graph, deps, n, p->graph.graph);
    case cudaGraphNodeTypeEmpty:
        return cudaGraphAddEmptyNode(pNode, graph, deps, n);
    case cudaGraphNodeTypeWaitEvent:
        return cudaGraphAddEventWaitNode(pNode, graph, deps, n, p->eventWait.event);
    case cudaGraphNodeTypeEventRecord:
        return cudaGraphAddEventRecordNode(pNode, graph, deps, n, p->eventRecord.event);
    case cudaGraphNodeTypeMemAlloc:
        return cudaGraphAddMemAllocNode(pNode, graph, deps, n, (struct cudaMemAllocNodeParams *)&p->alloc);
    case cudaGraphNodeTypeMemFree:
        return cudaGraphAddMemFreeNode(pNode, graph, deps, n, p->free.dptr);
    case cudaGraphNodeTypeConditional:
        return crm_graph_cond_node(pNode, graph, deps, n, &p->conditional);
    default:
        return (cudaError_t)crm__unsupported_type(p->type);
    }
}

_Static_assert(sizeof(struct cudaMemAllocNodeParamsV2) == sizeof(struct cudaMemAllocNodeParams),
               "the two forms of alloc node parameters share one layout");

CRM_EXPORT cudaError_t cudaGraphAddNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                        const cudaGraphNode_t *pDependencies, const cudaGraphEdgeData *dependencyData,
                                        size_t numDependencies, struct cudaGraphNodeParams *nodeParams)
{
    if (nodeParams == NULL)
        return crm_set_error(cudaErrorInvalidValue);
    if (!crm__default_edges(dependencyData, numDependencies))
        return crm_set_error((cudaError_t)crm__unsupported_type(-1));
    return crm_set_error(crm__add(pGraphNode, graph, pDependencies, numDependencies, nodeParams));
}

/* A node's or an executable graph's node's new parameters: exec NULL for the
 * graph's own node. */
static cudaError_t crm__set(cudaGraphExec_t exec, cudaGraphNode_t node, struct cudaGraphNodeParams *p)
{
    if (p == NULL)
        return cudaErrorInvalidValue;
    switch (p->type) {
    case cudaGraphNodeTypeKernel: {
        struct cudaKernelNodeParams k = crm__kernel(&p->kernel);
        return exec ? cudaGraphExecKernelNodeSetParams(exec, node, &k) : cudaGraphKernelNodeSetParams(node, &k);
    }
    case cudaGraphNodeTypeMemcpy:
        return exec ? cudaGraphExecMemcpyNodeSetParams(exec, node, &p->memcpy.copyParams)
                    : cudaGraphMemcpyNodeSetParams(node, &p->memcpy.copyParams);
    case cudaGraphNodeTypeMemset: {
        struct cudaMemsetParams m = crm__memset(&p->memset);
        return exec ? cudaGraphExecMemsetNodeSetParams(exec, node, &m) : cudaGraphMemsetNodeSetParams(node, &m);
    }
    case cudaGraphNodeTypeHost: {
        struct cudaHostNodeParams h = {p->host.fn, p->host.userData};
        return exec ? cudaGraphExecHostNodeSetParams(exec, node, &h) : cudaGraphHostNodeSetParams(node, &h);
    }
    default:
        return (cudaError_t)crm__unsupported_type(p->type);
    }
}

CRM_EXPORT cudaError_t cudaGraphNodeSetParams(cudaGraphNode_t node, struct cudaGraphNodeParams *nodeParams)
{
    return crm_set_error(crm__set(NULL, node, nodeParams));
}

CRM_EXPORT cudaError_t cudaGraphExecNodeSetParams(cudaGraphExec_t graphExec, cudaGraphNode_t node,
                                                  struct cudaGraphNodeParams *nodeParams)
{
    return crm_set_error(graphExec == NULL ? cudaErrorInvalidValue : crm__set(graphExec, node, nodeParams));
}

/* ---- the driver's: its own parameter structures, to its per-type calls ------------ */

static CUDA_KERNEL_NODE_PARAMS crm__drv_kernel(const CUDA_KERNEL_NODE_PARAMS_v3 *k)
{
    CUDA_KERNEL_NODE_PARAMS p;
    memset(&p, 0, sizeof p);
    p.func = k->func, p.gridDimX = k->gridDimX, p.gridDimY = k->gridDimY, p.gridDimZ = k->gridDimZ;
    p.blockDimX = k->blockDimX, p.blockDimY = k->blockDimY, p.blockDimZ = k->blockDimZ;
    p.sharedMemBytes = k->sharedMemBytes, p.kernelParams = k->kernelParams, p.extra = k->extra, p.kern = k->kern;
    return p;
}

static CUDA_MEMSET_NODE_PARAMS crm__drv_memset(const CUDA_MEMSET_NODE_PARAMS_v2 *m)
{
    CUDA_MEMSET_NODE_PARAMS p = {m->dst, m->pitch, m->value, m->elementSize, m->width, m->height};
    return p;
}

CRM_EXPORT CUresult cuGraphAddNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *deps,
                                      const CUgraphEdgeData *edges, size_t n, CUgraphNodeParams *p)
{
    if (p == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (!crm__default_edges((const cudaGraphEdgeData *)edges, n))
        return (CUresult)crm__unsupported_type(-1);
    switch (p->type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: {
        CUDA_KERNEL_NODE_PARAMS k = crm__drv_kernel(&p->kernel);
        return cuGraphAddKernelNode_v2(phGraphNode, hGraph, deps, n, &k);
    }
    case CU_GRAPH_NODE_TYPE_MEMCPY:
        return p->memcpy.flags != 0 ? CUDA_ERROR_INVALID_VALUE
                                    : cuGraphAddMemcpyNode(phGraphNode, hGraph, deps, n, &p->memcpy.copyParams, NULL);
    case CU_GRAPH_NODE_TYPE_MEMSET: {
        CUDA_MEMSET_NODE_PARAMS m = crm__drv_memset(&p->memset);
        return cuGraphAddMemsetNode(phGraphNode, hGraph, deps, n, &m, NULL);
    }
    case CU_GRAPH_NODE_TYPE_HOST: {
        CUDA_HOST_NODE_PARAMS h = {p->host.fn, p->host.userData};
        return cuGraphAddHostNode(phGraphNode, hGraph, deps, n, &h);
    }
    default: /* the other types' parameters have the runtime's layout */
        CRM_DRV_IN_CTX(cudaGraphAddNode(phGraphNode, hGraph, deps, NULL, n, (struct cudaGraphNodeParams *)p));
    }
}

CRM_EXPORT CUresult cuGraphAddNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *deps, size_t n,
                                   CUgraphNodeParams *p)
{
    return cuGraphAddNode_v2(phGraphNode, hGraph, deps, NULL, n, p);
}

static CUresult crm__drv_set(CUgraphExec exec, CUgraphNode node, CUgraphNodeParams *p)
{
    if (p == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    switch (p->type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: {
        CUDA_KERNEL_NODE_PARAMS k = crm__drv_kernel(&p->kernel);
        return exec ? cuGraphExecKernelNodeSetParams_v2(exec, node, &k) : cuGraphKernelNodeSetParams_v2(node, &k);
    }
    case CU_GRAPH_NODE_TYPE_MEMCPY:
        return exec ? cuGraphExecMemcpyNodeSetParams(exec, node, &p->memcpy.copyParams, NULL)
                    : cuGraphMemcpyNodeSetParams(node, &p->memcpy.copyParams);
    case CU_GRAPH_NODE_TYPE_MEMSET: {
        CUDA_MEMSET_NODE_PARAMS m = crm__drv_memset(&p->memset);
        return exec ? cuGraphExecMemsetNodeSetParams(exec, node, &m, NULL) : cuGraphMemsetNodeSetParams(node, &m);
    }
    case CU_GRAPH_NODE_TYPE_HOST: {
        CUDA_HOST_NODE_PARAMS h = {p->host.fn, p->host.userData};
        return exec ? cuGraphExecHostNodeSetParams(exec, node, &h) : cuGraphHostNodeSetParams(node, &h);
    }
    default:
        return (CUresult)crm__unsupported_type(p->type);
    }
}

CRM_EXPORT CUresult cuGraphNodeSetParams(CUgraphNode hNode, CUgraphNodeParams *nodeParams)
{
    return crm__drv_set(NULL, hNode, nodeParams);
}

CRM_EXPORT CUresult cuGraphExecNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode, CUgraphNodeParams *nodeParams)
{
    return hGraphExec == NULL ? CUDA_ERROR_INVALID_VALUE : crm__drv_set(hGraphExec, hNode, nodeParams);
}
