// graphs.cu -- CUDA graphs through the shim, every byte checked against the host's
// own arithmetic: a captured step (host-to-device copies from pageable and pinned
// memory, kernels, a memset, a device-to-device copy, a cuBLAS GEMM, work forked
// onto a second stream and joined back by events, copies back to pageable and
// pinned memory, a host function) replayed with new host bytes each time; a cuDNN
// call captured; eight threads capturing and replaying at once; a graph
// built node by node; calls a capture forbids; graph update, clone and child
// graphs; and the driver's API on the same objects.
#include "kcheck.h"
#include "ksteps.h"
#include <cublas_v2.h>
#include <cudnn.h>
#include <cuda.h>
#include <cstring>
#include <unistd.h>
#include <thread>
#include <vector>

#define N 32 /* an N x N matrix */
#define REPLAYS 5

struct seen {
    const float *host; /* what the host function reads */
    float first;       /* host[0] when it ran */
    int calls;
};

static void CUDART_CB note(void *arg)
{
    seen *s = (seen *)arg;
    s->first = s->host[0];
    s->calls++;
}

static const int n = N * N;
static const size_t bytes = n * sizeof(float);

/* The captured step's expected output for input `in`: out = 2*in + 1 (kernels on
 * the first stream), side = in * 3 (the second stream), gemm = (2*in+1) x ones. */
static void expect(const float *in, float *out, float *side, float *gemm)
{
    for (int i = 0; i < n; i++) {
        out[i] = 2.0f * in[i] + 1.0f;
        side[i] = in[i] * 3.0f;
    }
    for (int col = 0; col < N; col++)
        for (int row = 0; row < N; row++) {
            float sum = 0.0f;
            for (int k = 0; k < N; k++)
                sum += out[k * N + row]; /* column-major A(row, k) times ones */
            gemm[col * N + row] = sum;
        }
}

static void fill(float *in, int round)
{
    for (int i = 0; i < n; i++)
        in[i] = (float)((i * 5 + round * 3) % 11) / 8.0f; /* exact binary fractions */
}

