// kprintf.cu -- printf and assert inside kernels. What a kernel prints reaches this
// program's standard output at the next synchronisation, after what the host
// printed before the launch and before what it prints after (the suite checks the
// order). A failed device assert makes the next synchronising call fail with
// cudaErrorAssert, and, as on a GPU, the context stays unusable: later calls fail
// with the same error until cudaDeviceReset, after which the device works again.
// The context's limits: their defaults, set and read back at both layers, reset by
// cudaDeviceReset; a 4 KiB printf FIFO keeps a launch's first lines only (the suite
// checks which).
#include <cassert>
#include <cstdio>
#include <cuda.h>
#include "kcheck.h"

__global__ void hello(int n, const char *word)
{
    printf("kernel %d/%d of block %d says %s %.2f\n", threadIdx.x, n, blockIdx.x, word, 0.5 * threadIdx.x);
}

__global__ void check_positive(const int *x)
{
    assert(x[threadIdx.x] >= 0);
}

__global__ void many_lines(int n)
{
    for (int i = 0; i < n; i++)
        printf("fifo line %04d of one thread, padded to sixty-four bytes.......\n", i);
}

static void limits(void)
{
    typedef CUresult (*get_fn)(size_t *, CUlimit);
    typedef CUresult (*set_fn)(CUlimit, size_t);
    void *get_p = nullptr, *set_p = nullptr;
    cudaDriverEntryPointQueryResult found;
    /* the driver's calls through the shim; the emulated device in process has no driver API */
    if (cudaGetDriverEntryPointByVersion("cuCtxGetLimit", &get_p, 3010, cudaEnableDefault, &found) != cudaSuccess ||
        cudaGetDriverEntryPointByVersion("cuCtxSetLimit", &set_p, 3010, cudaEnableDefault, &found) != cudaSuccess)
        get_p = set_p = nullptr;
    cudaGetLastError();
    get_fn get = (get_fn)get_p;
    set_fn set = (set_fn)set_p;
    size_t v = 0;
    KCUDA(cudaDeviceGetLimit(&v, cudaLimitPrintfFifoSize));
    KCHECK(v == (1u << 20), "default printf FIFO %zu", v);
    KCUDA(cudaDeviceGetLimit(&v, cudaLimitMallocHeapSize));
    KCHECK(v == (8u << 20), "default heap %zu", v);
    KCUDA(cudaDeviceSetLimit(cudaLimitStackSize, 4000));
    if (get != nullptr && set != nullptr) {
        KCHECK(get(&v, CU_LIMIT_STACK_SIZE) == CUDA_SUCCESS && v == 4000, "stack size %zu", v);
        KCHECK(set(CU_LIMIT_MALLOC_HEAP_SIZE, 64u << 20) == CUDA_SUCCESS, "cuCtxSetLimit");
        v = 7; /* the driver's own: no context here is a CIG one (NVIDIA's cuBLASLt asks) */
        KCHECK(get(&v, CU_LIMIT_CIG_ENABLED) == CUDA_SUCCESS && v == 0, "CIG enabled %zu", v);
        KCHECK(get(&v, CU_LIMIT_SHMEM_SIZE) == CUDA_SUCCESS && v >= 48 * 1024, "shared memory limit %zu", v);
    } else {
        KCUDA(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 64u << 20));
    }
    KCUDA(cudaDeviceGetLimit(&v, cudaLimitMallocHeapSize));
    KCHECK(v == (64u << 20), "heap after cuCtxSetLimit %zu", v);
    KCHECK(cudaDeviceSetLimit((cudaLimit)99, 1) == cudaErrorUnsupportedLimit, "an unknown limit accepted");
    cudaGetLastError();
    KCUDA(cudaDeviceSetLimit(cudaLimitPrintfFifoSize, 4096));
    many_lines<<<1, 1>>>(200);
    KCUDA(cudaDeviceSynchronize());
    KCUDA(cudaDeviceReset());
    KCUDA(cudaDeviceGetLimit(&v, cudaLimitStackSize));
    KCHECK(v == 1024, "stack size after a reset %zu", v);
}

__global__ void twice(int *x)
{
    x[threadIdx.x] *= 2;
}

int main()
{
    char *word;
    KCUDA(cudaMalloc(&word, 8));
    KCUDA(cudaMemcpy(word, "hello", 6, cudaMemcpyHostToDevice));
    std::printf("host before\n");
    hello<<<2, 3>>>(3, word);
    KCUDA(cudaDeviceSynchronize());
    std::printf("host after\n");

    int h[4] = {0, 1, -1, 3}, *d;
    KCUDA(cudaMalloc(&d, sizeof h));
    KCUDA(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
    check_positive<<<1, 4>>>(d);
    cudaError_t err = cudaDeviceSynchronize();
    KCHECK(err == cudaErrorAssert, "after the assert: %s", cudaGetErrorName(err));
    void *p = nullptr;
    err = cudaMalloc(&p, 16);
    KCHECK(err == cudaErrorAssert, "sticky cudaMalloc: %s", cudaGetErrorName(err));
    err = cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    KCHECK(err == cudaErrorAssert, "sticky cudaMemcpy: %s", cudaGetErrorName(err));
    err = cudaDeviceSynchronize();
    KCHECK(err == cudaErrorAssert, "sticky cudaDeviceSynchronize: %s", cudaGetErrorName(err));

    KCUDA(cudaDeviceReset());
    int *e;
    KCUDA(cudaMalloc(&e, sizeof h));
    KCUDA(cudaMemcpy(e, h, sizeof h, cudaMemcpyHostToDevice));
    twice<<<1, 4>>>(e);
    KCUDA(cudaMemcpy(h, e, sizeof h, cudaMemcpyDeviceToHost));
    KCHECK(h[0] == 0 && h[1] == 2 && h[2] == -2 && h[3] == 6, "after the reset: %d %d %d %d", h[0], h[1], h[2], h[3]);
    limits();
    return kcheck_finish("kprintf");
}
