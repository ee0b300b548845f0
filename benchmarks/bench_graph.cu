// bench_graph.cu -- the cost of a step of N tiny kernels for `make bench`, launched
// eagerly or as one CUDA graph: R steps, then one stream synchronisation, then the
// counter the kernels bump is read back and checked (N * R increments). In `update`
// mode each step first changes the first kernel's argument in the executable graph
// (cudaGraphExecKernelNodeSetParams: it adds 1 or 2, in turn), as programs that
// reuse one graph for changing work do.
//
//   bench_graph eager N R    -> one JSON object on stdout
//   bench_graph graph N R       (R = 0: set-up only, the capture and instantiation
//   bench_graph update N R       included, so the driver can subtract its cost)
//
// The driver (benchmarks/run-bench.py) counts round trips and queued bytes with
// CUDAREM_STATS; this program reports the client's time per step, taken around the
// launches alone.
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

__global__ void crm_bench_bump(int *counter, int inc)
{
    if (threadIdx.x == 0 && blockIdx.x == 0)
        counter[0] += inc;
}

static double bg_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int bg_fail(const char *what, cudaError_t e)
{
    fprintf(stderr, "bench_graph: %s: %s\n", what, cudaGetErrorName(e));
    return 1;
}

int main(int argc, char **argv)
{
    int update = argc > 1 && strcmp(argv[1], "update") == 0;
    int graphed = update || (argc > 1 && strcmp(argv[1], "graph") == 0);
    long n = argc > 2 ? std::max(1L, atol(argv[2])) : 100;
    long steps = argc > 3 ? std::max(0L, atol(argv[3])) : 10;
    int *counter = nullptr, host = 0;
    cudaStream_t s;
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    cudaGraphNode_t first = nullptr;
    cudaKernelNodeParams params;
    int inc = 1;
    void *args[] = {&counter, &inc};
    size_t one = 1;
    long added = 0;
    cudaError_t e;
    if ((e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)) != cudaSuccess ||
        (e = cudaMalloc(&counter, sizeof(int))) != cudaSuccess ||
        (e = cudaMemsetAsync(counter, 0, sizeof(int), s)) != cudaSuccess)
        return bg_fail("setup", e);
    crm_bench_bump<<<1, 32, 0, s>>>(counter, 1); /* the first launch loads the module */
    if (graphed) {
        if ((e = cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal)) != cudaSuccess)
            return bg_fail("begin capture", e);
        for (long i = 0; i < n; i++)
            crm_bench_bump<<<1, 32, 0, s>>>(counter, 1);
        if ((e = cudaStreamEndCapture(s, &graph)) != cudaSuccess ||
            (e = cudaGraphInstantiate(&exec, graph, 0)) != cudaSuccess)
            return bg_fail("capture", e);
        if (update && ((e = cudaGraphGetRootNodes(graph, &first, &one)) != cudaSuccess ||
                       (e = cudaGraphKernelNodeGetParams(first, &params)) != cudaSuccess))
            return bg_fail("the first kernel's parameters", e);
        params.kernelParams = args;
    }
    if ((e = cudaStreamSynchronize(s)) != cudaSuccess)
        return bg_fail("set-up synchronise", e);
    double t0 = bg_now();
    for (long k = 0; k < steps; k++) {
        if (update) {
            inc = 1 + (int)(k & 1);
            added += inc - 1;
            if ((e = cudaGraphExecKernelNodeSetParams(exec, first, &params)) != cudaSuccess)
                return bg_fail("set params", e);
        }
        if (graphed)
            e = cudaGraphLaunch(exec, s);
        else
            for (long i = 0; i < n; i++)
                crm_bench_bump<<<1, 32, 0, s>>>(counter, 1);
        if (!graphed)
            e = cudaGetLastError();
        if (e != cudaSuccess)
            return bg_fail("launch", e);
    }
    double t1 = bg_now();
    if ((e = cudaStreamSynchronize(s)) != cudaSuccess)
        return bg_fail("synchronise", e);
    double t2 = bg_now();
    if ((e = cudaMemcpy(&host, counter, sizeof host, cudaMemcpyDeviceToHost)) != cudaSuccess)
        return bg_fail("readback", e);
    long want = 1 + n * steps + added;
    double ds = steps > 0 ? (double)steps : 1.0;
    printf("{\"mode\": \"%s\", \"n\": %ld, \"steps\": %ld, \"client_us_per_step\": %.3f, "
           "\"total_ms_per_step\": %.3f, \"verified\": %s}\n",
           update ? "update" : graphed ? "graph" : "eager", n, steps, (t1 - t0) / ds * 1e6, (t2 - t0) / ds * 1e3,
           host == want ? "true" : "false");
    if (graphed) {
        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
    }
    cudaFree(counter);
    cudaStreamDestroy(s);
    return host == want ? 0 : 1;
}
