/* crm_rt_graph_mem.c -- graph memory nodes at both APIs: alloc and free nodes
 * built explicitly or captured from cudaMallocAsync / cudaFreeAsync, their
 * parameters, and the device's graph memory attributes (client/crm_graph_mem.h
 * keeps the memory). An allocation ordered after the free of another of its graph
 * takes its address, as CUDA reuses a graph's virtual addresses. */
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include "client/crm_graph_mem.h"
#include "interpose/crm_drv.h"
#include "interpose/crm_export.h"
#include "interpose/crm_rt_graph.h"

_Static_assert(sizeof(CUDA_MEM_ALLOC_NODE_PARAMS) == sizeof(struct cudaMemAllocNodeParams),
               "the driver's and the runtime's alloc node parameters share one layout");

/* An address of g that an allocation of size bytes after deps[0..n) may take, as
 * CUDA reuses a graph's addresses: one every allocation of which in g is freed by
 * a node it runs after, big enough. 0: none. */
static uint64_t crm__reusable(const crm_graph *g, crm_gnode *const *deps, size_t n, size_t size)
{
    unsigned char *seen = calloc(g->count ? g->count : 1, 1);
    uint64_t found = 0;
    if (seen == NULL || crm_graph_mark_ancestors(deps, n, seen) != 0) {
        free(seen);
        return 0; /* out of memory: a fresh allocation, as without reuse */
    }
    for (unsigned i = 0; i < g->count && found == 0; i++) {
        const crm_gnode *f = g->nodes[i];
        if (!seen[i] || f->type != CU_GRAPH_NODE_TYPE_MEM_FREE || f->args == NULL)
            continue;
        uint64_t ptr = ((const crm_gmem_node *)f->args)->ptr, room = 0;
        unsigned allocs = 0, frees = 0;
        for (unsigned j = 0; j < g->count; j++) {
            const crm_gnode *m = g->nodes[j];
            if (m->args == NULL || ((const crm_gmem_node *)m->args)->ptr != ptr)
                continue;
            if (m->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC) {
                allocs++;
                room = ((const crm_gmem_node *)m->args)->size > room ? ((const crm_gmem_node *)m->args)->size : room;
            } else if (m->type == CU_GRAPH_NODE_TYPE_MEM_FREE && seen[j]) {
                frees++;
            }
        }
        if (allocs > 0 && frees >= allocs && room >= size)
            found = ptr;
    }
    free(seen);
    return found;
}

/* Makes n the alloc node of size bytes at ptr, an allocation of its graph already
 * freed before it (held once more). */
static cudaError_t crm__reuse_node(crm_gnode *n, uint64_t ptr, size_t size, void **out)
{
    crm_gmem_node args = {ptr, size};
    crm_gmem_hold(ptr);
    if (crm_gnode_set_step(n, crm_gmem_alloc_step, &args, sizeof args) != 0) {
        crm_gmem_release(ptr);
        return cudaErrorMemoryAllocation;
    }
    *out = (void *)(uintptr_t)ptr;
    return cudaSuccess;
}

/* Allocates size bytes as a graph's and makes n its alloc node; an address of the
 * graph freed before n is taken again when one fits. */
static cudaError_t crm__alloc_node(crm_gnode *n, size_t size, void **out)
{
    uint64_t again = crm__reusable(n->graph, n->deps, n->ndeps, size);
    if (again != 0)
        return crm__reuse_node(n, again, size, out);
    void *p = NULL;
    cudaError_t err = crm_device_alloc(&p, size);
    if (err != cudaSuccess)
        return err;
    crm_gmem_node args = {(uint64_t)(uintptr_t)p, size};
    if (crm_gmem_add(args.ptr, size) != 0) {
        cudaFree(p);
        return cudaErrorMemoryAllocation;
    }
    if (crm_gnode_set_step(n, crm_gmem_alloc_step, &args, sizeof args) != 0) {
        crm_gmem_free(args.ptr);
        crm_gmem_release(args.ptr);
        return cudaErrorMemoryAllocation;
    }
    *out = p;
    return cudaSuccess;
}

static cudaError_t crm__free_node(crm_gnode *n, uint64_t ptr)
{
    crm_gmem_node args = {ptr, 0};
    if (!crm_gmem_known(ptr))
        return cudaErrorInvalidValue; /* only memory a graph allocated */
    return crm_gnode_set_step(n, crm_gmem_free_step, &args, sizeof args) == 0 ? cudaSuccess
                                                                              : cudaErrorMemoryAllocation;
}

