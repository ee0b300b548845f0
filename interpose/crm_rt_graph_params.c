/* crm_rt_graph_params.c -- changing a node's parameters after it was added: in its
 * graph (cudaGraph*NodeSetParams), or in an executable graph made from it
 * (cudaGraphExec*NodeSetParams), whose own copy of the node is changed and whose
 * work is then made anew (client/crm_graph_exec.h): the next launch runs the new
 * parameters, launches queued before it ran the old. So does enabling or disabling
 * a node of an executable graph (cudaGraphNodeSetEnabled). */
#include <cuda_runtime_api.h>
#include "client/crm_graph_exec.h"
#include "interpose/crm_drv.h"
#include "interpose/crm_export.h"
#include "interpose/crm_rt_graph.h"

/* A node of type, or cudaErrorInvalidValue. */
static cudaError_t crm__node(cudaGraphNode_t node, CUgraphNodeType type)
{
    crm_drv_runtime_bind();
    return node != NULL && crm_graph_has(node->graph, node) && node->type == type ? cudaSuccess
                                                                                     : cudaErrorInvalidValue;
}

/* exec's copy of node, which must be of type, in *copy. */
static cudaError_t crm__exec_node(cudaGraphExec_t exec, cudaGraphNode_t node, CUgraphNodeType type, crm_gnode **copy)
{
    crm_drv_runtime_bind();
    if (!crm_gexec_live(exec) || node == NULL || node->type != type || (*copy = crm_gexec_node(exec, node)) == NULL)
        return cudaErrorInvalidValue;
    return cudaSuccess;
}

/* After a setter changed exec's copy: its work made anew, or the error. */
static cudaError_t crm__rebuilt(cudaGraphExec_t exec, cudaError_t err)
{
    return crm_set_error(err == cudaSuccess ? crm_gexec_rebuild(exec) : err);
}

CRM_EXPORT cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t node, const struct cudaKernelNodeParams *p)
{
    cudaError_t err = crm__node(node, CU_GRAPH_NODE_TYPE_KERNEL);
    return crm_set_error(err == cudaSuccess ? crm_graph_fill_kernel(node, p) : err);
}

CRM_EXPORT cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                        const struct cudaKernelNodeParams *p)
{
    crm_gnode *copy;
    cudaError_t err = crm__exec_node(exec, node, CU_GRAPH_NODE_TYPE_KERNEL, &copy);
    return crm__rebuilt(exec, err == cudaSuccess ? crm_graph_fill_kernel(copy, p) : err);
}

CRM_EXPORT cudaError_t cudaGraphMemsetNodeSetParams(cudaGraphNode_t node, const struct cudaMemsetParams *p)
{
    cudaError_t err = crm__node(node, CU_GRAPH_NODE_TYPE_MEMSET);
    return crm_set_error(err == cudaSuccess ? crm_graph_fill_memset(node, p) : err);
}

CRM_EXPORT cudaError_t cudaGraphExecMemsetNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                        const struct cudaMemsetParams *p)
{
    crm_gnode *copy;
    cudaError_t err = crm__exec_node(exec, node, CU_GRAPH_NODE_TYPE_MEMSET, &copy);
    return crm__rebuilt(exec, err == cudaSuccess ? crm_graph_fill_memset(copy, p) : err);
}

CRM_EXPORT cudaError_t cudaGraphMemcpyNodeSetParams(cudaGraphNode_t node, const struct cudaMemcpy3DParms *p)
{
    cudaError_t err = crm__node(node, CU_GRAPH_NODE_TYPE_MEMCPY);
    return crm_set_error(err == cudaSuccess ? crm_graph_fill_memcpy3d(node, p) : err);
}

CRM_EXPORT cudaError_t cudaGraphExecMemcpyNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                        const struct cudaMemcpy3DParms *p)
{
    crm_gnode *copy;
    cudaError_t err = crm__exec_node(exec, node, CU_GRAPH_NODE_TYPE_MEMCPY, &copy);
    return crm__rebuilt(exec, err == cudaSuccess ? crm_graph_fill_memcpy3d(copy, p) : err);
}

