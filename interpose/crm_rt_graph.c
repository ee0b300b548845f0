/* crm_rt_graph.c -- the runtime's graph construction API (cudaGraphCreate, the
 * cudaGraphAdd*Node calls, edges, queries, clone, destroy) on the client's graphs
 * (client/crm_graph.h). Kernels, memsets, device-to-device copies and event nodes
 * are device work, encoded as the calls they stand for; copies touching host
 * memory and host functions are client steps. The driver's twins are
 * interpose/crm_drv_graph.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include "client/crm_graph.h"
#include "client/crm_modules.h"
#include "client/crm_ptrmap.h"
#include "interpose/crm_unsupported.h"
#include "interpose/crm_drv.h"
#include "interpose/crm_export.h"
#include "interpose/crm_rt_graph.h"
#include "interpose/crm_rt_launch.h"

/* Logs once that `what` is not supported (it returns cudaErrorNotSupported). */
#define CRM__UNSUPPORTED(what)                                              \
    do {                                                                    \
        static int crm__logged;                                             \
        crm_unsupported(what, &crm__logged, cudaErrorNotSupported, 0);      \
    } while (0)

/* A new node of type in graph after deps, in *out; the caller fills it in (and
 * drops it with crm_graph_drop_last when that fails). */
static cudaError_t crm__add(crm_gnode **out, cudaGraph_t graph, const cudaGraphNode_t *deps, size_t ndeps,
                            CUgraphNodeType type)
{
    crm_drv_runtime_bind();
    if (out == NULL || !crm_graph_live(graph) || (ndeps > 0 && deps == NULL))
        return cudaErrorInvalidValue;
    for (size_t i = 0; i < ndeps; i++)
        if (!crm_graph_has(graph, deps[i]))
            return cudaErrorInvalidValue;
    *out = crm_graph_add(graph, type, deps, ndeps);
    return *out != NULL ? cudaSuccess : cudaErrorMemoryAllocation;
}

/* Keeps node when err is cudaSuccess, else removes it; returns err. */
static cudaError_t crm__keep(cudaGraph_t graph, cudaGraphNode_t *pNode, crm_gnode *node, cudaError_t err)
{
    if (err != cudaSuccess)
        crm_graph_drop_last(graph);
    else
        *pNode = node;
    return crm_set_error(err);
}

CRM_EXPORT cudaError_t cudaGraphCreate(cudaGraph_t *pGraph, unsigned int flags)
{
    crm_drv_runtime_bind();
    if (pGraph == NULL || flags != 0)
        return crm_set_error(cudaErrorInvalidValue);
    *pGraph = crm_graph_new();
    return *pGraph != NULL ? cudaSuccess : crm_set_error(cudaErrorMemoryAllocation);
}

CRM_EXPORT cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
    if (!crm_graph_live(graph))
        return crm_set_error(cudaErrorInvalidValue);
    crm_graph_free(graph);
    return cudaSuccess;
}

CRM_EXPORT cudaError_t cudaGraphClone(cudaGraph_t *pGraphClone, cudaGraph_t originalGraph)
{
    if (pGraphClone == NULL || !crm_graph_live(originalGraph))
        return crm_set_error(cudaErrorInvalidValue);
    *pGraphClone = crm_graph_clone(originalGraph, NULL);
    return *pGraphClone != NULL ? cudaSuccess : crm_set_error(cudaErrorMemoryAllocation);
}

/* A clone's nodes are its original's, in the same order. */
CRM_EXPORT cudaError_t cudaGraphNodeFindInClone(cudaGraphNode_t *pNode, cudaGraphNode_t originalNode,
                                                cudaGraph_t clonedGraph)
{
    if (pNode == NULL || originalNode == NULL || !crm_graph_live(clonedGraph) ||
        originalNode->index >= clonedGraph->count)
        return crm_set_error(cudaErrorInvalidValue);
    *pNode = clonedGraph->nodes[originalNode->index];
    return cudaSuccess;
}

CRM_EXPORT cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                             const cudaGraphNode_t *pDependencies, size_t numDependencies)
{
    crm_gnode *node;
    cudaError_t err = crm__add(&node, graph, pDependencies, numDependencies, CU_GRAPH_NODE_TYPE_EMPTY);
    return err != cudaSuccess ? crm_set_error(err) : crm__keep(graph, pGraphNode, node, cudaSuccess);
}

