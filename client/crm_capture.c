/* crm_capture.c -- stream capture on the client (client/crm_graph.h): which streams
 * are capturing into which graph, the nodes each stream's next work depends on,
 * the events recorded during a capture (a wait on one joins the waiting stream to
 * the capture), and what a call may not do while a capture is under way. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "client/crm_graph.h"
#include "client/crm_handles.h"

/* A stream taking part in a capture, and the nodes its next work runs after. */
typedef struct crm__member {
    uint64_t stream;
    int blocking;            /* created without cudaStreamNonBlocking: the legacy stream encompasses it */
    crm_gnode **tail;
    unsigned ntail, cap;
} crm__member;

typedef struct crm__capture {
    unsigned long long id;   /* unique per process, as CUDA's capture ids */
    crm_graph *graph;
    int owns_graph;          /* 0: cudaStreamBeginCaptureToGraph's, the caller's */
    int mode;                /* cudaStreamCaptureMode */
    uint64_t thread;         /* crm_thread_serial of the thread that began it */
    cudaError_t invalid;     /* cudaSuccess, or why it was invalidated */
    uint64_t origin;         /* the stream that began it */
    crm__member *members;    /* members[0] is the origin */
    unsigned nmembers, members_cap;
} crm__capture;

/* An event last recorded on a capturing stream: what a wait on it depends on. */
typedef struct crm__cevent {
    uint64_t event;
    crm__capture *capture;
    crm_gnode **nodes;
    unsigned n;
} crm__cevent;

static pthread_mutex_t crm__lock = PTHREAD_MUTEX_INITIALIZER;
static crm__capture **crm__caps;
static unsigned crm__ncaps, crm__caps_cap;
static crm__cevent *crm__events;
static unsigned crm__nevents, crm__events_cap;
static unsigned long long crm__next_id;
static atomic_int crm__active; /* captures under way */
static _Thread_local int crm__thread_mode = cudaStreamCaptureModeGlobal;

int crm_capture_any(void)
{
    return atomic_load_explicit(&crm__active, memory_order_relaxed) != 0;
}

int crm_capture_exchange_mode(int mode)
{
    int old = crm__thread_mode;
    crm__thread_mode = mode;
    return old;
}

/* ---- lookups (lock held) --------------------------------------------------------- */

static crm__member *crm__member_of(uint64_t stream, crm__capture **cap)
{
    for (unsigned c = 0; c < crm__ncaps; c++)
        for (unsigned m = 0; m < crm__caps[c]->nmembers; m++)
            if (crm__caps[c]->members[m].stream == stream) {
                *cap = crm__caps[c];
                return &crm__caps[c]->members[m];
            }
    return NULL;
}

static crm__cevent *crm__event_of(uint64_t event)
{
    for (unsigned i = 0; i < crm__nevents; i++)
        if (crm__events[i].event == event)
            return &crm__events[i];
    return NULL;
}

static void crm__event_forget(crm__cevent *e)
{
    free(e->nodes);
    *e = crm__events[--crm__nevents];
}

/* Sets *dst to a copy of nodes[0..n), *dst_n to n; 0 or -1. */
static int crm__nodes_copy(crm_gnode ***dst, unsigned *dst_n, crm_gnode *const *nodes, unsigned n)
{
    crm_gnode **d = realloc(*dst, (n ? n : 1) * sizeof *d);
    if (d == NULL)
        return -1;
    if (n > 0)
        memcpy(d, nodes, n * sizeof *nodes);
    *dst = d;
    *dst_n = n;
    return 0;
}

/* Adds nodes[0..n) not in m's tail yet to it; 0 or -1. */
static int crm__tail_merge(crm__member *m, crm_gnode *const *nodes, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        int present = 0;
        for (unsigned j = 0; j < m->ntail && !present; j++)
            present = m->tail[j] == nodes[i];
        if (present)
            continue;
        if (m->ntail == m->cap) {
            unsigned cap = m->cap ? m->cap * 2 : 4;
            crm_gnode **t = realloc(m->tail, cap * sizeof *t);
            if (t == NULL)
                return -1;
            m->tail = t;
            m->cap = cap;
        }
        m->tail[m->ntail++] = nodes[i];
    }
    return 0;
}

