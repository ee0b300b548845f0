// multi_a.cu -- kernels in two translation units (multi_b.cu): each has its own
// fatbinary, both launched from here.
#include "kcheck.h"

__global__ void fill(int *p, int v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = v;
}

void scale_on_device(int *p, int k, int n); // multi_b.cu

int main()
{
    const int n = 300;
    int *p, h[n];
    KCUDA(cudaMalloc(&p, sizeof h));
    fill<<<(n + 31) / 32, 32>>>(p, 7, n);
    KCUDA(cudaGetLastError());
    scale_on_device(p, 3, n);
    KCUDA(cudaMemcpy(h, p, sizeof h, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
        KCHECK(h[i] == 21, "p[%d] = %d", i, h[i]);
    cudaFree(p);
    return kcheck_finish("multi_tu");
}