int crm_graph_capture_alloc(uint64_t stream, CUdeviceptr *dptr, size_t size, cudaError_t *err)
{
    enum cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    crm_graph *g = NULL;
    crm_gnode *const *deps = NULL;
    size_t ndeps = 0;
    if (crm_capture_any())
        crm_capture_info(stream, &status, NULL, &g, &deps, &ndeps);
    if (status == cudaStreamCaptureStatusNone)
        return 0;
    void *p = NULL;
    uint64_t again = status == cudaStreamCaptureStatusActive ? crm__reusable(g, deps, ndeps, size) : 0;
    if (again != 0) { /* an address of the graph the capture freed before: taken again */
        crm_gmem_node args = {again, size};
        crm_gmem_hold(again);
        if (!crm_capture_step(stream, CU_GRAPH_NODE_TYPE_MEM_ALLOC, crm_gmem_alloc_step, &args, sizeof args, err) ||
            *err != cudaSuccess) {
            crm_gmem_release(again);
            *err = *err != cudaSuccess ? *err : cudaErrorStreamCaptureInvalidated;
            return 1;
        }
        *dptr = (CUdeviceptr)again;
        return 1;
    }
    *err = status == cudaStreamCaptureStatusActive ? crm_device_alloc(&p, size) : cudaErrorStreamCaptureInvalidated;
    if (*err != cudaSuccess)
        return 1;
    crm_gmem_node args = {(uint64_t)(uintptr_t)p, size};
    if (crm_gmem_add(args.ptr, size) != 0) {
        cudaFree(p);
        *err = cudaErrorMemoryAllocation;
        return 1;
    }
    if (!crm_capture_step(stream, CU_GRAPH_NODE_TYPE_MEM_ALLOC, crm_gmem_alloc_step, &args, sizeof args, err) ||
        *err != cudaSuccess) {
        crm_gmem_free(args.ptr);
        crm_gmem_release(args.ptr);
        *err = *err != cudaSuccess ? *err : cudaErrorStreamCaptureInvalidated;
        return 1;
    }
    *dptr = (CUdeviceptr)args.ptr;
    return 1;
}

int crm_graph_capture_free(uint64_t stream, CUdeviceptr dptr, cudaError_t *err)
{
    if (!crm_capture_on(stream))
        return 0;
    crm_gmem_node args = {(uint64_t)dptr, 0};
    if (!crm_gmem_known(args.ptr)) {
        *err = cudaErrorInvalidValue; /* a graph frees only memory a graph allocated */
        return 1;
    }
    if (!crm_capture_step(stream, CU_GRAPH_NODE_TYPE_MEM_FREE, crm_gmem_free_step, &args, sizeof args, err))
        *err = cudaErrorStreamCaptureInvalidated;
    return 1;
}

/* The allocation a node's parameters ask for: device memory of the thread's device. */
static cudaError_t crm__alloc_params(const struct cudaMemAllocNodeParams *p)
{
    if (p == NULL || p->bytesize == 0 || p->poolProps.allocType != cudaMemAllocationTypePinned ||
        p->poolProps.location.type != cudaMemLocationTypeDevice)
        return cudaErrorInvalidValue;
    return p->poolProps.location.id == crm_thread_device() ? cudaSuccess : cudaErrorInvalidValue;
}

/* A node of type in graph after deps, filled by fill(node, arg), kept on success. */
static cudaError_t crm__add_mem(cudaGraphNode_t *pNode, cudaGraph_t graph, const cudaGraphNode_t *deps, size_t n,
                                CUgraphNodeType type, struct cudaMemAllocNodeParams *alloc, uint64_t free_ptr)
{
    crm_drv_runtime_bind();
    if (pNode == NULL || !crm_graph_live(graph) || (n > 0 && deps == NULL))
        return cudaErrorInvalidValue;
    for (size_t i = 0; i < n; i++)
        if (!crm_graph_has(graph, deps[i]))
            return cudaErrorInvalidValue;
    crm_gnode *node = crm_graph_add(graph, type, deps, n);
    if (node == NULL)
        return cudaErrorMemoryAllocation;
    cudaError_t err = alloc != NULL ? crm__alloc_node(node, alloc->bytesize, &alloc->dptr)
                                    : crm__free_node(node, free_ptr);
    if (err != cudaSuccess)
        crm_graph_drop_last(graph);
    else
        *pNode = node;
    return err;
}

CRM_EXPORT cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                                struct cudaMemAllocNodeParams *nodeParams)
{
    cudaError_t err = crm__alloc_params(nodeParams);
    if (err == cudaSuccess)
        err = crm__add_mem(pGraphNode, graph, pDependencies, numDependencies, CU_GRAPH_NODE_TYPE_MEM_ALLOC,
                           nodeParams, 0);
    return crm_set_error(err);
}

CRM_EXPORT cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                               const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                               void *dptr)
{
    return crm_set_error(crm__add_mem(pGraphNode, graph, pDependencies, numDependencies, CU_GRAPH_NODE_TYPE_MEM_FREE,
                                      NULL, (uint64_t)(uintptr_t)dptr));
}

