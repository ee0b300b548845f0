// ptx_kernels.cu -- kernels the PTX engine's unit test (tests/ptx/check_ptx.c) runs
// from their PTX (nvcc -ptx), each compared with a CPU reference there: an
// elementwise add, a struct parameter, a shared-memory tree reduction with
// barriers and a float atomic, a warp-shuffle sum, a histogram under atomic
// contention, nested divergent branches that reconverge, a grid-stride loop with
// 64-bit indexing, conversions between integer, f16, f32 and f64, vote, the bit
// and byte intrinsics, warp reductions and matches, cp.async, trap, a kernel
// that never ends (the watchdog), device functions called (recursion, a float
// argument, local arrays passed by pointer), printf with every conversion, a
// failing assert, and an edge-value sweep the fast and general paths must agree on.
#include <cassert>
#include <cstdio>
#include <cuda_fp16.h>
#include <cuda_pipeline.h>

extern "C" __global__ void vadd(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

struct Affine {
    float scale;
    int n;
    double shift;
};

extern "C" __global__ void affine(Affine p, const float *x, double *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n)
        y[i] = p.scale * x[i] + p.shift;
}

extern "C" __global__ void block_sum(const float *x, float *out, int n)
{
    extern __shared__ float s[];
    int t = threadIdx.x;
    float v = 0;
    for (int i = blockIdx.x * blockDim.x + t; i < n; i += blockDim.x * gridDim.x)
        v += x[i];
    s[t] = v;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (t < k)
            s[t] += s[t + k];
        __syncthreads();
    }
    if (t == 0)
        atomicAdd(out, s[0]);
}

extern "C" __global__ void warp_sum(const int *x, int *out)
{
    int v = x[blockIdx.x * blockDim.x + threadIdx.x];
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_down_sync(0xffffffff, v, o);
    if ((threadIdx.x & 31) == 0)
        out[(blockIdx.x * blockDim.x + threadIdx.x) / 32] = v;
}

extern "C" __global__ void histogram(const unsigned char *x, unsigned *h, int n)
{
    __shared__ unsigned local[16];
    if (threadIdx.x < 16)
        local[threadIdx.x] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&local[x[i] % 16], 1u);
    __syncthreads();
    if (threadIdx.x < 16)
        atomicAdd(&h[threadIdx.x], local[threadIdx.x]);
}

extern "C" __global__ void branches(int *out)
{
    int t = threadIdx.x, v = 0;
    if (t % 2 == 0) {
        if (t % 4 == 0)
            v = t * 3;
        else
            v = -t;
        for (int k = 0; k < t % 5; k++)
            v += k;
    } else {
        while (v < t)
            v += 7;
    }
    out[t] = v + __popc(__ballot_sync(0xffffffff, t % 3 == 0));
}

extern "C" __global__ void grid_stride(const double *x, double *y, long long n)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x)
        y[i] = x[i] * x[i] - 1.0 / (1.0 + (double)i);
}

extern "C" __global__ void conversions(const float *x, int *i32, unsigned short *h16, double *f64, float *back)
{
    int t = threadIdx.x;
    float v = x[t];
    i32[t] = (int)v;
    __half h = __float2half(v);
    h16[t] = __half_as_ushort(h);
    f64[t] = (double)v * 3.0;
    back[t] = __half2float(h) + (float)(unsigned char)t + sqrtf(fabsf(v));
}

extern "C" __global__ void bits(unsigned *o, const unsigned *x, float *f, unsigned long long *r)
{
    int t = threadIdx.x;
    unsigned v = x[t];
    o[t * 8 + 0] = __byte_perm(v, v * 3u, 0x3120);
    o[t * 8 + 1] = __brev(v) ^ __popc(v);
    o[t * 8 + 2] = __funnelshift_l(v, v ^ 0xdeadbeefu, t);
    o[t * 8 + 3] = __clz(v) + __ffs(v);
    o[t * 8 + 4] = __activemask();
    o[t * 8 + 5] = __reduce_add_sync(0xffffffffu, v);
    o[t * 8 + 6] = __match_any_sync(0xffffffffu, v & 3u);
    o[t * 8 + 7] = isnan(f[t]) + 2 * isinf(f[t]);
    f[t] = copysignf(2.0f, f[t]);
    r[t] = (unsigned long long)v << (t % 40) | (unsigned long long)v >> (64 - t % 40 - 1);
}