cudaError_t crm_graph_fill_kernel(crm_gnode *n, const struct cudaKernelNodeParams *p)
{
    if (p == NULL)
        return cudaErrorInvalidValue;
    if (p->extra != NULL) {
        CRM__UNSUPPORTED("a graph kernel node with `extra` parameters");
        return cudaErrorNotSupported;
    }
    crm_launch_attr kept[CRM_KATTRS_MAX];
    unsigned nkept = 0;
    if (n->record != NULL && crm_graph_kernel_attrs(n, kept, &nkept) != cudaSuccess)
        nkept = 0;
    crm_launch_req r = {crm_modules_func(p->func), p->gridDim, p->blockDim, p->sharedMemBytes, 0, p->kernelParams,
                        NULL, 0, NULL, 0, CRM_PTDS_OFF, n, p->func};
    cudaError_t err = crm_kernel_launch(&r);
    return err == cudaSuccess && nkept > 0 ? crm_graph_kernel_set_attrs(n, kept, nkept) : err; /* attributes stay */
}

CRM_EXPORT cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                              const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                              const struct cudaKernelNodeParams *p)
{
    crm_gnode *node;
    if (p == NULL)
        return crm_set_error(cudaErrorInvalidValue);
    cudaError_t err = crm__add(&node, graph, pDependencies, numDependencies, CU_GRAPH_NODE_TYPE_KERNEL);
    if (err != cudaSuccess)
        return crm_set_error(err);
    return crm__keep(graph, pGraphNode, node, crm_graph_fill_kernel(node, p));
}

/* A memset of elementSize 2 or 4 is a byte memset when every byte of its value is
 * the same (zero, all ones); the wire's memset sets bytes. */
cudaError_t crm_graph_fill_memset(crm_gnode *n, const struct cudaMemsetParams *p)
{
    if (p == NULL || (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4))
        return cudaErrorInvalidValue;
    unsigned byte = p->value & 0xffu, value = p->value;
    for (unsigned i = 1; i < p->elementSize; i++)
        if (((value >> (8 * i)) & 0xffu) != byte) {
            CRM__UNSUPPORTED("a graph memset node of 2- or 4-byte elements whose bytes differ");
            return cudaErrorNotSupported;
        }
    size_t width = p->width * p->elementSize, height = p->height ? p->height : 1;
    if (width == 0 || (height > 1 && p->pitch < width) ||
        !crm_ptrmap_device_region((uint64_t)(uintptr_t)p->dst, height > 1 ? p->pitch : width, width, height))
        return cudaErrorInvalidValue;
    crm_call call = {.api = CRM_API_crm_memset};
    call.crm_call_u.crm_memset = (crm_args_crm_memset){
        .dst = (uint64_t)(uintptr_t)p->dst, .pitch = height > 1 ? p->pitch : width, .value = (int)byte,
        .width = width, .height = height, .stream = CRM_WIRE_LEGACY_STREAM, .async = 1,
    };
    return crm_gnode_set_record(n, &call) == 0 ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t crm_graph_memset_node(cudaGraphNode_t *pNode, cudaGraph_t graph, const cudaGraphNode_t *deps, size_t n,
                                  const struct cudaMemsetParams *p)
{
    crm_gnode *node;
    if (p == NULL)
        return crm_set_error(cudaErrorInvalidValue);
    cudaError_t err = crm__add(&node, graph, deps, n, CU_GRAPH_NODE_TYPE_MEMSET);
    if (err != cudaSuccess)
        return crm_set_error(err);
    return crm__keep(graph, pNode, node, crm_graph_fill_memset(node, p));
}

CRM_EXPORT cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                              const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                              const struct cudaMemsetParams *pMemsetParams)
{
    return crm_graph_memset_node(pGraphNode, graph, pDependencies, numDependencies, pMemsetParams);
}

cudaError_t crm_graph_memcpy_node(cudaGraphNode_t *pNode, cudaGraph_t graph, const cudaGraphNode_t *deps, size_t n,
                                  void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                  size_t height, enum cudaMemcpyKind kind)
{
    crm_gnode *node;
    cudaError_t err = crm__add(&node, graph, deps, n, CU_GRAPH_NODE_TYPE_MEMCPY);
    if (err != cudaSuccess)
        return crm_set_error(err);
    return crm__keep(graph, pNode, node, crm_graph_copy_node(node, dst, dpitch, src, spitch, width, height, kind));
}

