/* crm_graph_exec.c -- executable graphs (client/crm_graph_exec.h): instantiation
 * into stored programs and client steps, launch, update by the bytes that changed,
 * release. */
#include <stdlib.h>
#include <string.h>
#include "client/crm_conn.h"
#include "client/crm_graph_exec.h"
#include "client/crm_handles.h"
#include "common/crm_log.h"
#include "crm_client_gen.h"

/* A program is uploaded in pieces of at most this many bytes (a crm_bytes each). */
#define CRM__PIECE_MAX (CRM_BYTES_MAX - 1024)
/* Differing bytes closer than this are sent as one patch. */
#define CRM__PATCH_GAP 64

/* Instantiation under way: the steps and programs so far, the program being
 * filled, and the ids an update reuses (the program made k-th takes reuse[k]). */
typedef struct crm__build {
    crm_gexec *exec;
    int open;              /* index in exec->progs of the program being filled, -1: none */
    const crm_eprog *reuse;
    unsigned nreuse;
    cudaError_t err;
} crm__build;

static crm_estep *crm__step_new(crm__build *b)
{
    crm_gexec *e = b->exec;
    crm_estep *steps = crm_grow(e->steps, &e->cap, e->nsteps, sizeof *steps);
    if (steps == NULL) {
        b->err = cudaErrorMemoryAllocation;
        return NULL;
    }
    e->steps = steps;
    crm_estep *s = &e->steps[e->nsteps++];
    memset(s, 0, sizeof *s);
    return s;
}

/* A new program, open for records, run by a new step. */
static void crm__prog_open(crm__build *b)
{
    crm_gexec *e = b->exec;
    crm_eprog *progs = crm_grow(e->progs, &e->progs_cap, e->nprogs, sizeof *progs);
    if (progs == NULL) {
        b->err = cudaErrorMemoryAllocation;
        return;
    }
    e->progs = progs;
    crm_estep *s = crm__step_new(b);
    if (s == NULL)
        return;
    crm_eprog *p = &e->progs[e->nprogs];
    memset(p, 0, sizeof *p);
    p->id = e->nprogs < b->nreuse ? b->reuse[e->nprogs].id : crm_handle_new_id();
    s->program = p->id;
    b->open = (int)e->nprogs++;
}

static int crm__cut_push(crm_eprog *p, size_t at)
{
    size_t *cuts = crm_grow(p->cuts, &p->cuts_cap, p->ncuts, sizeof *cuts);
    if (cuts == NULL)
        return -1;
    p->cuts = cuts;
    p->cuts[p->ncuts++] = at;
    return 0;
}

