/* copy.cu -- self-checking test of CUDA memory copies and memsets.
 *
 * Covers cudaMemcpy in every direction (including cudaMemcpyDefault and
 * HostToHost) from pageable and pinned memory, cudaMemcpyAsync on a stream,
 * cudaMemcpy2D/cudaMemcpy2DAsync with distinct pitches (padding untouched),
 * cudaMemset/cudaMemsetAsync/cudaMemset2D with readback, a 64 MiB patterned
 * round trip, odd sizes and offsets, and zero-byte operations.
 */
#include "cuda_check.h"
#include <cstdlib>
#include <vector>

/* Host -> device -> device -> host round trip of N bytes with KIND as given. */
static void round_trip(size_t n, size_t off, cudaMemcpyKind h2d, cudaMemcpyKind d2d,
                       cudaMemcpyKind d2h, unsigned seed)
{
    std::vector<unsigned char> src(n + 1), dst(n + 1, 0);
    ct_fill(src.data(), n, seed);
    char *a = NULL, *b = NULL;
    CT_OK(cudaMalloc(&a, n + off + 1));
    CT_OK(cudaMalloc(&b, n + off + 1));
    CT_OK(cudaMemcpy(a + off, src.data(), n, h2d));
    CT_OK(cudaMemcpy(b + off, a + off, n, d2d));
    CT_OK(cudaMemcpy(dst.data(), b + off, n, d2h));
    CT_PATTERN(dst.data(), n, seed);
    CT_EQ(dst[n], 0); /* nothing written past the end */
    CT_OK(cudaFree(a));
    CT_OK(cudaFree(b));
}

static void check_kinds(void)
{
    const size_t sizes[] = { 1, 3, 4, 255, 4096, 4097, 65537, 1 << 20 };
    unsigned seed = 100;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        round_trip(sizes[i], 0, cudaMemcpyHostToDevice, cudaMemcpyDeviceToDevice,
                   cudaMemcpyDeviceToHost, seed++);
        round_trip(sizes[i], 1, cudaMemcpyHostToDevice, cudaMemcpyDeviceToDevice,
                   cudaMemcpyDeviceToHost, seed++);
        round_trip(sizes[i], 3, cudaMemcpyDefault, cudaMemcpyDefault, cudaMemcpyDefault,
                   seed++);
    }
    /* Host to host, explicit and inferred. */
    std::vector<unsigned char> x(4097), y(4097, 0), z(4097, 0);
    ct_fill(x.data(), x.size(), 7);
    CT_OK(cudaMemcpy(y.data(), x.data(), x.size(), cudaMemcpyHostToHost));
    CT_PATTERN(y.data(), y.size(), 7);
    CT_OK(cudaMemcpy(z.data(), y.data(), y.size(), cudaMemcpyDefault));
    CT_PATTERN(z.data(), z.size(), 7);
}

/* Pinned buffers with cudaMemcpyAsync, ordered on one stream. */
static void check_async(void)
{
    const size_t n = (4 << 20) + 3;
    unsigned char *h = NULL, *r = NULL;
    char *d = NULL, *d2 = NULL;
    cudaStream_t s;
    CT_OK(cudaStreamCreate(&s));
    CT_OK(cudaMallocHost(&h, n));
    CT_OK(cudaMallocHost(&r, n));
    CT_OK(cudaMalloc(&d, n));
    CT_OK(cudaMalloc(&d2, n));
    ct_fill(h, n, 21);
    memset(r, 0, n);
    CT_OK(cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, s));
    CT_OK(cudaMemcpyAsync(d2, d, n, cudaMemcpyDeviceToDevice, s));
    CT_OK(cudaMemcpyAsync(r, d2, n, cudaMemcpyDeviceToHost, s));
    CT_OK(cudaStreamSynchronize(s));
    CT_PATTERN(r, n, 21);
    /* Pageable memory is also allowed with the async call. */
    std::vector<unsigned char> pg(n, 0);
    CT_OK(cudaMemcpyAsync(pg.data(), d, n, cudaMemcpyDefault, s));
    CT_OK(cudaStreamSynchronize(s));
    CT_PATTERN(pg.data(), n, 21);
    /* Pinned host to pinned host through the stream. */
    memset(r, 0, n);
    CT_OK(cudaMemcpyAsync(r, h, n, cudaMemcpyHostToHost, s));
    CT_OK(cudaStreamSynchronize(s));
    CT_PATTERN(r, n, 21);
    CT_OK(cudaFree(d));
    CT_OK(cudaFree(d2));
    CT_OK(cudaFreeHost(h));
    CT_OK(cudaFreeHost(r));
    CT_OK(cudaStreamDestroy(s));
}