CRM_EXPORT cudaError_t cudaGraphMemAllocNodeGetParams(cudaGraphNode_t node, struct cudaMemAllocNodeParams *out)
{
    if (node == NULL || out == NULL || node->type != CU_GRAPH_NODE_TYPE_MEM_ALLOC || node->args == NULL)
        return crm_set_error(cudaErrorInvalidValue);
    const crm_gmem_node *m = node->args;
    memset(out, 0, sizeof *out);
    out->poolProps.allocType = cudaMemAllocationTypePinned;
    out->poolProps.location.type = cudaMemLocationTypeDevice;
    out->poolProps.location.id = crm_thread_device();
    out->bytesize = m->size;
    out->dptr = (void *)(uintptr_t)m->ptr;
    return cudaSuccess;
}

CRM_EXPORT cudaError_t cudaGraphMemFreeNodeGetParams(cudaGraphNode_t node, void *dptr_out)
{
    if (node == NULL || dptr_out == NULL || node->type != CU_GRAPH_NODE_TYPE_MEM_FREE || node->args == NULL)
        return crm_set_error(cudaErrorInvalidValue);
    void *p = (void *)(uintptr_t)((const crm_gmem_node *)node->args)->ptr;
    memcpy(dptr_out, &p, sizeof p);
    return cudaSuccess;
}

/* ---- the device's graph memory ------------------------------------------------------ */

/* The driver's check of a device number: its codes are the runtime's. */
static cudaError_t crm__check_device(int device)
{
    crm_drv_runtime_bind();
    return (cudaError_t)crm_drv_check_device(device);
}

/* Graph memory is allocated whole when its node is made and nothing is kept in
 * reserve: used and reserved memory are the same. */
CRM_EXPORT cudaError_t cudaDeviceGetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attr, void *value)
{
    uint64_t current, high;
    cudaError_t err = crm__check_device(device);
    if (err == cudaSuccess && value == NULL)
        err = cudaErrorInvalidValue;
    if (err != cudaSuccess)
        return crm_set_error(err);
    crm_gmem_usage(&current, &high);
    switch (attr) {
    case cudaGraphMemAttrUsedMemCurrent:
    case cudaGraphMemAttrReservedMemCurrent:
        memcpy(value, &current, sizeof current);
        return cudaSuccess;
    case cudaGraphMemAttrUsedMemHigh:
    case cudaGraphMemAttrReservedMemHigh:
        memcpy(value, &high, sizeof high);
        return cudaSuccess;
    default:
        return crm_set_error(cudaErrorInvalidValue);
    }
}

/* Only the high watermarks can be set, and only to 0 (reset to what is used now). */
CRM_EXPORT cudaError_t cudaDeviceSetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attr, void *value)
{
    uint64_t zero = 1;
    cudaError_t err = crm__check_device(device);
    if (err == cudaSuccess && value != NULL)
        memcpy(&zero, value, sizeof zero);
    if (err == cudaSuccess &&
        ((attr != cudaGraphMemAttrUsedMemHigh && attr != cudaGraphMemAttrReservedMemHigh) || zero != 0))
        err = cudaErrorInvalidValue;
    if (err != cudaSuccess)
        return crm_set_error(err);
    crm_gmem_reset_high();
    return cudaSuccess;
}

/* Nothing is kept in reserve: there is nothing to trim. */
CRM_EXPORT cudaError_t cudaDeviceGraphMemTrim(int device)
{
    return crm_set_error(crm__check_device(device));
}

/* ---- the driver's twins ------------------------------------------------------------ */

CRM_EXPORT CUresult cuGraphAddMemAllocNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *deps,
                                           size_t n, CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
    CRM_DRV_IN_CTX(cudaGraphAddMemAllocNode(phGraphNode, hGraph, deps, n, (struct cudaMemAllocNodeParams *)p));
}

CRM_EXPORT CUresult cuGraphAddMemFreeNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *deps, size_t n,
                                          CUdeviceptr dptr)
{
    CRM_DRV_IN_CTX(cudaGraphAddMemFreeNode(phGraphNode, hGraph, deps, n, (void *)(uintptr_t)dptr));
}

CRM_EXPORT CUresult cuGraphMemAllocNodeGetParams(CUgraphNode hNode, CUDA_MEM_ALLOC_NODE_PARAMS *out)
{
    return CRM_DRV_RT(cudaGraphMemAllocNodeGetParams(hNode, (struct cudaMemAllocNodeParams *)out));
}

CRM_EXPORT CUresult cuGraphMemFreeNodeGetParams(CUgraphNode hNode, CUdeviceptr *dptr_out)
{
    return CRM_DRV_RT(cudaGraphMemFreeNodeGetParams(hNode, dptr_out));
}

CRM_EXPORT CUresult cuDeviceGetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void *value)
{
    return CRM_DRV_RT(cudaDeviceGetGraphMemAttribute(device, (enum cudaGraphMemAttributeType)attr, value));
}

CRM_EXPORT CUresult cuDeviceSetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void *value)
{
    return CRM_DRV_RT(cudaDeviceSetGraphMemAttribute(device, (enum cudaGraphMemAttributeType)attr, value));
}

CRM_EXPORT CUresult cuDeviceGraphMemTrim(CUdevice device) { return CRM_DRV_RT(cudaDeviceGraphMemTrim(device)); }
