/* crm_graph.c -- CUDA graphs on the client: nodes, edges, copies and the order
 * nodes run in (client/crm_graph.h). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <rpc/rpc.h>
#include "client/crm_graph.h"
#include "client/crm_graph_mem.h"
#include "common/crm_idmap.h"

/* Graphs and executable graphs alive, so a handle a program passes is checked
 * before it is used. */
static pthread_mutex_t crm__live_lock = PTHREAD_MUTEX_INITIALIZER;
static crm_idmap crm__live;

int crm_graph_live_add(const void *p, int kind)
{
    pthread_mutex_lock(&crm__live_lock);
    int rc = crm_idmap_put(&crm__live, (uint64_t)(uintptr_t)p, (void *)(uintptr_t)kind);
    pthread_mutex_unlock(&crm__live_lock);
    return rc;
}

static int crm__live_is(const void *p, int kind)
{
    void *v = NULL;
    pthread_mutex_lock(&crm__live_lock);
    int rc = p != NULL && crm_idmap_get(&crm__live, (uint64_t)(uintptr_t)p, &v) == 0 && (uintptr_t)v == (uintptr_t)kind;
    pthread_mutex_unlock(&crm__live_lock);
    return rc;
}

int crm_graph_live(const void *p)
{
    return crm__live_is(p, CRM_LIVE_GRAPH);
}

int crm_gexec_live(const void *p)
{
    return crm__live_is(p, CRM_LIVE_EXEC);
}

void crm_graph_live_del(const void *p)
{
    pthread_mutex_lock(&crm__live_lock);
    crm_idmap_del(&crm__live, (uint64_t)(uintptr_t)p, NULL);
    pthread_mutex_unlock(&crm__live_lock);
}

crm_graph *crm_graph_new(void)
{
    crm_graph *g = calloc(1, sizeof(crm_graph));
    if (g != NULL && crm_graph_live_add(g, CRM_LIVE_GRAPH) != 0) {
        free(g);
        g = NULL;
    }
    return g;
}

static void crm__node_free(crm_gnode *n)
{
    if (n->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC && n->args != NULL)
        crm_gmem_release(((const crm_gmem_node *)n->args)->ptr);
    free(n->deps);
    free(n->record);
    free(n->args);
    free(n->meta);
    crm_graph_free(n->child);
    for (unsigned i = 0; i < n->nbodies; i++)
        crm_graph_free(n->bodies[i]);
    free(n->bodies);
    crm_gcond_release(n->cond);
    free(n);
}

void crm_graph_free(crm_graph *g)
{
    if (g == NULL)
        return;
    crm_graph_live_del(g);
    for (unsigned i = 0; i < g->count; i++)
        crm__node_free(g->nodes[i]);
    free(g->nodes);
    for (unsigned i = 0; i < g->nconds; i++)
        crm_gcond_release(g->conds[i]);
    free(g->conds);
    free(g);
}

void *crm_grow(void *items, unsigned *cap, unsigned count, size_t size)
{
    if (count < *cap)
        return items;
    unsigned want = *cap ? *cap * 2 : 8;
    void *more = realloc(items, want * size);
    if (more != NULL)
        *cap = want;
    return more;
}

int crm_graph_add_cond(crm_graph *g, crm_gcond *c)
{
    crm_gcond **conds = crm_grow(g->conds, &g->conds_cap, g->nconds, sizeof *conds);
    if (conds == NULL)
        return -1;
    g->conds = conds;
    g->conds[g->nconds++] = c;
    return 0;
}

crm_gcond *crm_graph_find_cond(const crm_graph *g, uint64_t cell)
{
    for (unsigned i = 0; i < g->nconds; i++)
        if (g->conds[i]->cell == cell)
            return g->conds[i];
    return NULL;
}

int crm_gnode_set_cond(crm_gnode *n, crm_gcond *c, int type, unsigned nbodies)
{
    n->bodies = calloc(nbodies ? nbodies : 1, sizeof *n->bodies);
    if (n->bodies == NULL)
        return -1;
    for (; n->nbodies < nbodies; n->nbodies++)
        if ((n->bodies[n->nbodies] = crm_graph_new()) == NULL)
            return -1; /* the node's free frees the bodies made */
    crm_gcond_hold(c);
    n->cond = c;
    n->cond_type = type;
    return 0;
}

