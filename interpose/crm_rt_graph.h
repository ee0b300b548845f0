/* crm_rt_graph.h -- what the graph API (interpose/crm_rt_graph*.c) asks of the
 * rest of the shim: graph nodes for a copy and a host function, made as the
 * eager calls would run them (interpose/crm_rt_copy.c, crm_drv_stream.c). */
#ifndef CRM_RT_GRAPH_H
#define CRM_RT_GRAPH_H

#include <cuda_runtime_api.h>
#include "client/crm_graph.h"

/* Makes n a pitched copy: device work between two device regions the client
 * knows, else a client step run at each launch. cudaErrorInvalidValue,
 * cudaErrorInvalidPitchValue or cudaErrorInvalidMemcpyDirection as cudaMemcpy2D. */
cudaError_t crm_graph_copy_node(crm_gnode *n, void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                size_t height, enum cudaMemcpyKind kind);
/* A memcpy node's copy as 3D parameters (a copy with host memory or between device
 * regions, made by a node or a capture): 0, or -1 when n holds no copy. */
int crm_graph_copy_params(const crm_gnode *n, struct cudaMemcpy3DParms *out);
/* Makes n a host node: fn(data) runs once the work before it is done. */
cudaError_t crm_graph_host_node(crm_gnode *n, cudaHostFn_t fn, void *data);

/* Make an existing node the kernel launch, memset or copy the runtime's
 * parameters describe (interpose/crm_rt_graph.c), as adding one does. */
cudaError_t crm_graph_fill_kernel(crm_gnode *n, const struct cudaKernelNodeParams *p);
cudaError_t crm_graph_fill_memset(crm_gnode *n, const struct cudaMemsetParams *p);
cudaError_t crm_graph_fill_memcpy3d(crm_gnode *n, const struct cudaMemcpy3DParms *p);

/* A kernel node's launch attributes (interpose/crm_rt_graph_attr.c): its list in
 * out (CRM_KATTRS_MAX room), *count of them; and n's list replaced. */
cudaError_t crm_graph_kernel_attrs(const crm_gnode *n, crm_launch_attr *out, unsigned *count);
cudaError_t crm_graph_kernel_set_attrs(crm_gnode *n, const crm_launch_attr *attrs, unsigned count);

/* Keeps with kernel node n what its launch was made from (the function as the
 * program named it, the geometry, the packed parameters of k's layout), for
 * cudaGraphKernelNodeGetParams (interpose/crm_rt_graph_get.c). */
struct crm_launch_req;
struct crm_kready;
void crm_graph_kernel_meta(crm_gnode *n, const struct crm_launch_req *r, const struct crm_kready *k, const char *blob);
/* Keeps the function and CUkernel the driver's kernel node parameters named (either
 * may be NULL), to give them back as they were given. */
void crm_graph_kernel_meta_kern(crm_gnode *n, const void *func, const void *kern);

/* The node-adding calls the runtime's and the driver's graph APIs share
 * (interpose/crm_rt_graph.c): they check, add, fill, and set the last error. */
cudaError_t crm_graph_memset_node(cudaGraphNode_t *pNode, cudaGraph_t graph, const cudaGraphNode_t *deps, size_t n,
                                  const struct cudaMemsetParams *p);
cudaError_t crm_graph_memcpy_node(cudaGraphNode_t *pNode, cudaGraph_t graph, const cudaGraphNode_t *deps, size_t n,
                                  void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                  size_t height, enum cudaMemcpyKind kind);
/* A conditional node of graph on a handle made for it, with p->size empty bodies
 * given back in p->phGraph_out (interpose/crm_rt_graph_cond.c). */
cudaError_t crm_graph_cond_node(cudaGraphNode_t *pNode, cudaGraph_t graph, const cudaGraphNode_t *deps, size_t n,
                                struct cudaConditionalNodeParams *p);
/* cudaMallocAsync / cudaFreeAsync on a capturing stream become alloc and free
 * nodes of its graph (interpose/crm_rt_graph_mem.c): 1 when `stream` captures,
 * the call's outcome in *err; 0 when it does not. */
int crm_graph_capture_alloc(uint64_t stream, CUdeviceptr *dptr, size_t size, cudaError_t *err);
int crm_graph_capture_free(uint64_t stream, CUdeviceptr dptr, cudaError_t *err);

/* The executable-graph calls both APIs share (interpose/crm_rt_graph_exec.c);
 * they return the error without setting the last one. */
cudaError_t crm_graph_instantiate_rt(cudaGraphExec_t *pExec, cudaGraph_t graph, unsigned long long flags);
cudaError_t crm_graph_launch_rt(cudaGraphExec_t exec, cudaStream_t stream, int ptsz);
cudaError_t crm_graph_update_rt(cudaGraphExec_t exec, cudaGraph_t graph, cudaGraphExecUpdateResultInfo *info);

#endif