/* 2D copies between host pitch HP and a pitched device allocation. */
static void check_2d(bool async)
{
    const size_t w = 1000, hgt = 37, hp = w + 24, hp2 = w + 7;
    std::vector<unsigned char> src(hp * hgt), dst(hp2 * hgt, 0xee);
    ct_fill(src.data(), src.size(), async ? 31 : 32);
    char *d = NULL, *d2 = NULL;
    size_t dp = 0, dp2 = 0;
    CT_OK(cudaMallocPitch(&d, &dp, w, hgt));
    CT_OK(cudaMallocPitch(&d2, &dp2, w + 200, hgt));
    cudaStream_t s = 0;
    if (async) {
        CT_OK(cudaStreamCreate(&s));
        CT_OK(cudaMemcpy2DAsync(d, dp, src.data(), hp, w, hgt, cudaMemcpyHostToDevice, s));
        CT_OK(cudaMemcpy2DAsync(d2, dp2, d, dp, w, hgt, cudaMemcpyDeviceToDevice, s));
        CT_OK(cudaMemcpy2DAsync(dst.data(), hp2, d2, dp2, w, hgt, cudaMemcpyDeviceToHost, s));
        CT_OK(cudaStreamSynchronize(s));
        CT_OK(cudaStreamDestroy(s));
    } else {
        CT_OK(cudaMemcpy2D(d, dp, src.data(), hp, w, hgt, cudaMemcpyHostToDevice));
        CT_OK(cudaMemcpy2D(d2, dp2, d, dp, w, hgt, cudaMemcpyDeviceToDevice));
        CT_OK(cudaMemcpy2D(dst.data(), hp2, d2, dp2, w, hgt, cudaMemcpyDeviceToHost));
    }
    int bad_rows = 0, bad_pad = 0;
    for (size_t r = 0; r < hgt; r++) {
        if (memcmp(&dst[r * hp2], &src[r * hp], w) != 0)
            bad_rows++;
        if (ct_not_byte(&dst[r * hp2 + w], hp2 - w, 0xee) >= 0)
            bad_pad++;
    }
    CT_EQ(bad_rows, 0);
    CT_EQ(bad_pad, 0);
    /* The 2D copy equals the row-by-row 1D copies. */
    std::vector<unsigned char> row(w);
    CT_OK(cudaMemcpy(row.data(), d + 5 * dp, w, cudaMemcpyDeviceToHost));
    CT_EQ(memcmp(row.data(), &src[5 * hp], w), 0);
    CT_OK(cudaFree(d));
    CT_OK(cudaFree(d2));
}

