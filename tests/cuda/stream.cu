/* stream.cu -- self-checking test of CUDA streams through the runtime API.
 *
 * Covers cudaStreamCreate/CreateWithFlags/CreateWithPriority (with the range
 * from cudaDeviceGetStreamPriorityRange and clamping), GetFlags/GetPriority,
 * Query, Synchronize, WaitEvent ordering across streams, Destroy, and the
 * special handles 0, cudaStreamLegacy and cudaStreamPerThread.
 */
#include "cuda_check.h"
#include <vector>

static void check_create(void)
{
    cudaStream_t s = NULL, nb = NULL;
    unsigned f = 99;
    CT_OK(cudaStreamCreate(&s));
    CT_TRUE(s != NULL);
    CT_OK(cudaStreamGetFlags(s, &f));
    CT_EQ(f, cudaStreamDefault);
    CT_OK(cudaStreamCreateWithFlags(&nb, cudaStreamNonBlocking));
    CT_TRUE(nb != NULL && nb != s);
    CT_OK(cudaStreamGetFlags(nb, &f));
    CT_EQ(f, cudaStreamNonBlocking);
    CT_OK(cudaStreamQuery(s));
    CT_OK(cudaStreamQuery(nb));
    CT_OK(cudaStreamSynchronize(s));
    CT_OK(cudaStreamSynchronize(nb));
    CT_OK(cudaStreamDestroy(s));
    CT_OK(cudaStreamDestroy(nb));

    cudaStream_t bad = NULL;
    CT_ERR(cudaStreamCreateWithFlags(&bad, 0x10), cudaErrorInvalidValue);
    CT_ERR(cudaGetLastError(), cudaErrorInvalidValue);
    CT_ERR(cudaStreamCreate(NULL), cudaErrorInvalidValue);
    CT_ERR(cudaGetLastError(), cudaErrorInvalidValue);
}

static void check_priority(void)
{
    int least = 99, greatest = 99;
    CT_OK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    /* Lower numbers are higher priorities; 0 is the default and in range. */
    CT_TRUE(greatest <= least);
    CT_TRUE(greatest <= 0 && 0 <= least);
    printf("INFO priority range least %d greatest %d\n", least, greatest);

    const int asked[] = { least, greatest, (least + greatest) / 2, greatest - 100, least + 100 };
    const int want[] = { least, greatest, (least + greatest) / 2, greatest, least };
    for (int i = 0; i < 5; i++) {
        cudaStream_t s = NULL;
        int got = 12345;
        unsigned f = 99;
        CT_OK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, asked[i]));
        CT_OK(cudaStreamGetPriority(s, &got));
        CT_EQ(got, want[i]);
        CT_OK(cudaStreamGetFlags(s, &f));
        CT_EQ(f, cudaStreamNonBlocking);
        CT_OK(cudaStreamDestroy(s));
    }
    cudaStream_t s = NULL;
    int got = 12345;
    CT_OK(cudaStreamCreate(&s));
    CT_OK(cudaStreamGetPriority(s, &got));
    CT_EQ(got, 0);
    CT_OK(cudaStreamDestroy(s));
}

/* A chain H2D on s1, event, wait on s2, D2D + D2H on s2 yields the data. */
static void check_wait_event(void)
{
    const size_t n = 8u << 20;
    cudaStream_t s1, s2;
    cudaEvent_t ev;
    unsigned char *h = NULL, *r = NULL;
    char *d = NULL, *d2 = NULL;
    CT_OK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CT_OK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    CT_OK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    CT_OK(cudaMallocHost(&h, n));
    CT_OK(cudaMallocHost(&r, n));
    CT_OK(cudaMalloc(&d, n));
    CT_OK(cudaMalloc(&d2, n));
    for (unsigned round = 0; round < 4; round++) {
        ct_fill(h, n, 300 + round);
        memset(r, 0, n);
        CT_OK(cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, s1));
        CT_OK(cudaEventRecord(ev, s1));
        CT_OK(cudaStreamWaitEvent(s2, ev, 0));
        CT_OK(cudaMemcpyAsync(d2, d, n, cudaMemcpyDeviceToDevice, s2));
        CT_OK(cudaMemcpyAsync(r, d2, n, cudaMemcpyDeviceToHost, s2));
        cudaError_t q = cudaStreamQuery(s2);
        CT_TRUE(q == cudaSuccess || q == cudaErrorNotReady);
        CT_OK(cudaStreamSynchronize(s2));
        CT_OK(cudaStreamQuery(s2));
        CT_PATTERN(r, n, 300 + round);
        CT_OK(cudaStreamSynchronize(s1));
    }
    (void)cudaGetLastError();
    CT_OK(cudaFree(d));
    CT_OK(cudaFree(d2));
    CT_OK(cudaFreeHost(h));
    CT_OK(cudaFreeHost(r));
    CT_OK(cudaEventDestroy(ev));
    CT_OK(cudaStreamDestroy(s1));
    CT_OK(cudaStreamDestroy(s2));
}

