// graphcond.cu -- conditional graph nodes through the shim, every result read
// back and checked: if, if/else, while and switch nodes whose condition a kernel
// sets with cudaGraphSetConditional; a handle's default at each launch; bodies
// with memsets and device-to-device copies; a while loop holding an if; a
// conditional node added to a capture under way, its body captured into it; the
// handle outliving the graph it was made for; the driver's API; and what CUDA
// refuses (a handle of another graph, a shape a type cannot have, host work in a
// body). Prints "PASS graphcond".
#include "kcheck.h"
#include <cuda.h>
#include <cstring>

/* The condition from device memory. */
__global__ void set_from(const unsigned *value, cudaGraphConditionalHandle h)
{
    cudaGraphSetConditional(h, *value);
}

/* Records that body `which` ran: marks[which] += 1. */
__global__ void mark(unsigned *marks, int which)
{
    marks[which] += 1;
}

/* One turn of a loop: counts it, and ends the loop when *left reaches 0. */
__global__ void turn(unsigned *left, unsigned *turns, cudaGraphConditionalHandle h)
{
    *turns += 1;
    *left -= 1;
    cudaGraphSetConditional(h, *left != 0);
}

/* Sets h to whether the turn number is even (an if inside the loop). */
__global__ void even(const unsigned *turns, cudaGraphConditionalHandle h)
{
    cudaGraphSetConditional(h, *turns % 2 == 0);
}

static void CUDART_CB host_fn(void *) {}

struct dev {
    unsigned *value, *marks, *left, *turns;
    unsigned char *scratch;
};

static void read_marks(const dev &d, unsigned out[4])
{
    KCUDA(cudaMemcpy(out, d.marks, 4 * sizeof(unsigned), cudaMemcpyDeviceToHost));
}

static cudaGraphNode_t add_kernel(cudaGraph_t g, const cudaGraphNode_t *deps, size_t n, void *fn, void **args)
{
    cudaGraphNodeParams p = {};
    p.type = cudaGraphNodeTypeKernel;
    p.kernel.func = fn;
    p.kernel.gridDim = dim3(1);
    p.kernel.blockDim = dim3(1);
    p.kernel.kernelParams = args;
    cudaGraphNode_t node = nullptr;
    KCUDA(cudaGraphAddNode(&node, g, deps, nullptr, n, &p));
    return node;
}

static cudaGraphNode_t add_cond(cudaGraph_t g, const cudaGraphNode_t *deps, size_t n, cudaGraphConditionalHandle h,
                                cudaGraphConditionalNodeType type, unsigned size, cudaGraph_t *bodies)
{
    cudaGraphNodeParams p = {};
    p.type = cudaGraphNodeTypeConditional;
    p.conditional.handle = h;
    p.conditional.type = type;
    p.conditional.size = size;
    cudaGraphNode_t node = nullptr;
    KCUDA(cudaGraphAddNode(&node, g, deps, nullptr, n, &p));
    for (unsigned i = 0; i < size && p.conditional.phGraph_out != nullptr; i++)
        bodies[i] = p.conditional.phGraph_out[i];
    return node;
}

/* A kernel sets the condition from *value; bodies mark which ran. Switch over
 * `size` bodies (or if / if-else); each value chosen is launched and checked. */
static void test_pick(const dev &d, cudaGraphConditionalNodeType type, unsigned size)
{
    cudaGraph_t g, bodies[4] = {};
    cudaGraphConditionalHandle h;
    KCUDA(cudaGraphCreate(&g, 0));
    KCUDA(cudaGraphConditionalHandleCreate(&h, g));
    void *args[] = {(void *)&d.value, &h};
    cudaGraphNode_t k = add_kernel(g, nullptr, 0, (void *)set_from, args);
    add_cond(g, &k, 1, h, type, size, bodies);
    for (unsigned b = 0; b < size; b++) {
        int which = (int)b;
        void *margs[] = {(void *)&d.marks, &which};
        add_kernel(bodies[b], nullptr, 0, (void *)mark, margs);
    }
    cudaGraphExec_t e;
    KCUDA(cudaGraphInstantiate(&e, g, 0));
    for (unsigned value = 0; value <= size; value++) {
        unsigned marks[4], want[4] = {};
        KCUDA(cudaMemset(d.marks, 0, 4 * sizeof(unsigned)));
        KCUDA(cudaMemcpy(d.value, &value, sizeof value, cudaMemcpyHostToDevice));
        KCUDA(cudaGraphLaunch(e, 0));
        KCUDA(cudaStreamSynchronize(0));
        if (type == cudaGraphCondTypeSwitch && value < size)
            want[value] = 1;
        else if (type == cudaGraphCondTypeIf && value != 0)
            want[0] = 1;
        else if (type == cudaGraphCondTypeIf && size == 2)
            want[1] = 1;
        read_marks(d, marks);
        KCHECK(std::memcmp(marks, want, sizeof want) == 0, "type %d size %u value %u: marks %u %u %u %u", (int)type,
               size, value, marks[0], marks[1], marks[2], marks[3]);
    }
    KCUDA(cudaGraphExecDestroy(e));
    KCUDA(cudaGraphDestroy(g));
}