static void captured_step(void)
{
    float *a, *b, *ones, *c, *side, *hold;
    static float in[N * N], out[N * N], want_out[N * N], want_side[N * N], want_gemm[N * N], got_side[N * N];
    float *pinned_in, *pinned_out;
    cudaStream_t s, t;
    cudaEvent_t fork, join;
    cublasHandle_t blas;
    seen hostfn = {out, 0.0f, 0};
    KCUDA(cudaMalloc(&a, bytes));
    KCUDA(cudaMalloc(&b, bytes));
    KCUDA(cudaMalloc(&ones, bytes));
    KCUDA(cudaMalloc(&c, bytes));
    KCUDA(cudaMalloc(&side, bytes));
    KCUDA(cudaMalloc(&hold, bytes));
    KCUDA(cudaMallocHost(&pinned_in, bytes));
    KCUDA(cudaMallocHost(&pinned_out, bytes));
    KCUDA(cudaStreamCreate(&s));
    KCUDA(cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking));
    KCUDA(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    KCUDA(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    KCHECK(cublasCreate(&blas) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
    KCHECK(cublasSetStream(blas, s) == CUBLAS_STATUS_SUCCESS, "cublasSetStream");
    float one_row[N * N];
    for (int i = 0; i < n; i++)
        one_row[i] = 1.0f;
    KCUDA(cudaMemcpy(ones, one_row, bytes, cudaMemcpyHostToDevice));

    cudaStreamCaptureStatus status;
    KCUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    KCUDA(cudaStreamIsCapturing(s, &status));
    KCHECK(status == cudaStreamCaptureStatusActive, "the stream captures (status %d)", (int)status);
    KCUDA(cudaStreamIsCapturing(t, &status));
    KCHECK(status == cudaStreamCaptureStatusNone, "the other stream does not capture yet");
    const float alpha = 1.0f, beta = 0.0f;
    KCUDA(cudaMemcpyAsync(a, in, bytes, cudaMemcpyHostToDevice, s));                  /* pageable */
    KCUDA(cudaMemcpyAsync(b, pinned_in, bytes, cudaMemcpyHostToDevice, s));           /* pinned */
    KCUDA(cudaEventRecord(fork, s));
    KCUDA(cudaStreamWaitEvent(t, fork, 0));                                          /* t joins the capture */
    KCUDA(cudaStreamIsCapturing(t, &status));
    KCHECK(status == cudaStreamCaptureStatusActive, "the forked stream captures (status %d)", (int)status);
    KCUDA(cudaMemsetAsync(side, 0, bytes, t));
    add<<<(n + 127) / 128, 128, 0, t>>>(side, b, n);
    scale<<<(n + 127) / 128, 128, 0, t>>>(side, n, 3.0f);
    KCUDA(cudaEventRecord(join, t));
    scale<<<(n + 127) / 128, 128, 0, s>>>(a, n, 2.0f);
    add<<<(n + 127) / 128, 128, 0, s>>>(a, ones, n);
    KCHECK(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &alpha, a, N, ones, N, &beta, c, N) ==
               CUBLAS_STATUS_SUCCESS, "cublasSgemm in a capture");
    KCUDA(cudaMemcpyAsync(hold, a, bytes, cudaMemcpyDeviceToDevice, s));
    KCUDA(cudaStreamWaitEvent(s, join, 0));                                          /* joined back */
    KCUDA(cudaMemcpyAsync(out, hold, bytes, cudaMemcpyDeviceToHost, s));              /* pageable */
    KCUDA(cudaLaunchHostFunc(s, note, &hostfn));
    KCUDA(cudaMemcpyAsync(pinned_out, side, bytes, cudaMemcpyDeviceToHost, s));       /* pinned */
    unsigned long long id = 0;
    size_t ndeps = 0;
    cudaGraph_t captured = NULL;
    KCUDA(cudaStreamGetCaptureInfo(s, &status, &id, &captured, NULL, NULL, &ndeps));
    KCHECK(status == cudaStreamCaptureStatusActive && id != 0 && captured != NULL && ndeps == 1,
           "capture info: status %d id %llu graph %p deps %zu", (int)status, id, (void *)captured, ndeps);
    cudaGraph_t graph;
    KCUDA(cudaStreamEndCapture(s, &graph));
    KCHECK(graph == captured, "the graph ended is the one captured");
    KCUDA(cudaStreamIsCapturing(t, &status));
    KCHECK(status == cudaStreamCaptureStatusNone, "the capture ended on both streams");
    KCHECK(hostfn.calls == 0, "nothing ran while it was captured");

    size_t nodes = 0;
    KCUDA(cudaGraphGetNodes(graph, NULL, &nodes));
    KCHECK(nodes == 12, "12 nodes captured, not %zu", nodes);
    cudaGraphNode_t list[16];
    size_t room = 16;
    KCUDA(cudaGraphGetNodes(graph, list, &room));
    int kinds[16] = {0};
    for (size_t i = 0; i < room; i++) {
        cudaGraphNodeType type;
        KCUDA(cudaGraphNodeGetType(list[i], &type));
        if (type < 16)
            kinds[type]++;
    }
    KCHECK(kinds[cudaGraphNodeTypeKernel] == 5 && kinds[cudaGraphNodeTypeMemcpy] == 5 &&
               kinds[cudaGraphNodeTypeMemset] == 1 && kinds[cudaGraphNodeTypeHost] == 1,
           "node types: %d kernels, %d copies, %d memsets, %d host", kinds[cudaGraphNodeTypeKernel],
           kinds[cudaGraphNodeTypeMemcpy], kinds[cudaGraphNodeTypeMemset], kinds[cudaGraphNodeTypeHost]);
    for (size_t i = 0; i < room; i++) {
        cudaGraphNodeType type;
        cudaKernelNodeParams kp = {};
        if (cudaGraphNodeGetType(list[i], &type) == cudaSuccess && type == cudaGraphNodeTypeKernel &&
            cudaGraphKernelNodeGetParams(list[i], &kp) == cudaSuccess && kp.func == (void *)add) {
            KCHECK(kp.gridDim.x == (n + 127) / 128 && kp.blockDim.x == 128 && *(int *)kp.kernelParams[2] == n,
                   "a captured kernel node's parameters read back");
            break;
        }
    }
    cudaGetLastError(); /* the GEMM's node has no launch of ours to give back */
    size_t roots = 0;
    KCUDA(cudaGraphGetRootNodes(graph, NULL, &roots));
    KCHECK(roots == 1, "one root, not %zu", roots);

    cudaGraphExec_t exec;
    KCUDA(cudaGraphInstantiate(&exec, graph, 0));
    for (int round = 0; round < REPLAYS; round++) {
        fill(in, round);
        fill(pinned_in, round + 7);
        std::memset(out, 0, bytes);
        KCUDA(cudaGraphLaunch(exec, s));
        KCUDA(cudaStreamSynchronize(s));
        expect(in, want_out, want_side, want_gemm);
        float pin_in_copy[N * N], pin_side[N * N], unused[N * N], unused2[N * N];
        std::memcpy(pin_in_copy, pinned_in, bytes);
        expect(pin_in_copy, unused, pin_side, unused2);
        int bad = 0;
        for (int i = 0; i < n; i++)
            bad += out[i] != want_out[i] || pinned_out[i] != pin_side[i];
        KCHECK(bad == 0, "replay %d: %d wrong values (out[0] %g want %g, side[0] %g want %g)", round, bad, out[0],
               want_out[0], pinned_out[0], pin_side[0]);
        KCHECK(hostfn.calls == round + 1 && hostfn.first == want_out[0],
               "replay %d: the host function ran %d times and saw %g, want %g", round, hostfn.calls, hostfn.first,
               want_out[0]);
        KCUDA(cudaMemcpy(got_side, c, bytes, cudaMemcpyDeviceToHost));
        bad = 0;
        for (int i = 0; i < n; i++)
            bad += got_side[i] != want_gemm[i];
        KCHECK(bad == 0, "replay %d: the captured GEMM has %d wrong values", round, bad);
    }
    KCUDA(cudaGraphExecDestroy(exec));
    KCUDA(cudaGraphDestroy(graph));
    cublasDestroy(blas);
    KCUDA(cudaEventDestroy(fork));
    KCUDA(cudaEventDestroy(join));
    KCUDA(cudaStreamDestroy(s));
    KCUDA(cudaStreamDestroy(t));
    KCUDA(cudaFreeHost(pinned_in));
    KCUDA(cudaFreeHost(pinned_out));
    cudaFree(a), cudaFree(b), cudaFree(ones), cudaFree(c), cudaFree(side), cudaFree(hold);
}

/* What a capture forbids fails as on a GPU, and invalidates the capture. */
static void forbidden(void)
{
    cudaStream_t s;
    cudaGraph_t graph = (cudaGraph_t)0x1;
    float *d, *more;
    KCUDA(cudaStreamCreate(&s));
    KCUDA(cudaMalloc(&d, 256));
    KCUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    KCHECK(cudaStreamSynchronize(s) == cudaErrorStreamCaptureUnsupported, "a wait on a capturing stream is refused");
    cudaStreamCaptureStatus status;
    KCUDA(cudaStreamIsCapturing(s, &status));
    KCHECK(status == cudaStreamCaptureStatusInvalidated, "and invalidates the capture (status %d)", (int)status);
    KCHECK(cudaMemsetAsync(d, 0, 256, s) == cudaErrorStreamCaptureInvalidated, "later work is refused");
    KCHECK(cudaStreamEndCapture(s, &graph) == cudaErrorStreamCaptureInvalidated && graph == NULL,
           "the capture ends invalidated, with no graph");
    cudaGetLastError();

    KCUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    KCHECK(cudaMalloc(&more, 256) == cudaErrorStreamCaptureUnsupported, "cudaMalloc in a global capture");
    KCHECK(cudaStreamEndCapture(s, &graph) == cudaErrorStreamCaptureInvalidated, "invalidated it");
    char host[256];
    KCUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    KCHECK(cudaMemcpy(host, d, 256, cudaMemcpyDeviceToHost) == cudaErrorStreamCaptureUnsupported,
           "a synchronous copy in a capture");
    KCHECK(cudaStreamEndCapture(s, &graph) == cudaErrorStreamCaptureInvalidated, "invalidated it too");
    cudaGetLastError();

    /* a cuBLAS result read back to the host would wait for the capturing stream */
    cublasHandle_t blas;
    float dot = -1.0f;
    KCHECK(cublasCreate(&blas) == CUBLAS_STATUS_SUCCESS && cublasSetStream(blas, s) == CUBLAS_STATUS_SUCCESS,
           "cublasCreate");
    KCUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    KCHECK(cublasSdot(blas, 64, d, 1, d, 1, &dot) == CUBLAS_STATUS_NOT_SUPPORTED && dot == -1.0f,
           "a host-mode cublasSdot in a capture is refused and writes nothing");
    KCHECK(cudaStreamEndCapture(s, &graph) == cudaErrorStreamCaptureInvalidated, "and invalidates the capture");
    cudaGetLastError();
    cublasDestroy(blas);

    KCUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    KCUDA(cudaMalloc(&more, 256)); /* relaxed: allowed */
    KCUDA(cudaMemsetAsync(d, 7, 256, s));
    KCUDA(cudaStreamEndCapture(s, &graph));
    KCHECK(graph != NULL, "a relaxed capture with a cudaMalloc in it ends well");
    KCUDA(cudaGraphDestroy(graph));
    KCHECK(cudaStreamBeginCapture(0, cudaStreamCaptureModeGlobal) == cudaErrorStreamCaptureUnsupported,
           "the legacy stream cannot capture");
    cudaGetLastError();
    KCUDA(cudaFree(more));
    KCUDA(cudaFree(d));
    KCUDA(cudaStreamDestroy(s));
}

/* A graph built node by node: memset -> kernel -> copy to the host -> host node;
 * then updated with a graph of the same shape, cloned, and nested. */
static void built(void)
{
    float *d;
    static float back[N * N];
    seen hostfn = {back, 0.0f, 0};
    cudaStream_t s;
    KCUDA(cudaStreamCreate(&s));
    KCUDA(cudaMalloc(&d, bytes));
    cudaGraph_t g[2];
    for (int k = 0; k < 2; k++) {
        cudaGraphNode_t set, ker, copy, host;
        cudaMemsetParams mp = {};
        mp.dst = d, mp.value = 0, mp.elementSize = 4, mp.width = n, mp.height = 1;
        KCUDA(cudaGraphCreate(&g[k], 0));
        KCUDA(cudaGraphAddMemsetNode(&set, g[k], NULL, 0, &mp));
        float *ptr = d;
        int count = n;
        float by = k == 0 ? 1.0f : 5.0f;
        void *args[] = {&ptr, &ptr, &count};
        cudaKernelNodeParams kp = {};
        kp.func = (void *)add, kp.gridDim = dim3((n + 127) / 128), kp.blockDim = dim3(128), kp.kernelParams = args;
        KCUDA(cudaGraphAddKernelNode(&ker, g[k], &set, 1, &kp)); /* d += d: still zero */
        void *args2[] = {&ptr, &count, &by};
        kp.func = (void *)scale, kp.kernelParams = args2;
        cudaGraphNode_t ker2;
        KCUDA(cudaGraphAddKernelNode(&ker2, g[k], &ker, 1, &kp));
        KCUDA(cudaGraphAddMemcpyNode1D(&copy, g[k], &ker2, 1, back, d, bytes, cudaMemcpyDeviceToHost));
        cudaHostNodeParams hp = {note, &hostfn};
        KCUDA(cudaGraphAddHostNode(&host, g[k], &copy, 1, &hp));
    }
    cudaGraphExec_t exec;
    KCUDA(cudaGraphInstantiate(&exec, g[0], 0));
    back[0] = 42.0f;
    KCUDA(cudaGraphLaunch(exec, s));
    KCUDA(cudaStreamSynchronize(s));
    KCHECK(hostfn.calls == 1 && back[0] == 0.0f && hostfn.first == 0.0f, "built graph: %d calls, back[0] %g",
           hostfn.calls, back[0]);
    cudaGraphExecUpdateResultInfo info;
    KCUDA(cudaGraphExecUpdate(exec, g[1], &info));
    KCHECK(info.result == cudaGraphExecUpdateSuccess, "the update took");
    KCUDA(cudaGraphLaunch(exec, s));
    KCUDA(cudaStreamSynchronize(s));
    KCHECK(hostfn.calls == 2, "the updated graph ran its host node");

    cudaGraph_t clone, outer;
    cudaGraphNode_t child, first;
    KCUDA(cudaGraphClone(&clone, g[0]));
    KCUDA(cudaGraphCreate(&outer, 0));
    KCUDA(cudaGraphAddEmptyNode(&first, outer, NULL, 0));
    KCUDA(cudaGraphAddChildGraphNode(&child, outer, &first, 1, clone));
    cudaGraphExec_t exec2;
    KCUDA(cudaGraphInstantiate(&exec2, outer, 0));
    KCUDA(cudaGraphLaunch(exec2, s));
    KCUDA(cudaStreamSynchronize(s));
    KCHECK(hostfn.calls == 3, "the child graph ran its host node (%d calls)", hostfn.calls);
    cudaGraphNode_t from[4], to[4];
    size_t edges = 4;
    KCUDA(cudaGraphGetEdges(g[0], from, to, NULL, &edges));
    KCHECK(edges == 4, "4 edges, not %zu", edges);
    KCUDA(cudaGraphExecDestroy(exec));
    KCUDA(cudaGraphExecDestroy(exec2));
    KCUDA(cudaGraphDestroy(outer));
    KCUDA(cudaGraphDestroy(clone));
    KCUDA(cudaGraphDestroy(g[0]));
    KCUDA(cudaGraphDestroy(g[1]));
    KCUDA(cudaFree(d));
    KCUDA(cudaStreamDestroy(s));
}

/* Parameters changed in an executable graph take at its next launch. */
/* A kernel node's parameters: scale(d, 64, by) on one block of 64 threads, the
 * arguments this object's (change `by`, set the parameters again). */
struct scale_node {
    float *ptr;
    int count = 64;
    float by;
    void *args[3] = {&ptr, &count, &by};
    cudaKernelNodeParams kp = {};
    scale_node(float *d, float factor) : ptr(d), by(factor)
    {
        kp.func = (void *)scale, kp.gridDim = dim3(1), kp.blockDim = dim3(64), kp.kernelParams = args;
    }
};

static void exec_setters(void)
{
    float *d, ones[64], first[64], second[64];
    cudaStream_t s;
    for (int i = 0; i < 64; i++)
        ones[i] = 1.0f;
    KCUDA(cudaStreamCreate(&s));
    KCUDA(cudaMalloc(&d, sizeof ones));
    KCUDA(cudaMemcpy(d, ones, sizeof ones, cudaMemcpyHostToDevice));
    cudaGraph_t g;
    cudaGraphNode_t ker, copy;
    scale_node sn(d, 2.0f);
    cudaKernelNodeParams &kp = sn.kp;
    float &by = sn.by;
    KCUDA(cudaGraphCreate(&g, 0));
    KCUDA(cudaGraphAddKernelNode(&ker, g, NULL, 0, &kp));
    KCUDA(cudaGraphAddMemcpyNode1D(&copy, g, &ker, 1, first, d, sizeof first, cudaMemcpyDeviceToHost));
    cudaKernelNodeParams got = {};
    KCUDA(cudaGraphKernelNodeGetParams(ker, &got));
    KCHECK(got.func == (void *)scale && got.gridDim.x == 1 && got.blockDim.x == 64 && got.kernelParams != NULL &&
               *(float **)got.kernelParams[0] == d && *(int *)got.kernelParams[1] == 64 &&
               *(float *)got.kernelParams[2] == 2.0f,
           "cudaGraphKernelNodeGetParams gives back the node's launch and its own copy of the arguments");
    cudaGraphExec_t exec;
    KCUDA(cudaGraphInstantiate(&exec, g, 0));
    KCUDA(cudaGraphLaunch(exec, s)); /* d = 2 */
    by = 3.0f;                       /* the node took its own copy of the arguments */
    KCUDA(cudaGraphExecKernelNodeSetParams(exec, ker, &kp));
    KCUDA(cudaGraphExecMemcpyNodeSetParams1D(exec, copy, second, d, sizeof second, cudaMemcpyDeviceToHost));
    KCUDA(cudaGraphLaunch(exec, s)); /* d = 6 */
    KCUDA(cudaStreamSynchronize(s));
    KCHECK(first[0] == 2.0f && first[63] == 2.0f && second[0] == 6.0f && second[63] == 6.0f,
           "exec setters: first launch %g, second %g (want 2, 6)", first[0], second[0]);
    KCHECK(cudaGraphExecKernelNodeSetParams(exec, copy, &kp) == cudaErrorInvalidValue,
           "a kernel's parameters for a copy node are refused");
    cudaGraph_t other;
    cudaGraphNode_t stranger;
    KCUDA(cudaGraphCreate(&other, 0));
    KCUDA(cudaGraphAddKernelNode(&stranger, other, NULL, 0, &kp));
    KCHECK(cudaGraphExecKernelNodeSetParams(exec, stranger, &kp) == cudaErrorInvalidValue,
           "a node of another graph is refused, though it stands where the exec's kernel node does");
    KCUDA(cudaGraphDestroy(other));
    cudaGetLastError();
    KCUDA(cudaGraphExecDestroy(exec));
    KCUDA(cudaGraphDestroy(g));
    KCUDA(cudaFree(d));
    KCUDA(cudaStreamDestroy(s));
}

/* Kernel node attributes kept, read back, copied, carried through new parameters
 * and to the launch; memcpy nodes' parameters read back (a 1D node, 3D parameters
 * as given, a captured copy), at both APIs. */

/* g as cudaGraphDebugDotPrint writes it, in out (NUL-terminated). */
static void read_dot(cudaGraph_t g, unsigned flags, char *out, size_t size)
{
    char path[] = "/tmp/cudarem-dot-XXXXXX";
    int fd = mkstemp(path);
    out[0] = '\0';
    KCHECK(fd >= 0, "mkstemp");
    if (fd < 0)
        return;
    close(fd);
    KCUDA(cudaGraphDebugDotPrint(g, path, flags));
    FILE *f = std::fopen(path, "r");
    size_t got = f != NULL ? std::fread(out, 1, size - 1, f) : 0;
    out[got] = '\0';
    if (f != NULL)
        std::fclose(f);
    unlink(path);
}

static void node_queries(void)
{
    float *d, *d2, ones[64], host[64], back[64];
    cudaStream_t s;
    for (int i = 0; i < 64; i++)
        ones[i] = 1.0f;
    KCUDA(cudaStreamCreate(&s));
    KCUDA(cudaMalloc(&d, sizeof ones));
    KCUDA(cudaMalloc(&d2, sizeof ones));
    KCUDA(cudaMemcpy(d, ones, sizeof ones, cudaMemcpyHostToDevice));
    KCUDA(cudaMemset(d2, 0, sizeof ones));
    cudaGraph_t g;
    cudaGraphNode_t k1, k2, c1, c3;
    scale_node sn(d, 2.0f);
    cudaKernelNodeParams &kp = sn.kp;
    float &by = sn.by;
    KCUDA(cudaGraphCreate(&g, 0));
    KCUDA(cudaGraphAddKernelNode(&k1, g, NULL, 0, &kp));
    KCUDA(cudaGraphAddKernelNode(&k2, g, &k1, 1, &kp));
    cudaKernelNodeAttrValue v = {}, got;
    KCUDA(cudaGraphKernelNodeGetAttribute(k1, cudaKernelNodeAttributePriority, &got));
    KCHECK(got.priority == 0, "an unset attribute reads as its default: %d", got.priority);
    v.priority = -1;
    KCUDA(cudaGraphKernelNodeSetAttribute(k1, cudaKernelNodeAttributePriority, &v));
    v = cudaKernelNodeAttrValue{};
    v.accessPolicyWindow.base_ptr = d, v.accessPolicyWindow.num_bytes = sizeof ones;
    v.accessPolicyWindow.hitRatio = 0.5f, v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    v.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    KCUDA(cudaGraphKernelNodeSetAttribute(k1, cudaKernelNodeAttributeAccessPolicyWindow, &v));
    KCUDA(cudaGraphKernelNodeGetAttribute(k1, cudaKernelNodeAttributePriority, &got));
    KCHECK(got.priority == -1, "priority read back: %d", got.priority);
    KCUDA(cudaGraphKernelNodeGetAttribute(k1, cudaKernelNodeAttributeAccessPolicyWindow, &got));
    KCHECK(got.accessPolicyWindow.base_ptr == d && got.accessPolicyWindow.num_bytes == sizeof ones &&
               got.accessPolicyWindow.hitRatio == 0.5f,
           "access policy window read back");
    KCUDA(cudaGraphKernelNodeCopyAttributes(k2, k1));
    KCUDA(cudaGraphKernelNodeGetAttribute(k2, cudaKernelNodeAttributePriority, &got));
    KCHECK(got.priority == -1, "copied attribute: %d", got.priority);
    by = 3.0f;
    KCUDA(cudaGraphKernelNodeSetParams(k1, &kp)); /* k1 now scales by 3; k2 by 2 */
    KCUDA(cudaGraphKernelNodeGetAttribute(k1, cudaKernelNodeAttributePriority, &got));
    KCHECK(got.priority == -1, "new parameters keep the attributes: %d", got.priority);
    cudaError_t refused = cudaGraphKernelNodeSetAttribute(k1, cudaLaunchAttributeProgrammaticEvent, &v);
    KCHECK(refused == cudaErrorNotSupported || refused == cudaErrorInvalidValue, /* the static runtime checks the */
           "an attribute naming an event is refused: %s", cudaGetErrorName(refused)); /* event first */
    KCHECK(cudaGraphKernelNodeSetAttribute(k1, (cudaKernelNodeAttrID)999, &v) == cudaErrorInvalidValue,
           "an unknown attribute is refused");
    cudaGetLastError();
    KCUDA(cudaGraphAddMemcpyNode1D(&c1, g, &k2, 1, host, d, sizeof host, cudaMemcpyDeviceToHost));
    cudaMemcpy3DParms mp = {};
    KCUDA(cudaGraphMemcpyNodeGetParams(c1, &mp));
    KCHECK(mp.srcPtr.ptr == d && mp.dstPtr.ptr == host && mp.extent.width == sizeof host && mp.extent.height == 1 &&
               mp.kind == cudaMemcpyDeviceToHost,
           "a 1D memcpy node's parameters");
    cudaMemcpy3DParms p3 = {}; /* rows 1-2, bytes 4-19, of d as 4 rows of 64 bytes, to d2's first two rows */
    p3.srcPtr = make_cudaPitchedPtr(d, 64, 64, 4), p3.srcPos = make_cudaPos(4, 1, 0);
    p3.dstPtr = make_cudaPitchedPtr(d2, 64, 64, 4), p3.extent = make_cudaExtent(16, 2, 1);
    p3.kind = cudaMemcpyDeviceToDevice;
    KCUDA(cudaGraphAddMemcpyNode(&c3, g, &k2, 1, &p3));
    KCUDA(cudaGraphMemcpyNodeGetParams(c3, &mp));
    mp.srcPtr.xsize = p3.srcPtr.xsize, mp.dstPtr.xsize = p3.dstPtr.xsize; /* the static runtime's trip through the
                                                                            driver's form has no row length */
    KCHECK(std::memcmp(&mp, &p3, sizeof mp) == 0,
           "3D parameters are given back as given: src %p pitch %zu rows %zu at %zu,%zu, extent %zu x %zu, kind %d",
           mp.srcPtr.ptr, mp.srcPtr.pitch, mp.srcPtr.ysize, mp.srcPos.x, mp.srcPos.y, mp.extent.width,
           mp.extent.height, (int)mp.kind);
    char dot[4096], verbose[4096];
    read_dot(g, 0, dot, sizeof dot);
    read_dot(g, cudaGraphDebugDotFlagsVerbose, verbose, sizeof verbose);
    KCHECK(std::strstr(dot, "kernel\\n_Z5scale") != NULL && std::strstr(dot, "node0 -> node1;") != NULL &&
               std::strstr(dot, "memcpy") != NULL,
           "cudaGraphDebugDotPrint names the kernels, the copies and the edges: %s", dot);
    KCHECK(std::strstr(verbose, "grid (1,1,1) block (64,1,1)") != NULL && std::strcmp(dot, verbose) != 0,
           "the verbose form adds the geometry: %s", verbose);
    cudaGraphExec_t exec;
    KCUDA(cudaGraphInstantiate(&exec, g, 0));
    KCUDA(cudaGraphLaunch(exec, s));
    KCUDA(cudaStreamSynchronize(s));
    KCUDA(cudaMemcpy(back, d2, sizeof back, cudaMemcpyDeviceToHost));
    KCHECK(host[0] == 6.0f && host[63] == 6.0f, "the attributed kernels ran: %g (want 6)", host[0]);
    /* the second kernel disabled: an empty node until enabled again */
    unsigned enabled = 9;
    KCUDA(cudaMemcpy(d, ones, sizeof ones, cudaMemcpyHostToDevice));
    KCUDA(cudaGraphNodeSetEnabled(exec, k2, 0));
    KCUDA(cudaGraphNodeGetEnabled(exec, k2, &enabled));
    KCHECK(enabled == 0, "k2 reads as disabled: %u", enabled);
    KCUDA(cudaGraphLaunch(exec, s));
    KCUDA(cudaStreamSynchronize(s));
    KCHECK(host[0] == 3.0f && host[63] == 3.0f, "with k2 disabled: %g (want 3)", host[0]);
    KCUDA(cudaMemcpy(d, ones, sizeof ones, cudaMemcpyHostToDevice));
    KCUDA(cudaGraphNodeSetEnabled(exec, k2, 1));
    KCUDA(cudaGraphNodeGetEnabled(exec, k2, &enabled));
    KCUDA(cudaGraphLaunch(exec, s));
    KCUDA(cudaStreamSynchronize(s));
    KCHECK(enabled == 1 && host[0] == 6.0f, "enabled again: %g (want 6)", host[0]);
    KCHECK(back[0] == 6.0f && back[3] == 6.0f && back[4] == 0.0f && back[16] == 6.0f && back[19] == 6.0f &&
               back[20] == 0.0f && back[32] == 0.0f,
           "the 3D node copied its box: %g %g %g %g %g", back[0], back[3], back[4], back[16], back[20]);
    typedef CUresult (*getp_fn)(CUgraphNode, CUDA_MEMCPY3D *);
    typedef CUresult (*geta_fn)(CUgraphNode, CUkernelNodeAttrID, CUkernelNodeAttrValue *);
    getp_fn getp = (getp_fn)kcheck_driver_fn("cuGraphMemcpyNodeGetParams", 12000);
    geta_fn geta = (geta_fn)kcheck_driver_fn("cuGraphKernelNodeGetAttribute", 12000);
    CUDA_MEMCPY3D dp = {};
    KCHECK(getp != NULL && getp((CUgraphNode)c1, &dp) == CUDA_SUCCESS && dp.srcMemoryType == CU_MEMORYTYPE_DEVICE &&
               dp.srcDevice == (CUdeviceptr)d && dp.dstMemoryType == CU_MEMORYTYPE_HOST && dp.dstHost == host &&
               dp.WidthInBytes == sizeof host && dp.Height == 1 && dp.Depth == 1,
           "cuGraphMemcpyNodeGetParams");
    CUkernelNodeAttrValue dv = {};
    KCHECK(geta != NULL && geta((CUgraphNode)k2, CU_LAUNCH_ATTRIBUTE_PRIORITY, &dv) == CUDA_SUCCESS &&
               dv.priority == -1,
           "cuGraphKernelNodeGetAttribute");
    KCUDA(cudaGraphExecDestroy(exec));
    KCUDA(cudaGraphDestroy(g));
    /* a captured copy from host memory: its node's parameters */
    KCUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    KCUDA(cudaMemcpyAsync(d2, ones, sizeof ones, cudaMemcpyHostToDevice, s));
    KCUDA(cudaStreamEndCapture(s, &g));
    cudaGraphNode_t nodes[1];
    size_t nn = 1;
    KCUDA(cudaGraphGetNodes(g, nodes, &nn));
    mp = cudaMemcpy3DParms{};
    KCHECK(nn == 1 && cudaGraphMemcpyNodeGetParams(nodes[0], &mp) == cudaSuccess && mp.srcPtr.ptr == ones &&
               mp.dstPtr.ptr == d2 && mp.extent.width == sizeof ones && mp.kind == cudaMemcpyHostToDevice,
           "a captured copy's parameters");
    KCUDA(cudaGraphDestroy(g));
    KCUDA(cudaFree(d));
    KCUDA(cudaFree(d2));
    KCUDA(cudaStreamDestroy(s));
}

/* Eight threads capture and replay graphs of their own at once (thread-local
 * mode: one thread's capture does not refuse the others' allocations), every byte
 * of every replay checked. */
#define THREADS 8
static int thread_failures[THREADS];

static void one_thread(int t)
{
    cudaStream_t s;
    float *d, in[256], out[256];
    if (cudaStreamCreate(&s) != cudaSuccess || cudaMalloc(&d, sizeof in) != cudaSuccess) {
        thread_failures[t]++;
        return;
    }
    cudaGraph_t g;
    cudaGraphExec_t exec;
    int ok = cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess;
    ok &= cudaMemcpyAsync(d, in, sizeof in, cudaMemcpyHostToDevice, s) == cudaSuccess;
    scale<<<2, 128, 0, s>>>(d, 256, (float)(t + 2));
    ok &= cudaMemcpyAsync(out, d, sizeof out, cudaMemcpyDeviceToHost, s) == cudaSuccess;
    ok &= cudaStreamEndCapture(s, &g) == cudaSuccess && cudaGraphInstantiate(&exec, g, 0) == cudaSuccess;
    for (int round = 0; ok && round < 20; round++) {
        for (int i = 0; i < 256; i++)
            in[i] = (float)((i * 3 + round * 7 + t) % 17);
        ok &= cudaGraphLaunch(exec, s) == cudaSuccess && cudaStreamSynchronize(s) == cudaSuccess;
        for (int i = 0; ok && i < 256; i++)
            ok &= out[i] == in[i] * (float)(t + 2);
    }
    thread_failures[t] += !ok;
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(g);
    cudaFree(d);
    cudaStreamDestroy(s);
}

static void threads(void)
{
    std::vector<std::thread> pool;
    for (int t = 0; t < THREADS; t++)
        pool.emplace_back(one_thread, t);
    for (auto &th : pool)
        th.join();
    for (int t = 0; t < THREADS; t++)
        KCHECK(thread_failures[t] == 0, "thread %d: a replay was wrong or failed", t);
}

/* A cuDNN call captured: each replay adds the input once more. */
static void dnn_in_graph(void)
{
    cudnnHandle_t dnn;
    cudnnTensorDescriptor_t desc;
    cudaStream_t s;
    float *a, *c, host[64], back[64];
    for (int i = 0; i < 64; i++)
        host[i] = (float)i / 4.0f;
    KCUDA(cudaStreamCreate(&s));
    KCUDA(cudaMalloc(&a, sizeof host));
    KCUDA(cudaMalloc(&c, sizeof host));
    KCUDA(cudaMemcpy(a, host, sizeof host, cudaMemcpyHostToDevice));
    KCUDA(cudaMemset(c, 0, sizeof host));
    KCHECK(cudnnCreate(&dnn) == CUDNN_STATUS_SUCCESS, "cudnnCreate");
    KCHECK(cudnnSetStream(dnn, s) == CUDNN_STATUS_SUCCESS, "cudnnSetStream");
    KCHECK(cudnnCreateTensorDescriptor(&desc) == CUDNN_STATUS_SUCCESS, "cudnnCreateTensorDescriptor");
    KCHECK(cudnnSetTensor4dDescriptor(desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, 1, 64) ==
               CUDNN_STATUS_SUCCESS, "cudnnSetTensor4dDescriptor");
    const float one = 1.0f;
    cudaGraph_t g;
    cudaGraphExec_t exec;
    KCUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    KCHECK(cudnnAddTensor(dnn, &one, desc, a, &one, desc, c) == CUDNN_STATUS_SUCCESS, "cudnnAddTensor captured");
    KCUDA(cudaStreamEndCapture(s, &g));
    KCUDA(cudaGraphInstantiate(&exec, g, 0));
    for (int i = 0; i < 3; i++)
        KCUDA(cudaGraphLaunch(exec, s));
    KCUDA(cudaStreamSynchronize(s));
    KCUDA(cudaMemcpy(back, c, sizeof back, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < 64; i++)
        bad += back[i] != 3.0f * host[i];
    KCHECK(bad == 0, "three replays of the captured cudnnAddTensor: %d wrong (c[5] %g, want %g)", bad, back[5],
           3.0f * host[5]);
    KCUDA(cudaGraphExecDestroy(exec));
    KCUDA(cudaGraphDestroy(g));
    cudnnDestroyTensorDescriptor(desc);
    cudnnDestroy(dnn);
    KCUDA(cudaFree(a));
    KCUDA(cudaFree(c));
    KCUDA(cudaStreamDestroy(s));
}

/* An executable graph launched into a capturing stream becomes a child graph of
 * the capture. */
static void graph_in_capture(void)
{
    float *d, host[64], back[64];
    for (int i = 0; i < 64; i++)
        host[i] = (float)i;
    cudaStream_t s;
    KCUDA(cudaStreamCreate(&s));
    KCUDA(cudaMalloc(&d, sizeof host));
    cudaGraph_t inner, outer;
    cudaGraphExec_t inner_exec, outer_exec;
    KCUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    scale<<<1, 64, 0, s>>>(d, 64, 2.0f);
    KCUDA(cudaStreamEndCapture(s, &inner));
    KCUDA(cudaGraphInstantiate(&inner_exec, inner, 0));
    KCUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    KCUDA(cudaGraphLaunch(inner_exec, s));
    scale<<<1, 64, 0, s>>>(d, 64, 3.0f);
    KCUDA(cudaStreamEndCapture(s, &outer));
    cudaGraphNode_t nodes[4];
    size_t n = 4;
    cudaGraphNodeType first = cudaGraphNodeTypeEmpty;
    KCUDA(cudaGraphGetNodes(outer, nodes, &n));
    if (n > 0)
        KCUDA(cudaGraphNodeGetType(nodes[0], &first));
    KCHECK(n == 2 && first == cudaGraphNodeTypeGraph, "the launch became a child graph node (%zu nodes)", n);
    KCUDA(cudaGraphInstantiate(&outer_exec, outer, 0));
    KCUDA(cudaMemcpy(d, host, sizeof host, cudaMemcpyHostToDevice));
    KCUDA(cudaGraphLaunch(outer_exec, s));
    KCUDA(cudaMemcpyAsync(back, d, sizeof back, cudaMemcpyDeviceToHost, s));
    KCUDA(cudaStreamSynchronize(s));
    KCHECK(back[5] == 30.0f && back[63] == 378.0f, "inner then outer: %g %g (want 30, 378)", back[5], back[63]);
    KCUDA(cudaGraphExecDestroy(outer_exec));
    KCUDA(cudaGraphExecDestroy(inner_exec));
    KCUDA(cudaGraphDestroy(outer));
    KCUDA(cudaGraphDestroy(inner));
    KCUDA(cudaFree(d));
    KCUDA(cudaStreamDestroy(s));
}

/* The generic node API: nodes added and changed through cudaGraphNodeParams. */
static void generic_nodes(void)
{
    float *d, back[64], ones[64];
    seen hostfn = {back, 0.0f, 0};
    for (int i = 0; i < 64; i++)
        ones[i] = 1.0f;
    cudaStream_t s;
    KCUDA(cudaStreamCreate(&s));
    KCUDA(cudaMalloc(&d, sizeof ones));
    cudaGraph_t g;
    cudaGraphNode_t set, ker, copy, host;
    KCUDA(cudaGraphCreate(&g, 0));
    cudaGraphNodeParams p = {};
    p.type = cudaGraphNodeTypeMemset;
    p.memset.dst = d, p.memset.value = 0, p.memset.elementSize = 4, p.memset.width = 64, p.memset.height = 1;
    KCUDA(cudaGraphAddNode(&set, g, NULL, NULL, 0, &p));
    float *ptr = d, by = 3.0f;
    int count = 64;
    void *args[] = {&ptr, &count, &by};
    p = cudaGraphNodeParams{};
    p.type = cudaGraphNodeTypeKernel;
    p.kernel.func = (void *)scale, p.kernel.gridDim = dim3(1), p.kernel.blockDim = dim3(64), p.kernel.kernelParams = args;
    KCUDA(cudaGraphAddNode(&ker, g, &set, NULL, 1, &p));
    KCUDA(cudaGraphAddMemcpyNode1D(&copy, g, &ker, 1, back, d, sizeof back, cudaMemcpyDeviceToHost));
    p = cudaGraphNodeParams{};
    p.type = cudaGraphNodeTypeHost;
    p.host.fn = note, p.host.userData = &hostfn;
    KCUDA(cudaGraphAddNode(&host, g, &copy, NULL, 1, &p));
    cudaHostNodeParams hp = {};
    cudaMemsetParams mp = {};
    KCUDA(cudaGraphHostNodeGetParams(host, &hp));
    KCUDA(cudaGraphMemsetNodeGetParams(set, &mp));
    KCHECK(hp.fn == note && hp.userData == &hostfn, "cudaGraphHostNodeGetParams");
    KCHECK(mp.dst == d && mp.width * mp.elementSize == sizeof ones && mp.value == 0, "cudaGraphMemsetNodeGetParams");
    cudaGraphExec_t exec;
    KCUDA(cudaGraphInstantiate(&exec, g, 0));
    KCUDA(cudaMemcpy(d, ones, sizeof ones, cudaMemcpyHostToDevice));
    KCUDA(cudaGraphLaunch(exec, s));
    KCUDA(cudaStreamSynchronize(s));
    KCHECK(back[0] == 0.0f && hostfn.calls == 1, "generic nodes: back[0] %g, %d host calls", back[0], hostfn.calls);
    /* the memset node now clears the first element only */
    p = cudaGraphNodeParams{};
    p.type = cudaGraphNodeTypeMemset;
    p.memset.dst = d, p.memset.value = 0, p.memset.elementSize = 4, p.memset.width = 1, p.memset.height = 1;
    KCUDA(cudaGraphExecNodeSetParams(exec, set, &p));
    KCUDA(cudaMemcpy(d, ones, sizeof ones, cudaMemcpyHostToDevice));
    KCUDA(cudaGraphLaunch(exec, s));
    KCUDA(cudaStreamSynchronize(s));
    KCHECK(back[0] == 0.0f && back[1] == 3.0f && back[63] == 3.0f && hostfn.calls == 2,
           "generic set params: back[0] %g, back[1] %g, %d host calls", back[0], back[1], hostfn.calls);
    p = cudaGraphNodeParams{};
    p.type = cudaGraphNodeTypeExtSemaphoreSignal;
    KCHECK(cudaGraphAddNode(&host, g, NULL, NULL, 0, &p) == cudaErrorNotSupported,
           "an external semaphore node is refused");
    p = cudaGraphNodeParams{};
    p.type = cudaGraphNodeTypeConditional; /* its handle is no handle of g */
    p.conditional.type = cudaGraphCondTypeIf, p.conditional.size = 1;
    KCHECK(cudaGraphAddNode(&host, g, NULL, NULL, 0, &p) == cudaErrorInvalidValue, "a conditional node without handle");
    cudaGetLastError();
    KCUDA(cudaGraphExecDestroy(exec));
    KCUDA(cudaGraphDestroy(g));
    KCUDA(cudaFree(d));
    KCUDA(cudaStreamDestroy(s));
}

/* Memory a graph allocates: cudaMallocAsync and cudaFreeAsync captured, and alloc
 * and free nodes built by hand; the address stays the graph's from launch to
 * launch, and the device's graph memory attributes count it. */
static void memory_nodes(void)
{
    cudaStream_t s;
    float *scratch = NULL, back[64], ones[64];
    for (int i = 0; i < 64; i++)
        ones[i] = 1.0f;
    KCUDA(cudaStreamCreate(&s));
    unsigned long long before = 0, after = 0, high = 0;
    KCUDA(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &before));
    cudaGraph_t g;
    KCUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    KCUDA(cudaMallocAsync((void **)&scratch, sizeof ones, s));
    KCUDA(cudaMemcpyAsync(scratch, ones, sizeof ones, cudaMemcpyHostToDevice, s));
    scale<<<1, 64, 0, s>>>(scratch, 64, 4.0f);
    KCUDA(cudaMemcpyAsync(back, scratch, sizeof back, cudaMemcpyDeviceToHost, s));
    KCUDA(cudaFreeAsync(scratch, s));
    KCUDA(cudaStreamEndCapture(s, &g));
    KCHECK(scratch != NULL, "the captured cudaMallocAsync gave an address");
    KCUDA(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &after));
    KCHECK(after == before + sizeof ones, "graph memory in use: %llu, want %llu", after, before + sizeof ones);
    size_t count = 0;
    KCUDA(cudaGraphGetNodes(g, NULL, &count));
    KCHECK(count == 5, "5 nodes (alloc, 2 copies, kernel, free), not %zu", count);
    cudaGraphExec_t exec;
    KCUDA(cudaGraphInstantiate(&exec, g, cudaGraphInstantiateFlagAutoFreeOnLaunch));
    KCUDA(cudaGraphDestroy(g));
    for (int round = 0; round < 2; round++) {
        back[0] = back[63] = 0.0f;
        ones[0] = (float)(round + 1);
        KCUDA(cudaGraphLaunch(exec, s));
        KCUDA(cudaStreamSynchronize(s));
        KCHECK(back[0] == 4.0f * (round + 1) && back[63] == 4.0f, "round %d: %g %g", round, back[0], back[63]);
    }
    KCUDA(cudaGraphExecDestroy(exec));
    KCUDA(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &after));
    KCUDA(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh, &high));
    KCHECK(after == before && high >= before + sizeof ones, "after the graph: %llu in use (want %llu), high %llu",
           after, before, high);

    /* built by hand, freed by the program after a launch instead of in the graph */
    cudaMemAllocNodeParams ap = {};
    ap.poolProps.allocType = cudaMemAllocationTypePinned;
    ap.poolProps.location.type = cudaMemLocationTypeDevice;
    ap.poolProps.location.id = 0;
    ap.bytesize = sizeof ones;
    cudaGraphNode_t alloc, set;
    cudaMemsetParams mp = {};
    KCUDA(cudaGraphCreate(&g, 0));
    KCUDA(cudaGraphAddMemAllocNode(&alloc, g, NULL, 0, &ap));
    mp.dst = ap.dptr, mp.value = 0, mp.elementSize = 1, mp.width = sizeof ones, mp.height = 1;
    KCUDA(cudaGraphAddMemsetNode(&set, g, &alloc, 1, &mp));
    KCUDA(cudaGraphInstantiate(&exec, g, 0));
    KCUDA(cudaGraphLaunch(exec, s));
    KCUDA(cudaMemcpyAsync(back, ap.dptr, sizeof back, cudaMemcpyDeviceToHost, s));
    KCUDA(cudaStreamSynchronize(s));
    KCHECK(back[0] == 0.0f && back[63] == 0.0f, "the graph's memory outlives its launch");
    KCUDA(cudaFreeAsync(ap.dptr, s));
    KCUDA(cudaStreamSynchronize(s));
    KCHECK(cudaGraphAddMemFreeNode(&set, g, NULL, 0, ones) == cudaErrorInvalidValue,
           "a free node of memory no graph allocated is refused");
    cudaGetLastError();
    KCUDA(cudaGraphExecDestroy(exec));
    KCUDA(cudaGraphDestroy(g));

    /* an allocation ordered after another's free takes its address, as CUDA reuses a
     * graph's addresses; one not ordered after it, or larger, gets its own */
    cudaMemAllocNodeParams p1 = ap, p2 = ap, p3 = ap, p4 = ap;
    p2.bytesize = sizeof ones / 2, p4.bytesize = 2 * sizeof ones;
    cudaGraphNode_t a1, f1, a2, a3, a4, s2, c2, f2, f3, f4;
    KCUDA(cudaGraphCreate(&g, 0));
    KCUDA(cudaGraphAddMemAllocNode(&a1, g, NULL, 0, &p1));
    KCUDA(cudaGraphAddMemFreeNode(&f1, g, &a1, 1, p1.dptr));
    KCUDA(cudaGraphAddMemAllocNode(&a2, g, &f1, 1, &p2));
    KCUDA(cudaGraphAddMemAllocNode(&a3, g, &a1, 1, &p3));
    KCUDA(cudaGraphAddMemAllocNode(&a4, g, &f1, 1, &p4));
    KCHECK(p2.dptr == p1.dptr && p3.dptr != p1.dptr && p4.dptr != p1.dptr,
           "addresses: %p after the free of %p; %p beside it; %p larger", p2.dptr, p1.dptr, p3.dptr, p4.dptr);
    mp = cudaMemsetParams{};
    mp.dst = p2.dptr, mp.value = 7, mp.elementSize = 1, mp.width = p2.bytesize, mp.height = 1;
    KCUDA(cudaGraphAddMemsetNode(&s2, g, &a2, 1, &mp));
    KCUDA(cudaGraphAddMemcpyNode1D(&c2, g, &s2, 1, back, p2.dptr, p2.bytesize, cudaMemcpyDeviceToHost));
    KCUDA(cudaGraphAddMemFreeNode(&f2, g, &c2, 1, p2.dptr));
    KCUDA(cudaGraphAddMemFreeNode(&f3, g, &a3, 1, p3.dptr));
    KCUDA(cudaGraphAddMemFreeNode(&f4, g, &a4, 1, p4.dptr));
    KCUDA(cudaGraphInstantiate(&exec, g, 0));
    for (int launch = 0; launch < 2; launch++) {
        std::memset(back, 0, sizeof back);
        KCUDA(cudaGraphLaunch(exec, s));
        KCUDA(cudaStreamSynchronize(s));
        const unsigned char *b = (const unsigned char *)back;
        KCHECK(b[0] == 7 && b[p2.bytesize - 1] == 7 && b[p2.bytesize] == 0, "the reused address's memset, launch %d",
               launch);
    }
    KCUDA(cudaGraphExecDestroy(exec));
    KCUDA(cudaGraphDestroy(g));
    KCUDA(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &after));
    KCHECK(after == before, "everything given back: %llu in use, want %llu", after, before);

    /* a stream created during the capture joins it, frees there, is joined back and
     * destroyed before the capture ends, as graphMemoryNodes does */
    cudaStream_t side;
    cudaEvent_t forked, freed;
    KCUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    KCUDA(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    KCUDA(cudaEventCreate(&forked));
    KCUDA(cudaEventCreate(&freed));
    KCUDA(cudaMallocAsync((void **)&scratch, sizeof ones, s));
    KCUDA(cudaMemcpyAsync(scratch, ones, sizeof ones, cudaMemcpyHostToDevice, s));
    scale<<<1, 64, 0, s>>>(scratch, 64, 2.0f);
    KCUDA(cudaMemcpyAsync(back, scratch, sizeof back, cudaMemcpyDeviceToHost, s));
    KCUDA(cudaEventRecord(forked, s));
    KCUDA(cudaStreamWaitEvent(side, forked, 0));
    KCUDA(cudaFreeAsync(scratch, side));
    KCUDA(cudaEventRecord(freed, side));
    KCUDA(cudaStreamWaitEvent(s, freed, 0));
    KCUDA(cudaStreamDestroy(side));
    KCUDA(cudaEventDestroy(forked));
    KCUDA(cudaEventDestroy(freed));
    KCUDA(cudaStreamEndCapture(s, &g));
    KCUDA(cudaGraphInstantiate(&exec, g, 0));
    back[0] = 0.0f;
    ones[0] = 3.0f;
    KCUDA(cudaGraphLaunch(exec, s));
    KCUDA(cudaStreamSynchronize(s));
    KCHECK(back[0] == 6.0f && back[63] == 2.0f, "a graph whose side stream was destroyed: %g %g", back[0], back[63]);
    KCUDA(cudaGraphExecDestroy(exec));
    KCUDA(cudaGraphDestroy(g));
    KCUDA(cudaStreamDestroy(s));
}

