// scalars.cu -- every parameter kind: 1, 2, 4, 8-byte integers, float, double, a
// struct by value and a large parameter block, launched with <<<>>> and with
// cudaLaunchKernelExC. The kernel writes what it received into a result struct.
#include <cstring>
#include "kcheck.h"

struct Small {
    char c;
    double d;
    short s;
};
struct Block {                 // a large parameter block (> 4 KiB)
    int v[2000];
};
struct Result {
    long long c, s, i, ll;
    double f, d;
    long long small_c, small_s;
    double small_d;
    long long block_sum;
};

__global__ void scalars(char c, short s, int i, long long ll, float f, double d, Small sm, Block blk, Result *out)
{
    if (blockIdx.x != 0 || threadIdx.x != 0)
        return;
    long long sum = 0;
    for (int k = 0; k < 2000; k++)
        sum += blk.v[k];
    *out = Result{c, s, i, ll, f, d, sm.c, sm.s, sm.d, sum};
}

static void check(const Result &r, const char *how)
{
    KCHECK(r.c == -5 && r.s == -1234 && r.i == 123456789 && r.ll == -9876543210123LL, "%s: integers %lld %lld %lld %lld",
           how, r.c, r.s, r.i, r.ll);
    KCHECK(r.f == 1.5 && r.d == 2.25e100, "%s: floats %g %g", how, r.f, r.d);
    KCHECK(r.small_c == 7 && r.small_s == 300 && r.small_d == -0.5, "%s: struct %lld %lld %g", how, r.small_c,
           r.small_s, r.small_d);
    KCHECK(r.block_sum == 1999000LL * 3, "%s: block sum %lld", how, r.block_sum);
}

int main()
{
    Result *out, r;
    static Block blk;
    for (int k = 0; k < 2000; k++)
        blk.v[k] = 3 * k;
    Small sm = {7, -0.5, 300};
    KCUDA(cudaMalloc(&out, sizeof r));
    scalars<<<2, 32>>>((char)-5, (short)-1234, 123456789, -9876543210123LL, 1.5f, 2.25e100, sm, blk, out);
    KCUDA(cudaGetLastError());
    KCUDA(cudaMemcpy(&r, out, sizeof r, cudaMemcpyDeviceToHost));
    check(r, "<<<>>>");

    KCUDA(cudaMemset(out, 0, sizeof r));
    char c = -5;
    short s = -1234;
    int i = 123456789;
    long long ll = -9876543210123LL;
    float f = 1.5f;
    double d = 2.25e100;
    void *args[] = {&c, &s, &i, &ll, &f, &d, &sm, &blk, &out};
    cudaLaunchAttribute attr;
    std::memset(&attr, 0, sizeof attr);
    attr.id = cudaLaunchAttributePriority;
    attr.val.priority = 0;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(1);
    cfg.blockDim = dim3(1);
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    KCUDA(cudaLaunchKernelExC(&cfg, (const void *)scalars, args));
    KCUDA(cudaMemcpy(&r, out, sizeof r, cudaMemcpyDeviceToHost));
    check(r, "cudaLaunchKernelExC");
    cudaFree(out);
    return kcheck_finish("scalars");
}