/* while (h) { turn; if (turns even) mark[0]++ }, h's default 1 at each launch
 * (a do-while); the body also memsets and copies device memory. The graph is
 * destroyed before the launches: the executable graph keeps what it needs. */
static void test_loop(const dev &d)
{
    cudaGraph_t g, body, inner;
    cudaGraphConditionalHandle loop, pick;
    KCUDA(cudaGraphCreate(&g, 0));
    KCUDA(cudaGraphConditionalHandleCreate(&loop, g, 1, cudaGraphCondAssignDefault));
    add_cond(g, nullptr, 0, loop, cudaGraphCondTypeWhile, 1, &body);
    KCUDA(cudaGraphConditionalHandleCreate(&pick, body));
    void *targs[] = {(void *)&d.left, (void *)&d.turns, &loop};
    cudaGraphNode_t t = add_kernel(body, nullptr, 0, (void *)turn, targs);
    void *eargs[] = {(void *)&d.turns, &pick};
    cudaGraphNode_t ev = add_kernel(body, &t, 1, (void *)even, eargs);
    add_cond(body, &ev, 1, pick, cudaGraphCondTypeIf, 1, &inner);
    int which = 0;
    void *margs[] = {(void *)&d.marks, &which};
    add_kernel(inner, nullptr, 0, (void *)mark, margs);
    cudaGraphNode_t ms, cp;
    cudaMemsetParams mp = {};
    mp.dst = d.scratch, mp.value = 7, mp.elementSize = 1, mp.width = 16, mp.height = 1;
    KCUDA(cudaGraphAddMemsetNode(&ms, body, &t, 1, &mp));
    KCUDA(cudaGraphAddMemcpyNode1D(&cp, body, &ms, 1, d.scratch + 4, d.scratch, 16, cudaMemcpyDeviceToDevice));
    cudaGraphExec_t e;
    KCUDA(cudaGraphInstantiate(&e, g, 0));
    KCUDA(cudaGraphDestroy(g));
    for (unsigned n = 1; n <= 7; n += 3) {
        unsigned zero[4] = {}, turns = 0, marks[4];
        KCUDA(cudaMemcpy(d.marks, zero, sizeof zero, cudaMemcpyHostToDevice));
        KCUDA(cudaMemcpy(d.turns, &turns, sizeof turns, cudaMemcpyHostToDevice));
        KCUDA(cudaMemcpy(d.left, &n, sizeof n, cudaMemcpyHostToDevice));
        KCUDA(cudaMemset(d.scratch, 0, 32));
        KCUDA(cudaGraphLaunch(e, 0));
        KCUDA(cudaDeviceSynchronize());
        KCUDA(cudaMemcpy(&turns, d.turns, sizeof turns, cudaMemcpyDeviceToHost));
        read_marks(d, marks);
        KCHECK(turns == n, "while: %u turns for %u", turns, n);
        KCHECK(marks[0] == n / 2, "if inside while: %u of %u turns even", marks[0], n);
        unsigned char scratch[32], want[32] = {};
        std::memset(want, 7, 20);
        KCUDA(cudaMemcpy(scratch, d.scratch, sizeof scratch, cudaMemcpyDeviceToHost));
        KCHECK(std::memcmp(scratch, want, sizeof want) == 0, "memset and copy in the loop's body");
    }
    KCUDA(cudaGraphExecDestroy(e));
}