extern "C" __global__ void async_copy(const float *in, float *out)
{
    __shared__ float s[64];
    __pipeline_memcpy_async(&s[threadIdx.x], &in[threadIdx.x], sizeof(float));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    out[threadIdx.x] = s[63 - threadIdx.x];
}

extern "C" __global__ void traps(int *p)
{
    if (threadIdx.x == 5)
        __trap();
    p[threadIdx.x] = 1;
}

extern "C" __global__ void forever(volatile int *p)
{
    while (p[0] == 0)
        p[1]++;
}

__device__ __noinline__ int fib(int n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

__device__ __noinline__ float scale(float x, float y)
{
    return x * y + 1.0f;
}

__device__ __noinline__ int sum_local(const int *v, int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += v[i];
    return s;
}

extern "C" __global__ void calls(int *o, float *f)
{
    int t = threadIdx.x, local[8];
    for (int i = 0; i < 8; i++)
        local[i] = t * i;
    o[t] = t % 2 ? fib(t % 10) : sum_local(local, 1 + t % 8); /* divergent calls */
    f[t] = scale((float)t, 0.5f);
}

extern "C" __global__ void calls_print(int *o)
{
    o[threadIdx.x] = fib((int)threadIdx.x % 10);
    if (threadIdx.x == 0)
        printf("calls %d\n", o[0]);
}

/* The fast path's instructions on edge values: each thread reads its own int,
 * unsigned, float, double, 8- and 16-bit inputs and writes 40 results (wrapping,
 * shifts at and past the width, signed and unsigned compares and min/max, wide
 * products, sign extension of narrow loads, NaN compares, fused multiply-add,
 * square roots, reciprocals, divisions, conversions between floats and integers,
 * bit counts and reversal). */
extern "C" __global__ void sweep(const int *i, const unsigned *u, const float *f, const double *d,
                                 const signed char *s8, const short *s16, unsigned long long *o)
{
    int t = threadIdx.x, a = i[t], b = i[(t + 7) % 64];
    unsigned x = u[t], y = u[(t + 3) % 64];
    float p = f[t], q = f[(t + 5) % 64];
    double g = d[t], h = d[(t + 9) % 64];
    unsigned long long *r = o + t * 40;
    r[0] = (unsigned)(a + b);
    r[1] = (unsigned)(a - b);
    r[2] = (unsigned)(a * b);
    r[3] = (unsigned long long)((long long)a * b);
    r[4] = (unsigned long long)x * y;
    r[5] = (unsigned)(a * b + 17);
    r[6] = x << (y & 63);
    r[7] = x >> (y & 63);
    r[8] = (unsigned)(a >> (y & 31));
    r[9] = (unsigned long long)((long long)a << (x & 63));
    r[10] = (unsigned)min(a, b) + ((unsigned)max(a, b) << 1);
    r[11] = min(x, y) ^ max(x, y) << 1 ^ (unsigned long long)llmin((long long)a, (long long)x) << 32;
    r[12] = (a < b) | (a <= b) << 1 | (a == b) << 2 | (a != b) << 3 | (x < y) << 4 | (x >= y) << 5;
    r[13] = (p < q) | (p <= q) << 1 | (p == q) << 2 | (p != q) << 3 | !(p >= q) << 4 | (p > q) << 5;
    float fs = p + q, fd = p - q, fm = p * q;
    r[14] = __float_as_uint(fs) | (unsigned long long)__float_as_uint(fd) << 32;
    r[15] = __float_as_uint(fm) | (unsigned long long)__float_as_uint(fmaf(p, q, fs)) << 32;
    r[16] = __double_as_longlong(g + h);
    r[17] = __double_as_longlong(g * h - g);
    r[18] = __double_as_longlong(fma(g, h, 0.5));
    r[19] = (g < h) | (g != h) << 1 | !(g > h) << 2;
    r[20] = (unsigned long long)(long long)s8[t] + ((unsigned long long)(long long)s16[t] << 20);
    r[21] = (unsigned long long)(long long)a ^ (unsigned long long)x;
    r[22] = a < 0 ? (unsigned)b : x;
    r[23] = (unsigned short)(x + y) | (unsigned long long)(unsigned char)(a - b) << 16;
    r[24] = (unsigned long long)((long long)a * (long long)b + (long long)x);
    r[25] = ~x & (a | y);
    r[26] = (unsigned)(long long)g;
    r[27] = (unsigned long long)(x % 7u) << 8 | (unsigned)(a / 5);
    r[28] = (unsigned)(-a) ^ (unsigned)(a < 0 ? -a : a);
    r[29] = __float_as_uint(p * 2.5f - 1.0f);
    r[30] = (long long)a * 3 > (long long)b * 2;
    r[31] = (unsigned long long)t << 40 | (unsigned)blockDim.x;
    r[32] = __float_as_uint(sqrtf(fabsf(p))) | (unsigned long long)__float_as_uint(1.0f / q) << 32;
    r[33] = __float_as_uint(fminf(p, q)) | (unsigned long long)__float_as_uint(fmaxf(-p, q)) << 32;
    r[34] = (unsigned)(int)p | (unsigned long long)(unsigned)__float2uint_rn(q) << 32;
    r[35] = __float_as_uint((float)a) | (unsigned long long)__float_as_uint((float)x) << 32;
    r[36] = __float_as_uint(__expf(p * 0.01f)) | (unsigned long long)__float_as_uint(p / q) << 32;
    r[37] = __double_as_longlong(sqrt(fabs(g)) / h);
    r[38] = (unsigned long long)__brev(x) << 32 | (unsigned)__popc(x) << 8 | (unsigned)__clz(a);
    r[39] = __double_as_longlong((double)a * 0.5) ^ (unsigned long long)__float_as_uint((float)g);
}

/* Every printf conversion (check_ptx renders the same with the C library). */
extern "C" __global__ void printf_all(size_t unused)
{
    int t = threadIdx.x, b = blockIdx.x;
    const char *null_string = unused ? "x" : nullptr;
    printf("[%d,%d] %i|%5u|%-6x|%08X|%o|%c|%lld|%llu|%.3f|%10.2e|%g|%s|%-8s|%s|%%|%5.1f\n", b, t, -t - 1, 42u + t,
           255u, 0xbeefu, 8u, 'A' + t, -1234567890123LL, 18446744073709551615ULL, 3.14159, -0.000123,
           1e20 * (t + 1), "device", "str", null_string, 2.5f * (b + t));
}

extern "C" __global__ void asserts(const int *x)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    assert(x[i] >= 0);
}

