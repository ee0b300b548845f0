/* crm_graph_exec.c -- executable graphs (client/crm_graph_exec.h): instantiation
 * into stored programs and client steps, launch, update, release. */
#include <stdlib.h>
#include <string.h>
#include "client/crm_conn.h"
#include "client/crm_graph_exec.h"
#include "client/crm_handles.h"
#include "common/crm_log.h"
#include "crm_client_gen.h"

/* A program is uploaded in pieces of at most this many bytes (a crm_bytes each). */
#define CRM__PIECE_MAX (CRM_BYTES_MAX - 1024)

/* Instantiation under way: the steps so far and the program being filled. */
typedef struct crm__build {
    crm_gexec *exec;
    uint64_t program;      /* being filled, 0: none */
    char *piece;           /* records not uploaded yet */
    size_t piece_len;
    cudaError_t err;
} crm__build;

static crm_estep *crm__step_new(crm_gexec *e)
{
    if (e->nsteps == e->cap) {
        unsigned cap = e->cap ? e->cap * 2 : 8;
        crm_estep *s = realloc(e->steps, cap * sizeof *s);
        if (s == NULL)
            return NULL;
        e->steps = s, e->cap = cap;
    }
    crm_estep *s = &e->steps[e->nsteps++];
    memset(s, 0, sizeof *s);
    return s;
}

/* Queues the upload of the bytes gathered for the current program. */
static void crm__flush_piece(crm__build *b)
{
    if (b->piece_len == 0 || b->err != cudaSuccess)
        return;
    crm_bytes bytes = {(u_int)b->piece_len, b->piece};
    b->err = crm_rpc_crm_graph_upload(b->program, &bytes);
    b->piece_len = 0;
}

static void crm__add_record(crm__build *b, const char *record, unsigned len)
{
    if (len > CRM__PIECE_MAX) {
        b->err = cudaErrorNotSupported; /* a launch record larger than any kernel's parameters */
        return;
    }
    if (b->program == 0) {
        crm_estep *s = crm__step_new(b->exec);
        if (s == NULL) {
            b->err = cudaErrorMemoryAllocation;
            return;
        }
        b->program = s->program = crm_handle_new_id();
    }
    if (b->piece_len + len > CRM__PIECE_MAX)
        crm__flush_piece(b);
    memcpy(b->piece + b->piece_len, record, len);
    b->piece_len += len;
}

static void crm__add_call(crm__build *b, crm_call *call)
{
    char *record;
    unsigned len;
    if (crm_call_encode(call, &record, &len) != 0) {
        b->err = cudaErrorMemoryAllocation;
        return;
    }
    crm__add_record(b, record, len);
    free(record);
}

static int crm__body_push(crm_gexec *e, uint64_t program)
{
    if (e->nbodies == e->bodies_cap) {
        unsigned cap = e->bodies_cap ? e->bodies_cap * 2 : 4;
        uint64_t *p = realloc(e->bodies, cap * sizeof *p);
        if (p == NULL)
            return -1;
        e->bodies = p, e->bodies_cap = cap;
    }
    e->bodies[e->nbodies++] = program;
    return 0;
}

static void crm__add_graph(crm__build *b, const crm_graph *g);

/* The program of a conditional node's body in *id (0: it does nothing), kept in
 * b's exec with the programs of the bodies inside it. Device work only: a host
 * node or a copy with host memory cannot run inside a conditional node. */
