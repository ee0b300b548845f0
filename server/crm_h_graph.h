/* crm_h_graph.h -- what the graph program handlers (server/crm_h_graph.c) share
 * with the conditional nodes' (server/crm_h_graph_cond.c). */
#ifndef CRM_H_GRAPH_H
#define CRM_H_GRAPH_H

#include <stdint.h>
#include <cuda_runtime_api.h>
#include "server/crm_session.h"

/* Bodies of conditional nodes inside one another, at most. */
#define CRM_GRAPH_DEPTH_MAX 16

/* Runs the session's program `program` inside the program running now, on its
 * stream (0: an empty body, nothing to run): its first failure, or
 * cudaErrorInvalidValue when no program runs or there is no such program. */
cudaError_t crm_graph_program_run(crm_session *s, uint64_t program);
/* 1 when kernels of this backend can set a conditional node's value (the
 * emulated device: a handle is the address of the value). */
int crm_graph_cond_supported(void);

#endif