/* Many async copies on one stream complete in issue order. */
static void check_ordering(void)
{
    const size_t n = 4096;
    cudaStream_t s;
    char *d = NULL;
    unsigned char *h = NULL;
    CT_OK(cudaStreamCreate(&s));
    CT_OK(cudaMalloc(&d, n));
    CT_OK(cudaMallocHost(&h, 64 * n));
    for (unsigned i = 0; i < 64; i++)
        ct_fill(h + i * n, n, 500 + i);
    /* Each write overwrites the last; the final content is the last write. */
    for (unsigned i = 0; i < 64; i++)
        CT_OK(cudaMemcpyAsync(d, h + i * n, n, cudaMemcpyHostToDevice, s));
    std::vector<unsigned char> r(n);
    CT_OK(cudaMemcpyAsync(r.data(), d, n, cudaMemcpyDeviceToHost, s));
    CT_OK(cudaStreamSynchronize(s));
    CT_PATTERN(r.data(), n, 563);
    CT_OK(cudaFree(d));
    CT_OK(cudaFreeHost(h));
    CT_OK(cudaStreamDestroy(s));
}

/* The special stream handles accept work, queries and synchronization. */
static void check_special(void)
{
    const cudaStream_t handles[] = { 0, cudaStreamLegacy, cudaStreamPerThread };
    const size_t n = 100000;
    char *d = NULL;
    unsigned char *h = NULL;
    CT_OK(cudaMalloc(&d, n));
    CT_OK(cudaMallocHost(&h, n));
    for (unsigned i = 0; i < 3; i++) {
        cudaStream_t s = handles[i];
        ct_fill(h, n, 700 + i);
        CT_OK(cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, s));
        memset(h, 0, n);
        CT_OK(cudaMemcpyAsync(h, d, n, cudaMemcpyDeviceToHost, s));
        CT_OK(cudaStreamSynchronize(s));
        CT_PATTERN(h, n, 700 + i);
        CT_OK(cudaStreamQuery(s));
        CT_OK(cudaMemsetAsync(d, 0x3f, n, s));
        CT_OK(cudaMemcpyAsync(h, d, n, cudaMemcpyDeviceToHost, s));
        CT_OK(cudaStreamSynchronize(s));
        CT_BYTES(h, n, 0x3f);
        int prio = 12345;
        CT_OK(cudaStreamGetPriority(s, &prio));
        CT_EQ(prio, 0);
    }
    /* An event recorded on the legacy stream can be waited on by a stream. */
    cudaStream_t s;
    cudaEvent_t ev;
    CT_OK(cudaStreamCreate(&s));
    CT_OK(cudaEventCreate(&ev));
    CT_OK(cudaEventRecord(ev, 0));
    CT_OK(cudaStreamWaitEvent(s, ev, 0));
    CT_OK(cudaStreamWaitEvent(cudaStreamPerThread, ev, 0));
    CT_OK(cudaStreamSynchronize(s));
    CT_OK(cudaStreamSynchronize(cudaStreamPerThread));
    CT_OK(cudaEventDestroy(ev));
    CT_OK(cudaStreamDestroy(s));
    CT_OK(cudaFree(d));
    CT_OK(cudaFreeHost(h));
    CT_OK(cudaDeviceSynchronize());
}

int main(void)
{
    int n = 0;
    CT_OK(cudaGetDeviceCount(&n));
    if (n < 1) {
        ct_fail(__FILE__, __LINE__, "device count", ">= 1", "0");
        return ct_finish("stream");
    }
    check_create();
    check_priority();
    check_wait_event();
    check_ordering();
    check_special();
    CT_ERR(cudaGetLastError(), cudaSuccess);
    return ct_finish("stream");
}