static void crm__add_body(crm__build *b, const crm_graph *body, uint64_t *id)
{
    crm__build sub = {.exec = calloc(1, sizeof(crm_gexec)), .piece = malloc(CRM__PIECE_MAX)};
    if (sub.exec == NULL || sub.piece == NULL)
        sub.err = cudaErrorMemoryAllocation;
    if (sub.err == cudaSuccess)
        crm__add_graph(&sub, body);
    crm__flush_piece(&sub);
    free(sub.piece);
    crm_gexec *e = sub.exec;
    if (sub.err == cudaSuccess && (e->nsteps > 1 || (e->nsteps == 1 && e->steps[0].program == 0))) {
        static int logged;
        if (!__atomic_exchange_n(&logged, 1, __ATOMIC_RELAXED))
            crm_log(CRM_LOG_WARN, "not supported: a host node or a copy with host memory in a conditional "
                                  "node's body (cudaErrorNotSupported)");
        sub.err = cudaErrorNotSupported;
    }
    *id = sub.err == cudaSuccess && e->nsteps == 1 ? e->steps[0].program : 0;
    for (unsigned i = 0; sub.err == cudaSuccess && i < e->nbodies; i++)
        if (crm__body_push(b->exec, e->bodies[i]) != 0)
            sub.err = cudaErrorMemoryAllocation;
    if (sub.err == cudaSuccess && *id != 0 && crm__body_push(b->exec, *id) != 0)
        sub.err = cudaErrorMemoryAllocation;
    if (sub.err == cudaSuccess && e != NULL)
        e->nsteps = e->nbodies = 0; /* b's exec releases them now */
    crm_graph_exec_free(e);
    if (sub.err != cudaSuccess)
        b->err = sub.err;
}

/* A conditional node: the record reading its handle and naming its bodies. */
static void crm__add_cond(crm__build *b, const crm_gnode *n)
{
    unsigned char *ids = calloc(n->nbodies ? n->nbodies : 1, 8);
    if (ids == NULL) {
        b->err = cudaErrorMemoryAllocation;
        return;
    }
    for (unsigned k = 0; k < n->nbodies && b->err == cudaSuccess; k++) {
        uint64_t id;
        crm__add_body(b, n->bodies[k], &id);
        for (int i = 0; i < 8; i++)
            ids[8 * k + i] = (unsigned char)(id >> (8 * i));
    }
    crm_call call = {.api = CRM_API_crm_graph_cond_run};
    call.crm_call_u.crm_graph_cond_run = (crm_args_crm_graph_cond_run){
        .cell = n->cond->cell, .type = n->cond_type, .bodies = {8 * n->nbodies, (char *)ids}};
    if (b->err == cudaSuccess)
        crm__add_call(b, &call);
    free(ids);
}

/* g's handles that take their default at each launch of g get it first. */
static void crm__add_defaults(crm__build *b, const crm_graph *g)
{
    for (unsigned i = 0; i < g->nconds && b->err == cudaSuccess; i++) {
        if (!(g->conds[i]->flags & cudaGraphCondAssignDefault))
            continue;
        crm_call call = {.api = CRM_API_crm_graph_cond_set};
        call.crm_call_u.crm_graph_cond_set = (crm_args_crm_graph_cond_set){g->conds[i]->cell, g->conds[i]->deflt};
        crm__add_call(b, &call);
    }
}

static void crm__add_step(crm__build *b, const crm_gnode *n)
{
    crm__flush_piece(b);
    b->program = 0; /* device work after this step starts another program */
    crm_estep *s = crm__step_new(b->exec);
    if (s == NULL || (s->args = malloc(n->args_len ? n->args_len : 1)) == NULL) {
        b->err = cudaErrorMemoryAllocation;
        return;
    }
    memcpy(s->args, n->args, n->args_len);
    s->step = n->step;
}

static void crm__add_graph(crm__build *b, const crm_graph *g)
{
    crm_gnode **order = malloc((g->count ? g->count : 1) * sizeof *order);
    if (order == NULL) {
        b->err = cudaErrorMemoryAllocation;
        return;
    }
    if (crm_graph_order(g, order) != 0)
        b->err = cudaErrorInvalidValue;
    crm__add_defaults(b, g);
    for (unsigned i = 0; i < g->count && b->err == cudaSuccess; i++) {
        const crm_gnode *n = order[i];
        if (n->record != NULL)
            crm__add_record(b, n->record, n->record_len);
        else if (n->cond != NULL)
            crm__add_cond(b, n);
        else if (n->step != NULL)
            crm__add_step(b, n);
        else if (n->child != NULL)
            crm__add_graph(b, n->child);
        /* an empty node orders the others and does nothing */
    }
    free(order);
}

