/* pinned.cu -- copies between page-locked host memory and the device, the way
 * programs use it: sync copies at odd offsets inside an allocation, pitched 2D
 * copies whose padding must stay untouched, asynchronous copies on a stream in
 * both directions, many allocations freed and made again, cudaHostAlloc flags,
 * an allocation too small to share, and a forked child copying from its parent's
 * pinned memory in a session of its own (cudarem serves a child; a local CUDA
 * runtime would refuse it). Through cudarem on one machine these
 * large pinned copies are made by the server straight from and into the memory
 * it shares with the program (client/crm_hostmem.h); the results must be the same
 * bytes as any other path gives.
 */
#include <cstdlib>
#include <vector>
#include <sys/wait.h>
#include <unistd.h>
#include "cuda_check.h"

static const size_t MIB = 1u << 20;

/* Sync copies of a region starting at odd offsets inside two pinned buffers. */
static void check_offsets(void)
{
    const size_t n = 8 * MIB, len = MIB + 5;
    unsigned char *a = NULL, *b = NULL;
    char *d = NULL;
    CT_OK(cudaMallocHost(&a, n));
    CT_OK(cudaHostAlloc(&b, n, cudaHostAllocPortable));
    CT_OK(cudaMalloc(&d, n));
    if (a == NULL || b == NULL || d == NULL)
        return;
    ct_fill(a + 4099, len, 11);
    memset(b, 0x5a, n);
    CT_OK(cudaMemcpy(d + 3, a + 4099, len, cudaMemcpyHostToDevice));
    CT_OK(cudaMemcpy(b + 77, d + 3, len, cudaMemcpyDeviceToHost));
    CT_PATTERN(b + 77, len, 11);
    CT_BYTES(b, 77, 0x5a);
    CT_BYTES(b + 77 + len, n - 77 - len, 0x5a);
    /* the very end of an allocation, with cudaMemcpyDefault */
    ct_fill(a + n - len, len, 12);
    CT_OK(cudaMemcpy(d, a + n - len, len, cudaMemcpyDefault));
    CT_OK(cudaMemcpy(b + n - len, d, len, cudaMemcpyDefault));
    CT_PATTERN(b + n - len, len, 12);
    unsigned flags = 0;
    CT_OK(cudaHostGetFlags(&flags, b));
    CT_EQ(flags, (unsigned)cudaHostAllocPortable);
    CT_OK(cudaFree(d));
    CT_OK(cudaFreeHost(a));
    CT_OK(cudaFreeHost(b));
}

/* Pitched copies: rows of 3000 bytes, 4160 apart in host memory, to a pitched
 * device allocation and back into rows 5000 apart; the gaps keep their bytes. */
static void check_2d(void)
{
    const size_t w = 3000, rows = 300, hp = 4160, hp2 = 5000;
    unsigned char *src = NULL, *dst = NULL;
    char *d = NULL;
    size_t dp = 0;
    CT_OK(cudaMallocHost(&src, hp * rows));
    CT_OK(cudaMallocHost(&dst, hp2 * rows));
    CT_OK(cudaMallocPitch(&d, &dp, w, rows));
    if (src == NULL || dst == NULL || d == NULL)
        return;
    ct_fill(src, hp * rows, 21);
    memset(dst, 0x33, hp2 * rows);
    CT_OK(cudaMemcpy2D(d, dp, src, hp, w, rows, cudaMemcpyHostToDevice));
    CT_OK(cudaMemcpy2D(dst, hp2, d, dp, w, rows, cudaMemcpyDeviceToHost));
    for (size_t r = 0; r < rows; r++) {
        CT_TRUE(memcmp(dst + r * hp2, src + r * hp, w) == 0);
        CT_BYTES(dst + r * hp2 + w, hp2 - w, 0x33);
    }
    CT_OK(cudaFree(d));
    CT_OK(cudaFreeHost(src));
    CT_OK(cudaFreeHost(dst));
}

/* Asynchronous copies on a stream: the bytes are in place once the stream is
 * synchronised. The source of a copy to the device may be rewritten after the
 * call returns (as stream.cu also checks): the copy takes what was there. */
