/* check_graph.c -- unit tests of the client's CUDA graphs (client/crm_graph.h): the
 * order nodes run in, copies, edges, and stream capture: which calls a capture
 * takes, how events fork and join streams, the capture modes' rules on unsafe
 * calls, and what ends a capture invalidated or unjoined. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include "client/crm_graph.h"
#include "client/crm_graph_mem.h"
#include "client/crm_handles.h"
#include "client/crm_ptrmap.h"
#include "crm_client_gen.h"
#include "tests/unit/crm_check.h"

/* The thread serial the capture code asks for: the test plays several threads. */
static uint64_t crm__me = 1;
uint64_t crm_thread_serial(void)
{
    return crm__me;
}

/* What graph memory gives back to the device, recorded instead of sent. */
static uint64_t crm__device_freed;
int crm_ptrmap_remove(enum crm_mem_kind kind, uint64_t base, crm_range *out)
{
    (void)kind, (void)out;
    return base != 0 ? 0 : -1;
}

cudaError_t crm_rpc_cudaFree_queued(uint64_t devPtr)
{
    crm__device_freed = devPtr;
    return cudaSuccess;
}

/* Streams the test made non-blocking (ids below 64); the others are blocking, as
 * a stream created without flags is. */
static uint64_t crm__nonblocking;
int crm_stream_nonblocking(uint64_t id)
{
    return id < 64 && ((crm__nonblocking >> id) & 1);
}

/* A conditional handle's first store, recorded instead of sent. */
static uint64_t crm__cond_set_cell;
static unsigned crm__cond_set_value;
cudaError_t crm_rpc_crm_graph_cond_set(uint64_t cell, unsigned int value)
{
    crm__cond_set_cell = cell;
    crm__cond_set_value = value;
    return cudaSuccess;
}

static crm_call crm__memset_call(uint64_t stream, int value)
{
    crm_call call = {.api = CRM_API_crm_memset};
    call.crm_call_u.crm_memset = (crm_args_crm_memset){.dst = 0x1000, .pitch = 64, .value = value, .width = 64,
                                                       .height = 1, .stream = stream, .async = 1};
    return call;
}

static crm_call crm__event_call(int api, uint64_t stream, uint64_t event)
{
    crm_call call = {.api = api};
    if (api == CRM_API_cudaEventRecord)
        call.crm_call_u.cudaEventRecord = (crm_args_cudaEventRecord){.event = event, .stream = stream};
    else
        call.crm_call_u.cudaStreamWaitEvent = (crm_args_cudaStreamWaitEvent){.stream = stream, .event = event};
    return call;
}

/* Sends call on stream through the capture: 1 when it was taken, its error in *err. */
static int crm__take(uint64_t stream, crm_call call, cudaError_t *err)
{
    return crm_capture_call(stream, &call, err);
}

static int crm__position(crm_gnode **order, unsigned n, const crm_gnode *node)
{
    for (unsigned i = 0; i < n; i++)
        if (order[i] == node)
            return (int)i;
    return -1;
}

START_TEST(test_order_follows_edges_and_creation)
{
    crm_graph *g = crm_graph_new();
    crm_gnode *a = crm_graph_add(g, CU_GRAPH_NODE_TYPE_EMPTY, NULL, 0);
    crm_gnode *b = crm_graph_add(g, CU_GRAPH_NODE_TYPE_EMPTY, NULL, 0);
    crm_gnode *c = crm_graph_add(g, CU_GRAPH_NODE_TYPE_EMPTY, &b, 1);
    ck_assert_int_eq(crm_graph_add_edge(c, a), 0); /* a now runs after c, created before it */
    ck_assert_int_eq(crm_graph_add_edge(c, a), 1); /* already there */
    crm_gnode *order[3];
    ck_assert_int_eq(crm_graph_order(g, order), 0);
    ck_assert(order[0] == b && order[1] == c && order[2] == a);
    ck_assert_int_eq(crm_graph_add_edge(a, b), 0); /* b after a after c after b: a cycle */
    ck_assert_int_eq(crm_graph_order(g, order), -1);
    ck_assert_int_eq(crm_graph_remove_edge(a, b), 0);
    ck_assert_int_eq(crm_graph_remove_edge(a, b), -1);
    ck_assert_int_eq(crm_graph_order(g, order), 0);
    crm_graph_free(g);
}
END_TEST

