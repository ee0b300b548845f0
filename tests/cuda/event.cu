/* event.cu -- self-checking test of CUDA events through the runtime API.
 *
 * Covers cudaEventCreate/CreateWithFlags (valid and invalid flags), Record on
 * the default and a created stream, Query/Synchronize (recorded and never
 * recorded), ElapsedTime around real copy work, the cudaEventDisableTiming and
 * never-recorded cases that must yield cudaErrorInvalidResourceHandle, Destroy.
 */
#include "cuda_check.h"

static void check_create(void)
{
    const unsigned flags[] = { cudaEventDefault, cudaEventBlockingSync, cudaEventDisableTiming,
                               cudaEventBlockingSync | cudaEventDisableTiming };
    for (unsigned i = 0; i < 4; i++) {
        cudaEvent_t e = NULL;
        CT_OK(cudaEventCreateWithFlags(&e, flags[i]));
        CT_TRUE(e != NULL);
        /* A never-recorded event counts as complete. */
        CT_OK(cudaEventQuery(e));
        CT_OK(cudaEventSynchronize(e));
        CT_OK(cudaEventDestroy(e));
    }
    cudaEvent_t e = NULL;
    CT_ERR(cudaEventCreateWithFlags(&e, 0x100), cudaErrorInvalidValue);
    CT_ERR(cudaGetLastError(), cudaErrorInvalidValue);
    CT_ERR(cudaEventCreate(NULL), cudaErrorInvalidValue);
    CT_ERR(cudaGetLastError(), cudaErrorInvalidValue);
}

/* Two records around WORK on stream S give a non-negative elapsed time. */
static void check_timing(cudaStream_t s)
{
    const size_t n = 16u << 20;
    cudaEvent_t a, b;
    unsigned char *h = NULL;
    char *d = NULL;
    CT_OK(cudaEventCreate(&a));
    CT_OK(cudaEventCreate(&b));
    CT_OK(cudaMallocHost(&h, n));
    CT_OK(cudaMalloc(&d, n));
    ct_fill(h, n, 11);
    CT_OK(cudaEventRecord(a, s));
    CT_OK(cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, s));
    CT_OK(cudaMemcpyAsync(h, d, n, cudaMemcpyDeviceToHost, s));
    CT_OK(cudaEventRecord(b, s));
    CT_OK(cudaEventSynchronize(b));
    CT_OK(cudaEventQuery(b));
    CT_OK(cudaEventQuery(a));
    CT_PATTERN(h, n, 11);
    float ms = -1.0f;
    CT_OK(cudaEventElapsedTime(&ms, a, b));
    CT_TRUE(ms >= 0.0f);
    printf("INFO elapsed %.3f ms\n", ms);
    float zero = -1.0f;
    CT_OK(cudaEventElapsedTime(&zero, a, a));
    CT_TRUE(zero == 0.0f);
    CT_ERR(cudaEventElapsedTime(NULL, a, b), cudaErrorInvalidValue);
    CT_ERR(cudaGetLastError(), cudaErrorInvalidValue);
    /* Re-recording moves the event forward. */
    CT_OK(cudaEventRecord(a, s));
    CT_OK(cudaEventSynchronize(a));
    CT_OK(cudaStreamSynchronize(s));
    CT_OK(cudaFree(d));
    CT_OK(cudaFreeHost(h));
    CT_OK(cudaEventDestroy(a));
    CT_OK(cudaEventDestroy(b));
}

static void check_invalid_timing(void)
{
    cudaEvent_t t, nt, never;
    CT_OK(cudaEventCreate(&t));
    CT_OK(cudaEventCreate(&never));
    CT_OK(cudaEventCreateWithFlags(&nt, cudaEventDisableTiming));
    CT_OK(cudaEventRecord(t, 0));
    CT_OK(cudaEventRecord(nt, 0));
    CT_OK(cudaDeviceSynchronize());
    float ms = -1.0f;
    CT_ERR(cudaEventElapsedTime(&ms, t, nt), cudaErrorInvalidResourceHandle);
    CT_ERR(cudaGetLastError(), cudaErrorInvalidResourceHandle);
    CT_ERR(cudaEventElapsedTime(&ms, nt, t), cudaErrorInvalidResourceHandle);
    CT_ERR(cudaGetLastError(), cudaErrorInvalidResourceHandle);
    CT_ERR(cudaEventElapsedTime(&ms, t, never), cudaErrorInvalidResourceHandle);
    CT_ERR(cudaGetLastError(), cudaErrorInvalidResourceHandle);
    CT_OK(cudaEventDestroy(t));
    CT_OK(cudaEventDestroy(nt));
    CT_OK(cudaEventDestroy(never));
}

int main(void)
{
    int n = 0;
    CT_OK(cudaGetDeviceCount(&n));
    if (n < 1) {
        ct_fail(__FILE__, __LINE__, "device count", ">= 1", "0");
        return ct_finish("event");
    }
    check_create();
    check_timing(0);
    cudaStream_t s;
    CT_OK(cudaStreamCreate(&s));
    check_timing(s);
    CT_OK(cudaStreamDestroy(s));
    check_invalid_timing();
    CT_ERR(cudaGetLastError(), cudaSuccess);
    return ct_finish("event");
}
