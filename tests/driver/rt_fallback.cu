// rt_fallback.cu -- runtime calls cudarem does not remote at API level reach
// NVIDIA's own runtime when the client has it, which runs them on the shim's driver
// layer: a pitched 3D allocation and 3D copies both ways (checked byte for byte),
// the PCI bus id; a call the driver layer does not serve either (resetting the
// persisting L2 cache) answers cudaErrorNotSupported. With CUDAREM_FALLBACK=off every one of them
// answers cudaErrorNotSupported. Prints "PASS rt_fallback".
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include "dcheck.h"
#include <cuda_runtime.h>


int main()
{
    const char *mode = std::getenv("CUDAREM_FALLBACK");
    const bool off = mode != nullptr && std::strcmp(mode, "off") == 0;
    const cudaError_t want = off ? cudaErrorNotSupported : cudaSuccess;
    const int W = 40, H = 6, D = 3;
    static unsigned char host[D][H][W], back[D][H][W];
    char bus[32] = "";
    cudaError_t e = cudaDeviceGetPCIBusId(bus, sizeof bus, 0);
    CHECK(e == want, "cudaDeviceGetPCIBusId: %s", cudaGetErrorName(e));
    CHECK(off || std::strstr(bus, ":") != nullptr, "bus id \"%s\"", bus);
    cudaPitchedPtr dev = {};
    cudaExtent ext = make_cudaExtent(W, H, D);
    e = cudaMalloc3D(&dev, ext);
    CHECK(e == want, "cudaMalloc3D: %s", cudaGetErrorName(e));
    if (!off && e == cudaSuccess) {
        for (int z = 0; z < D; z++)
            for (int y = 0; y < H; y++)
                for (int x = 0; x < W; x++)
                    host[z][y][x] = (unsigned char)(z * 71 + y * 13 + x);
        cudaMemcpy3DParms up = {};
        up.srcPtr = make_cudaPitchedPtr(host, W, W, H);
        up.dstPtr = dev;
        up.extent = ext;
        up.kind = cudaMemcpyHostToDevice;
        cudaMemcpy3DParms down = up;
        down.srcPtr = dev;
        down.dstPtr = make_cudaPitchedPtr(back, W, W, H);
        down.kind = cudaMemcpyDeviceToHost;
        CHECK((e = cudaMemcpy3D(&up)) == cudaSuccess, "cudaMemcpy3D up: %s", cudaGetErrorName(e));
        CHECK((e = cudaMemcpy3D(&down)) == cudaSuccess, "cudaMemcpy3D down: %s", cudaGetErrorName(e));
        CHECK(std::memcmp(host, back, sizeof host) == 0, "3D copy differs");
        CHECK(cudaFree(dev.ptr) == cudaSuccess, "cudaFree of NVIDIA's allocation");
    }
    e = cudaCtxResetPersistingL2Cache();
    CHECK(e == cudaErrorNotSupported, "cudaCtxResetPersistingL2Cache: %s", cudaGetErrorName(e));
    cudaGetLastError();
    CHECK(cudaDeviceSynchronize() == cudaSuccess, "the session still works");
    if (dcheck_failures == 0)
        std::printf("PASS rt_fallback\n");
    return dcheck_failures == 0 ? 0 : 1;
}
