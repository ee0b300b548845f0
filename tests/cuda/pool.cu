/* pool.cu -- the devices of several cudarem servers as one machine's: run with
 * CUDAREM_SERVER listing the servers. POOL_MEM_MIB lists the total memory each
 * device must report, in MiB and in device order ("2048,2048,1024"): the servers
 * are given different sizes, so it says which server each device number reached.
 * Checks, with device 0 current unless said: allocations on every device at
 * disjoint addresses; each device's memory query answered by its own server;
 * copies from and to every device; copies between every pair of devices (across
 * servers too), 1D, 2D and peer; a stream and event of the last device used from
 * device 0, and a stream of device 0 waiting for that event; no peer access.
 * With POOL_LOSE_LAST set, it checks that losing one server spares the others. */
#include <cstdlib>
#include <unistd.h>
#include <vector>
#include "cuda_check.h"

static std::vector<size_t> expected_mib(void)
{
    std::vector<size_t> out;
    const char *p = getenv("POOL_MEM_MIB");
    while (p != NULL && *p != '\0') {
        char *end;
        out.push_back(strtoull(p, &end, 10));
        p = *end == ',' ? end + 1 : end;
    }
    return out;
}

static const size_t N = 10u << 20; /* more than one 8 MiB band of a copy across servers */

static void check_devices(const std::vector<size_t> &mib, std::vector<void *> &buf)
{
    for (size_t d = 0; d < mib.size(); d++) {
        cudaDeviceProp p;
        CT_OK(cudaGetDeviceProperties(&p, (int)d));
        CT_EQ((size_t)(p.totalGlobalMem >> 20), mib[d]);
        CT_OK(cudaSetDevice((int)d));
        size_t free_b = 0, total_b = 0;
        CT_OK(cudaMemGetInfo(&free_b, &total_b));
        CT_EQ((size_t)(total_b >> 20), mib[d]);
        CT_OK(cudaMalloc(&buf[d], N));
        CT_OK(cudaMemset(buf[d], (int)d + 1, N));
    }
    for (size_t d = 0; d < buf.size(); d++)
        for (size_t e = d + 1; e < buf.size(); e++) {
            uintptr_t a = (uintptr_t)buf[d], b = (uintptr_t)buf[e];
            CT_TRUE(a + N <= b || b + N <= a);
        }
    CT_OK(cudaSetDevice(0));
    std::vector<unsigned char> host(N);
    for (size_t d = 0; d < buf.size(); d++) {
        cudaPointerAttributes attr;
        CT_OK(cudaPointerGetAttributes(&attr, buf[d]));
        CT_EQ(attr.device, (int)d);
        CT_OK(cudaMemcpy(host.data(), buf[d], N, cudaMemcpyDeviceToHost));
        CT_BYTES(host.data(), N, (unsigned char)(d + 1));
        for (size_t e = 0; e < buf.size(); e++) {
            int can = -1;
            CT_OK(cudaDeviceCanAccessPeer(&can, (int)d, (int)e == (int)d ? (int)((e + 1) % buf.size()) : (int)e));
            CT_EQ(can, 0);
        }
    }
}

/* Every ordered pair: d's bytes reach e by cudaMemcpy, then by cudaMemcpyPeer. */
static void check_pairs(std::vector<void *> &buf)
{
    std::vector<unsigned char> host(N), back(N);
    unsigned seed = 1;
    for (size_t d = 0; d < buf.size(); d++)
        for (size_t e = 0; e < buf.size(); e++) {
            if (d == e)
                continue;
            ct_fill(host.data(), N, seed);
            CT_OK(cudaMemcpy(buf[d], host.data(), N, cudaMemcpyHostToDevice));
            CT_OK(cudaMemcpy(buf[e], buf[d], N, cudaMemcpyDefault));
            CT_OK(cudaMemcpy(back.data(), buf[e], N, cudaMemcpyDeviceToHost));
            CT_PATTERN(back.data(), N, seed);
            seed++;
            ct_fill(host.data(), N, seed);
            CT_OK(cudaMemcpy(buf[d], host.data(), N, cudaMemcpyHostToDevice));
            CT_OK(cudaMemcpyPeer(buf[e], (int)e, buf[d], (int)d, N));
            CT_OK(cudaMemcpy(back.data(), buf[e], N, cudaMemcpyDeviceToHost));
            CT_PATTERN(back.data(), N, seed);
            seed++;
        }
}

/* A pitched copy from device 0 to the last device: the padding stays untouched. */
static void check_2d(std::vector<void *> &buf)
{
    const size_t width = 200, height = 100, spitch = 512, dpitch = 256, last = buf.size() - 1;
    std::vector<unsigned char> host(N), back(dpitch * height);
    ct_fill(host.data(), spitch * height, 77);
    CT_OK(cudaMemcpy(buf[0], host.data(), spitch * height, cudaMemcpyHostToDevice));
    CT_OK(cudaMemset(buf[last], 0xee, dpitch * height));
    CT_OK(cudaMemcpy2D(buf[last], dpitch, buf[0], spitch, width, height, cudaMemcpyDeviceToDevice));
    CT_OK(cudaMemcpy(back.data(), buf[last], dpitch * height, cudaMemcpyDeviceToHost));
    for (size_t row = 0; row < height; row++) {
        CT_TRUE(memcmp(&back[row * dpitch], &host[row * spitch], width) == 0);
        CT_BYTES(&back[row * dpitch + width], dpitch - width, 0xee);
    }
}

