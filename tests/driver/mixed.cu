// mixed.cu -- one object model: runtime and driver calls on the same objects. A
// pointer from cudaMalloc is copied to and from with cuMemcpy*, a stream from
// cudaStreamCreate is a CUstream, an event from the driver is recorded by the
// runtime, the runtime's first call makes the primary context current, and a
// failing driver call leaves cudaGetLastError alone. Built with the shared and with
// the static runtime (then NVIDIA's runtime stands on the shim's driver too); links
// -lcuda. Prints "PASS mixed".
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstring>
#include "dcheck.h"


int main()
{
    const size_t n = 1 << 16;
    static unsigned char host[1 << 16], back[1 << 16];
    for (size_t i = 0; i < n; i++)
        host[i] = (unsigned char)(i * 13 + 1);
    unsigned char *dev = nullptr;
    CHECK(cudaSetDevice(0) == cudaSuccess, "cudaSetDevice");
    CHECK(cudaMalloc(&dev, n) == cudaSuccess, "cudaMalloc");
    CUcontext ctx = nullptr;
    CHECK(cuCtxGetCurrent(&ctx) == CUDA_SUCCESS && ctx != nullptr, "the runtime made no context current");
    CUdevice d = -1;
    CHECK(cuCtxGetDevice(&d) == CUDA_SUCCESS && d == 0, "context device %d", d);
    CHECK(cuMemcpyHtoD((CUdeviceptr)dev, host, n) == CUDA_SUCCESS, "cuMemcpyHtoD to a cudaMalloc pointer");
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s) == cudaSuccess, "cudaStreamCreate");
    CHECK(cuMemcpyDtoHAsync(back, (CUdeviceptr)dev, n, (CUstream)s) == CUDA_SUCCESS, "cuMemcpyDtoHAsync");
    CUevent e;
    CHECK(cuEventCreate(&e, CU_EVENT_DEFAULT) == CUDA_SUCCESS, "cuEventCreate");
    CHECK(cudaEventRecord((cudaEvent_t)e, s) == cudaSuccess, "cudaEventRecord of a driver event");
    CHECK(cuEventSynchronize(e) == CUDA_SUCCESS, "cuEventSynchronize");
    CHECK(cuStreamSynchronize((CUstream)s) == CUDA_SUCCESS, "cuStreamSynchronize of a runtime stream");
    CHECK(std::memcmp(host, back, n) == 0, "bytes differ across the layers");
    unsigned type = 0;
    CHECK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)dev) == CUDA_SUCCESS &&
              type == CU_MEMORYTYPE_DEVICE, "memory type %u", type);
    CUdeviceptr base = 0;
    size_t size = 0;
    CHECK(cuMemGetAddressRange(&base, &size, (CUdeviceptr)(dev + 100)) == CUDA_SUCCESS &&
              base == (CUdeviceptr)dev && size == n, "address range of a cudaMalloc pointer");
    CUdeviceptr none;
    CHECK(cuMemAlloc(&none, 0) == CUDA_ERROR_INVALID_VALUE, "cuMemAlloc of 0 bytes");
    CHECK(cudaGetLastError() == cudaSuccess, "a driver error showed in cudaGetLastError");
    CHECK(cuEventDestroy(e) == CUDA_SUCCESS, "cuEventDestroy");
    CHECK(cudaStreamDestroy(s) == cudaSuccess, "cudaStreamDestroy");
    CHECK(cuMemFree((CUdeviceptr)dev) == CUDA_SUCCESS, "cuMemFree of a cudaMalloc pointer");
    if (dcheck_failures == 0)
        std::printf("PASS mixed\n");
    return dcheck_failures == 0 ? 0 : 1;
}
