// saxpy.cu -- a struct parameter by value, launched with cudaLaunchKernel; and the
// function attribute and occupancy calls on the same kernel. Through the shim
// (cudaremGetStats present), asking them again costs no round trip, nor does
// setting an attribute to the value it has, nor cudaGetLastError after a launch.
#include <dlfcn.h>
#include "kcheck.h"

// Round trips so far through the shim; -1 without it (a local GPU).
static long long round_trips()
{
    typedef int (*stats_fn)(unsigned long long *);
    stats_fn stats = (stats_fn)dlsym(RTLD_DEFAULT, "cudaremGetStats");
    unsigned long long s[4] = {0, 0, 0, 0};
    return stats != nullptr && stats(s) == 0 ? (long long)s[0] : -1;
}

struct SaxpyParams {
    float a;
    int n;
    double unused;
};

__global__ void saxpy(SaxpyParams p, const float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n)
        y[i] = p.a * x[i] + y[i];
}

int main()
{
    const int n = 777;
    float hx[n], hy[n];
    float *x, *y;
    for (int i = 0; i < n; i++)
        hx[i] = (float)i, hy[i] = 1.0f;
    KCUDA(cudaMalloc(&x, sizeof hx));
    KCUDA(cudaMalloc(&y, sizeof hy));
    KCUDA(cudaMemcpy(x, hx, sizeof hx, cudaMemcpyHostToDevice));
    KCUDA(cudaMemcpy(y, hy, sizeof hy, cudaMemcpyHostToDevice));
    SaxpyParams p = {2.5f, n, 0.0};
    void *args[] = {&p, &x, &y};
    KCUDA(cudaLaunchKernel((const void *)saxpy, dim3((n + 63) / 64), dim3(64), args, 0, 0));
    KCUDA(cudaMemcpy(hy, y, sizeof hy, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
        KCHECK(hy[i] == 2.5f * i + 1.0f, "y[%d] = %g", i, hy[i]);

    cudaFuncAttributes fa;
    KCUDA(cudaFuncGetAttributes(&fa, (const void *)saxpy));
    KCHECK(fa.maxThreadsPerBlock > 0, "maxThreadsPerBlock %d", fa.maxThreadsPerBlock);
    KCUDA(cudaFuncSetAttribute((const void *)saxpy, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024));
    KCUDA(cudaFuncGetAttributes(&fa, (const void *)saxpy));
    KCHECK(fa.maxDynamicSharedSizeBytes == 64 * 1024, "maxDynamicSharedSizeBytes %d", fa.maxDynamicSharedSizeBytes);
    KCUDA(cudaFuncSetCacheConfig((const void *)saxpy, cudaFuncCachePreferL1));
    int blocks = 0;
    KCUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, (const void *)saxpy, 256, 0));
    KCHECK(blocks > 0, "occupancy %d", blocks);
    KCUDA(cudaFuncGetAttributes(&fa, (const void *)saxpy)); // setting the cache config forgot them
    long long before = round_trips();
    for (int i = 0; i < 3; i++) { // the answers are fixed until an attribute is set
        int again = 0;
        KCUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&again, (const void *)saxpy, 256, 0));
        KCHECK(again == blocks, "occupancy asked again %d, first %d", again, blocks);
        KCUDA(cudaFuncGetAttributes(&fa, (const void *)saxpy));
        KCHECK(fa.maxDynamicSharedSizeBytes == 64 * 1024, "attributes asked again");
        // set again to the values they have: nothing to change
        KCUDA(cudaFuncSetAttribute((const void *)saxpy, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024));
        KCUDA(cudaFuncSetCacheConfig((const void *)saxpy, cudaFuncCachePreferL1));
    }
    if (before >= 0)
        KCHECK(round_trips() == before, "asking again cost %lld round trips", round_trips() - before);
    // launches checked with cudaGetLastError, as torch checks each of its kernels:
    // queued, and the check does not send them (their failures are asynchronous)
    before = round_trips();
    for (int i = 0; i < 10; i++) {
        saxpy<<<(n + 63) / 64, 64>>>(p, x, y);
        KCUDA(cudaGetLastError());
    }
    if (before >= 0)
        KCHECK(round_trips() == before, "10 checked launches cost %lld round trips", round_trips() - before);
    KCUDA(cudaMemcpy(hy, y, sizeof hy, cudaMemcpyDeviceToHost));
    KCHECK(hy[10] == 11.0f * (2.5f * 10) + 1.0f, "y[10] after 10 more launches = %g", hy[10]);
    cudaKernel_t k;
    KCUDA(cudaGetKernel(&k, (const void *)saxpy));
    KCUDA(cudaLaunchKernel((const void *)k, dim3((n + 63) / 64), dim3(64), args, 0, 0));
    KCUDA(cudaMemcpy(hy, y, sizeof hy, cudaMemcpyDeviceToHost));
    KCHECK(hy[10] == 12.0f * (2.5f * 10) + 1.0f, "y[10] after a launch by cudaKernel_t = %g", hy[10]);
    cudaFree(x), cudaFree(y);
    return kcheck_finish("saxpy");
}
