/* errthreads.cu -- a failure of queued work reaches the thread that queued it, at
 * its next synchronising call, and no other thread.
 *
 * Two threads queue a cuBLAS call the server refuses (its x is no device memory)
 * and synchronise their stream: each must get the failure every time. Two other
 * threads meanwhile make calls that send the shared queue (synchronous copies)
 * and synchronise their own streams: they must never get it. A failure kept for
 * "whoever synchronises next" went to the bystanders, and the failing threads went
 * on as if their call had run (118 of 300 times here). Prints `PASS errthreads`.
 */
#include "../cuda/cuda_check.h"
#include <cublas_v2.h>
#include <thread>
#include <vector>

enum { ROUNDS = 300 };
static std::atomic<int> running(0);

static void failing(int id)
{
    cudaStream_t s;
    cublasHandle_t h;
    float *y = nullptr, alpha = 2.0f;
    CT_OK(cudaStreamCreateWithFlags(&s, id % 2 ? cudaStreamNonBlocking : cudaStreamDefault));
    CT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
    CT_EQ(cublasSetStream(h, s), CUBLAS_STATUS_SUCCESS);
    CT_OK(cudaMalloc(&y, 64 * sizeof(float)));
    for (int i = 0; i < ROUNDS; i++) {
        cublasStatus_t queued = cublasSaxpy(h, 16, &alpha, (const float *)(uintptr_t)0x7000, 1, y, 1);
        cudaError_t synced = cudaStreamSynchronize(s);
        if (queued == CUBLAS_STATUS_SUCCESS && synced == cudaSuccess) {
            ct_fail(__FILE__, __LINE__, "a refused cublasSaxpy", "an error at the call or the next sync",
                    "success at both");
            break;
        }
        cudaGetLastError();
    }
    CT_OK(cudaFree(y));
    CT_EQ(cublasDestroy(h), CUBLAS_STATUS_SUCCESS);
    CT_OK(cudaStreamDestroy(s));
    running--;
}

static void bystander(void)
{
    cudaStream_t s;
    int *d = nullptr, h = 0, seen = 0;
    CT_OK(cudaStreamCreate(&s));
    CT_OK(cudaMalloc(&d, 64));
    while (running.load() > 0) {
        cudaError_t copy = cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost);
        cudaError_t synced = cudaStreamSynchronize(s);
        if ((copy != cudaSuccess || synced != cudaSuccess) && seen++ == 0)
            ct_fail(__FILE__, __LINE__, "a bystander's copy and sync", "cudaSuccess",
                    cudaGetErrorName(copy != cudaSuccess ? copy : synced));
    }
    CT_OK(cudaFree(d));
    CT_OK(cudaStreamDestroy(s));
    if (seen == 0) /* nor as its last error */
        CT_ERR(cudaGetLastError(), cudaSuccess);
}

int main(void)
{
    CT_OK(cudaFree(0));
    running = 2;
    std::vector<std::thread> ts;
    ts.emplace_back(bystander);
    ts.emplace_back(failing, 0);
    ts.emplace_back(bystander);
    ts.emplace_back(failing, 1);
    for (auto &t : ts)
        t.join();
    return ct_finish("errthreads");
}
