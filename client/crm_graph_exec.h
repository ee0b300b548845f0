/* crm_graph_exec.h -- executable graphs (cudaGraphExec_t): a graph's nodes in an
 * order that respects its edges, each run of device work stored in the session as
 * a program (protocol/cudart.api, 900) and each client step kept with its
 * arguments. A launch is one queued call per program and the client steps between
 * them: a graph of device work alone costs no round trip and the same bytes on the
 * wire whatever its size. A conditional node is a record of its program naming the
 * programs of its bodies, which hold device work only, as CUDA requires. An update
 * sends what changed: made anew with the same program ids, each program gets the
 * byte ranges that differ. */
#ifndef CRM_GRAPH_EXEC_H
#define CRM_GRAPH_EXEC_H

#include "client/crm_graph.h"

/* One thing a launch does: run a stored program, or a client step. */
typedef struct crm_estep {
    uint64_t program;      /* the session's program id, 0 for a step */
    crm_gstep_fn step;
    void *args;            /* the step's arguments, owned */
} crm_estep;

/* A program the session stores: the steps' and those of conditional nodes' bodies
 * (which the programs name). The client keeps its bytes, so that a change of the
 * graph sends only the bytes that differ. */
typedef struct crm_eprog {
    uint64_t id;
    char *image;           /* its records, back to back */
    size_t len, cap;
    size_t *cuts;          /* where its upload pieces end: each whole records */
    unsigned ncuts, cuts_cap;
    size_t piece;          /* bytes of the last piece so far */
} crm_eprog;

struct CUgraphExec_st {
    crm_estep *steps;
    unsigned nsteps, cap;
    crm_eprog *progs;
    unsigned nprogs, progs_cap;
    int stored;            /* the programs were handed to the session */
    unsigned nodes;        /* the graph's node count when instantiated (cudaGraphExecUpdate) */
    unsigned long long flags; /* cudaGraphInstantiateFlags it was made with */
    crm_graph *source;     /* a copy of the graph it was made from, node for node: the
                              exec-node setters change it, then the work is made anew */
    const crm_graph *origin; /* that graph (compared, never used: it may be gone), whose
                              nodes alone the exec-node setters accept */
};

typedef struct CUgraphExec_st crm_gexec;

/* Makes an executable graph of g, queueing its programs' upload. cudaSuccess, or
 * cudaErrorInvalidValue (a cycle), cudaErrorNotSupported (a conditional body with
 * host work), cudaErrorMemoryAllocation. */
cudaError_t crm_graph_instantiate(const crm_graph *g, crm_gexec **out);
/* Runs e on wire stream `stream`: queued calls and client steps, in order. */
cudaError_t crm_graph_launch(const crm_gexec *e, uint64_t stream);
/* Replaces e's work with g's, which must have as many nodes as e was made from
 * (cudaGraphExecUpdate): cudaSuccess or cudaErrorGraphExecUpdateFailure. */
cudaError_t crm_graph_exec_update(crm_gexec *e, const crm_graph *g);
/* e's copy of graph node `orig`, a node of the graph e was made from (or last
 * updated from); NULL when orig is another graph's or of another type. */
crm_gnode *crm_gexec_node(const crm_gexec *e, const crm_gnode *orig);
/* Makes e's work anew from its copy of the graph, after an exec-node setter
 * changed a node of it: the session's programs get the bytes that changed
 * (crm_graph_patch), or anew those whose size changed. cudaSuccess or
 * cudaErrorMemoryAllocation. */
cudaError_t crm_gexec_rebuild(crm_gexec *e);
/* Frees e and queues the release of its programs. */
void crm_graph_exec_free(crm_gexec *e);

#endif