int crm_graph_has(const crm_graph *g, const crm_gnode *n)
{
    return g != NULL && n != NULL && n->graph == g && n->index < g->count && g->nodes[n->index] == n;
}

static int crm__dep_push(crm_gnode *n, crm_gnode *dep)
{
    if (n->ndeps == n->deps_cap) {
        unsigned cap = n->deps_cap ? n->deps_cap * 2 : 4;
        crm_gnode **d = realloc(n->deps, cap * sizeof *d);
        if (d == NULL)
            return -1;
        n->deps = d;
        n->deps_cap = cap;
    }
    n->deps[n->ndeps++] = dep;
    return 0;
}

crm_gnode *crm_graph_add(crm_graph *g, CUgraphNodeType type, crm_gnode *const *deps, size_t ndeps)
{
    if (g->count == g->cap) {
        unsigned cap = g->cap ? g->cap * 2 : 16;
        crm_gnode **nodes = realloc(g->nodes, cap * sizeof *nodes);
        if (nodes == NULL)
            return NULL;
        g->nodes = nodes;
        g->cap = cap;
    }
    crm_gnode *n = calloc(1, sizeof *n);
    if (n == NULL)
        return NULL;
    n->graph = g;
    n->type = type;
    for (size_t i = 0; i < ndeps; i++) {
        int dup = 0;
        for (unsigned j = 0; j < n->ndeps; j++)
            dup |= n->deps[j] == deps[i];
        if (!dup && crm__dep_push(n, deps[i]) != 0) {
            crm__node_free(n);
            return NULL;
        }
    }
    n->index = g->count;
    g->nodes[g->count++] = n;
    return n;
}

void crm_graph_drop_last(crm_graph *g)
{
    crm__node_free(g->nodes[--g->count]); /* the last: no node depends on it */
}

int crm_gnode_decode(const crm_gnode *n, int api, crm_call *call)
{
    XDR x;
    memset(call, 0, sizeof *call);
    if (n == NULL || n->record == NULL)
        return -1;
    xdrmem_create(&x, n->record, n->record_len, XDR_DECODE);
    int ok = xdr_crm_call(&x, call) && (api < 0 || (int)call->api == api);
    xdr_destroy(&x);
    if (!ok)
        xdr_free((xdrproc_t)xdr_crm_call, (char *)call);
    return ok ? 0 : -1;
}

int crm_call_encode(crm_call *call, char **buf, unsigned *len)
{
    unsigned long size = xdr_sizeof((xdrproc_t)xdr_crm_call, call);
    char *b = size > 0 && size < UINT32_MAX ? malloc(size) : NULL;
    if (b == NULL)
        return -1;
    XDR x;
    xdrmem_create(&x, b, (u_int)size, XDR_ENCODE);
    int ok = xdr_crm_call(&x, call);
    xdr_destroy(&x);
    if (!ok) {
        free(b);
        return -1;
    }
    *buf = b;
    *len = (unsigned)size;
    return 0;
}

int crm_gnode_set_record(crm_gnode *n, crm_call *call)
{
    char *buf;
    unsigned len;
    if (crm_call_encode(call, &buf, &len) != 0)
        return -1;
    free(n->record);
    free(n->args); /* device work now, whatever it was */
    n->record = buf;
    n->record_len = len;
    n->args = NULL;
    n->args_len = 0;
    n->step = NULL;
    return 0;
}

int crm_gnode_set_step(crm_gnode *n, crm_gstep_fn step, const void *args, size_t len)
{
    void *copy = malloc(len ? len : 1);
    if (copy == NULL)
        return -1;
    if (len > 0)
        memcpy(copy, args, len);
    free(n->args);
    free(n->record); /* a client step now, whatever it was */
    n->record = NULL;
    n->record_len = 0;
    n->args = copy;
    n->args_len = len;
    n->step = step;
    return 0;
}

int crm_gnode_set_meta(crm_gnode *n, const void *meta, size_t len)
{
    void *copy = malloc(len ? len : 1);
    if (copy == NULL)
        return -1;
    if (len > 0)
        memcpy(copy, meta, len);
    free(n->meta);
    n->meta = copy;
    n->meta_len = len;
    return 0;
}