static void check_async(void)
{
    const size_t n = 4 * MIB + 3;
    unsigned char *h = NULL, *r = NULL;
    char *d = NULL;
    cudaStream_t s;
    CT_OK(cudaStreamCreate(&s));
    CT_OK(cudaMallocHost(&h, n));
    CT_OK(cudaMallocHost(&r, n));
    CT_OK(cudaMalloc(&d, n));
    if (h == NULL || r == NULL || d == NULL)
        return;
    ct_fill(h, n, 31);
    CT_OK(cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, s));
    memset(h, 0, n);
    memset(r, 0, n);
    CT_OK(cudaMemcpyAsync(r, d, n, cudaMemcpyDeviceToHost, s));
    CT_OK(cudaStreamSynchronize(s));
    CT_PATTERN(r, n, 31);
    /* several copies out, then one synchronisation */
    for (unsigned i = 0; i < 4; i++)
        CT_OK(cudaMemcpyAsync(r + i * MIB, d + (3 - i) * MIB, MIB, cudaMemcpyDeviceToHost, s));
    CT_OK(cudaMemsetAsync(d, 0x7e, MIB, s));
    CT_OK(cudaMemcpyAsync(h, d, MIB, cudaMemcpyDeviceToHost, s));
    CT_OK(cudaStreamSynchronize(s));
    CT_BYTES(h, MIB, 0x7e);
    std::vector<unsigned char> want(n);
    ct_fill(want.data(), n, 31);
    for (unsigned i = 0; i < 4; i++)
        CT_TRUE(memcmp(r + i * MIB, want.data() + (3 - i) * MIB, MIB) == 0);
    CT_OK(cudaFree(d));
    CT_OK(cudaFreeHost(h));
    CT_OK(cudaFreeHost(r));
    CT_OK(cudaStreamDestroy(s));
}

/* Allocations made and freed in turn, several alive at once, each used. */
static void check_churn(void)
{
    const size_t n = 256 * 1024;
    char *d = NULL;
    CT_OK(cudaMalloc(&d, n));
    for (unsigned round = 0; round < 8; round++) {
        unsigned char *h[4] = {NULL, NULL, NULL, NULL};
        for (unsigned i = 0; i < 4; i++) {
            CT_OK(cudaMallocHost(&h[i], n + i * 4096));
            if (h[i] == NULL)
                return;
            ct_fill(h[i], n, 100 + round * 4 + i);
        }
        for (unsigned i = 0; i < 4; i++) {
            unsigned char *o = h[(i + 1) % 4];
            CT_OK(cudaMemcpy(d, h[i], n, cudaMemcpyHostToDevice));
            CT_OK(cudaMemcpy(o, d, n, cudaMemcpyDeviceToHost));
            CT_PATTERN(o, n, 100 + round * 4 + i);
            ct_fill(o, n, 100 + round * 4 + (i + 1) % 4); /* back as it was for its own turn */
        }
        for (unsigned i = 0; i < 4; i++)
            CT_OK(cudaFreeHost(h[i]));
    }
    CT_ERR(cudaFreeHost((void *)0x1000), cudaErrorInvalidValue);
    CT_OK(cudaFree(d));
}

/* A small pinned allocation and a copy of part of a large one inline-sized. */
static void check_small(void)
{
    unsigned char *h = NULL, *big = NULL;
    char *d = NULL;
    CT_OK(cudaMallocHost(&h, 16384));
    CT_OK(cudaMallocHost(&big, MIB));
    CT_OK(cudaMalloc(&d, MIB));
    if (h == NULL || big == NULL || d == NULL)
        return;
    ct_fill(h, 16384, 41);
    CT_OK(cudaMemcpy(d, h, 16384, cudaMemcpyHostToDevice));
    CT_OK(cudaMemcpy(big + 12345, d, 16384, cudaMemcpyDeviceToHost));
    CT_PATTERN(big + 12345, 16384, 41);
    CT_OK(cudaFree(d));
    CT_OK(cudaFreeHost(h));
    CT_OK(cudaFreeHost(big));
}

/* The child's session never heard of the parent's shared memory: its copies from
 * it must take the ordinary path. The parent's session is unaffected. */
static void check_fork(void)
{
    const size_t n = MIB;
    unsigned char *h = NULL;
    char *d = NULL;
    CT_OK(cudaMallocHost(&h, n));
    CT_OK(cudaMalloc(&d, n));
    if (h == NULL || d == NULL)
        return;
    ct_fill(h, n, 51);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        char *dc = NULL;
        std::vector<unsigned char> back(n);
        CT_OK(cudaMalloc(&dc, n));
        CT_OK(cudaMemcpy(dc, h, n, cudaMemcpyHostToDevice));
        CT_OK(cudaMemcpy(back.data(), dc, n, cudaMemcpyDeviceToHost));
        CT_PATTERN(back.data(), n, 51);
        CT_OK(cudaFree(dc));
        fflush(stdout);
        _exit(ct_failures.load() == 0 ? 0 : 1);
    }
    int status = -1;
    CT_TRUE(pid > 0 && waitpid(pid, &status, 0) == pid);
    CT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CT_OK(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice));
    memset(h, 0, n);
    CT_OK(cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost));
    CT_PATTERN(h, n, 51);
    CT_OK(cudaFree(d));
    CT_OK(cudaFreeHost(h));
}

int main(void)
{
    check_offsets();
    check_2d();
    check_async();
    check_churn();
    check_small();
    check_fork();
    return ct_finish("pinned");
}
