/* crm_graph.h -- CUDA graphs on the client: graphs and their nodes, and stream
 * capture into them (client/crm_capture.c); executable graphs are
 * client/crm_graph_exec.h's.
 *
 * A node is one of two things. Device work (a kernel, a memset, a device-to-device
 * copy, a cuBLAS or cuDNN call, an event record or wait) is the call it would have
 * queued, kept as its XDR encoding: an executable graph hands these to the server
 * once, and each launch runs them there with one queued call. Work that touches
 * this process's memory (a copy from or to host memory, a host function) is a
 * client step: a function and a copy of its arguments, run again at each launch,
 * so each replay reads and writes the host bytes of its moment. A conditional node
 * holds its handle (client/crm_graph_cond.h) and its body graphs. Locked by the
 * caller: one graph is used by one thread at a time, as CUDA requires. */
#ifndef CRM_GRAPH_H
#define CRM_GRAPH_H

#include <stddef.h>
#include <stdint.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include "crm_api.h"
#include "client/crm_graph_cond.h"

/* A client step: runs the node's work on stream (a wire id); its arguments are
 * the node's copy. */
typedef cudaError_t (*crm_gstep_fn)(const void *args, uint64_t stream);

struct CUgraphNode_st {
    struct CUgraph_st *graph;
    CUgraphNodeType type;
    unsigned index;                   /* position in graph->nodes */
    struct CUgraphNode_st **deps;     /* the nodes it runs after */
    unsigned ndeps, deps_cap;
    char *record;                     /* device work: the XDR of its crm_call */
    unsigned record_len;
    crm_gstep_fn step;                /* a client step, when record is NULL */
    void *args;                       /* the step's arguments, owned */
    size_t args_len;
    struct CUgraph_st *child;         /* a child graph node's graph, owned */
    void *meta;                       /* what the node was made from, for its GetParams
                                         (interpose/crm_rt_graph_get.c), owned, or NULL */
    size_t meta_len;
    struct CUgraph_st **bodies;       /* a conditional node's body graphs, owned (the
                                         array is its params' phGraph_out) */
    unsigned nbodies;
    int cond_type;                    /* cudaGraphCondType */
    crm_gcond *cond;                  /* its handle, held */
    int disabled;                     /* in an executable graph's copy: disabled
                                         (cudaGraphNodeSetEnabled), run as an empty node */
};

struct CUgraph_st {
    struct CUgraphNode_st **nodes;    /* in creation order */
    unsigned count, cap;
    crm_gcond **conds;                /* conditional handles made for it, held */
    unsigned nconds, conds_cap;
};

typedef struct CUgraph_st crm_graph;
typedef struct CUgraphNode_st crm_gnode;

/* Graphs (crm_graph_new registers them) and executable graphs alive, so a handle
 * a program passes is checked before it is used: 1 when p is one. */
#define CRM_LIVE_GRAPH 1
#define CRM_LIVE_EXEC 2
int crm_graph_live(const void *p);
int crm_gexec_live(const void *p);
int crm_graph_live_add(const void *p, int kind);
void crm_graph_live_del(const void *p);

crm_graph *crm_graph_new(void);
void crm_graph_free(crm_graph *g);
/* A copy of g with the same nodes and edges; NULL when memory runs out. *map, when
 * not NULL, receives an array (caller frees) of the copy's node for each of g's. */
crm_graph *crm_graph_clone(const crm_graph *g, crm_gnode ***map);
/* 1 when n is a node of g. */
int crm_graph_has(const crm_graph *g, const crm_gnode *n);
/* Adds a node of type that runs after deps[0..ndeps), all nodes of g (the caller
 * checked); NULL when memory runs out. */
crm_gnode *crm_graph_add(crm_graph *g, CUgraphNodeType type, crm_gnode *const *deps, size_t ndeps);
/* Removes g's last node, which no other node depends on. */
void crm_graph_drop_last(crm_graph *g);
/* items (count of *cap, each size bytes) with room for one more: itself, or moved
 * to a larger block (*cap updated); NULL when memory runs out (items stays). */
void *crm_grow(void *items, unsigned *cap, unsigned count, size_t size);
/* Holds handle c for g (cudaGraphConditionalHandleCreate): 0, or -1 out of memory. */
int crm_graph_add_cond(crm_graph *g, crm_gcond *c);
/* The handle of g whose value is at `cell`, or NULL. */
crm_gcond *crm_graph_find_cond(const crm_graph *g, uint64_t cell);
/* Makes n a conditional node of `type` on handle c with nbodies empty body
 * graphs: 0, or -1 out of memory. */
int crm_gnode_set_cond(crm_gnode *n, crm_gcond *c, int type, unsigned nbodies);
/* The call n holds as device work, decoded into *call (the caller frees it with
 * xdr_free): 0, or -1 when it holds none, or none of api (-1: any). */