cudaError_t crm_graph_instantiate(const crm_graph *g, crm_gexec **out)
{
    crm__build b = {.exec = calloc(1, sizeof(crm_gexec)), .piece = malloc(CRM__PIECE_MAX)};
    if (b.exec == NULL || b.piece == NULL)
        b.err = cudaErrorMemoryAllocation;
    if (b.err == cudaSuccess)
        crm__add_graph(&b, g);
    crm__flush_piece(&b);
    free(b.piece);
    if (b.err != cudaSuccess) {
        crm_graph_exec_free(b.exec);
        return b.err;
    }
    b.exec->nodes = g->count;
    b.exec->origin = g;
    if ((b.exec->source = crm_graph_clone(g, NULL)) == NULL || crm_graph_live_add(b.exec, CRM_LIVE_EXEC) != 0) {
        crm_graph_exec_free(b.exec);
        return cudaErrorMemoryAllocation;
    }
    *out = b.exec;
    return cudaSuccess;
}

cudaError_t crm_graph_launch(const crm_gexec *e, uint64_t stream)
{
    cudaError_t err = cudaSuccess;
    for (unsigned i = 0; i < e->nsteps && err == cudaSuccess; i++)
        err = e->steps[i].program != 0 ? crm_rpc_crm_graph_run(e->steps[i].program, stream)
                                       : e->steps[i].step(e->steps[i].args, stream);
    return err;
}

/* Releases e's steps and their programs; its source stays. */
static void crm__exec_clear(crm_gexec *e)
{
    for (unsigned i = 0; i < e->nsteps; i++) {
        if (e->steps[i].program != 0)
            crm_rpc_crm_graph_drop(e->steps[i].program);
        free(e->steps[i].args);
    }
    free(e->steps);
    e->steps = NULL;
    e->nsteps = e->cap = 0;
    for (unsigned i = 0; i < e->nbodies; i++)
        crm_rpc_crm_graph_drop(e->bodies[i]);
    free(e->bodies);
    e->bodies = NULL;
    e->nbodies = e->bodies_cap = 0;
}

/* Replaces e's steps with fresh's (made from a graph of as many nodes) and e's
 * source with `source`; frees fresh. */
static void crm__exec_take(crm_gexec *e, crm_gexec *fresh, crm_graph *source)
{
    crm__exec_clear(e);
    crm_graph_live_del(fresh);
    e->steps = fresh->steps, e->nsteps = fresh->nsteps, e->cap = fresh->cap;
    e->bodies = fresh->bodies, e->nbodies = fresh->nbodies, e->bodies_cap = fresh->bodies_cap;
    if (source != e->source) {
        crm_graph_free(e->source);
        e->source = source;
    }
    crm_graph_free(fresh->source);
    free(fresh);
}

crm_gnode *crm_gexec_node(const crm_gexec *e, const crm_gnode *orig)
{
    if (orig == NULL || orig->graph != e->origin || e->source == NULL || orig->index >= e->source->count)
        return NULL;
    crm_gnode *n = e->source->nodes[orig->index];
    return n->type == orig->type ? n : NULL;
}

cudaError_t crm_gexec_rebuild(crm_gexec *e)
{
    crm_gexec *fresh;
    cudaError_t err = crm_graph_instantiate(e->source, &fresh);
    if (err == cudaSuccess)
        crm__exec_take(e, fresh, e->source);
    return err;
}

cudaError_t crm_graph_exec_update(crm_gexec *e, const crm_graph *g)
{
    crm_gexec *fresh;
    if (g->count != e->nodes)
        return cudaErrorGraphExecUpdateFailure;
    crm_graph *source = crm_graph_clone(g, NULL);
    if (source == NULL || crm_graph_instantiate(g, &fresh) != cudaSuccess) {
        crm_graph_free(source);
        return cudaErrorGraphExecUpdateFailure;
    }
    crm__exec_take(e, fresh, source);
    e->origin = g;
    return cudaSuccess;
}

void crm_graph_exec_free(crm_gexec *e)
{
    if (e == NULL)
        return;
    crm_graph_live_del(e);
    crm__exec_clear(e);
    crm_graph_free(e->source);
    free(e);
}
