// multi_b.cu -- the second translation unit of the multi_tu test.
#include <cuda_runtime.h>

__global__ void scale(int *p, int k, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] *= k;
}

void scale_on_device(int *p, int k, int n)
{
    scale<<<(n + 31) / 32, 32>>>(p, k, n);
}