int crm_gnode_decode(const crm_gnode *n, int api, crm_call *call);
/* The XDR encoding of call in *buf (the caller frees), *len bytes: 0, or -1. */
int crm_call_encode(crm_call *call, char **buf, unsigned *len);
/* Makes n device work: the encoding of call. 0, or -1 (cannot encode, memory). */
int crm_gnode_set_record(crm_gnode *n, crm_call *call);
/* Makes n a client step with a copy of args[0..len). 0, or -1 out of memory. */
int crm_gnode_set_step(crm_gnode *n, crm_gstep_fn step, const void *args, size_t len);
/* Keeps a copy of meta[0..len) with n, replacing what it had: 0, or -1. */
int crm_gnode_set_meta(crm_gnode *n, const void *meta, size_t len);
/* Adds the edge from -> to (both of one graph): 0, 1 when it exists already, -1
 * when memory runs out. */
int crm_graph_add_edge(crm_gnode *from, crm_gnode *to);
/* Removes the edge: 0, or -1 when there is none. */
int crm_graph_remove_edge(crm_gnode *from, crm_gnode *to);
/* Marks in seen[] (by index; room for the graph's count) every node that
 * from[0..n) depend on, themselves included; nodes already marked are not walked
 * again. Iterative: any depth of graph. 0, or -1 when memory runs out. */
int crm_graph_mark_ancestors(crm_gnode *const *from, size_t n, unsigned char *seen);
/* Every node of g in an order where each follows its dependencies, ties broken
 * by creation; order has room for g->count. 0, or -1 when the edges form a cycle. */
int crm_graph_order(const crm_graph *g, crm_gnode **order);
/* The node type of a captured call (a kernel for a library call). */
CUgraphNodeType crm_graph_call_type(const crm_call *call);

/* ---- stream capture (client/crm_capture.c) ----------------------------------------- */

/* Nonzero while any capture is under way (cheap: the hot path asks first). */
int crm_capture_any(void);
/* Sets the calling thread's capture mode (cudaThreadExchangeStreamCaptureMode)
 * and returns the one it had. */
int crm_capture_exchange_mode(int mode);
/* Starts capturing wire stream `stream` into a new graph, in `mode`
 * (cudaStreamCaptureMode), for the calling thread. */
cudaError_t crm_capture_begin(uint64_t stream, int mode);
/* Starts capturing `stream` into graph g, which the caller keeps owning, after
 * deps[0..ndeps) of it (cudaStreamBeginCaptureToGraph). */
cudaError_t crm_capture_begin_to(uint64_t stream, int mode, crm_graph *g, crm_gnode *const *deps, size_t ndeps);
/* Ends the capture `stream` began: *graph gets it, or NULL with the error when the
 * capture was invalidated (the graph is then freed). graph may be NULL for a
 * capture into the caller's graph (cudaErrorInvalidValue for another). */
cudaError_t crm_capture_end(uint64_t stream, crm_graph **graph);
/* What cudaStreamGetCaptureInfo answers about `stream`; any of the outputs but
 * status may be NULL. deps stays valid until the stream's next capture call. */
cudaError_t crm_capture_info(uint64_t stream, enum cudaStreamCaptureStatus *status, unsigned long long *id,
                             crm_graph **graph, crm_gnode *const **deps, size_t *ndeps);
/* Adds deps to the nodes `stream`'s next captured work runs after, or replaces
 * them when set (cudaStreamUpdateCaptureDependencies). */
cudaError_t crm_capture_update_deps(uint64_t stream, crm_gnode *const *deps, size_t ndeps, int set);
/* When `stream` is capturing, adds call to its graph as device work and returns 1
 * with the outcome in *err; 0 when it is not (the caller sends the call). An
 * event record only marks the event, and a wait on an event recorded in a capture
 * joins the waiting stream to it, as CUDA does. */
int crm_capture_call(uint64_t stream, crm_call *call, cudaError_t *err);
/* When `stream` is capturing, adds a client step of `type` and returns 1 with the
 * outcome in *err; 0 when it is not. */
int crm_capture_step(uint64_t stream, CUgraphNodeType type, crm_gstep_fn step, const void *args, size_t len,
                     cudaError_t *err);
/* 1 when `stream` takes part in a capture (active or invalidated). */
int crm_capture_on(uint64_t stream);
/* The node the last call captured on `stream` made, or NULL (it is capturing
 * nothing, or its last work joined several nodes). */
crm_gnode *crm_capture_last(uint64_t stream);
/* When `stream` is capturing, adds a child-graph node holding a copy of child (an
 * executable graph launched into the capture) and returns 1 with the outcome in
 * *err; 0 when it is not. */
int crm_capture_child(uint64_t stream, const crm_graph *child, cudaError_t *err);
/* The error a call that would wait for `stream` or `event` (CRM_WIRE_BAD_HANDLE:
 * none), or that is unsafe during capture (cudaMalloc, a synchronous copy,
 * cudaDeviceSynchronize: both none), must return now, as a GPU's runtime returns
 * it: cudaErrorStreamCaptureUnsupported when it would wait for capturing work or
 * is unsafe under the captures under way (the capture is invalidated then);
 * cudaSuccess when it may go on. */
cudaError_t crm_capture_refuse_sync(uint64_t stream, uint64_t event);
/* Forgets every capture and captured event (after cudaDeviceReset). */
void crm_capture_reset(void);

#endif
