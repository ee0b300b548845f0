// bench_kernel.cu -- kernel launch cost for `make bench`: N launches of a tiny
// `<<<>>>` kernel in batches, each batch followed by cudaStreamSynchronize, then the
// counter the kernel bumps is read back and checked (N launches = N increments).
//
//   bench_kernel N BATCH    -> one JSON object on stdout (N = 0: setup only, so the
//                              driver can subtract its round trips)
//
// Exit status 4 when the first launch fails (launches not available: the driver
// prints "n/a"), 1 on any other failure. Through the shim on a machine without a
// GPU the server runs the kernel's CPU twin (bench_kernel_emu.c, loaded with
// cudarem-server --emu-kernels).
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>

extern "C" __global__ void crm_bench_touch(int *counter)
{
    if (threadIdx.x == 0 && blockIdx.x == 0)
        atomicAdd(counter, 1);
}

static double bk_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int bk_fail(const char *what, cudaError_t e, int status)
{
    fprintf(stderr, "bench_kernel: %s: %s\n", what, cudaGetErrorName(e));
    return status;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? std::max(0L, atol(argv[1])) : 1000; /* 0: setup only */
    long batch = argc > 2 ? std::max(1L, atol(argv[2])) : 1000;
    int *counter = nullptr, host = 0;
    cudaError_t e;
    if ((e = cudaMalloc(&counter, sizeof(int))) != cudaSuccess || (e = cudaMemset(counter, 0, sizeof(int))))
        return bk_fail("setup", e, 1);
    crm_bench_touch<<<1, 32>>>(counter); /* the first launch loads the module */
    if ((e = cudaGetLastError()) != cudaSuccess || (e = cudaDeviceSynchronize()) != cudaSuccess)
        return bk_fail("first launch", e, 4);
    double t_launch = 0, t_total = 0;
    long batches = 0;
    for (long done = 0; done < n; done += batch, batches++) {
        long k = std::min(batch, n - done);
        double t0 = bk_now();
        for (long i = 0; i < k; i++)
            crm_bench_touch<<<1, 32>>>(counter);
        double t1 = bk_now();
        if ((e = cudaStreamSynchronize(0)) != cudaSuccess)
            return bk_fail("launch batch", e, 1);
        t_launch += t1 - t0;
        t_total += bk_now() - t0;
    }
    if ((e = cudaMemcpy(&host, counter, sizeof(int), cudaMemcpyDeviceToHost)) != cudaSuccess)
        return bk_fail("readback", e, 1);
    double dn = n > 0 ? (double)n : 1.0;
    printf("{\"n\": %ld, \"batch\": %ld, \"synchronises\": %ld, \"launch_us_per_call\": %.3f, "
           "\"launches_per_s\": %.0f, \"verified\": %s}\n",
           n, batch, batches, t_launch / dn * 1e6, n > 0 ? dn / t_total : 0.0, host == n + 1 ? "true" : "false");
    cudaFree(counter);
    return host == n + 1 ? 0 : 1;
}
