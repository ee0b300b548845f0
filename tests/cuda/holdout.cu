// holdout.cu -- the asynchronous hold-out pattern of a training step: between two
// synchronisations it queues 3,000 calls, 1,000 host-to-device copies of 16 KiB
// from one reused host buffer (16 MiB captured in all, four times the client's
// queue), 1,000 cublasSaxpy and 1,000 event records. None costs a round trip of
// its own: a full queue travels in a message the server does not answer
// (CRM_POST). The sums prove every copy captured its data at call time and ran in
// order; tests/e2e/check_e2e_roundtrips.c counts the round trips.
#include <cublas_v2.h>
#include "cuda_check.h"

#define HO_CUBLAS(call) CT_TRUE((call) == CUBLAS_STATUS_SUCCESS)

int main()
{
    const int n = 4096, steps = 1000;
    static float host[4096], sums[4096];
    float *x = nullptr, *y = nullptr;
    const float one = 1.0f;
    cublasHandle_t handle;
    cudaStream_t stream;
    cudaEvent_t event;
    CT_ERR(cudaMalloc(&x, n * sizeof(float)), cudaSuccess);
    CT_ERR(cudaMalloc(&y, n * sizeof(float)), cudaSuccess);
    HO_CUBLAS(cublasCreate(&handle));
    CT_ERR(cudaStreamCreate(&stream), cudaSuccess);
    CT_ERR(cudaEventCreate(&event), cudaSuccess);
    HO_CUBLAS(cublasSetStream(handle, stream));
    CT_ERR(cudaMemsetAsync(y, 0, n * sizeof(float), stream), cudaSuccess);
    CT_ERR(cudaStreamSynchronize(stream), cudaSuccess); /* the first synchronisation */
    for (int i = 0; i < steps; i++) {
        for (int k = 0; k < n; k++)
            host[k] = (float)(i + 1 + k % 3);
        CT_ERR(cudaMemcpyAsync(x, host, n * sizeof(float), cudaMemcpyHostToDevice, stream), cudaSuccess);
        HO_CUBLAS(cublasSaxpy(handle, n, &one, x, 1, y, 1));
        CT_ERR(cudaEventRecord(event, stream), cudaSuccess);
    }
    CT_ERR(cudaStreamSynchronize(stream), cudaSuccess); /* the second */
    CT_ERR(cudaMemcpy(sums, y, n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
    int bad = 0;
    for (int k = 0; k < n; k++) /* the sum of i + 1 + k % 3 over 1,000 steps, exact in float */
        bad += sums[k] != (float)(steps * (steps + 1) / 2 + steps * (k % 3));
    CT_TRUE(bad == 0);
    /* A call that fails inside a posted batch fails the next synchronisation:
     * cuBLAS accepts the call, the server finds x's vector runs past its allocation. */
    HO_CUBLAS(cublasSaxpy(handle, 2 * n, &one, x, 1, y, 1));
    for (int i = 0; i < 300; i++) /* 4.7 MiB: the queue is posted */
        CT_ERR(cudaMemcpyAsync(y, host, n * sizeof(float), cudaMemcpyHostToDevice, stream), cudaSuccess);
    CT_ERR(cudaStreamSynchronize(stream), cudaErrorUnknown); /* a library call's failure */
    CT_ERR(cudaStreamSynchronize(stream), cudaSuccess);
    /* A copy too large to queue is posted on its own: no round trip either, and the
     * source may change once the call returns. */
    static float big[1 << 20], back[1 << 20];
    float *z = nullptr;
    for (int k = 0; k < (1 << 20); k++)
        big[k] = (float)(k & 0xffff);
    CT_ERR(cudaMalloc(&z, sizeof big), cudaSuccess);
    CT_ERR(cudaMemcpyAsync(z, big, sizeof big, cudaMemcpyHostToDevice, stream), cudaSuccess);
    memset(big, 0, sizeof big);
    CT_ERR(cudaStreamSynchronize(stream), cudaSuccess);
    CT_ERR(cudaMemcpy(back, z, sizeof back, cudaMemcpyDeviceToHost), cudaSuccess);
    bad = 0;
    for (int k = 0; k < (1 << 20); k++)
        bad += back[k] != (float)(k & 0xffff);
    CT_TRUE(bad == 0);
    CT_ERR(cudaFree(z), cudaSuccess);
    HO_CUBLAS(cublasDestroy(handle));
    CT_ERR(cudaEventDestroy(event), cudaSuccess);
    CT_ERR(cudaStreamDestroy(stream), cudaSuccess);
    CT_ERR(cudaFree(x), cudaSuccess);
    CT_ERR(cudaFree(y), cudaSuccess);
    return ct_finish("holdout");
}