static crm__member *crm__member_add(crm__capture *c, uint64_t stream)
{
    if (c->nmembers == c->members_cap) {
        unsigned cap = c->members_cap ? c->members_cap * 2 : 4;
        crm__member *m = realloc(c->members, cap * sizeof *m);
        if (m == NULL)
            return NULL;
        c->members = m;
        c->members_cap = cap;
    }
    crm__member *m = &c->members[c->nmembers++];
    memset(m, 0, sizeof *m);
    m->stream = stream;
    m->blocking = !crm_stream_nonblocking(stream);
    return m;
}

/* Work on the legacy stream, or a wait for or query of it, while a blocking
 * stream captures: it would depend on the capture (the legacy stream encompasses
 * every blocking stream), which CUDA refuses with cudaErrorStreamCaptureImplicit,
 * the work invalidating those captures; a query leaves them be. 1 when refused
 * (lock held). */
static int crm__legacy_refused(uint64_t stream, int invalidate)
{
    int refused = 0;
    if (stream != CRM_WIRE_LEGACY_STREAM)
        return 0;
    for (unsigned i = 0; i < crm__ncaps; i++)
        for (unsigned m = 0; m < crm__caps[i]->nmembers; m++)
            if (crm__caps[i]->members[m].blocking) {
                if (invalidate && crm__caps[i]->invalid == cudaSuccess)
                    crm__caps[i]->invalid = cudaErrorStreamCaptureInvalidated;
                refused = 1;
                break;
            }
    return refused;
}

/* Removes the capture and the events recorded in it; frees it (the graph too
 * when free_graph and it owns it). */
static void crm__capture_drop(crm__capture *c, int free_graph)
{
    for (unsigned i = crm__nevents; i-- > 0;)
        if (crm__events[i].capture == c)
            crm__event_forget(&crm__events[i]);
    for (unsigned i = 0; i < crm__ncaps; i++)
        if (crm__caps[i] == c) {
            crm__caps[i] = crm__caps[--crm__ncaps];
            break;
        }
    atomic_store(&crm__active, (int)crm__ncaps);
    for (unsigned m = 0; m < c->nmembers; m++)
        free(c->members[m].tail);
    free(c->members);
    if (free_graph && c->owns_graph)
        crm_graph_free(c->graph);
    free(c);
}

static void crm__invalidate(crm__capture *c)
{
    if (c->invalid == cudaSuccess)
        c->invalid = cudaErrorStreamCaptureInvalidated;
}

/* Room in crm__caps for one more: 0, or -1 out of memory. */
static int crm__caps_room(void)
{
    if (crm__ncaps < crm__caps_cap)
        return 0;
    unsigned cap = crm__caps_cap ? crm__caps_cap * 2 : 4;
    crm__capture **caps = realloc(crm__caps, cap * sizeof *caps);
    if (caps == NULL)
        return -1;
    crm__caps = caps, crm__caps_cap = cap;
    return 0;
}

/* ---- begin, end, info ------------------------------------------------------------- */

static cudaError_t crm__begin(uint64_t stream, int mode, crm_graph *g, int owns, crm_gnode *const *deps, size_t ndeps)
{
    crm__capture *cap = NULL;
    if (stream == CRM_WIRE_LEGACY_STREAM)
        return cudaErrorStreamCaptureUnsupported;
    if (mode < cudaStreamCaptureModeGlobal || mode > cudaStreamCaptureModeRelaxed)
        return cudaErrorInvalidValue;
    if (crm__member_of(stream, &cap) != NULL)
        return cudaErrorIllegalState;
    crm__capture *c = calloc(1, sizeof *c);
    if (c == NULL)
        return cudaErrorMemoryAllocation;
    *c = (crm__capture){.id = ++crm__next_id, .graph = g, .owns_graph = owns, .mode = mode,
                        .thread = crm_thread_serial(), .origin = stream};
    crm__member *m = crm__member_add(c, stream);
    if (m == NULL || crm__tail_merge(m, deps, (unsigned)ndeps) != 0 || crm__caps_room() != 0) {
        free(m != NULL ? m->tail : NULL);
        free(c->members);
        free(c);
        return cudaErrorMemoryAllocation;
    }
    crm__caps[crm__ncaps++] = c;
    atomic_store(&crm__active, (int)crm__ncaps);
    return cudaSuccess;
}