/* The sample's pattern: a conditional node added to the graph a capture is
 * building, the capture going on after it, its body captured into it. */
static void test_captured(const dev &d)
{
    cudaStream_t s, bs;
    cudaGraph_t g, body;
    cudaStreamCaptureStatus status;
    const cudaGraphNode_t *deps;
    size_t ndeps;
    cudaGraphConditionalHandle h;
    KCUDA(cudaStreamCreate(&s));
    KCUDA(cudaStreamCreate(&bs));
    KCUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    KCUDA(cudaStreamGetCaptureInfo(s, &status, nullptr, &g, &deps, nullptr, &ndeps));
    KCUDA(cudaGraphConditionalHandleCreate(&h, g));
    set_from<<<1, 1, 0, s>>>(d.value, h);
    KCUDA(cudaStreamGetCaptureInfo(s, &status, nullptr, &g, &deps, nullptr, &ndeps));
    KCHECK(ndeps == 1, "one node before the conditional: %zu", ndeps);
    cudaGraphNode_t c = add_cond(g, deps, ndeps, h, cudaGraphCondTypeIf, 1, &body);
    KCUDA(cudaStreamUpdateCaptureDependencies(s, &c, nullptr, 1, cudaStreamSetCaptureDependencies));
    mark<<<1, 1, 0, s>>>(d.marks, 1);
    cudaGraph_t captured;
    KCUDA(cudaStreamEndCapture(s, &captured));
    KCHECK(captured == g, "the capture's graph is the one it reported");
    KCUDA(cudaStreamBeginCaptureToGraph(bs, body, nullptr, nullptr, 0, cudaStreamCaptureModeGlobal));
    mark<<<1, 1, 0, bs>>>(d.marks, 0);
    KCUDA(cudaStreamEndCapture(bs, nullptr));
    cudaGraphExec_t e;
    KCUDA(cudaGraphInstantiate(&e, captured, 0));
    for (unsigned value = 0; value < 2; value++) {
        unsigned marks[4];
        KCUDA(cudaMemset(d.marks, 0, 4 * sizeof(unsigned)));
        KCUDA(cudaMemcpy(d.value, &value, sizeof value, cudaMemcpyHostToDevice));
        KCUDA(cudaGraphLaunch(e, s));
        KCUDA(cudaStreamSynchronize(s));
        read_marks(d, marks);
        KCHECK(marks[0] == value && marks[1] == 1, "captured if, value %u: marks %u %u", value, marks[0], marks[1]);
    }
    KCUDA(cudaGraphExecDestroy(e));
    KCUDA(cudaGraphDestroy(captured));
    KCUDA(cudaStreamDestroy(s));
    KCUDA(cudaStreamDestroy(bs));
}

/* What CUDA refuses. */
static void test_refused(const dev &d)
{
    cudaGraph_t g, other, body[3];
    cudaGraphConditionalHandle h, foreign;
    cudaGraphNodeParams p = {};
    cudaGraphNode_t node;
    KCUDA(cudaGraphCreate(&g, 0));
    KCUDA(cudaGraphCreate(&other, 0));
    KCUDA(cudaGraphConditionalHandleCreate(&h, g));
    KCUDA(cudaGraphConditionalHandleCreate(&foreign, other));
    KCHECK(cudaGraphConditionalHandleCreate(&h, g, 0, 99) == cudaErrorInvalidValue, "unknown flags");
    p.type = cudaGraphNodeTypeConditional;
    p.conditional.handle = foreign;
    p.conditional.type = cudaGraphCondTypeIf;
    p.conditional.size = 1;
    KCHECK(cudaGraphAddNode(&node, g, nullptr, nullptr, 0, &p) == cudaErrorInvalidValue, "another graph's handle");
    p.conditional.handle = h;
    p.conditional.size = 3;
    KCHECK(cudaGraphAddNode(&node, g, nullptr, nullptr, 0, &p) == cudaErrorInvalidValue, "an if of three bodies");
    p.conditional.type = cudaGraphCondTypeWhile;
    p.conditional.size = 2;
    KCHECK(cudaGraphAddNode(&node, g, nullptr, nullptr, 0, &p) == cudaErrorInvalidValue, "a while of two bodies");
    cudaGetLastError();
    add_cond(g, nullptr, 0, h, cudaGraphCondTypeSwitch, 3, body);
    cudaHostNodeParams hp = {host_fn, nullptr};
    KCUDA(cudaGraphAddHostNode(&node, body[2], nullptr, 0, &hp));
    cudaGraphExec_t e;
    KCHECK(cudaGraphInstantiate(&e, g, 0) == cudaErrorNotSupported, "a host node in a body");
    cudaGetLastError();
    KCUDA(cudaGraphDestroy(g));
    KCUDA(cudaGraphDestroy(other));
    KCUDA(cudaMemset(d.marks, 0, 16)); /* the session still works */
    KCUDA(cudaDeviceSynchronize());
}