int crm_graph_add_edge(crm_gnode *from, crm_gnode *to)
{
    for (unsigned i = 0; i < to->ndeps; i++)
        if (to->deps[i] == from)
            return 1;
    return crm__dep_push(to, from);
}

int crm_graph_remove_edge(crm_gnode *from, crm_gnode *to)
{
    for (unsigned i = 0; i < to->ndeps; i++) {
        if (to->deps[i] == from) {
            memmove(&to->deps[i], &to->deps[i + 1], (to->ndeps - i - 1) * sizeof *to->deps);
            to->ndeps--;
            return 0;
        }
    }
    return -1;
}

int crm_graph_mark_ancestors(crm_gnode *const *from, size_t n, unsigned char *seen)
{
    size_t top = 0, cap = n > 16 ? n : 16;
    crm_gnode **stack = malloc(cap * sizeof *stack);
    if (stack == NULL)
        return -1;
    for (size_t i = 0; i < n; i++)
        stack[top++] = from[i];
    while (top > 0) {
        crm_gnode *x = stack[--top];
        if (seen[x->index])
            continue;
        seen[x->index] = 1;
        if (top + x->ndeps > cap) {
            size_t want = (top + x->ndeps) * 2;
            crm_gnode **more = realloc(stack, want * sizeof *more);
            if (more == NULL) {
                free(stack);
                return -1;
            }
            stack = more, cap = want;
        }
        for (unsigned d = 0; d < x->ndeps; d++)
            if (!seen[x->deps[d]->index])
                stack[top++] = x->deps[d];
    }
    free(stack);
    return 0;
}

/* A min-heap of node indices: the ready nodes, the earliest made on top. */
typedef struct crm__heap {
    unsigned *items;
    unsigned count;
} crm__heap;