cudaError_t crm_capture_begin(uint64_t stream, int mode)
{
    crm_graph *g = crm_graph_new();
    if (g == NULL)
        return cudaErrorMemoryAllocation;
    pthread_mutex_lock(&crm__lock);
    cudaError_t err = crm__begin(stream, mode, g, 1, NULL, 0);
    pthread_mutex_unlock(&crm__lock);
    if (err != cudaSuccess)
        crm_graph_free(g);
    return err;
}

cudaError_t crm_capture_begin_to(uint64_t stream, int mode, crm_graph *g, crm_gnode *const *deps, size_t ndeps)
{
    pthread_mutex_lock(&crm__lock);
    cudaError_t err = crm__begin(stream, mode, g, 0, deps, ndeps);
    pthread_mutex_unlock(&crm__lock);
    return err;
}

/* 1 when every stream that joined the capture has rejoined its origin: all their
 * last nodes precede (or are) the origin's. */
static int crm__joined(const crm__capture *c)
{
    if (c->nmembers <= 1)
        return 1;
    unsigned char *seen = calloc(c->graph->count ? c->graph->count : 1, 1);
    if (seen == NULL)
        return 1;
    if (crm_graph_mark_ancestors(c->members[0].tail, c->members[0].ntail, seen) != 0) {
        free(seen);
        return 1; /* as when seen could not be had: out of memory, not a verdict */
    }
    int joined = 1;
    for (unsigned m = 1; m < c->nmembers && joined; m++)
        for (unsigned i = 0; i < c->members[m].ntail && joined; i++)
            joined = seen[c->members[m].tail[i]->index];
    free(seen);
    return joined;
}

cudaError_t crm_capture_end(uint64_t stream, crm_graph **graph)
{
    crm__capture *c = NULL;
    crm_graph *ignored;
    if (graph == NULL)
        graph = &ignored; /* allowed when capturing into the caller's graph */
    *graph = NULL;
    pthread_mutex_lock(&crm__lock);
    crm__member *m = crm__member_of(stream, &c);
    cudaError_t err = cudaSuccess;
    if (m != NULL && graph == &ignored && c->owns_graph) {
        pthread_mutex_unlock(&crm__lock);
        return cudaErrorInvalidValue; /* the captured graph would be lost */
    }
    if (m == NULL)
        err = cudaErrorIllegalState;
    else if (c->origin != stream)
        err = cudaErrorStreamCaptureUnmatched;
    else if (c->mode != cudaStreamCaptureModeRelaxed && c->thread != crm_thread_serial())
        err = cudaErrorStreamCaptureWrongThread;
    if (err != cudaSuccess) {
        if (c != NULL)
            crm__invalidate(c);
        pthread_mutex_unlock(&crm__lock);
        return err;
    }
    if (c->invalid == cudaSuccess && !crm__joined(c))
        err = cudaErrorStreamCaptureUnjoined;
    else
        err = c->invalid;
    if (err == cudaSuccess)
        *graph = c->graph;
    crm__capture_drop(c, err != cudaSuccess);
    pthread_mutex_unlock(&crm__lock);
    return err;
}

