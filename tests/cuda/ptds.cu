/* ptds.cu -- self-checking test built with `--default-stream per-thread`.
 *
 * With per-thread default streams the compiler maps the runtime calls to their
 * _ptds/_ptsz entry points (cudaMemcpy_ptds, cudaMemcpyAsync_ptsz,
 * cudaStreamSynchronize_ptsz, ...). Several threads use stream 0 concurrently;
 * each thread's stream 0 is its own, so its work is ordered and checked.
 */
#include "cuda_check.h"
#include <thread>
#include <vector>

#ifndef CUDA_API_PER_THREAD_DEFAULT_STREAM
#error "ptds.cu must be built with --default-stream per-thread"
#endif

enum { NTHREADS = 4, ROUNDS = 10, BYTES = 300000 };

static void worker(unsigned id)
{
    unsigned char *h = NULL;
    char *d = NULL, *d2 = NULL;
    CT_OK(cudaMallocHost(&h, BYTES));
    CT_OK(cudaMalloc(&d, BYTES));
    CT_OK(cudaMalloc(&d2, BYTES));
    if (h == NULL)
        return;
    for (unsigned round = 0; round < ROUNDS; round++) {
        unsigned seed = 40 + id * 100 + round;
        ct_fill(h, BYTES, seed);
        CT_OK(cudaMemcpyAsync(d, h, BYTES, cudaMemcpyHostToDevice, 0));
        CT_OK(cudaMemcpyAsync(d2, d, BYTES, cudaMemcpyDeviceToDevice, 0));
        CT_OK(cudaStreamSynchronize(0));
        ct_fill(h, BYTES, seed + 1); /* the copy below must overwrite this */
        CT_OK(cudaMemcpy(h, d2, BYTES, cudaMemcpyDeviceToHost));
        CT_PATTERN(h, BYTES, seed);
        CT_OK(cudaMemset(d, 0x44, BYTES));
        CT_OK(cudaMemsetAsync(d, 0x45, 1000, 0));
        cudaError_t q = cudaStreamQuery(0);
        CT_TRUE(q == cudaSuccess || q == cudaErrorNotReady);
        CT_OK(cudaMemcpyAsync(h, d, BYTES, cudaMemcpyDeviceToHost, 0));
        CT_OK(cudaStreamSynchronize(0));
        CT_BYTES(h, 1000, 0x45);
        CT_BYTES(h + 1000, BYTES - 1000, 0x44);
    }
    /* 2D and events on the per-thread default stream. */
    cudaEvent_t a, b;
    CT_OK(cudaEventCreate(&a));
    CT_OK(cudaEventCreate(&b));
    CT_OK(cudaEventRecord(a, 0));
    ct_fill(h, 64 * 100, id);
    CT_OK(cudaMemcpy2D(d, 128, h, 100, 100, 64, cudaMemcpyHostToDevice));
    CT_OK(cudaMemcpy2DAsync(h + 64 * 100, 100, d, 128, 100, 64, cudaMemcpyDeviceToHost, 0));
    CT_OK(cudaEventRecord(b, 0));
    CT_OK(cudaEventSynchronize(b));
    CT_EQ(memcmp(h, h + 64 * 100, 64 * 100), 0);
    float ms = -1.0f;
    CT_OK(cudaEventElapsedTime(&ms, a, b));
    CT_TRUE(ms >= 0.0f);
    cudaStream_t s;
    CT_OK(cudaStreamCreate(&s));
    CT_OK(cudaStreamWaitEvent(s, b, 0));
    CT_OK(cudaStreamSynchronize(s));
    CT_OK(cudaStreamDestroy(s));
    CT_OK(cudaEventDestroy(a));
    CT_OK(cudaEventDestroy(b));
    CT_OK(cudaFree(d));
    CT_OK(cudaFree(d2));
    CT_OK(cudaFreeHost(h));
}

int main(void)
{
    int n = 0;
    CT_OK(cudaGetDeviceCount(&n));
    if (n < 1) {
        ct_fail(__FILE__, __LINE__, "device count", ">= 1", "0");
        return ct_finish("ptds");
    }
    std::vector<std::thread> ts;
    for (unsigned i = 0; i < NTHREADS; i++)
        ts.emplace_back(worker, i);
    for (auto &t : ts)
        t.join();
    CT_OK(cudaDeviceSynchronize());
    (void)cudaGetLastError(); /* NotReady from a query is not a failure */
    return ct_finish("ptds");
}