CRM_EXPORT cudaError_t cudaGraphMemcpyNodeSetParams1D(cudaGraphNode_t node, void *dst, const void *src, size_t count,
                                                      enum cudaMemcpyKind kind)
{
    cudaError_t err = crm__node(node, CU_GRAPH_NODE_TYPE_MEMCPY);
    return crm_set_error(err == cudaSuccess ? crm_graph_copy_node(node, dst, count, src, count, count, 1, kind) : err);
}

CRM_EXPORT cudaError_t cudaGraphExecMemcpyNodeSetParams1D(cudaGraphExec_t exec, cudaGraphNode_t node, void *dst,
                                                          const void *src, size_t count, enum cudaMemcpyKind kind)
{
    crm_gnode *copy;
    cudaError_t err = crm__exec_node(exec, node, CU_GRAPH_NODE_TYPE_MEMCPY, &copy);
    return crm__rebuilt(exec, err == cudaSuccess ? crm_graph_copy_node(copy, dst, count, src, count, count, 1, kind)
                                                 : err);
}

CRM_EXPORT cudaError_t cudaGraphHostNodeSetParams(cudaGraphNode_t node, const struct cudaHostNodeParams *p)
{
    cudaError_t err = crm__node(node, CU_GRAPH_NODE_TYPE_HOST);
    if (err == cudaSuccess && p == NULL)
        err = cudaErrorInvalidValue;
    return crm_set_error(err == cudaSuccess ? crm_graph_host_node(node, p->fn, p->userData) : err);
}

CRM_EXPORT cudaError_t cudaGraphExecHostNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                      const struct cudaHostNodeParams *p)
{
    crm_gnode *copy;
    cudaError_t err = crm__exec_node(exec, node, CU_GRAPH_NODE_TYPE_HOST, &copy);
    if (err == cudaSuccess && p == NULL)
        err = cudaErrorInvalidValue;
    return crm__rebuilt(exec, err == cudaSuccess ? crm_graph_host_node(copy, p->fn, p->userData) : err);
}

/* ---- enabling and disabling a node of an executable graph --------------------------- */

/* exec's copy of node, a kernel, memset or memcpy node (the kinds CUDA lets one
 * disable), in *copy. */
static cudaError_t crm__switchable(cudaGraphExec_t exec, cudaGraphNode_t node, crm_gnode **copy)
{
    crm_drv_runtime_bind();
    if (!crm_gexec_live(exec) || node == NULL || (*copy = crm_gexec_node(exec, node)) == NULL)
        return cudaErrorInvalidValue;
    CUgraphNodeType t = (*copy)->type;
    return t == CU_GRAPH_NODE_TYPE_KERNEL || t == CU_GRAPH_NODE_TYPE_MEMSET || t == CU_GRAPH_NODE_TYPE_MEMCPY
               ? cudaSuccess : cudaErrorInvalidValue;
}

CRM_EXPORT cudaError_t cudaGraphNodeSetEnabled(cudaGraphExec_t hGraphExec, cudaGraphNode_t hNode,
                                               unsigned int isEnabled)
{
    crm_gnode *copy;
    cudaError_t err = crm__switchable(hGraphExec, hNode, &copy);
    if (err != cudaSuccess || copy->disabled == !isEnabled)
        return err != cudaSuccess ? crm_set_error(err) : cudaSuccess;
    copy->disabled = !isEnabled;
    return crm__rebuilt(hGraphExec, cudaSuccess);
}

CRM_EXPORT cudaError_t cudaGraphNodeGetEnabled(cudaGraphExec_t hGraphExec, cudaGraphNode_t hNode,
                                               unsigned int *isEnabled)
{
    crm_gnode *copy;
    cudaError_t err = isEnabled == NULL ? cudaErrorInvalidValue : crm__switchable(hGraphExec, hNode, &copy);
    if (err != cudaSuccess)
        return crm_set_error(err);
    *isEnabled = !copy->disabled;
    return cudaSuccess;
}

CRM_EXPORT CUresult cuGraphNodeSetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode, unsigned int isEnabled)
{
    CRM_DRV_IN_CTX(cudaGraphNodeSetEnabled(hGraphExec, hNode, isEnabled));
}

CRM_EXPORT CUresult cuGraphNodeGetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode, unsigned int *isEnabled)
{
    CRM_DRV_IN_CTX(cudaGraphNodeGetEnabled(hGraphExec, hNode, isEnabled));
}