cudaError_t crm_capture_info(uint64_t stream, enum cudaStreamCaptureStatus *status, unsigned long long *id,
                             crm_graph **graph, crm_gnode *const **deps, size_t *ndeps)
{
    crm__capture *c = NULL;
    pthread_mutex_lock(&crm__lock);
    if (crm__legacy_refused(stream, 0)) {
        pthread_mutex_unlock(&crm__lock);
        return cudaErrorStreamCaptureImplicit;
    }
    crm__member *m = crm__member_of(stream, &c);
    *status = m == NULL ? cudaStreamCaptureStatusNone
                        : c->invalid != cudaSuccess ? cudaStreamCaptureStatusInvalidated : cudaStreamCaptureStatusActive;
    if (id != NULL)
        *id = m != NULL ? c->id : 0;
    if (graph != NULL)
        *graph = m != NULL ? c->graph : NULL;
    if (deps != NULL)
        *deps = m != NULL ? m->tail : NULL;
    if (ndeps != NULL)
        *ndeps = m != NULL ? m->ntail : 0;
    pthread_mutex_unlock(&crm__lock);
    return cudaSuccess;
}

cudaError_t crm_capture_update_deps(uint64_t stream, crm_gnode *const *deps, size_t ndeps, int set)
{
    crm__capture *c = NULL;
    cudaError_t err = cudaSuccess;
    pthread_mutex_lock(&crm__lock);
    crm__member *m = crm__member_of(stream, &c);
    if (m == NULL)
        err = cudaErrorIllegalState;
    for (size_t i = 0; err == cudaSuccess && i < ndeps; i++)
        if (!crm_graph_has(c->graph, deps[i]))
            err = cudaErrorInvalidValue;
    if (err == cudaSuccess && set)
        m->ntail = 0;
    if (err == cudaSuccess && crm__tail_merge(m, deps, (unsigned)ndeps) != 0)
        err = cudaErrorMemoryAllocation;
    pthread_mutex_unlock(&crm__lock);
    return err;
}

/* ---- captured work ---------------------------------------------------------------- */

/* Adds a node of type after m's tail, as device work (call) or a client step; it
 * becomes the tail. */
static cudaError_t crm__work(crm__capture *c, crm__member *m, crm_call *call, crm_gstep_fn step, const void *args,
                             size_t len, CUgraphNodeType type)
{
    if (c->invalid != cudaSuccess)
        return cudaErrorStreamCaptureInvalidated;
    if (m->cap == 0) {
        if ((m->tail = malloc(sizeof *m->tail)) == NULL)
            return cudaErrorMemoryAllocation;
        m->cap = 1;
    }
    crm_gnode *n = crm_graph_add(c->graph, type, m->tail, m->ntail);
    int rc = n == NULL         ? -1
             : call != NULL    ? crm_gnode_set_record(n, call)
             : step != NULL    ? crm_gnode_set_step(n, step, args, len)
                               : 0; /* a node the caller fills (a child graph) */
    if (rc != 0) {
        crm__invalidate(c); /* the graph lacks work the program asked for */
        return cudaErrorMemoryAllocation;
    }
    m->tail[0] = n;
    m->ntail = 1;
    return cudaSuccess;
}

/* cudaEventRecord on `stream`: on a capturing stream it notes what a later wait
 * depends on (1, nothing to send); elsewhere the event leaves any capture (0). */
static int crm__event_record(uint64_t event, uint64_t stream, cudaError_t *err)
{
    crm__capture *c = NULL;
    crm__member *m = crm__member_of(stream, &c);
    crm__cevent *e = crm__event_of(event);
    if (m == NULL) {
        if (e != NULL)
            crm__event_forget(e);
        return 0;
    }
    *err = c->invalid != cudaSuccess ? cudaErrorStreamCaptureInvalidated : cudaSuccess;
    if (*err != cudaSuccess)
        return 1;
    if (e == NULL && crm__nevents == crm__events_cap) {
        unsigned cap = crm__events_cap ? crm__events_cap * 2 : 8;
        crm__cevent *ev = realloc(crm__events, cap * sizeof *ev);
        if (ev == NULL) {
            *err = cudaErrorMemoryAllocation;
            return 1;
        }
        crm__events = ev, crm__events_cap = cap;
    }
    if (e == NULL) {
        e = &crm__events[crm__nevents++];
        memset(e, 0, sizeof *e);
        e->event = event;
    }
    e->capture = c;
    if (crm__nodes_copy(&e->nodes, &e->n, m->tail, m->ntail) != 0) {
        crm__event_forget(e);
        *err = cudaErrorMemoryAllocation;
    }
    return 1;
}

