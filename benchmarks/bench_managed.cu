// bench_managed.cu -- what managed memory costs for `make bench`: one pattern of
// host and device touches over a managed buffer of MIB MiB, every value checked.
//
//   bench_managed PATTERN MIB   -> one JSON object on stdout
//
// Patterns (each after an allocation and, but for `write`, a kernel that fills the buffer):
//   write     the host writes every int, then a kernel reads them all (the push)
//   read      the host reads every int in order (faults, read-ahead doubling)
//   sparse    the host reads one int per MiB (one block fetched per touch)
//   prefetch  cudaMemPrefetchAsync to the host first, then the reads (one transfer)
//   copy      no managed memory: cudaMalloc and one cudaMemcpy back, the baseline
// The driver (benchmarks/run-bench.py) counts round trips, bytes and faults with
// CUDAREM_STATS; this program reports the milliseconds the pattern took.
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

__global__ void bm_fill(int *x, size_t n, int add)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        x[i] = (int)i + add;
}

__global__ void bm_sum(const int *x, size_t n, unsigned long long *out)
{
    unsigned long long s = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        s += (unsigned)x[i];
    atomicAdd(out, s);
}

static double bm_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int bm_fail(const char *what, cudaError_t e)
{
    fprintf(stderr, "bench_managed: %s: %s\n", what, cudaGetErrorName(e));
    return 1;
}

#define BM_CHECK(call)                          \
    do {                                        \
        cudaError_t bm_e = (call);              \
        if (bm_e != cudaSuccess)                \
            return bm_fail(#call, bm_e);        \
    } while (0)

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: bench_managed write|read|sparse|prefetch|copy MIB\n");
        return 2;
    }
    const char *pattern = argv[1];
    size_t bytes = (size_t)atoi(argv[2]) << 20, n = bytes / sizeof(int), per_mib = (1u << 20) / sizeof(int);
    int *x = nullptr;
    unsigned long long *sum = nullptr, got = 0, want = 0;
    long long bad = 0;
    BM_CHECK(cudaMalloc(&sum, sizeof *sum));
    BM_CHECK(cudaMemset(sum, 0, sizeof *sum));
    int managed = strcmp(pattern, "copy") != 0;
    if (managed)
        BM_CHECK(cudaMallocManaged(&x, bytes));
    else
        BM_CHECK(cudaMalloc(&x, bytes));
    if (strcmp(pattern, "write") != 0) {
        bm_fill<<<64, 256>>>(x, n, 1);
        BM_CHECK(cudaDeviceSynchronize());
    }
    double t0 = bm_now();
    if (strcmp(pattern, "write") == 0) {
        for (size_t i = 0; i < n; i++)
            x[i] = (int)(i & 0xffff);
        bm_sum<<<64, 256>>>(x, n, sum);
        BM_CHECK(cudaMemcpy(&got, sum, sizeof got, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < n; i++)
            want += i & 0xffff;
        bad = got != want;
    } else if (strcmp(pattern, "sparse") == 0) {
        for (size_t i = 0; i < n; i += per_mib)
            bad += x[i] != (int)i + 1;
    } else if (strcmp(pattern, "copy") == 0) {
        std::vector<int> h(n);
        BM_CHECK(cudaMemcpy(h.data(), x, bytes, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < n; i++)
            bad += h[i] != (int)i + 1;
    } else {
        if (strcmp(pattern, "prefetch") == 0) {
            cudaMemLocation host = {cudaMemLocationTypeHost, 0};
            BM_CHECK(cudaMemPrefetchAsync(x, bytes, host, 0, 0));
            BM_CHECK(cudaDeviceSynchronize());
        }
        for (size_t i = 0; i < n; i++)
            bad += x[i] != (int)i + 1;
    }
    double ms = (bm_now() - t0) * 1e3;
    BM_CHECK(cudaFree(x));
    BM_CHECK(cudaFree(sum));
    printf("{\"pattern\": \"%s\", \"mib\": %zu, \"ms\": %.3f, \"verified\": %s}\n", pattern, bytes >> 20, ms,
           bad == 0 ? "true" : "false");
    return bad == 0 ? 0 : 1;
}