static void crm__heap_push(crm__heap *h, unsigned v)
{
    unsigned i = h->count++;
    while (i > 0 && h->items[(i - 1) / 2] > v) {
        h->items[i] = h->items[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->items[i] = v;
}

static unsigned crm__heap_pop(crm__heap *h)
{
    unsigned top = h->items[0], last = h->items[--h->count], i = 0;
    for (;;) {
        unsigned c = 2 * i + 1;
        if (c >= h->count)
            break;
        if (c + 1 < h->count && h->items[c + 1] < h->items[c])
            c++;
        if (h->items[c] >= last)
            break;
        h->items[i] = h->items[c];
        i = c;
    }
    if (h->count > 0)
        h->items[i] = last;
    return top;
}

/* Kahn's algorithm taking, each time, the earliest made of the nodes whose
 * dependencies have all been placed: O((nodes + edges) log nodes), so that making
 * a large graph's work anew after a node changed stays cheap. */
int crm_graph_order(const crm_graph *g, crm_gnode **order)
{
    unsigned n = g->count, edges = 0, placed = 0;
    for (unsigned i = 0; i < n; i++)
        edges += g->nodes[i]->ndeps;
    unsigned *left = malloc((n ? n : 1) * sizeof *left), *start = calloc(n + 1, sizeof *start);
    unsigned *next = malloc((edges ? edges : 1) * sizeof *next), *heap = malloc((n ? n : 1) * sizeof *heap);
    int rc = -1;
    if (left == NULL || start == NULL || next == NULL || heap == NULL)
        goto out;
    /* start[d]..start[d+1]: the nodes that depend on node d */
    for (unsigned i = 0; i < n; i++)
        for (unsigned d = 0; d < g->nodes[i]->ndeps; d++)
            start[g->nodes[i]->deps[d]->index + 1]++;
    for (unsigned i = 0; i < n; i++)
        start[i + 1] += start[i];
    for (unsigned i = 0; i < n; i++) {
        left[i] = g->nodes[i]->ndeps;
        for (unsigned d = 0; d < g->nodes[i]->ndeps; d++)
            next[start[g->nodes[i]->deps[d]->index]++] = i;
    }
    for (unsigned i = n; i > 0; i--) /* each start[d] was moved to start[d+1]: back */
        start[i] = start[i - 1];
    start[0] = 0;
    crm__heap ready = {heap, 0};
    for (unsigned i = 0; i < n; i++)
        if (left[i] == 0)
            crm__heap_push(&ready, i);
    while (ready.count > 0) {
        unsigned pick = crm__heap_pop(&ready);
        order[placed++] = g->nodes[pick];
        for (unsigned k = start[pick]; k < start[pick + 1]; k++)
            if (--left[next[k]] == 0)
                crm__heap_push(&ready, next[k]);
    }
    rc = placed == n ? 0 : -1; /* short: a cycle */
out:
    free(left);
    free(start);
    free(next);
    free(heap);
    return rc;
}

/* c, a copy of conditional node n, gets n's handle and copies of its bodies. */
static int crm__clone_bodies(crm_gnode *c, const crm_gnode *n)
{
    if (crm_gnode_set_cond(c, n->cond, n->cond_type, 0) != 0)
        return -1;
    crm_graph **bodies = realloc(c->bodies, (n->nbodies ? n->nbodies : 1) * sizeof *bodies);
    if (bodies == NULL)
        return -1;
    c->bodies = bodies;
    for (; c->nbodies < n->nbodies; c->nbodies++)
        if ((c->bodies[c->nbodies] = crm_graph_clone(n->bodies[c->nbodies], NULL)) == NULL)
            return -1;
    return 0;
}

static crm_gnode *crm__clone_node(crm_graph *to, const crm_gnode *n)
{
    crm_gnode *c = crm_graph_add(to, n->type, NULL, 0);
    if (c == NULL)
        return NULL;
    if (n->record != NULL && (c->record = malloc(n->record_len)) != NULL) {
        memcpy(c->record, n->record, n->record_len);
        c->record_len = n->record_len;
    }
    if (n->args != NULL)
        crm_gnode_set_step(c, n->step, n->args, n->args_len);
    if (n->child != NULL)
        c->child = crm_graph_clone(n->child, NULL);
    if (n->meta != NULL)
        crm_gnode_set_meta(c, n->meta, n->meta_len);
    if (n->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC && c->args != NULL)
        crm_gmem_hold(((const crm_gmem_node *)c->args)->ptr); /* the copy holds the memory too */
    int bodies_ok = n->cond == NULL || crm__clone_bodies(c, n) == 0;
    int failed = (n->record != NULL && c->record == NULL) || (n->args != NULL && c->args == NULL) ||
                 (n->child != NULL && c->child == NULL) || (n->meta != NULL && c->meta == NULL) || !bodies_ok;
    return failed ? NULL : c;
}

crm_graph *crm_graph_clone(const crm_graph *g, crm_gnode ***map)
{
    crm_graph *c = crm_graph_new();
    int ok = c != NULL;
    for (unsigned i = 0; ok && i < g->nconds; i++)
        if ((ok = crm_graph_add_cond(c, g->conds[i]) == 0))
            crm_gcond_hold(g->conds[i]);
    for (unsigned i = 0; ok && i < g->count; i++)
        ok = crm__clone_node(c, g->nodes[i]) != NULL;
    for (unsigned i = 0; ok && i < g->count; i++)
        for (unsigned d = 0; ok && d < g->nodes[i]->ndeps; d++)
            ok = crm_graph_add_edge(c->nodes[g->nodes[i]->deps[d]->index], c->nodes[i]) >= 0;
    if (ok && map != NULL && (*map = malloc((g->count ? g->count : 1) * sizeof **map)) != NULL)
        memcpy(*map, c->nodes, g->count * sizeof **map);
    else if (ok && map != NULL)
        ok = 0;
    if (!ok) {
        crm_graph_free(c);
        return NULL;
    }
    return c;
}

CUgraphNodeType crm_graph_call_type(const crm_call *call)
{
    switch (call->api) {
    case CRM_API_crm_memset:
        return CU_GRAPH_NODE_TYPE_MEMSET;
    case CRM_API_crm_memcpy_d2d:
        return CU_GRAPH_NODE_TYPE_MEMCPY;
    case CRM_API_cudaEventRecord:
    case CRM_API_cudaEventRecordWithFlags:
        return CU_GRAPH_NODE_TYPE_EVENT_RECORD;
    case CRM_API_cudaStreamWaitEvent:
        return CU_GRAPH_NODE_TYPE_WAIT_EVENT;
    default:
        return CU_GRAPH_NODE_TYPE_KERNEL; /* a launch, or a library call's kernels */
    }
}
