/* crm_graph_mem.h -- memory that graphs allocate (memory alloc and free nodes,
 * cudaMallocAsync and cudaFreeAsync captured). The address an alloc node gives is
 * fixed for its graph's life, as CUDA's is, so the memory is allocated when the
 * node is made and kept while any graph or executable graph holds the node; a
 * free, in a graph or by the program (cudaFree, cudaFreeAsync), only marks it
 * free, and it goes back to the device once nothing holds it. The device's graph
 * memory attributes count it. Thread-safe. */
#ifndef CRM_GRAPH_MEM_H
#define CRM_GRAPH_MEM_H

#include <stddef.h>
#include <stdint.h>

/* An alloc node's arguments (its node's args). */
typedef struct crm_gmem_node {
    uint64_t ptr;
    uint64_t size;
} crm_gmem_node;

/* Remembers allocation [ptr, ptr+size) as a graph's, held once. 0, or -1. */
int crm_gmem_add(uint64_t ptr, uint64_t size);
/* One more holder (a copy of the graph, an executable graph). */
void crm_gmem_hold(uint64_t ptr);
/* One holder fewer; the last one gives memory marked free back to the device. */
void crm_gmem_release(uint64_t ptr);
/* 1 when ptr is a graph's allocation. */
int crm_gmem_known(uint64_t ptr);
/* The program or a graph freed ptr: 1 when it is a graph's allocation (marked
 * free, and given back to the device when nothing holds it), 0 when it is not. */
int crm_gmem_free(uint64_t ptr);
/* The client steps of alloc and free nodes (args: a crm_gmem_node), run at their
 * point of each launch: an alloc node's memory is the program's again (a free
 * before it no longer counts), a free node's is marked free. */
#include <cuda_runtime_api.h>
cudaError_t crm_gmem_alloc_step(const void *args, uint64_t stream);
cudaError_t crm_gmem_free_step(const void *args, uint64_t stream);
/* Bytes graphs hold now and at most since the last reset (the attributes' used
 * and reserved memory are the same: nothing is kept in reserve). */
void crm_gmem_usage(uint64_t *current, uint64_t *high);
void crm_gmem_reset_high(void);

#endif
