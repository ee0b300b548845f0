// vadd.cu -- vector add launched with <<<>>>; also built with a compressed fatbin
// (-Xfatbin -compress-all) and as PTX only (KTEST_PTX_ONLY: a GPU's driver compiles
// it, the emulated device's PTX engine runs it).
#include "kcheck.h"
#ifndef KTEST_NAME
#define KTEST_NAME "vadd"
#endif

__global__ void vadd(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

int main()
{
    const int n = 1000;
    float ha[n], hb[n], hc[n];
    float *a, *b, *c;
    for (int i = 0; i < n; i++)
        ha[i] = (float)i, hb[i] = 2.0f * i, hc[i] = -1;
    KCUDA(cudaMalloc(&a, sizeof ha));
    KCUDA(cudaMalloc(&b, sizeof hb));
    KCUDA(cudaMalloc(&c, sizeof hc));
    KCUDA(cudaMemcpy(a, ha, sizeof ha, cudaMemcpyHostToDevice));
    KCUDA(cudaMemcpy(b, hb, sizeof hb, cudaMemcpyHostToDevice));
    vadd<<<(n + 127) / 128, 128>>>(a, b, c, n);
    cudaError_t err = cudaGetLastError();
    KCHECK(err == cudaSuccess, "launch: %s", cudaGetErrorName(err));
    KCUDA(cudaDeviceSynchronize());
    KCUDA(cudaMemcpy(hc, c, sizeof hc, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
        KCHECK(hc[i] == 3.0f * i, "c[%d] = %g", i, hc[i]);
    cudaFree(a), cudaFree(b), cudaFree(c);
    return kcheck_finish(KTEST_NAME);
}
