/* threads.cu -- self-checking test of concurrent CUDA use from several host threads.
 *
 * Eight std::threads each create their own stream and buffers and run rounds
 * of H2D, D2D and D2H copies plus memsets with per-thread patterns, checking
 * every result. Each thread also checks that the current device and the last
 * error are per-thread state (with two or more devices, odd threads use
 * device 1 while even ones stay on device 0).
 */
#include "cuda_check.h"
#include <thread>
#include <vector>

enum { NTHREADS = 8, ROUNDS = 25, BYTES = (1 << 20) + 13 };

static int ndev;

static void worker(unsigned id)
{
    int want_dev = (ndev >= 2 && (id & 1)) ? 1 : 0;
    int dev = -1;
    CT_OK(cudaSetDevice(want_dev));
    cudaStream_t s;
    unsigned char *h = NULL, *r = NULL;
    char *d = NULL, *d2 = NULL;
    CT_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CT_OK(cudaMallocHost(&h, BYTES));
    CT_OK(cudaMallocHost(&r, BYTES));
    CT_OK(cudaMalloc(&d, BYTES));
    CT_OK(cudaMalloc(&d2, BYTES));
    if (h == NULL || r == NULL)
        return;
    for (unsigned round = 0; round < ROUNDS; round++) {
        unsigned seed = id * 1000 + round;
        ct_fill(h, BYTES, seed);
        memset(r, 0, BYTES);
        CT_OK(cudaMemcpyAsync(d, h, BYTES, cudaMemcpyHostToDevice, s));
        CT_OK(cudaMemcpyAsync(d2, d, BYTES, cudaMemcpyDeviceToDevice, s));
        CT_OK(cudaMemsetAsync(d, (int)id, BYTES, s));
        CT_OK(cudaMemcpyAsync(r, d2, BYTES, cudaMemcpyDeviceToHost, s));
        CT_OK(cudaStreamSynchronize(s));
        CT_PATTERN(r, BYTES, seed);
        CT_OK(cudaMemcpy(r, d, BYTES, cudaMemcpyDeviceToHost));
        CT_BYTES(r, BYTES, id);
        if (round == ROUNDS / 2 && id == 3) {
            /* An error in this thread is seen here only. */
            CT_ERR(cudaSetDevice(-1), cudaErrorInvalidDevice);
            CT_ERR(cudaPeekAtLastError(), cudaErrorInvalidDevice);
            CT_ERR(cudaGetLastError(), cudaErrorInvalidDevice);
        } else {
            CT_ERR(cudaPeekAtLastError(), cudaSuccess);
        }
        CT_OK(cudaGetDevice(&dev));
        CT_EQ(dev, want_dev);
    }
    CT_OK(cudaFree(d));
    CT_OK(cudaFree(d2));
    CT_OK(cudaFreeHost(h));
    CT_OK(cudaFreeHost(r));
    CT_OK(cudaStreamDestroy(s));
    CT_ERR(cudaGetLastError(), cudaSuccess);
}

int main(void)
{
    CT_OK(cudaGetDeviceCount(&ndev));
    if (ndev < 1) {
        ct_fail(__FILE__, __LINE__, "device count", ">= 1", "0");
        return ct_finish("threads");
    }
    std::vector<std::thread> ts;
    for (unsigned i = 0; i < NTHREADS; i++)
        ts.emplace_back(worker, i);
    for (auto &t : ts)
        t.join();
    int dev = -1;
    CT_OK(cudaGetDevice(&dev));
    CT_EQ(dev, 0);
    CT_OK(cudaDeviceSynchronize());
    CT_ERR(cudaGetLastError(), cudaSuccess);
    return ct_finish("threads");
}