/* The order of a large random graph is the one taking, each time, the earliest
 * made of the ready nodes (checked against that rule done the slow way). */
START_TEST(test_order_of_a_large_graph)
{
    enum { N = 300 };
    crm_graph *g = crm_graph_new();
    unsigned rank[N], seed = 12345;
    for (unsigned i = 0; i < N; i++)
        rank[i] = i;
    for (unsigned i = N - 1; i > 0; i--) { /* edges go up a random ranking: no cycle */
        seed = seed * 1103515245u + 12345u;
        unsigned j = (seed >> 8) % (i + 1), t = rank[i];
        rank[i] = rank[j], rank[j] = t;
    }
    for (unsigned i = 0; i < N; i++)
        crm_graph_add(g, CU_GRAPH_NODE_TYPE_EMPTY, NULL, 0);
    for (unsigned k = 0; k < 3 * N; k++) {
        seed = seed * 1103515245u + 12345u;
        unsigned a = (seed >> 8) % N, b = (seed >> 20) % N;
        if (rank[a] < rank[b])
            crm_graph_add_edge(g->nodes[a], g->nodes[b]);
    }
    crm_gnode *order[N];
    ck_assert_int_eq(crm_graph_order(g, order), 0);
    unsigned char done[N] = {0};
    for (unsigned placed = 0; placed < N; placed++) {
        unsigned pick = N;
        for (unsigned i = 0; i < N && pick == N; i++) {
            int ready = !done[i];
            for (unsigned d = 0; ready && d < g->nodes[i]->ndeps; d++)
                ready = done[g->nodes[i]->deps[d]->index];
            if (ready)
                pick = i;
        }
        ck_assert_uint_lt(pick, N);
        ck_assert_uint_eq(order[placed]->index, pick);
        done[pick] = 1;
    }
    crm_graph_free(g);
}
END_TEST

/* A chain of 200,000 nodes: its ancestors marked and its order found without
 * recursion as deep as the chain (a long capture). */
START_TEST(test_long_chain)
{
    enum { N = 200000 };
    crm_graph *g = crm_graph_new();
    crm_gnode *last = NULL;
    for (unsigned i = 0; i < N; i++)
        last = crm_graph_add(g, CU_GRAPH_NODE_TYPE_EMPTY, last != NULL ? &last : NULL, last != NULL);
    unsigned char *seen = calloc(N, 1);
    crm_gnode **order = malloc(N * sizeof *order);
    ck_assert_int_eq(crm_graph_mark_ancestors(&last, 1, seen), 0);
    unsigned marked = 0;
    for (unsigned i = 0; i < N; i++)
        marked += seen[i];
    ck_assert_uint_eq(marked, N);
    ck_assert_int_eq(crm_graph_order(g, order), 0);
    ck_assert(order[0] == g->nodes[0] && order[N - 1] == last);
    free(seen);
    free(order);
    crm_graph_free(g);
}
END_TEST