/* cudaStreamWaitEvent: a wait on an event recorded in a capture makes `stream`
 * depend on what the event followed, joining the capture when it is not in it. */
static int crm__event_wait(uint64_t stream, uint64_t event, crm_call *call, cudaError_t *err)
{
    crm__capture *c = NULL;
    crm__member *m = crm__member_of(stream, &c);
    crm__cevent *e = crm__event_of(event);
    if (e == NULL) {
        if (m == NULL)
            return 0;
        *err = crm__work(c, m, call, NULL, NULL, 0, CU_GRAPH_NODE_TYPE_WAIT_EVENT); /* an outside event */
        return 1;
    }
    if (m != NULL && c != e->capture) { /* two captures cannot merge */
        crm__invalidate(c);
        crm__invalidate(e->capture);
        *err = cudaErrorStreamCaptureIsolation;
        return 1;
    }
    c = e->capture;
    if (c->invalid != cudaSuccess) {
        *err = cudaErrorStreamCaptureInvalidated;
        return 1;
    }
    if (m == NULL && (m = crm__member_add(c, stream)) == NULL) {
        *err = cudaErrorMemoryAllocation;
        return 1;
    }
    *err = crm__tail_merge(m, e->nodes, e->n) == 0 ? cudaSuccess : cudaErrorMemoryAllocation;
    return 1;
}

int crm_capture_call(uint64_t stream, crm_call *call, cudaError_t *err)
{
    crm__capture *c = NULL;
    int handled = 1;
    *err = cudaSuccess;
    if (call->api == CRM_API_cudaStreamDestroy)
        return 0; /* not work of the stream: a member whose work was joined may go (graphMemoryNodes) */
    pthread_mutex_lock(&crm__lock);
    if (crm__legacy_refused(stream, 1))
        *err = cudaErrorStreamCaptureImplicit;
    else if (call->api == CRM_API_cudaEventRecord)
        handled = crm__event_record(call->crm_call_u.cudaEventRecord.event, stream, err);
    else if (call->api == CRM_API_cudaEventRecordWithFlags &&
             !(call->crm_call_u.cudaEventRecordWithFlags.flags & cudaEventRecordExternal))
        handled = crm__event_record(call->crm_call_u.cudaEventRecordWithFlags.event, stream, err);
    else if (call->api == CRM_API_cudaStreamWaitEvent)
        handled = crm__event_wait(stream, call->crm_call_u.cudaStreamWaitEvent.event, call, err);
    else {
        crm__member *m = crm__member_of(stream, &c);
        if (m == NULL)
            handled = 0;
        else
            *err = crm__work(c, m, call, NULL, NULL, 0, crm_graph_call_type(call));
    }
    pthread_mutex_unlock(&crm__lock);
    return handled;
}

int crm_capture_step(uint64_t stream, CUgraphNodeType type, crm_gstep_fn step, const void *args, size_t len,
                     cudaError_t *err)
{
    crm__capture *c = NULL;
    if (!crm_capture_any())
        return 0;
    pthread_mutex_lock(&crm__lock);
    int legacy = crm__legacy_refused(stream, 1);
    crm__member *m = legacy ? NULL : crm__member_of(stream, &c);
    if (legacy)
        *err = cudaErrorStreamCaptureImplicit;
    else if (m != NULL)
        *err = crm__work(c, m, NULL, step, args, len, type);
    pthread_mutex_unlock(&crm__lock);
    return legacy || m != NULL;
}

int crm_capture_on(uint64_t stream)
{
    crm__capture *c = NULL;
    if (!crm_capture_any())
        return 0;
    pthread_mutex_lock(&crm__lock);
    int on = crm__member_of(stream, &c) != NULL;
    pthread_mutex_unlock(&crm__lock);
    return on;
}