static void crm__add_record(crm__build *b, const char *record, unsigned len)
{
    if (len > CRM__PIECE_MAX) {
        b->err = cudaErrorNotSupported; /* a launch record larger than any kernel's parameters */
        return;
    }
    if (b->open < 0)
        crm__prog_open(b);
    if (b->err != cudaSuccess)
        return;
    crm_eprog *p = &b->exec->progs[b->open];
    if (p->len + len > p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 4096;
        while (cap < p->len + len)
            cap *= 2;
        char *image = realloc(p->image, cap);
        if (image == NULL) {
            b->err = cudaErrorMemoryAllocation;
            return;
        }
        p->image = image, p->cap = cap;
    }
    if (p->piece + len > CRM__PIECE_MAX) {
        if (crm__cut_push(p, p->len) != 0) {
            b->err = cudaErrorMemoryAllocation;
            return;
        }
        p->piece = 0;
    }
    memcpy(p->image + p->len, record, len);
    p->len += len;
    p->piece += len;
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

static void crm__add_step(crm__build *b, const crm_gnode *n)
{
    b->open = -1; /* device work after this step starts another program */
    crm_estep *s = crm__step_new(b);
    if (s == NULL)
        return;
    if ((s->args = malloc(n->args_len ? n->args_len : 1)) == NULL) {
        b->err = cudaErrorMemoryAllocation;
        return;
    }
    memcpy(s->args, n->args, n->args_len);
    s->step = n->step;
}

static void crm__add_graph(crm__build *b, const crm_graph *g);

/* The program of a conditional node's body in *id (0: it does nothing): a program
 * of its own, kept in b's exec, whose step is taken back. Device work only: a host
 * node or a copy with host memory cannot run inside a conditional node. */
static void crm__add_body(crm__build *b, const crm_graph *body, uint64_t *id)
{
    crm_gexec *e = b->exec;
    int open = b->open;
    unsigned before = e->nsteps;
    b->open = -1;
    crm__add_graph(b, body);
    unsigned added = e->nsteps - before;
    if (b->err == cudaSuccess && (added > 1 || (added == 1 && e->steps[before].program == 0))) {
        static int logged;
        if (!__atomic_exchange_n(&logged, 1, __ATOMIC_RELAXED))
            crm_log(CRM_LOG_WARN, "not supported: a host node or a copy with host memory in a conditional "
                                  "node's body (cudaErrorNotSupported)");
        b->err = cudaErrorNotSupported;
    }
    *id = added == 1 ? e->steps[before].program : 0;
    for (unsigned i = before; i < e->nsteps; i++)
        free(e->steps[i].args);
    e->nsteps = before;
    b->open = open;
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
        if (n->disabled)
            continue; /* an empty node until enabled again */
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

/* Makes the steps and programs of g, their programs not handed to the session
 * yet; an update's take the ids of `reuse`, in the order they are made. */
static cudaError_t crm__make(const crm_graph *g, const crm_eprog *reuse, unsigned nreuse, crm_gexec **out)
{
    crm__build b = {.exec = calloc(1, sizeof(crm_gexec)), .open = -1, .reuse = reuse, .nreuse = nreuse};
    if (b.exec == NULL)
        return cudaErrorMemoryAllocation;
    crm__add_graph(&b, g);
    if (b.err != cudaSuccess) {
        crm_graph_exec_free(b.exec);
        return b.err;
    }
    *out = b.exec;
    return cudaSuccess;
}

/* Queues the upload of p whole, in its pieces. */
static void crm__upload(const crm_eprog *p)
{
    size_t from = 0;
    for (unsigned i = 0; i <= p->ncuts; i++) {
        size_t to = i < p->ncuts ? p->cuts[i] : p->len;
        crm_bytes bytes = {(u_int)(to - from), p->image + from};
        if (to > from)
            crm_rpc_crm_graph_upload(p->id, from, &bytes); /* queued: a failure shows at the next sync */
        from = to;
    }
}

/* Queues patches of the ranges where fresh's bytes differ from was's (the same
 * length), close ranges merged, each at most a piece. */
static void crm__patch(const crm_eprog *was, const crm_eprog *fresh)
{
    size_t i = 0, n = fresh->len;
    while (i < n) {
        while (i < n && was->image[i] == fresh->image[i])
            i++;
        if (i == n)
            break;
        size_t end = i + 1, same = 0;
        for (size_t j = end; j < n && same < CRM__PATCH_GAP && j - i < CRM__PIECE_MAX; j++) {
            if (was->image[j] != fresh->image[j])
                end = j + 1, same = 0;
            else
                same++;
        }
        crm_bytes bytes = {(u_int)(end - i), fresh->image + i};
        crm_rpc_crm_graph_patch(fresh->id, i, &bytes);
        i = end;
    }
}

/* Hands fresh's programs to the session. was (NULL: none) held programs of the same
 * ids in the same order: one the same size gets the bytes that changed, another is
 * replaced, and was's programs fresh has no more are dropped. */
static void crm__store(const crm_gexec *was, crm_gexec *fresh)
{
    unsigned nwas = was != NULL && was->stored ? was->nprogs : 0;
    for (unsigned i = fresh->nprogs; i < nwas; i++)
        crm_rpc_crm_graph_drop(was->progs[i].id);
    for (unsigned i = 0; i < fresh->nprogs; i++) {
        const crm_eprog *p = &fresh->progs[i];
        if (i < nwas && was->progs[i].len == p->len) {
            crm__patch(&was->progs[i], p);
            continue;
        }
        if (i < nwas)
            crm_rpc_crm_graph_drop(p->id); /* another size: made anew under its id */
        crm__upload(p);
    }
    fresh->stored = 1;
}

cudaError_t crm_graph_instantiate(const crm_graph *g, crm_gexec **out)
{
    crm_gexec *e;
    cudaError_t err = crm__make(g, NULL, 0, &e);
    if (err != cudaSuccess)
        return err;
    crm__store(NULL, e);
    e->nodes = g->count;
    e->origin = g;
    if ((e->source = crm_graph_clone(g, NULL)) == NULL || crm_graph_live_add(e, CRM_LIVE_EXEC) != 0) {
        crm_graph_exec_free(e);
        return cudaErrorMemoryAllocation;
    }
    *out = e;
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

/* Frees e's steps and programs; drops the programs from the session when `drop`
 * and they were handed to it. Its source stays. */
static void crm__exec_clear(crm_gexec *e, int drop)
{
    for (unsigned i = 0; i < e->nsteps; i++)
        free(e->steps[i].args);
    free(e->steps);
    e->steps = NULL;
    e->nsteps = e->cap = 0;
    for (unsigned i = 0; i < e->nprogs; i++) {
        if (drop && e->stored)
            crm_rpc_crm_graph_drop(e->progs[i].id);
        free(e->progs[i].image);
        free(e->progs[i].cuts);
    }
    free(e->progs);
    e->progs = NULL;
    e->nprogs = e->progs_cap = 0;
    e->stored = 0;
}

/* Makes e's work anew from graph g (e's ids reused), handing the session what
 * changed; e's source becomes `source` (may be e's own). cudaSuccess, or the
 * error with e unchanged. */
static cudaError_t crm__remake(crm_gexec *e, const crm_graph *g, crm_graph *source)
{
    crm_gexec *fresh;
    cudaError_t err = crm__make(g, e->progs, e->nprogs, &fresh);
    if (err != cudaSuccess)
        return err;
    crm__store(e, fresh);
    crm__exec_clear(e, 0); /* fresh owns the ids now */
    e->steps = fresh->steps, e->nsteps = fresh->nsteps, e->cap = fresh->cap;
    e->progs = fresh->progs, e->nprogs = fresh->nprogs, e->progs_cap = fresh->progs_cap;
    e->stored = 1;
    if (source != e->source) {
        crm_graph_free(e->source);
        e->source = source;
    }
    free(fresh);
    return cudaSuccess;
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
    return crm__remake(e, e->source, e->source);
}

cudaError_t crm_graph_exec_update(crm_gexec *e, const crm_graph *g)
{
    if (g->count != e->nodes)
        return cudaErrorGraphExecUpdateFailure;
    crm_graph *source = crm_graph_clone(g, NULL);
    for (unsigned i = 0; source != NULL && i < g->count; i++)
        source->nodes[i]->disabled = e->source->nodes[i]->disabled; /* the exec's own state stays */
    if (source == NULL || crm__remake(e, source, source) != cudaSuccess) {
        crm_graph_free(source);
        return cudaErrorGraphExecUpdateFailure;
    }
    e->origin = g;
    return cudaSuccess;
}

void crm_graph_exec_free(crm_gexec *e)
{
    if (e == NULL)
        return;
    crm_graph_live_del(e);
    crm__exec_clear(e, 1);
    crm_graph_free(e->source);
    free(e);
}