START_TEST(test_clone_keeps_nodes_edges_and_work)
{
    crm_graph *g = crm_graph_new();
    crm_call call = crm__memset_call(0, 7);
    crm_gnode *a = crm_graph_add(g, CU_GRAPH_NODE_TYPE_MEMSET, NULL, 0);
    ck_assert_int_eq(crm_gnode_set_record(a, &call), 0);
    crm_gnode *b = crm_graph_add(g, CU_GRAPH_NODE_TYPE_HOST, &a, 1);
    int word = 42;
    ck_assert_int_eq(crm_gnode_set_step(b, (crm_gstep_fn)NULL, &word, sizeof word), 0);
    ck_assert(b->record == NULL && b->args != NULL);
    crm_gnode **map = NULL;
    crm_graph *c = crm_graph_clone(g, &map);
    ck_assert_ptr_nonnull(c);
    ck_assert(crm_graph_live(c) && crm_graph_live(g) && !crm_gexec_live(c));
    ck_assert_uint_eq(c->count, 2);
    ck_assert(map[0] == c->nodes[0] && map[1] == c->nodes[1]);
    ck_assert_int_eq(c->nodes[0]->record_len, a->record_len);
    ck_assert_mem_eq(c->nodes[0]->record, a->record, a->record_len);
    ck_assert(c->nodes[1]->ndeps == 1 && c->nodes[1]->deps[0] == c->nodes[0]);
    ck_assert_int_eq(*(int *)c->nodes[1]->args, 42);
    /* a node made device work drops its step, and the other way round */
    ck_assert_int_eq(crm_gnode_set_record(c->nodes[1], &call), 0);
    ck_assert(c->nodes[1]->args == NULL && c->nodes[1]->record != NULL);
    free(map);
    crm_graph_free(c);
    ck_assert(!crm_graph_live(c));
    crm_graph_free(g);
}
END_TEST

START_TEST(test_capture_takes_work_of_its_stream_only)
{
    cudaError_t err;
    crm_graph *g;
    ck_assert(!crm_capture_any());
    ck_assert_int_eq(crm__take(5, crm__memset_call(5, 1), &err), 0);
    ck_assert_int_eq(crm_capture_begin(CRM_WIRE_LEGACY_STREAM, cudaStreamCaptureModeGlobal),
                     cudaErrorStreamCaptureUnsupported);
    ck_assert_int_eq(crm_capture_begin(5, cudaStreamCaptureModeGlobal), cudaSuccess);
    ck_assert_int_eq(crm_capture_begin(5, cudaStreamCaptureModeGlobal), cudaErrorIllegalState);
    ck_assert(crm_capture_any());
    ck_assert_int_eq(crm__take(6, crm__memset_call(6, 1), &err), 0); /* another stream: sent */
    ck_assert_int_eq(crm__take(5, crm__memset_call(5, 1), &err), 1);
    ck_assert_int_eq(err, cudaSuccess);
    ck_assert_int_eq(crm__take(5, crm__memset_call(5, 2), &err), 1);
    enum cudaStreamCaptureStatus status;
    unsigned long long id;
    crm_gnode *const *deps;
    size_t ndeps;
    crm_capture_info(5, &status, &id, &g, &deps, &ndeps);
    ck_assert(status == cudaStreamCaptureStatusActive && id > 0 && ndeps == 1 && g->count == 2);
    ck_assert(deps[0] == g->nodes[1] && g->nodes[1]->deps[0] == g->nodes[0]);
    ck_assert_int_eq(crm_capture_end(6, &g), cudaErrorIllegalState);
    ck_assert_int_eq(crm_capture_end(5, &g), cudaSuccess);
    ck_assert_uint_eq(g->count, 2);
    ck_assert_int_eq(g->nodes[0]->type, CU_GRAPH_NODE_TYPE_MEMSET);
    ck_assert(!crm_capture_any());
    crm_graph_free(g);
}
END_TEST

/* While a blocking stream captures, work on the legacy stream is refused with
 * cudaErrorStreamCaptureImplicit and invalidates the capture, a query of it is
 * refused and leaves the capture be; a non-blocking stream's capture lets the
 * legacy stream work. */