/* The driver's API on the runtime's objects, found as torch and CuPy find it
 * (cudaGetDriverEntryPointByVersion): a capture begun and ended with it, instantiated with
 * the runtime, launched and destroyed with the driver. */
typedef CUresult (*begin_fn)(CUstream, CUstreamCaptureMode);
typedef CUresult (*end_fn)(CUstream, CUgraph *);
typedef CUresult (*launch_fn)(CUgraphExec, CUstream);
typedef CUresult (*exec_destroy_fn)(CUgraphExec);
typedef CUresult (*destroy_fn)(CUgraph);

/* A driver call as CUDA 12's API names it. */
static void *driver_fn(const char *name)
{
    return kcheck_driver_fn(name, 12000);
}

static void driver(void)
{
    float *d;
    static float back[N * N];
    cudaStream_t s;
    begin_fn begin = (begin_fn)driver_fn("cuStreamBeginCapture");
    end_fn end = (end_fn)driver_fn("cuStreamEndCapture");
    launch_fn launch = (launch_fn)driver_fn("cuGraphLaunch");
    exec_destroy_fn exec_destroy = (exec_destroy_fn)driver_fn("cuGraphExecDestroy");
    destroy_fn destroy = (destroy_fn)driver_fn("cuGraphDestroy");
    if (begin == NULL || end == NULL || launch == NULL || exec_destroy == NULL || destroy == NULL)
        return;
    KCUDA(cudaStreamCreate(&s));
    KCUDA(cudaMalloc(&d, bytes));
    KCUDA(cudaMemset(d, 0, bytes));
    KCHECK(begin((CUstream)s, CU_STREAM_CAPTURE_MODE_GLOBAL) == CUDA_SUCCESS, "cuStreamBeginCapture");
    float *ptr = d;
    int count = n;
    add<<<(n + 127) / 128, 128, 0, s>>>(ptr, ptr, count);
    KCUDA(cudaMemsetAsync(d, 1, 4, s));
    CUgraph graph;
    KCHECK(end((CUstream)s, &graph) == CUDA_SUCCESS, "cuStreamEndCapture");
    cudaGraphExec_t exec;
    KCUDA(cudaGraphInstantiate(&exec, graph, 0));
    for (int i = 0; i < 3; i++)
        KCHECK(launch((CUgraphExec)exec, (CUstream)s) == CUDA_SUCCESS, "cuGraphLaunch");
    KCUDA(cudaMemcpy(back, d, bytes, cudaMemcpyDeviceToHost));
    unsigned word;
    std::memcpy(&word, back, 4);
    KCHECK(word == 0x01010101u && back[1] == 0.0f, "the driver-launched graph ran (0x%08x)", word);
    KCHECK(exec_destroy((CUgraphExec)exec) == CUDA_SUCCESS, "cuGraphExecDestroy");
    KCHECK(destroy(graph) == CUDA_SUCCESS, "cuGraphDestroy");
    KCUDA(cudaFree(d));
    KCUDA(cudaStreamDestroy(s));
}

int main()
{
    captured_step();
    forbidden();
    built();
    exec_setters();
    node_queries();
    generic_nodes();
    graph_in_capture();
    memory_nodes();
    dnn_in_graph();
    threads();
    driver();
    return kcheck_finish("graphs");
}
