// remote_copy.cu -- the demo job: an ordinary CUDA program (no cudarem code in it)
// that queries the device, moves 256 MiB through device memory with streams and
// events, checks every byte, and reports the bandwidth it saw. Run it through the
// shim: LD_PRELOAD=libcudarem.so CUDAREM_SERVER=... ./remote_copy
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(call)                                                                  \
    do {                                                                             \
        cudaError_t err_ = (call);                                                   \
        if (err_ != cudaSuccess) {                                                   \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,            \
                    cudaGetErrorString(err_));                                       \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

static float timed_copy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, cudaStream_t s)
{
    cudaEvent_t start, stop;
    float ms = 0;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    CHECK(cudaEventRecord(start, s));
    CHECK(cudaMemcpyAsync(dst, src, bytes, kind, s));
    CHECK(cudaEventRecord(stop, s));
    CHECK(cudaEventSynchronize(stop));
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    return ms;
}

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 256;
    size_t bytes = mib << 20;
    int count = 0, runtime = 0, driver = 0;
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceCount(&count));
    CHECK(cudaGetDeviceProperties(&prop, 0));
    CHECK(cudaRuntimeGetVersion(&runtime));
    CHECK(cudaDriverGetVersion(&driver));
    printf("device 0 of %d: %s, compute %d.%d, %.1f GiB, runtime %d, driver %d\n", count, prop.name,
           prop.major, prop.minor, prop.totalGlobalMem / 1073741824.0, runtime, driver);

    unsigned char *host_in, *host_out, *dev_a, *dev_b;
    cudaStream_t stream;
    CHECK(cudaMallocHost(&host_in, bytes));
    CHECK(cudaMallocHost(&host_out, bytes));
    CHECK(cudaMalloc(&dev_a, bytes));
    CHECK(cudaMalloc(&dev_b, bytes));
    CHECK(cudaStreamCreate(&stream));
    for (size_t i = 0; i < bytes; i++)
        host_in[i] = (unsigned char)(i * 2654435761u >> 13);

    float up = timed_copy(dev_a, host_in, bytes, cudaMemcpyHostToDevice, stream);
    float across = timed_copy(dev_b, dev_a, bytes, cudaMemcpyDeviceToDevice, stream);
    CHECK(cudaMemsetAsync(dev_a, 0, bytes, stream));
    float down = timed_copy(host_out, dev_b, bytes, cudaMemcpyDeviceToHost, stream);
    CHECK(cudaStreamSynchronize(stream));

    size_t bad = 0;
    for (size_t i = 0; i < bytes; i++)
        bad += host_out[i] != host_in[i];
    CHECK(cudaMemcpy(host_out, dev_a, 4096, cudaMemcpyDefault));
    for (size_t i = 0; i < 4096; i++)
        bad += host_out[i] != 0;

    printf("%zu MiB: host->device %.2f GB/s, device->device %.2f GB/s, device->host %.2f GB/s\n", mib,
           bytes / up / 1e6, bytes / across / 1e6, bytes / down / 1e6);
    CHECK(cudaStreamDestroy(stream));
    CHECK(cudaFree(dev_a));
    CHECK(cudaFree(dev_b));
    CHECK(cudaFreeHost(host_in));
    CHECK(cudaFreeHost(host_out));
    printf(bad == 0 ? "all bytes checked: OK\n" : "MISMATCH in %zu bytes\n", bad);
    return bad == 0 ? 0 : 1;
}
