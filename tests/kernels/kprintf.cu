// kprintf.cu -- printf and assert inside kernels. What a kernel prints reaches this
// program's standard output at the next synchronisation, after what the host
// printed before the launch and before what it prints after (the suite checks the
// order). A failed device assert makes the next synchronising call fail with
// cudaErrorAssert, and, as on a GPU, the context stays unusable: later calls fail
// with the same error until cudaDeviceReset, after which the device works again.
#include <cassert>
#include <cstdio>
#include "kcheck.h"

__global__ void hello(int n, const char *word)
{
    printf("kernel %d/%d of block %d says %s %.2f\n", threadIdx.x, n, blockIdx.x, word, 0.5 * threadIdx.x);
}

__global__ void check_positive(const int *x)
{
    assert(x[threadIdx.x] >= 0);
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
    return kcheck_finish("kprintf");
}