/* Pitched copies of one slice between linear memory; CUDA arrays are not remoted. */
cudaError_t crm_graph_fill_memcpy3d(crm_gnode *n, const struct cudaMemcpy3DParms *p)
{
    if (p == NULL)
        return cudaErrorInvalidValue;
    if (p->srcArray != NULL || p->dstArray != NULL || p->extent.depth > 1) {
        CRM__UNSUPPORTED("a graph memcpy node of CUDA arrays or of several slices");
        return cudaErrorNotSupported;
    }
    const char *src = (const char *)p->srcPtr.ptr + p->srcPos.y * p->srcPtr.pitch + p->srcPos.x;
    char *dst = (char *)p->dstPtr.ptr + p->dstPos.y * p->dstPtr.pitch + p->dstPos.x;
    cudaError_t err = crm_graph_copy_node(n, dst, p->dstPtr.pitch, src, p->srcPtr.pitch, p->extent.width,
                                          p->extent.height ? p->extent.height : 1, p->kind);
    if (err == cudaSuccess && crm_gnode_set_meta(n, p, sizeof *p) != 0) /* given back as given */
        err = cudaErrorMemoryAllocation;
    return err;
}

CRM_EXPORT cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                              const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                              const struct cudaMemcpy3DParms *p)
{
    crm_gnode *node;
    if (p == NULL)
        return crm_set_error(cudaErrorInvalidValue);
    cudaError_t err = crm__add(&node, graph, pDependencies, numDependencies, CU_GRAPH_NODE_TYPE_MEMCPY);
    if (err != cudaSuccess)
        return crm_set_error(err);
    return crm__keep(graph, pGraphNode, node, crm_graph_fill_memcpy3d(node, p));
}

CRM_EXPORT cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                                void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    return crm_graph_memcpy_node(pGraphNode, graph, pDependencies, numDependencies, dst, count, src, count, count, 1,
                                 kind);
}

CRM_EXPORT cudaError_t cudaGraphAddHostNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                            const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                            const struct cudaHostNodeParams *p)
{
    crm_gnode *node;
    if (p == NULL || p->fn == NULL)
        return crm_set_error(cudaErrorInvalidValue);
    cudaError_t err = crm__add(&node, graph, pDependencies, numDependencies, CU_GRAPH_NODE_TYPE_HOST);
    if (err != cudaSuccess)
        return crm_set_error(err);
    return crm__keep(graph, pGraphNode, node, crm_graph_host_node(node, p->fn, p->userData));
}

CRM_EXPORT cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                  const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                                  cudaGraph_t childGraph)
{
    crm_gnode *node;
    if (!crm_graph_live(childGraph) || childGraph == graph)
        return crm_set_error(cudaErrorInvalidValue);
    cudaError_t err = crm__add(&node, graph, pDependencies, numDependencies, CU_GRAPH_NODE_TYPE_GRAPH);
    if (err != cudaSuccess)
        return crm_set_error(err);
    node->child = crm_graph_clone(childGraph, NULL);
    return crm__keep(graph, pGraphNode, node, node->child != NULL ? cudaSuccess : cudaErrorMemoryAllocation);
}

CRM_EXPORT cudaError_t cudaGraphChildGraphNodeGetGraph(cudaGraphNode_t node, cudaGraph_t *pGraph)
{
    if (node == NULL || pGraph == NULL || node->type != CU_GRAPH_NODE_TYPE_GRAPH)
        return crm_set_error(cudaErrorInvalidValue);
    *pGraph = node->child;
    return cudaSuccess;
}

/* An event record or wait node: the call it stands for, on the launch's stream. */
static cudaError_t crm__event_node(cudaGraphNode_t *pNode, cudaGraph_t graph, const cudaGraphNode_t *deps, size_t n,
                                   cudaEvent_t event, int wait)
{
    crm_gnode *node;
    if (event == NULL)
        return crm_set_error(cudaErrorInvalidValue);
    cudaError_t err = crm__add(&node, graph, deps, n,
                               wait ? CU_GRAPH_NODE_TYPE_WAIT_EVENT : CU_GRAPH_NODE_TYPE_EVENT_RECORD);
    if (err != cudaSuccess)
        return crm_set_error(err);
    crm_call call = {.api = wait ? CRM_API_cudaStreamWaitEvent : CRM_API_cudaEventRecord};
    if (wait)
        call.crm_call_u.cudaStreamWaitEvent = (crm_args_cudaStreamWaitEvent){
            .stream = CRM_WIRE_LEGACY_STREAM, .event = crm_event_wire(event), .flags = 0};
    else
        call.crm_call_u.cudaEventRecord = (crm_args_cudaEventRecord){
            .event = crm_event_wire(event), .stream = CRM_WIRE_LEGACY_STREAM};
    err = crm_gnode_set_record(node, &call) == 0 ? cudaSuccess : cudaErrorMemoryAllocation;
    return crm__keep(graph, pNode, node, err);
}

