// loop.cu -- thousands of launches in a loop, the result checked at the end.
#include "kcheck.h"

__global__ void incr(unsigned long long *p, int n, unsigned long long by)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] += by;
}

int main()
{
    const int n = 8, launches = 5000;
    unsigned long long *p, h[n];
    KCUDA(cudaMalloc(&p, sizeof h));
    KCUDA(cudaMemset(p, 0, sizeof h));
    for (int k = 1; k <= launches; k++)
        incr<<<1, n>>>(p, n, (unsigned long long)k);
    KCUDA(cudaGetLastError());
    KCUDA(cudaDeviceSynchronize());
    KCUDA(cudaMemcpy(h, p, sizeof h, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
        KCHECK(h[i] == (unsigned long long)launches * (launches + 1) / 2, "p[%d] = %llu", i, h[i]);
    cudaFree(p);
    return kcheck_finish("loop");
}
