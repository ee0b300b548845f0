// badlaunch.cu -- launch errors at the launching call, with the codes a local GPU
// gives: bad geometry, an unknown function, and (emulated device) a kernel it has
// no code for: no CPU implementation and an instruction its PTX engine does not
// execute (a texture fetch). A kernel with no CPU implementation but plain PTX runs.
//
// Built with the static runtime (KTEST_STATIC_RUNTIME), NVIDIA's runtime calls the
// driver's cuLaunchKernel for every launch, checks no geometry itself, and returns
// the driver's CUresult unchanged as its cudaError_t (and stores it as the last
// error): cudarem's driver refuses a bad geometry with the number a GPU's driver
// gives (cudaErrorInvalidConfiguration), and an unregistered host function, handed
// over as a kernel handle, with CUDA_ERROR_INVALID_HANDLE, which reads as
// cudaErrorInvalidResourceHandle. Either way the launch call fails.
#include <cstring>
#include "kcheck.h"

// Both take a value, never a call: cudaGetLastError clears the error it returns.
#define KTEST_BAD_GEOMETRY(e) ((e) == cudaErrorInvalidConfiguration)
#ifdef KTEST_STATIC_RUNTIME
#define KTEST_BAD_FUNCTION(e) ((e) == cudaErrorInvalidDeviceFunction || (e) == cudaErrorInvalidResourceHandle)
#else
#define KTEST_BAD_FUNCTION(e) ((e) == cudaErrorInvalidDeviceFunction)
#endif

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

// Called with p == nullptr: a GPU never fetches from the (absent) texture.
__global__ void uses_texture(cudaTextureObject_t tex, float *p)
{
    if (p)
        *p = tex1Dfetch<float>(tex, 0);
}

// The emulated device says so in its name.
static bool emulated_device()
{
    cudaDeviceProp prop;
    return cudaGetDeviceProperties(&prop, 0) == cudaSuccess && std::strstr(prop.name, "emulated") != nullptr;
}

int main()
{
    nop<<<1, 2048>>>(nullptr);
    cudaError_t err = cudaGetLastError();
    KCHECK(KTEST_BAD_GEOMETRY(err), "2048 threads: %s", cudaGetErrorName(err));
    KCHECK(cudaGetLastError() == cudaSuccess, "the error is not sticky");
    nop<<<dim3(1, 70000), 1>>>(nullptr);
    err = cudaGetLastError();
    KCHECK(KTEST_BAD_GEOMETRY(err), "grid.y 70000: %s", cudaGetErrorName(err));
    nop<<<0, 1>>>(nullptr);
    err = cudaGetLastError();
    KCHECK(KTEST_BAD_GEOMETRY(err), "grid 0: %s", cudaGetErrorName(err));
    void *args[] = {nullptr};
    int *none = nullptr;
    args[0] = &none;
    err = cudaLaunchKernel((const void *)main, dim3(1), dim3(1), args, 0, 0);
    KCHECK(KTEST_BAD_FUNCTION(err), "unknown function: %s", cudaGetErrorName(err));
    cudaGetLastError();
    err = cudaLaunchKernel((const void *)nop, dim3(1), dim3(1), args, 0, 0);
    KCHECK(err == cudaSuccess, "valid launch: %s", cudaGetErrorName(err));
    // No CPU implementation: the emulated device runs its PTX.
    err = cudaLaunchKernel((const void *)no_cpu_impl, dim3(1), dim3(1), args, 0, 0);
    KCHECK(err == cudaSuccess, "no_cpu_impl: %s", cudaGetErrorName(err));
    // The emulated device has no code it can run for this one: the launch itself
    // fails, as on a GPU given a module without code for its architecture.
    cudaTextureObject_t no_texture = 0;
    float *no_output = nullptr;
    void *tex_args[] = {&no_texture, &no_output};
    err = cudaLaunchKernel((const void *)uses_texture, dim3(1), dim3(1), tex_args, 0, 0);
    std::printf("uses_texture launch: %s\n", cudaGetErrorName(err));
    if (emulated_device())
        KCHECK(err == cudaErrorNoKernelImageForDevice, "uses_texture: %s", cudaGetErrorName(err));
    else
        KCHECK(err == cudaSuccess, "uses_texture: %s", cudaGetErrorName(err));
    cudaGetLastError();
    KCUDA(cudaDeviceSynchronize());
    return kcheck_finish("badlaunch");
}