START_TEST(test_legacy_stream_and_blocking_captures)
{
    cudaError_t err;
    crm_graph *g;
    enum cudaStreamCaptureStatus status;
    crm__nonblocking = 1u << 7;
    ck_assert_int_eq(crm_capture_begin(7, cudaStreamCaptureModeGlobal), cudaSuccess); /* non-blocking */
    ck_assert_int_eq(crm_capture_info(CRM_WIRE_LEGACY_STREAM, &status, NULL, NULL, NULL, NULL), cudaSuccess);
    ck_assert_int_eq(crm__take(CRM_WIRE_LEGACY_STREAM, crm__memset_call(0, 1), &err), 0); /* sent */
    ck_assert_int_eq(crm_capture_end(7, &g), cudaSuccess);
    crm_graph_free(g);
    ck_assert_int_eq(crm_capture_begin(5, cudaStreamCaptureModeRelaxed), cudaSuccess); /* blocking */
    ck_assert_int_eq(crm_capture_info(CRM_WIRE_LEGACY_STREAM, &status, NULL, NULL, NULL, NULL),
                     cudaErrorStreamCaptureImplicit);
    ck_assert_int_eq(crm_capture_info(5, &status, NULL, NULL, NULL, NULL), cudaSuccess);
    ck_assert(status == cudaStreamCaptureStatusActive); /* a query leaves it be */
    ck_assert_int_eq(crm__take(CRM_WIRE_LEGACY_STREAM, crm__memset_call(0, 1), &err), 1);
    ck_assert_int_eq(err, cudaErrorStreamCaptureImplicit);
    ck_assert_int_eq(crm_capture_refuse_sync(CRM_WIRE_LEGACY_STREAM, CRM_WIRE_BAD_HANDLE),
                     cudaErrorStreamCaptureImplicit);
    ck_assert_int_eq(crm_capture_info(5, &status, NULL, NULL, NULL, NULL), cudaSuccess);
    ck_assert(status == cudaStreamCaptureStatusInvalidated);
    ck_assert_int_eq(crm_capture_end(5, &g), cudaErrorStreamCaptureInvalidated);
    ck_assert(!crm_capture_any());
    crm__nonblocking = 0;
}
END_TEST

START_TEST(test_events_fork_and_join_streams)
{
    cudaError_t err;
    crm_graph *g;
    enum cudaStreamCaptureStatus status;
    ck_assert_int_eq(crm_capture_begin(5, cudaStreamCaptureModeGlobal), cudaSuccess);
    crm__take(5, crm__memset_call(5, 1), &err);
    ck_assert_int_eq(crm__take(5, crm__event_call(CRM_API_cudaEventRecord, 5, 100), &err), 1); /* no node */
    ck_assert_int_eq(crm__take(6, crm__event_call(CRM_API_cudaStreamWaitEvent, 6, 100), &err), 1);
    crm_capture_info(6, &status, NULL, NULL, NULL, NULL);
    ck_assert_int_eq(status, cudaStreamCaptureStatusActive); /* 6 joined */
    ck_assert_int_eq(crm__take(6, crm__memset_call(6, 2), &err), 1);
    ck_assert_int_eq(crm_capture_end(6, &g), cudaErrorStreamCaptureUnmatched); /* 6 did not begin it */
    /* the capture is invalidated now; begin again and end it properly */
    ck_assert_int_eq(crm_capture_end(5, &g), cudaErrorStreamCaptureInvalidated);
    ck_assert_ptr_null(g);

    ck_assert_int_eq(crm_capture_begin(5, cudaStreamCaptureModeGlobal), cudaSuccess);
    crm__take(5, crm__memset_call(5, 1), &err);
    crm__take(5, crm__event_call(CRM_API_cudaEventRecord, 5, 100), &err);
    crm__take(6, crm__event_call(CRM_API_cudaStreamWaitEvent, 6, 100), &err);
    crm__take(6, crm__memset_call(6, 2), &err);
    crm__take(5, crm__memset_call(5, 3), &err);
    ck_assert_int_eq(crm_capture_end(5, &g), cudaErrorStreamCaptureUnjoined); /* 6's work never rejoined */

    ck_assert_int_eq(crm_capture_begin(5, cudaStreamCaptureModeGlobal), cudaSuccess);
    crm__take(5, crm__memset_call(5, 1), &err);
    crm__take(5, crm__event_call(CRM_API_cudaEventRecord, 5, 100), &err);
    crm__take(6, crm__event_call(CRM_API_cudaStreamWaitEvent, 6, 100), &err);
    crm__take(6, crm__memset_call(6, 2), &err);
    crm__take(5, crm__memset_call(5, 3), &err);
    crm__take(6, crm__event_call(CRM_API_cudaEventRecord, 6, 101), &err);
    crm__take(5, crm__event_call(CRM_API_cudaStreamWaitEvent, 5, 101), &err);
    crm__take(5, crm__memset_call(5, 4), &err); /* after both branches */
    ck_assert_int_eq(crm_capture_end(5, &g), cudaSuccess);
    ck_assert_uint_eq(g->count, 4);
    crm_gnode *order[4];
    ck_assert_int_eq(crm_graph_order(g, order), 0);
    ck_assert_uint_eq(g->nodes[1]->ndeps, 1); /* the fork: 6's memset after the first */
    ck_assert(g->nodes[1]->deps[0] == g->nodes[0]);
    ck_assert_uint_eq(g->nodes[3]->ndeps, 2); /* the join */
    ck_assert_int_eq(crm__position(order, 4, g->nodes[3]), 3);
    crm_capture_info(6, &status, NULL, NULL, NULL, NULL);
    ck_assert_int_eq(status, cudaStreamCaptureStatusNone);
    crm_graph_free(g);
}
END_TEST

