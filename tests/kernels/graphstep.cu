// graphstep.cu -- a graphed training-like step costs one round trip: the step of
// tests/kernels/step.cu (a host-to-device copy of the batch, three kernels, a
// cuBLAS GEMM, a device-to-device copy) captured once, then launched ten times,
// each launch followed by one stream synchronisation; then graphs of 10, 100 and
// 1,000 kernels, each launched ten times and synchronised once. The replays cost
// no round trip whatever the graph's size; the harness counts them
// (tests/e2e/check_e2e_roundtrips.c), and every result is checked here.
#include "kcheck.h"
#include "ksteps.h"
#include <cublas_v2.h>
#include <cstring>

#define STEPS 10
#define N 64 /* an N x N matrix */

__global__ void bump(int *counter)
{
    if (threadIdx.x == 0 && blockIdx.x == 0)
        counter[0] += 1;
}

static void graphed_step(cudaStream_t s, cublasHandle_t blas)
{
    const int n = N * N;
    float *a, *b, *c, *keep;
    static float batch[N * N], host_a[N * N], host_c[N * N], back[N * N];
    KCUDA(cudaMalloc(&a, n * sizeof(float)));
    KCUDA(cudaMalloc(&b, n * sizeof(float)));
    KCUDA(cudaMalloc(&c, n * sizeof(float)));
    KCUDA(cudaMalloc(&keep, n * sizeof(float)));
    KCUDA(cudaMemsetAsync(a, 0, n * sizeof(float), s));
    std::memset(host_a, 0, sizeof host_a);
    const float one = 1.0f, zero = 0.0f;
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    KCUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    KCUDA(cudaMemcpyAsync(b, batch, n * sizeof(float), cudaMemcpyHostToDevice, s));
    scale<<<(n + 255) / 256, 256, 0, s>>>(a, n, 0.5f);
    add<<<(n + 255) / 256, 256, 0, s>>>(a, b, n);
    scale<<<(n + 255) / 256, 256, 0, s>>>(a, n, 2.0f);
    KCHECK(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, a, N, b, N, &zero, c, N) ==
               CUBLAS_STATUS_SUCCESS, "cublasSgemm");
    KCUDA(cudaMemcpyAsync(keep, c, n * sizeof(float), cudaMemcpyDeviceToDevice, s));
    KCUDA(cudaStreamEndCapture(s, &graph));
    KCUDA(cudaGraphInstantiate(&exec, graph, 0));
    KCUDA(cudaStreamSynchronize(s)); /* setup done: the steps start warm */
    for (int k = 0; k < STEPS; k++) {
        for (int i = 0; i < n; i++)
            batch[i] = (float)((i * 7 + k) % 13) / 16.0f; /* small exact binary fractions */
        KCUDA(cudaGraphLaunch(exec, s));
        KCUDA(cudaStreamSynchronize(s)); /* the step's one round trip */
        for (int i = 0; i < n; i++)
            host_a[i] = (host_a[i] * 0.5f + batch[i]) * 2.0f;
    }
    for (int col = 0; col < N; col++)
        for (int row = 0; row < N; row++) {
            float sum = 0.0f;
            for (int k = 0; k < N; k++)
                sum += host_a[k * N + row] * batch[col * N + k];
            host_c[col * N + row] = sum;
        }
    KCUDA(cudaMemcpy(back, keep, sizeof back, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += back[i] != host_c[i];
    KCHECK(bad == 0, "%d of %d values wrong after the graphed steps (first %g, want %g)", bad, n, back[0],
           host_c[0]);
    KCUDA(cudaGraphExecDestroy(exec));
    KCUDA(cudaGraphDestroy(graph));
    KCUDA(cudaFree(a));
    KCUDA(cudaFree(b));
    KCUDA(cudaFree(c));
    KCUDA(cudaFree(keep));
}

/* A graph of `kernels` launches, replayed ten times, synchronised once. */
static void replays(cudaStream_t s, int *counter, int kernels)
{
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    KCUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    for (int i = 0; i < kernels; i++)
        bump<<<1, 32, 0, s>>>(counter);
    KCUDA(cudaStreamEndCapture(s, &graph));
    KCUDA(cudaGraphInstantiate(&exec, graph, 0));
    for (int k = 0; k < 10; k++)
        KCUDA(cudaGraphLaunch(exec, s));
    KCUDA(cudaStreamSynchronize(s));
    KCUDA(cudaGraphExecDestroy(exec));
    KCUDA(cudaGraphDestroy(graph));
}

int main()
{
    cublasHandle_t blas;
    cudaStream_t s;
    int *counter, total = 0;
    KCHECK(cublasCreate(&blas) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
    KCUDA(cudaStreamCreate(&s));
    KCHECK(cublasSetStream(blas, s) == CUBLAS_STATUS_SUCCESS, "cublasSetStream");
    graphed_step(s, blas);
    KCUDA(cudaMalloc(&counter, sizeof(int)));
    KCUDA(cudaMemsetAsync(counter, 0, sizeof(int), s));
    for (int kernels = 10; kernels <= 1000; kernels *= 10)
        replays(s, counter, kernels);
    KCUDA(cudaMemcpy(&total, counter, sizeof total, cudaMemcpyDeviceToHost));
    KCHECK(total == 10 * (10 + 100 + 1000), "%d kernels ran, want %d", total, 10 * 1110);
    KCUDA(cudaFree(counter));
    KCUDA(cudaStreamDestroy(s));
    cublasDestroy(blas);
    return kcheck_finish("graphstep");
}
