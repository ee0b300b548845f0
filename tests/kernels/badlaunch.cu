// badlaunch.cu -- launch errors at the launching call, with the codes a local GPU
// gives: bad geometry, an unknown function, and (emulated device) a kernel with no
// CPU implementation.
#include "kcheck.h"

__global__ void nop(int *p)
{
    if (p)
        *p = 1;
}

__global__ void no_cpu_impl(int *p)
{
    if (p)
        *p = 2;
}

int main()
{
    nop<<<1, 2048>>>(nullptr);
    cudaError_t err = cudaGetLastError();
    KCHECK(err == cudaErrorInvalidConfiguration, "2048 threads: %s", cudaGetErrorName(err));
    KCHECK(cudaGetLastError() == cudaSuccess, "the error is not sticky");
    nop<<<dim3(1, 70000), 1>>>(nullptr);
    KCHECK((err = cudaGetLastError()) == cudaErrorInvalidConfiguration, "grid.y 70000: %s", cudaGetErrorName(err));
    nop<<<0, 1>>>(nullptr);
    KCHECK((err = cudaGetLastError()) == cudaErrorInvalidConfiguration, "grid 0: %s", cudaGetErrorName(err));
    void *args[] = {nullptr};
    int *none = nullptr;
    args[0] = &none;
    err = cudaLaunchKernel((const void *)main, dim3(1), dim3(1), args, 0, 0);
    KCHECK(err == cudaErrorInvalidDeviceFunction, "unknown function: %s", cudaGetErrorName(err));
    cudaGetLastError();
    err = cudaLaunchKernel((const void *)nop, dim3(1), dim3(1), args, 0, 0);
    KCHECK(err == cudaSuccess, "valid launch: %s", cudaGetErrorName(err));
    no_cpu_impl<<<1, 1>>>(nullptr);
    err = cudaGetLastError();
    std::printf("no_cpu_impl launch: %s\n", cudaGetErrorName(err));
    KCHECK(err == cudaSuccess || err == cudaErrorInvalidDeviceFunction, "no_cpu_impl: %s", cudaGetErrorName(err));
    KCUDA(cudaDeviceSynchronize());
    return kcheck_finish("badlaunch");
}
