// shlib_kernels.cu -- kernels in a shared library (libktest_shlib.so) that
// dlopen_main.cu loads with dlopen.
#include <cuda_runtime.h>

__device__ int shlib_calls = 0;

__global__ void square(float *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = p[i] * p[i];
    if (i == 0)
        shlib_calls++;
}

extern "C" int shlib_square(float *p, int n)
{
    square<<<(n + 63) / 64, 64>>>(p, n);
    int calls = -1;
    if (cudaGetLastError() != cudaSuccess || cudaMemcpyFromSymbol(&calls, shlib_calls, sizeof calls) != cudaSuccess)
        return -1;
    return calls;
}
