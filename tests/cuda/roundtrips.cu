// roundtrips.cu -- asynchronous work costs no round trip of its own: 1000 memsets,
// 100 event records and stream waits, small async host-to-device copies and stream
// creation are queued and travel with the synchronising call that follows. The
// results are checked; the harness checks the client's round-trip counter.
// A stream synchronisation right after a device-to-host copy on that stream (what
// torch's `.item()` does), and a repeated device synchronisation, cost nothing: the
// copy's or the first sync's round trip already drained what they wait for.
// Device-to-device copies (100 async, 100 synchronous: a GPU's D2D cudaMemcpy does
// not wait either), the frees of known allocations and the destruction of a live
// stream or event are queued too; a second free or destroy of the same object is
// answered (the client cannot vouch for it), with the error a GPU gives.
// Expected EXEC messages: the two cudaMallocs, the synchronise (carrying the queue),
// the readback, the async readback, the first device synchronise, the readback of
// the copies, the second event destroy, the second free, and at exit the queue with
// the last free = 10 (runs[] in tests/e2e/check_e2e_roundtrips.c).
#include "cuda_check.h"

int main()
{
    const size_t n = 1 << 16;
    unsigned char *dev = nullptr;
    static unsigned char host[1 << 16], small[4096];
    cudaStream_t stream;
    cudaEvent_t event;
    CT_ERR(cudaMalloc(&dev, n), cudaSuccess);                       /* round trip 1 */
    CT_ERR(cudaStreamCreate(&stream), cudaSuccess);                 /* queued */
    CT_ERR(cudaEventCreate(&event), cudaSuccess);                   /* queued */
    for (int i = 0; i < 1000; i++)                                  /* queued */
        CT_ERR(cudaMemsetAsync(dev + (i % 64) * 1024, i & 0xff, 1024, stream), cudaSuccess);
    for (int i = 0; i < 100; i++) {                                 /* queued */
        CT_ERR(cudaEventRecord(event, stream), cudaSuccess);
        CT_ERR(cudaStreamWaitEvent(0, event, 0), cudaSuccess);
    }
    for (size_t i = 0; i < sizeof small; i++)
        small[i] = (unsigned char)(i * 7);
    CT_ERR(cudaMemcpyAsync(dev, small, sizeof small, cudaMemcpyHostToDevice, stream), cudaSuccess);
    memset(small, 0, sizeof small); /* the copy captured the data at call time */
    CT_ERR(cudaStreamSynchronize(stream), cudaSuccess);             /* round trip 2 */
    CT_ERR(cudaMemcpy(host, dev, n, cudaMemcpyDeviceToHost), cudaSuccess); /* 3 */
    int bad = 0;
    for (size_t i = 0; i < 4096; i++)
        bad += host[i] != (unsigned char)(i * 7);
    for (int chunk = 4; chunk < 64; chunk++) { /* the last i < 1000 with i % 64 == chunk wins */
        int last = 960 + chunk < 1000 ? 960 + chunk : 896 + chunk;
        for (int b = 0; b < 1024; b++)
            bad += host[chunk * 1024 + b] != (unsigned char)(last & 0xff);
    }
    CT_TRUE(bad == 0);
    unsigned char tail[16];
    CT_ERR(cudaMemcpyAsync(tail, dev + 4096, sizeof tail, cudaMemcpyDeviceToHost, stream), cudaSuccess); /* 4 */
    CT_ERR(cudaStreamSynchronize(stream), cudaSuccess);             /* answered by the copy's */
    CT_ERR(cudaStreamQuery(stream), cudaSuccess);                   /* the same */
    CT_TRUE(memcmp(tail, host + 4096, sizeof tail) == 0);
    CT_ERR(cudaDeviceSynchronize(), cudaSuccess);                   /* round trip 5 */
    CT_ERR(cudaDeviceSynchronize(), cudaSuccess);                   /* answered by the first */
    CT_ERR(cudaStreamSynchronize(stream), cudaSuccess);             /* the same */
    CT_ERR(cudaEventDestroy(event), cudaSuccess);                   /* queued */
    CT_ERR(cudaStreamDestroy(stream), cudaSuccess);                 /* queued */
    unsigned char *copy = nullptr;
    CT_ERR(cudaMalloc(&copy, n), cudaSuccess);                      /* round trip 6 */
    for (int i = 0; i < 100; i++) {                                 /* queued, each pair */
        size_t at = (size_t)(i % 16) * 4096;
        CT_ERR(cudaMemcpyAsync(copy + at, dev + (size_t)(63 - i % 16) * 1024, 1024, cudaMemcpyDeviceToDevice, 0),
               cudaSuccess);
        CT_ERR(cudaMemcpy(copy + at + 1024, dev + (size_t)(i % 16) * 1024, 1024, cudaMemcpyDeviceToDevice),
               cudaSuccess);
    }
    CT_ERR(cudaFree(dev), cudaSuccess);                             /* queued: after the copies */
    static unsigned char back[1 << 16];
    CT_ERR(cudaMemcpy(back, copy, n, cudaMemcpyDeviceToHost), cudaSuccess); /* round trip 7 */
    bad = 0;
    for (int k = 0; k < 16; k++)
        for (int b = 0; b < 1024; b++) {
            bad += back[k * 4096 + b] != host[(63 - k) * 1024 + b];
            bad += back[k * 4096 + 1024 + b] != host[k * 1024 + b];
        }
    CT_TRUE(bad == 0);
    CT_ERR(cudaEventDestroy(event), cudaErrorInvalidResourceHandle); /* round trip 8: destroyed before */
    CT_ERR(cudaStreamDestroy(stream), cudaErrorInvalidResourceHandle); /* 9: the same */
    CT_ERR(cudaFree(dev), cudaErrorInvalidValue);                   /* round trip 10: freed before */
    CT_ERR(cudaFree(copy), cudaSuccess);                            /* queued: sent at exit, 11 */
    return ct_finish("roundtrips");
}