static void check_memset(void)
{
    const size_t n = 65536 + 3;
    std::vector<unsigned char> h(n);
    char *d = NULL;
    CT_OK(cudaMalloc(&d, n));
    CT_OK(cudaMemset(d, 0xab, n));
    CT_OK(cudaMemcpy(h.data(), d, n, cudaMemcpyDeviceToHost));
    CT_BYTES(h.data(), n, 0xab);
    /* Only the low byte of the value is used. */
    CT_OK(cudaMemset(d + 1, 0x1234, 3));
    CT_OK(cudaMemcpy(h.data(), d, 5, cudaMemcpyDeviceToHost));
    CT_EQ(h[0], 0xab);
    CT_EQ(h[1], 0x34);
    CT_EQ(h[2], 0x34);
    CT_EQ(h[3], 0x34);
    CT_EQ(h[4], 0xab);

    cudaStream_t s;
    CT_OK(cudaStreamCreate(&s));
    CT_OK(cudaMemsetAsync(d, 0x5c, n - 7, s));
    CT_OK(cudaMemcpyAsync(h.data(), d, n, cudaMemcpyDeviceToHost, s));
    CT_OK(cudaStreamSynchronize(s));
    CT_BYTES(h.data(), n - 7, 0x5c);
    CT_BYTES(h.data() + n - 7, 7, 0xab);
    CT_OK(cudaStreamDestroy(s));
    CT_OK(cudaFree(d));

    /* Memset2D touches width bytes of each row, never the pitch padding. */
    const size_t w = 100, hgt = 9;
    size_t pitch = 0;
    CT_OK(cudaMallocPitch(&d, &pitch, w, hgt));
    std::vector<unsigned char> img(pitch * hgt);
    CT_OK(cudaMemset(d, 0x11, pitch * hgt));
    CT_OK(cudaMemset2D(d, pitch, 0x22, w, hgt));
    CT_OK(cudaMemcpy(img.data(), d, pitch * hgt, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (size_t r = 0; r < hgt; r++) {
        if (ct_not_byte(&img[r * pitch], w, 0x22) >= 0)
            bad++;
        if (ct_not_byte(&img[r * pitch + w], pitch - w, 0x11) >= 0)
            bad++;
    }
    CT_EQ(bad, 0);
    CT_OK(cudaMemset2DAsync(d, pitch, 0x33, w, hgt, 0));
    CT_OK(cudaStreamSynchronize(0));
    CT_OK(cudaMemcpy2D(img.data(), w, d, pitch, w, hgt, cudaMemcpyDeviceToHost));
    CT_BYTES(img.data(), w * hgt, 0x33);
    CT_OK(cudaFree(d));
}

/* 64 MiB pageable round trip with a pattern, plus a pinned one. */
static void check_large(void)
{
    const size_t n = 64u << 20;
    unsigned char *h = (unsigned char *)malloc(n), *r = (unsigned char *)malloc(n);
    char *d = NULL, *d2 = NULL;
    if (h == NULL || r == NULL) {
        ct_fail(__FILE__, __LINE__, "malloc", "memory", "NULL");
        return;
    }
    ct_fill(h, n, 64);
    memset(r, 0, n);
    CT_OK(cudaMalloc(&d, n));
    CT_OK(cudaMalloc(&d2, n));
    CT_OK(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice));
    CT_OK(cudaMemcpy(d2, d, n, cudaMemcpyDeviceToDevice));
    CT_OK(cudaMemcpy(r, d2, n, cudaMemcpyDeviceToHost));
    CT_PATTERN(r, n, 64);
    unsigned char *p = NULL;
    CT_OK(cudaMallocHost(&p, n));
    if (p != NULL) {
        CT_OK(cudaMemcpy(p, d, n, cudaMemcpyDeviceToHost));
        CT_PATTERN(p, n, 64);
        CT_OK(cudaFreeHost(p));
    }
    CT_OK(cudaFree(d));
    CT_OK(cudaFree(d2));
    free(h);
    free(r);
}

/* Zero-byte operations succeed and change nothing. */
static void check_zero(void)
{
    unsigned char h[16], g[16];
    memset(h, 0x42, sizeof h);
    char *d = NULL;
    CT_OK(cudaMalloc(&d, 16));
    CT_OK(cudaMemset(d, 0x99, 16));
    CT_OK(cudaMemcpy(d, h, 0, cudaMemcpyHostToDevice));
    CT_OK(cudaMemcpy(h, d, 0, cudaMemcpyDeviceToHost));
    CT_OK(cudaMemcpy(d, d + 8, 0, cudaMemcpyDeviceToDevice));
    CT_OK(cudaMemcpy(g, h, 0, cudaMemcpyHostToHost));
    CT_OK(cudaMemcpyAsync(d, h, 0, cudaMemcpyHostToDevice, 0));
    CT_OK(cudaMemset(d, 0, 0));
    CT_OK(cudaDeviceSynchronize());
    CT_BYTES(h, sizeof h, 0x42);
    CT_OK(cudaMemcpy(g, d, 16, cudaMemcpyDeviceToHost));
    CT_BYTES(g, sizeof g, 0x99);
    CT_OK(cudaFree(d));
}

int main(void)
{
    int n = 0;
    CT_OK(cudaGetDeviceCount(&n));
    if (n < 1) {
        ct_fail(__FILE__, __LINE__, "device count", ">= 1", "0");
        return ct_finish("copy");
    }
    check_kinds();
    check_async();
    check_2d(false);
    check_2d(true);
    check_memset();
    check_large();
    check_zero();
    CT_ERR(cudaGetLastError(), cudaSuccess);
    return ct_finish("copy");
}