crm_gnode *crm_capture_last(uint64_t stream)
{
    crm__capture *c = NULL;
    if (!crm_capture_any())
        return NULL;
    pthread_mutex_lock(&crm__lock);
    crm__member *m = crm__member_of(stream, &c);
    crm_gnode *n = m != NULL && m->ntail == 1 ? m->tail[0] : NULL;
    pthread_mutex_unlock(&crm__lock);
    return n;
}

int crm_capture_child(uint64_t stream, const crm_graph *child, cudaError_t *err)
{
    crm__capture *c = NULL;
    if (!crm_capture_any())
        return 0;
    pthread_mutex_lock(&crm__lock);
    if (crm__legacy_refused(stream, 1)) {
        pthread_mutex_unlock(&crm__lock);
        *err = cudaErrorStreamCaptureImplicit;
        return 1;
    }
    crm__member *m = crm__member_of(stream, &c);
    if (m != NULL) {
        crm_graph *copy = c->invalid == cudaSuccess ? crm_graph_clone(child, NULL) : NULL;
        *err = crm__work(c, m, NULL, NULL, NULL, 0, CU_GRAPH_NODE_TYPE_GRAPH);
        if (*err == cudaSuccess && copy == NULL) {
            crm__invalidate(c);
            *err = cudaErrorMemoryAllocation;
        }
        if (*err == cudaSuccess)
            m->tail[0]->child = copy; /* the node crm__work just made */
        else
            crm_graph_free(copy);
    }
    pthread_mutex_unlock(&crm__lock);
    return m != NULL;
}

/* 1 when the calling thread may not make unsafe calls under the captures under way,
 * by CUDA's rules: in its own capture unless that was begun relaxed, in another
 * thread's global capture too when the thread's own mode is global, in none when it
 * is relaxed (cudaThreadExchangeStreamCaptureMode). Those captures are invalidated. */
static int crm__unsafe_refused(void)
{
    uint64_t me = crm_thread_serial();
    int refused = 0;
    if (crm__thread_mode == cudaStreamCaptureModeRelaxed)
        return 0; /* the thread asked to be let through (torch's allocator does) */
    for (unsigned i = 0; i < crm__ncaps; i++) {
        crm__capture *c = crm__caps[i];
        int mine = c->thread == me && c->mode != cudaStreamCaptureModeRelaxed;
        int theirs = c->thread != me && c->mode == cudaStreamCaptureModeGlobal &&
                     crm__thread_mode == cudaStreamCaptureModeGlobal;
        if (mine || theirs) {
            crm__invalidate(c);
            refused = 1;
        }
    }
    return refused;
}

cudaError_t crm_capture_refuse_sync(uint64_t stream, uint64_t event)
{
    crm__capture *c = NULL;
    if (!crm_capture_any())
        return cudaSuccess;
    int refused = 0;
    pthread_mutex_lock(&crm__lock);
    if (crm__legacy_refused(stream, 1)) {
        pthread_mutex_unlock(&crm__lock);
        return cudaErrorStreamCaptureImplicit;
    }
    if (stream != CRM_WIRE_BAD_HANDLE && crm__member_of(stream, &c) != NULL) {
        crm__invalidate(c);
        refused = 1;
    }
    crm__cevent *e = event != CRM_WIRE_BAD_HANDLE ? crm__event_of(event) : NULL;
    if (e != NULL) {
        crm__invalidate(e->capture);
        refused = 1;
    }
    if (stream == CRM_WIRE_BAD_HANDLE && event == CRM_WIRE_BAD_HANDLE)
        refused = crm__unsafe_refused();
    pthread_mutex_unlock(&crm__lock);
    return refused ? cudaErrorStreamCaptureUnsupported : cudaSuccess;
}

void crm_capture_reset(void)
{
    pthread_mutex_lock(&crm__lock);
    while (crm__ncaps > 0)
        crm__capture_drop(crm__caps[0], 1);
    pthread_mutex_unlock(&crm__lock);
}