/* A driver call of CUDA 13's, typed as its declaration. */
#define DRV(name) ((decltype(&name))kcheck_driver_fn(#name, 13000))

/* The driver's calls on the same objects: a handle and an if node. */
static void test_driver(const dev &d)
{
    CUgraph g, body;
    CUgraphConditionalHandle h;
    KCHECK(DRV(cuGraphCreate)(&g, 0) == CUDA_SUCCESS, "cuGraphCreate");
    KCHECK(DRV(cuGraphConditionalHandleCreate)(&h, g, nullptr, 1, CU_GRAPH_COND_ASSIGN_DEFAULT) == CUDA_SUCCESS,
           "cuGraphConditionalHandleCreate");
    CUgraphNodeParams p = {};
    p.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
    p.conditional.handle = h;
    p.conditional.type = CU_GRAPH_COND_TYPE_IF;
    p.conditional.size = 1;
    CUgraphNode c;
    KCHECK(DRV(cuGraphAddNode)(&c, g, nullptr, nullptr, 0, &p) == CUDA_SUCCESS, "cuGraphAddNode (conditional)");
    body = p.conditional.phGraph_out != nullptr ? p.conditional.phGraph_out[0] : nullptr;
    int which = 2;
    void *margs[] = {(void *)&d.marks, &which};
    add_kernel((cudaGraph_t)body, nullptr, 0, (void *)mark, margs);
    CUgraphNodeType type;
    KCHECK(DRV(cuGraphNodeGetType)(c, &type) == CUDA_SUCCESS && type == CU_GRAPH_NODE_TYPE_CONDITIONAL, "node type");
    CUgraphExec e;
    KCHECK(DRV(cuGraphInstantiate)(&e, g, 0) == CUDA_SUCCESS, "cuGraphInstantiate");
    KCUDA(cudaMemset(d.marks, 0, 16));
    for (int i = 0; i < 3; i++)
        KCHECK(DRV(cuGraphLaunch)(e, nullptr) == CUDA_SUCCESS, "cuGraphLaunch");
    KCHECK(DRV(cuStreamSynchronize)(nullptr) == CUDA_SUCCESS, "cuStreamSynchronize");
    unsigned marks[4];
    read_marks(d, marks);
    KCHECK(marks[2] == 3, "the default (1) taken at each launch: %u of 3", marks[2]);
    KCHECK(DRV(cuGraphExecDestroy)(e) == CUDA_SUCCESS && DRV(cuGraphDestroy)(g) == CUDA_SUCCESS, "destroy");
}

int main()
{
    dev d;
    KCUDA(cudaMalloc(&d.value, sizeof(unsigned)));
    KCUDA(cudaMalloc(&d.marks, 4 * sizeof(unsigned)));
    KCUDA(cudaMalloc(&d.left, sizeof(unsigned)));
    KCUDA(cudaMalloc(&d.turns, sizeof(unsigned)));
    KCUDA(cudaMalloc(&d.scratch, 32));
    test_pick(d, cudaGraphCondTypeIf, 1);
    test_pick(d, cudaGraphCondTypeIf, 2);
    test_pick(d, cudaGraphCondTypeSwitch, 3);
    test_loop(d);
    test_captured(d);
    test_refused(d);
    test_driver(d);
    KCUDA(cudaFree(d.value));
    KCUDA(cudaFree(d.marks));
    KCUDA(cudaFree(d.left));
    KCUDA(cudaFree(d.turns));
    KCUDA(cudaFree(d.scratch));
    KCUDA(cudaDeviceSynchronize());
    return kcheck_finish("graphcond");
}