CRM_EXPORT cudaError_t cudaGraphAddEventRecordNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                   const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                                   cudaEvent_t event)
{
    return crm__event_node(pGraphNode, graph, pDependencies, numDependencies, event, 0);
}

CRM_EXPORT cudaError_t cudaGraphAddEventWaitNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                 const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                                 cudaEvent_t event)
{
    return crm__event_node(pGraphNode, graph, pDependencies, numDependencies, event, 1);
}

/* ---- queries ------------------------------------------------------------------------- */

/* CUDA's convention for a list: NULL asks for the count; else up to *count
 * entries are filled, the rest of the caller's room is cleared, and *count says
 * how many were written. */
static cudaError_t crm__list(cudaGraphNode_t const *items, size_t n, cudaGraphNode_t *out, size_t *count)
{
    if (count == NULL)
        return crm_set_error(cudaErrorInvalidValue);
    if (out == NULL) {
        *count = n;
        return cudaSuccess;
    }
    size_t room = *count;
    for (size_t i = 0; i < room; i++)
        out[i] = i < n ? items[i] : NULL;
    *count = n < room ? n : room;
    return cudaSuccess;
}

CRM_EXPORT cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t *nodes, size_t *numNodes)
{
    if (!crm_graph_live(graph))
        return crm_set_error(cudaErrorInvalidValue);
    return crm__list(graph->nodes, graph->count, nodes, numNodes);
}

CRM_EXPORT cudaError_t cudaGraphGetRootNodes(cudaGraph_t graph, cudaGraphNode_t *pRootNodes, size_t *pNumRootNodes)
{
    if (!crm_graph_live(graph))
        return crm_set_error(cudaErrorInvalidValue);
    cudaGraphNode_t *roots = malloc((graph->count ? graph->count : 1) * sizeof *roots);
    if (roots == NULL)
        return crm_set_error(cudaErrorMemoryAllocation);
    size_t n = 0;
    for (unsigned i = 0; i < graph->count; i++)
        if (graph->nodes[i]->ndeps == 0)
            roots[n++] = graph->nodes[i];
    cudaError_t err = crm__list(roots, n, pRootNodes, pNumRootNodes);
    free(roots);
    return err;
}

CRM_EXPORT cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node, enum cudaGraphNodeType *pType)
{
    if (node == NULL || pType == NULL)
        return crm_set_error(cudaErrorInvalidValue);
    *pType = (enum cudaGraphNodeType)node->type;
    return cudaSuccess;
}

CRM_EXPORT cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t node, cudaGraphNode_t *pDependencies,
                                                    cudaGraphEdgeData *edgeData, size_t *pNumDependencies)
{
    if (node == NULL)
        return crm_set_error(cudaErrorInvalidValue);
    if (edgeData != NULL && pNumDependencies != NULL)
        memset(edgeData, 0, *pNumDependencies * sizeof *edgeData);
    return crm__list(node->deps, node->ndeps, pDependencies, pNumDependencies);
}

CRM_EXPORT cudaError_t cudaGraphNodeGetDependentNodes(cudaGraphNode_t node, cudaGraphNode_t *pDependentNodes,
                                                      cudaGraphEdgeData *edgeData, size_t *pNumDependentNodes)
{
    if (node == NULL)
        return crm_set_error(cudaErrorInvalidValue);
    crm_graph *g = node->graph;
    cudaGraphNode_t *after = malloc((g->count ? g->count : 1) * sizeof *after);
    if (after == NULL)
        return crm_set_error(cudaErrorMemoryAllocation);
    size_t n = 0;
    for (unsigned i = 0; i < g->count; i++)
        for (unsigned d = 0; d < g->nodes[i]->ndeps; d++)
            if (g->nodes[i]->deps[d] == node)
                after[n++] = g->nodes[i];
    if (edgeData != NULL && pNumDependentNodes != NULL)
        memset(edgeData, 0, *pNumDependentNodes * sizeof *edgeData);
    cudaError_t err = crm__list(after, n, pDependentNodes, pNumDependentNodes);
    free(after);
    return err;
}

CRM_EXPORT cudaError_t cudaGraphGetEdges(cudaGraph_t graph, cudaGraphNode_t *from, cudaGraphNode_t *to,
                                         cudaGraphEdgeData *edgeData, size_t *numEdges)
{
    if (!crm_graph_live(graph) || numEdges == NULL || ((from == NULL) != (to == NULL)))
        return crm_set_error(cudaErrorInvalidValue);
    size_t n = 0, room = *numEdges;
    for (unsigned i = 0; i < graph->count; i++)
        for (unsigned d = 0; d < graph->nodes[i]->ndeps; d++, n++)
            if (from != NULL && n < room)
                from[n] = graph->nodes[i]->deps[d], to[n] = graph->nodes[i];
    if (from != NULL) {
        for (size_t i = n; i < room; i++)
            from[i] = to[i] = NULL;
        if (edgeData != NULL)
            memset(edgeData, 0, room * sizeof *edgeData);
        n = n < room ? n : room;
    }
    *numEdges = n;
    return cudaSuccess;
}