START_TEST(test_waits_and_unsafe_calls_follow_the_modes)
{
    cudaError_t err;
    crm_graph *g;
    enum cudaStreamCaptureStatus status;
    ck_assert_int_eq(crm_capture_refuse_sync(5, CRM_WIRE_BAD_HANDLE), cudaSuccess); /* nothing captures */
    crm__me = 1;
    ck_assert_int_eq(crm_capture_begin(5, cudaStreamCaptureModeGlobal), cudaSuccess);
    ck_assert_int_eq(crm_capture_refuse_sync(6, CRM_WIRE_BAD_HANDLE), cudaSuccess); /* another stream */
    ck_assert_int_eq(crm_capture_refuse_sync(5, CRM_WIRE_BAD_HANDLE), cudaErrorStreamCaptureUnsupported);
    crm_capture_info(5, &status, NULL, NULL, NULL, NULL);
    ck_assert_int_eq(status, cudaStreamCaptureStatusInvalidated);
    ck_assert_int_eq(crm__take(5, crm__memset_call(5, 1), &err), 1);
    ck_assert_int_eq(err, cudaErrorStreamCaptureInvalidated);
    ck_assert_int_eq(crm_capture_end(5, &g), cudaErrorStreamCaptureInvalidated);

    /* another thread's global capture forbids this thread's unsafe calls in global
     * mode, not in thread-local or relaxed mode */
    crm__me = 2;
    ck_assert_int_eq(crm_capture_begin(7, cudaStreamCaptureModeGlobal), cudaSuccess);
    crm__me = 1;
    ck_assert_int_eq(crm_capture_exchange_mode(cudaStreamCaptureModeThreadLocal), cudaStreamCaptureModeGlobal);
    ck_assert_int_eq(crm_capture_refuse_sync(CRM_WIRE_BAD_HANDLE, CRM_WIRE_BAD_HANDLE), cudaSuccess);
    ck_assert_int_eq(crm_capture_exchange_mode(cudaStreamCaptureModeGlobal), cudaStreamCaptureModeThreadLocal);
    ck_assert_int_eq(crm_capture_refuse_sync(CRM_WIRE_BAD_HANDLE, CRM_WIRE_BAD_HANDLE),
                     cudaErrorStreamCaptureUnsupported);
    crm__me = 2;
    ck_assert_int_eq(crm_capture_end(7, &g), cudaErrorStreamCaptureInvalidated);

    /* a relaxed capture lets its own thread through; a relaxed thread mode too */
    crm__me = 1;
    ck_assert_int_eq(crm_capture_begin(5, cudaStreamCaptureModeRelaxed), cudaSuccess);
    ck_assert_int_eq(crm_capture_refuse_sync(CRM_WIRE_BAD_HANDLE, CRM_WIRE_BAD_HANDLE), cudaSuccess);
    ck_assert_int_eq(crm_capture_end(5, &g), cudaSuccess);
    crm_graph_free(g);
    ck_assert_int_eq(crm_capture_begin(5, cudaStreamCaptureModeGlobal), cudaSuccess);
    crm_capture_exchange_mode(cudaStreamCaptureModeRelaxed);
    ck_assert_int_eq(crm_capture_refuse_sync(CRM_WIRE_BAD_HANDLE, CRM_WIRE_BAD_HANDLE), cudaSuccess);
    crm_capture_exchange_mode(cudaStreamCaptureModeGlobal);
    /* waiting on an event recorded in the capture is refused too */
    crm__take(5, crm__event_call(CRM_API_cudaEventRecord, 5, 100), &err);
    ck_assert_int_eq(crm_capture_refuse_sync(CRM_WIRE_BAD_HANDLE, 100), cudaErrorStreamCaptureUnsupported);
    /* a capture must end on the thread that began it, unless relaxed */
    crm__me = 3;
    ck_assert_int_eq(crm_capture_end(5, &g), cudaErrorStreamCaptureWrongThread);
    crm__me = 1;
    ck_assert_int_eq(crm_capture_end(5, &g), cudaErrorStreamCaptureInvalidated);
    ck_assert(!crm_capture_any());
}
END_TEST

