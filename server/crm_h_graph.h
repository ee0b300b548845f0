/* crm_h_graph.h -- what the graph program handlers (server/crm_h_graph.c) share
 * with the conditional nodes' (server/crm_h_graph_cond.c) and the GPU's graphs
 * (server/crm_h_graph_gpu.c). */
#ifndef CRM_H_GRAPH_H
#define CRM_H_GRAPH_H

#include <stdint.h>
#include <cuda_runtime_api.h>
#include "server/crm_session.h"

/* A stored program: the XDR encodings of its calls, back to back; on a GPU with
 * --graph-capture, the CUDA graph it was made into (server/crm_h_graph_gpu.c). */
typedef struct crm_gprogram {
    char *buf;
    size_t len;
    int unchecked;         /* patched since it was last checked whole */
    int capture;           /* 0: not tried, 1: exec holds it, -1: replayed call by call */
    void *exec;            /* its CUgraphExec */
} crm_gprogram;

/* --graph-capture (server/main.c sets it before sessions fork). */
extern int crm_graph_capture_on;

/* Bodies of conditional nodes inside one another, at most. */
#define CRM_GRAPH_DEPTH_MAX 16

/* Runs the session's program `program` inside the program running now, on its
 * stream (0: an empty body, nothing to run): its first failure, or
 * cudaErrorInvalidValue when no program runs or there is no such program. */
cudaError_t crm_graph_program_run(crm_session *s, uint64_t program);
/* Runs p's calls in order, each on the session's replay stream (the caller set
 * s->replaying and it): the first failure. */
cudaError_t crm_graph_replay(crm_session *s, crm_gprogram *p);
/* On a GPU with --graph-capture: runs p as one CUDA graph on `on` (made at its first
 * run) and returns 1 with the launch's outcome in *err; 0 when p is to be replayed
 * (no GPU, no capture, a program a capture refuses). */
int crm_graph_gpu_run(crm_session *s, crm_gprogram *p, cudaStream_t on, cudaError_t *err);
/* Forgets p's CUDA graph (p changed, or goes). */
void crm_graph_gpu_forget(crm_gprogram *p);
/* 1 when kernels of this backend can set a conditional node's value (the
 * emulated device: a handle is the address of the value). */
int crm_graph_cond_supported(void);

#endif
