// roundtrips.cu -- asynchronous work costs no round trip of its own: 1000 memsets,
// 100 event records and stream waits, small async host-to-device copies and stream
// creation are queued and travel with the synchronising call that follows. The
// results are checked; the harness checks the client's round-trip counter.
// A stream synchronisation right after a device-to-host copy on that stream (what
// torch's `.item()` does), and a repeated device synchronisation, cost nothing: the
// copy's or the first sync's round trip already drained what they wait for.
// Expected EXEC messages: cudaMalloc, the synchronise (carrying the queue), the
// readback, the async readback, the first device synchronise, the two destroys and
// cudaFree = 8 (runs[] in tests/e2e/check_e2e_roundtrips.c).
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
    CT_ERR(cudaEventDestroy(event), cudaSuccess);                   /* round trip 6 */
    CT_ERR(cudaStreamDestroy(stream), cudaSuccess);                 /* round trip 7 */
    CT_ERR(cudaFree(dev), cudaSuccess);                             /* round trip 8 */
    return ct_finish("roundtrips");
}