/* Block-wide votes (__syncthreads_count/_and/_or: bar.red), a nanosleep hint, and
 * warp reductions and ballots over two interleaved masks executing together. */
extern "C" __global__ void block_votes(const int *x, unsigned *o)
{
    int t = threadIdx.x, lane = t % 32;
    __nanosleep(100);
    int count = __syncthreads_count(x[t] > 0);
    int all = __syncthreads_and(x[t] > -100);
    int any = __syncthreads_or(x[t] > 1000);
    unsigned mask = (lane & 1) ? 0xaaaaaaaau : 0x55555555u;
    o[t * 5 + 0] = count;
    o[t * 5 + 1] = all;
    o[t * 5 + 2] = any;
    o[t * 5 + 3] = __reduce_add_sync(mask, lane);
    o[t * 5 + 4] = __ballot_sync(mask, x[t] > 0);
}

/* Dot products of bytes and half-words (__dp4a, __dp2a_lo/hi), bmsk, the grid
 * dependency wait (griddepcontrol.wait) and membar.gl. */
extern "C" __global__ void dots(const int *a, const int *b, int *o)
{
    int t = threadIdx.x;
    unsigned m;
    asm("bmsk.clamp.b32 %0, %1, %2;" : "=r"(m) : "r"((unsigned)a[t] & 63u), "r"((unsigned)b[t] & 63u));
    cudaGridDependencySynchronize();
    asm volatile("membar.gl;" ::: "memory");
    o[t * 6 + 0] = __dp4a(a[t], b[t], t);
    o[t * 6 + 1] = (int)__dp4a((unsigned)a[t], (unsigned)b[t], 7u);
    o[t * 6 + 2] = __dp2a_lo(a[t], b[t], -t);
    o[t * 6 + 3] = __dp2a_hi(a[t], b[t], 3);
    o[t * 6 + 4] = (int)m;
    o[t * 6 + 5] = (int)__dp2a_lo((unsigned)a[t], (unsigned)b[t], 1u);
}