START_TEST(test_capture_into_a_graph_after_its_nodes)
{
    cudaError_t err;
    crm_graph *g = crm_graph_new(), *out;
    crm_gnode *root = crm_graph_add(g, CU_GRAPH_NODE_TYPE_EMPTY, NULL, 0);
    ck_assert_int_eq(crm_capture_begin_to(5, cudaStreamCaptureModeGlobal, g, &root, 1), cudaSuccess);
    crm__take(5, crm__memset_call(5, 1), &err);
    ck_assert_int_eq(crm_capture_update_deps(5, &root, 1, 1), cudaSuccess); /* set: after the root only */
    crm__take(5, crm__memset_call(5, 2), &err);
    ck_assert_int_eq(crm_capture_end(5, &out), cudaSuccess);
    ck_assert(out == g && g->count == 3);
    ck_assert(g->nodes[1]->deps[0] == root && g->nodes[2]->ndeps == 1 && g->nodes[2]->deps[0] == root);
    crm_graph_free(g);
    crm_capture_reset();
}
END_TEST

/* A graph's memory lives while a graph or a copy holds its alloc node, and goes
 * back to the device once it is freed and nothing holds it. */
/* A conditional handle's value lives while its graph, a copy of it or a node on it
 * does; its first store is its default; a copy's conditional node has copies of
 * the bodies and the same handle. */
