/* crm_rt_graph_cond.c -- conditional nodes of both APIs: handles
 * (cudaGraphConditionalHandleCreate, cuGraphConditionalHandleCreate) and the
 * nodes cudaGraphAddNode makes of them, with their body graphs. A handle is the
 * device address of its value (client/crm_graph_cond.h); the node is a record of
 * its graph's program that picks a body when the work before it is done
 * (client/crm_graph_exec.c, server/crm_h_graph_cond.c). */
#include <cuda_runtime_api.h>
#include "client/crm_graph.h"
#include "interpose/crm_drv.h"
#include "interpose/crm_export.h"
#include "interpose/crm_rt_graph.h"

CRM_EXPORT cudaError_t cudaGraphConditionalHandleCreate(cudaGraphConditionalHandle *pHandle_out, cudaGraph_t graph,
                                                        unsigned int defaultLaunchValue, unsigned int flags)
{
    crm_drv_runtime_bind();
    if (pHandle_out == NULL || !crm_graph_live(graph) || (flags & ~(unsigned)cudaGraphCondAssignDefault) != 0)
        return crm_set_error(cudaErrorInvalidValue);
    void *cell = NULL;
    cudaError_t err = crm_device_alloc(&cell, sizeof(unsigned));
    if (err != cudaSuccess)
        return crm_set_error(err);
    crm_gcond *c = crm_gcond_new((uint64_t)(uintptr_t)cell, defaultLaunchValue, flags);
    if (c == NULL || crm_graph_add_cond(graph, c) != 0) {
        if (c != NULL)
            crm_gcond_release(c);
        else
            cudaFree(cell);
        return crm_set_error(cudaErrorMemoryAllocation);
    }
    *pHandle_out = (cudaGraphConditionalHandle)(uintptr_t)cell;
    return cudaSuccess;
}

CRM_EXPORT CUresult cuGraphConditionalHandleCreate(CUgraphConditionalHandle *pHandle_out, CUgraph hGraph, CUcontext ctx,
                                                   unsigned int defaultLaunchValue, unsigned int flags)
{
    (void)ctx; /* one context per device: the current one */
    CRM_DRV_IN_CTX(cudaGraphConditionalHandleCreate((cudaGraphConditionalHandle *)pHandle_out, hGraph,
                                                    defaultLaunchValue, flags));
}

/* 1 when a node of type may have `size` bodies, as CUDA allows. */
static int crm__shape_ok(enum cudaGraphConditionalNodeType type, unsigned size)
{
    switch (type) {
    case cudaGraphCondTypeIf: return size == 1 || size == 2;
    case cudaGraphCondTypeWhile: return size == 1;
    case cudaGraphCondTypeSwitch: return size >= 1;
    default: return 0;
    }
}

cudaError_t crm_graph_cond_node(cudaGraphNode_t *pNode, cudaGraph_t graph, const cudaGraphNode_t *deps, size_t n,
                                struct cudaConditionalNodeParams *p)
{
    crm_drv_runtime_bind();
    if (pNode == NULL || !crm_graph_live(graph) || (n > 0 && deps == NULL) || !crm__shape_ok(p->type, p->size))
        return cudaErrorInvalidValue;
    crm_gcond *c = crm_graph_find_cond(graph, (uint64_t)p->handle);
    if (c == NULL)
        return cudaErrorInvalidValue; /* a handle made for another graph */
    for (size_t i = 0; i < n; i++)
        if (!crm_graph_has(graph, deps[i]))
            return cudaErrorInvalidValue;
    crm_gnode *node = crm_graph_add(graph, CU_GRAPH_NODE_TYPE_CONDITIONAL, deps, n);
    if (node == NULL)
        return cudaErrorMemoryAllocation;
    if (crm_gnode_set_cond(node, c, (int)p->type, p->size) != 0) {
        crm_graph_drop_last(graph);
        return cudaErrorMemoryAllocation;
    }
    p->phGraph_out = node->bodies;
    *pNode = node;
    return cudaSuccess;
}