/* A stream and an event made on the last device, used while device 0 is current. */
static void check_stream(std::vector<void *> &buf)
{
    const int last = (int)buf.size() - 1;
    cudaStream_t s;
    cudaEvent_t ev;
    std::vector<unsigned char> host(N), back(N);
    CT_OK(cudaSetDevice(last));
    CT_OK(cudaStreamCreate(&s));
    CT_OK(cudaEventCreate(&ev));
    CT_OK(cudaSetDevice(0));
    ct_fill(host.data(), N, 99);
    CT_OK(cudaMemcpyAsync(buf[last], host.data(), N, cudaMemcpyHostToDevice, s));
    CT_OK(cudaMemsetAsync(buf[last], 0x5a, 4096, s));
    CT_OK(cudaEventRecord(ev, s));
    CT_OK(cudaEventSynchronize(ev));
    CT_OK(cudaStreamSynchronize(s));
    CT_OK(cudaStreamQuery(s));
    cudaStream_t s0; /* device 0's, waiting for the last device's event */
    CT_OK(cudaStreamCreate(&s0));
    CT_OK(cudaStreamWaitEvent(s0, ev, 0));
    CT_OK(cudaStreamWaitEvent(0, ev, 0));
    CT_OK(cudaMemcpyAsync(buf[0], buf[last], N, cudaMemcpyDeviceToDevice, s0));
    CT_OK(cudaStreamSynchronize(s0));
    CT_OK(cudaStreamDestroy(s0));
    CT_OK(cudaMemcpyAsync(back.data(), buf[0], N, cudaMemcpyDeviceToHost, s));
    CT_BYTES(back.data(), 4096, 0x5a);
    CT_TRUE(memcmp(&back[4096], &host[4096], N - 4096) == 0);
    CT_OK(cudaEventDestroy(ev));
    CT_OK(cudaStreamDestroy(s));
}

/* POOL_LOSE_LAST=PATH: with memory on every device, prints "ready" and waits for
 * PATH to exist (the test kills the last device's server meanwhile); then calls on
 * the last device fail with cudaErrorDevicesUnavailable, and the first device's
 * server still serves. */
static int check_losing_last(const char *path, std::vector<void *> &buf)
{
    const size_t n = 1u << 20;
    std::vector<unsigned char> host(n), back(n);
    for (size_t d = 0; d < buf.size(); d++) {
        CT_OK(cudaSetDevice((int)d));
        CT_OK(cudaMalloc(&buf[d], n));
    }
    CT_OK(cudaSetDevice(0));
    printf("ready\n");
    fflush(stdout);
    for (int i = 0; i < 600 && access(path, F_OK) != 0; i++)
        usleep(50000);
    ct_fill(host.data(), n, 5);
    CT_ERR(cudaMemcpy(buf.back(), host.data(), n, cudaMemcpyHostToDevice), cudaErrorDevicesUnavailable);
    CT_OK(cudaMemcpy(buf[0], host.data(), n, cudaMemcpyHostToDevice));
    CT_OK(cudaMemcpy(back.data(), buf[0], n, cudaMemcpyDeviceToHost));
    CT_PATTERN(back.data(), n, 5);
    CT_OK(cudaFree(buf[0]));
    return ct_finish("pool");
}

int main(void)
{
    std::vector<size_t> mib = expected_mib();
    cudaStream_t first_stream; /* the program's first CUDA call */
    CT_OK(cudaStreamCreate(&first_stream));
    int count = 0;
    CT_OK(cudaGetDeviceCount(&count));
    CT_EQ((size_t)count, mib.size());
    if (count == 0 || (size_t)count != mib.size())
        return ct_finish("pool");
    std::vector<void *> buf(mib.size());
    if (getenv("POOL_LOSE_LAST") != NULL)
        return check_losing_last(getenv("POOL_LOSE_LAST"), buf);
    check_devices(mib, buf);
    CT_OK(cudaSetDevice(count - 1)); /* the program's first stream, device 0's, used from the last device */
    CT_OK(cudaStreamSynchronize(first_stream));
    CT_OK(cudaMemsetAsync(buf[0], 1, 4096, first_stream));
    cudaError_t queried = cudaStreamQuery(first_stream);
    CT_TRUE(queried == cudaSuccess || queried == cudaErrorNotReady);
    CT_OK(cudaStreamDestroy(first_stream));
    CT_OK(cudaSetDevice(0));
    if (count > 1) {
        check_pairs(buf);
        check_2d(buf);
        check_stream(buf);
    }
    for (size_t d = 0; d < buf.size(); d++)
        CT_OK(cudaFree(buf[d]));
    for (int d = 0; d < count; d++) {
        CT_OK(cudaSetDevice(d));
        CT_OK(cudaDeviceSynchronize());
    }
    return ct_finish("pool");
}