START_TEST(test_conditional_handle_lives_while_held)
{
    crm_graph *g = crm_graph_new();
    crm__device_freed = 0;
    crm_gcond *c = crm_gcond_new(0x9000, 5, cudaGraphCondAssignDefault);
    ck_assert_ptr_nonnull(c);
    ck_assert_uint_eq(crm__cond_set_cell, 0x9000);
    ck_assert_uint_eq(crm__cond_set_value, 5);
    ck_assert_int_eq(crm_graph_add_cond(g, c), 0);
    ck_assert_ptr_eq(crm_graph_find_cond(g, 0x9000), c);
    ck_assert_ptr_null(crm_graph_find_cond(g, 0x9004));
    crm_gnode *n = crm_graph_add(g, CU_GRAPH_NODE_TYPE_CONDITIONAL, NULL, 0);
    ck_assert_int_eq(crm_gnode_set_cond(n, c, cudaGraphCondTypeSwitch, 3), 0);
    ck_assert_uint_eq(n->nbodies, 3);
    crm_graph_add(n->bodies[1], CU_GRAPH_NODE_TYPE_EMPTY, NULL, 0);
    crm_graph *copy = crm_graph_clone(g, NULL);
    ck_assert_ptr_nonnull(copy);
    crm_gnode *cn = copy->nodes[0];
    ck_assert_ptr_eq(cn->cond, c);
    ck_assert_int_eq(cn->cond_type, cudaGraphCondTypeSwitch);
    ck_assert_uint_eq(cn->nbodies, 3);
    ck_assert_ptr_ne(cn->bodies[1], n->bodies[1]);
    ck_assert_uint_eq(cn->bodies[1]->count, 1);
    ck_assert_uint_eq(cn->bodies[0]->count, 0);
    ck_assert_ptr_eq(crm_graph_find_cond(copy, 0x9000), c);
    crm_graph_free(g);
    ck_assert_uint_eq(crm__device_freed, 0); /* the copy holds it */
    crm_graph_free(copy);
    ck_assert_uint_eq(crm__device_freed, 0x9000);
}
END_TEST

START_TEST(test_graph_memory_lives_while_held)
{
    uint64_t current, high;
    crm_graph *g = crm_graph_new();
    crm_gnode *alloc = crm_graph_add(g, CU_GRAPH_NODE_TYPE_MEM_ALLOC, NULL, 0);
    crm_gmem_node m = {0x7000, 4096};
    ck_assert_int_eq(crm_gmem_add(m.ptr, m.size), 0);
    ck_assert_int_eq(crm_gnode_set_step(alloc, crm_gmem_alloc_step, &m, sizeof m), 0);
    crm_gmem_usage(&current, &high);
    ck_assert_uint_eq(current, 4096);
    crm_graph *copy = crm_graph_clone(g, NULL); /* an executable graph's copy */
    crm_graph_free(g);
    ck_assert(crm_gmem_known(m.ptr));
    ck_assert_int_eq(crm_gmem_free(m.ptr), 1); /* the program frees it: the copy still holds it */
    ck_assert_uint_eq(crm__device_freed, 0);
    ck_assert_int_eq(crm_gmem_alloc_step(&m, 0), cudaSuccess); /* a launch makes it the program's again */
    crm_graph_free(copy);
    ck_assert_uint_eq(crm__device_freed, 0); /* not freed since that launch: kept */
    ck_assert_int_eq(crm_gmem_free(m.ptr), 1);
    ck_assert_uint_eq(crm__device_freed, 0x7000);
    ck_assert(!crm_gmem_known(m.ptr));
    crm_gmem_usage(&current, &high);
    ck_assert_uint_eq(current, 0);
    ck_assert_uint_eq(high, 4096);
    crm_gmem_reset_high();
    crm_gmem_usage(&current, &high);
    ck_assert_uint_eq(high, 0);
    ck_assert_int_eq(crm_gmem_free(0x9000), 0); /* no graph's */
}
END_TEST

static Suite *crm_graph_suite(void)
{
    Suite *s = suite_create("graph");
    TCase *tc = tcase_create("graph");
    tcase_add_test(tc, test_order_follows_edges_and_creation);
    tcase_add_test(tc, test_order_of_a_large_graph);
    tcase_add_test(tc, test_long_chain);
    tcase_add_test(tc, test_clone_keeps_nodes_edges_and_work);
    tcase_add_test(tc, test_capture_takes_work_of_its_stream_only);
    tcase_add_test(tc, test_events_fork_and_join_streams);
    tcase_add_test(tc, test_legacy_stream_and_blocking_captures);
    tcase_add_test(tc, test_waits_and_unsafe_calls_follow_the_modes);
    tcase_add_test(tc, test_capture_into_a_graph_after_its_nodes);
    tcase_add_test(tc, test_graph_memory_lives_while_held);
    tcase_add_test(tc, test_conditional_handle_lives_while_held);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(crm_graph_suite)