static cudaError_t crm__edges(cudaGraph_t graph, const cudaGraphNode_t *from, const cudaGraphNode_t *to,
                              const cudaGraphEdgeData *edgeData, size_t n, int add)
{
    if (!crm_graph_live(graph) || (n > 0 && (from == NULL || to == NULL)))
        return crm_set_error(cudaErrorInvalidValue);
    for (size_t i = 0; i < n; i++) {
        if (!crm_graph_has(graph, from[i]) || !crm_graph_has(graph, to[i]) || from[i] == to[i])
            return crm_set_error(cudaErrorInvalidValue);
        if (edgeData != NULL && (edgeData[i].type != cudaGraphDependencyTypeDefault || edgeData[i].from_port != 0))
            return crm_set_error(cudaErrorNotSupported);
    }
    for (size_t i = 0; i < n; i++) {
        int rc = add ? crm_graph_add_edge(from[i], to[i]) : crm_graph_remove_edge(from[i], to[i]);
        if (rc < 0)
            return crm_set_error(add ? cudaErrorMemoryAllocation : cudaErrorInvalidValue);
    }
    return cudaSuccess;
}

CRM_EXPORT cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t *from,
                                                const cudaGraphNode_t *to, const cudaGraphEdgeData *edgeData,
                                                size_t numDependencies)
{
    return crm__edges(graph, from, to, edgeData, numDependencies, 1);
}

CRM_EXPORT cudaError_t cudaGraphRemoveDependencies(cudaGraph_t graph, const cudaGraphNode_t *from,
                                                   const cudaGraphNode_t *to, const cudaGraphEdgeData *edgeData,
                                                   size_t numDependencies)
{
    return crm__edges(graph, from, to, edgeData, numDependencies, 0);
}

/* A node's Graphviz label: its number and type; a kernel's name; with
 * cudaGraphDebugDotFlagsVerbose, a kernel's geometry too. */
static void crm__dot_label(FILE *f, unsigned i, cudaGraphNode_t n, unsigned flags)
{
    static const char *const names[] = {"kernel", "memcpy", "memset", "host", "graph", "empty",
                                        "wait_event", "event_record", "ext_sem_signal", "ext_sem_wait",
                                        "mem_alloc", "mem_free", "batch_mem_op", "conditional"};
    unsigned t = (unsigned)n->type;
    fprintf(f, "  node%u [label=\"%u: %s", i, i, t < sizeof names / sizeof *names ? names[t] : "?");
    struct cudaKernelNodeParams p;
    crm_kfunc *k = n->type == CU_GRAPH_NODE_TYPE_KERNEL && cudaGraphKernelNodeGetParams(n, &p) == cudaSuccess
                       ? crm_modules_func(p.func) : NULL;
    if (k != NULL)
        fprintf(f, "\\n%s", crm_modules_func_name(k));
    if (k != NULL && (flags & cudaGraphDebugDotFlagsVerbose))
        fprintf(f, "\\ngrid (%u,%u,%u) block (%u,%u,%u) shared %u", p.gridDim.x, p.gridDim.y, p.gridDim.z,
                p.blockDim.x, p.blockDim.y, p.blockDim.z, p.sharedMemBytes);
    fprintf(f, "\"];\n");
}

/* Graphviz: one line per node (its label), one per edge. */
CRM_EXPORT cudaError_t cudaGraphDebugDotPrint(cudaGraph_t graph, const char *path, unsigned int flags)
{
    if (!crm_graph_live(graph) || path == NULL)
        return crm_set_error(cudaErrorInvalidValue);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return crm_set_error(cudaErrorOperatingSystem);
    fprintf(f, "digraph cudaGraph {\n");
    for (unsigned i = 0; i < graph->count; i++)
        crm__dot_label(f, i, graph->nodes[i], flags);
    for (unsigned i = 0; i < graph->count; i++)
        for (unsigned d = 0; d < graph->nodes[i]->ndeps; d++)
            fprintf(f, "  node%u -> node%u;\n", graph->nodes[i]->deps[d]->index, i);
    fprintf(f, "}\n");
    return fclose(f) == 0 ? cudaSuccess : crm_set_error(cudaErrorOperatingSystem);
}
