// loadmix.cu -- one client of the load test: for SECONDS, a seeded random mix of
// copies of 1-64 MiB host -> device -> host, memsets, a 64x64 SGEMM through cuBLAS
// and a kernel launch, each result checked against the host's. Prints
//   ops N errors E wrong W p50_us X p99_us Y
// (wrong: bytes or elements that came back different; the percentiles are of the
// time each operation's CUDA calls took) and exits 0 only when E and W are 0.
//   usage: loadmix SECONDS SEED
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

static const size_t kMaxBytes = 64u << 20, kMinBytes = 1u << 20, kLaunchN = 1u << 18;
static const int kDim = 64;

__global__ void add_one(unsigned *p, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        p[i] += 1;
}

struct Load {
    unsigned char *dev = nullptr;
    std::vector<unsigned char> out, back;
    cublasHandle_t blas = nullptr;
    long errors = 0, wrong = 0;
    std::vector<double> micros;
    unsigned rng;

    unsigned next() { return rng = rng * 1103515245u + 12345u, rng >> 8; }

    bool ok(cudaError_t e, const char *what)
    {
        if (e == cudaSuccess)
            return true;
        if (errors++ == 0)
            printf("error %s %s\n", what, cudaGetErrorName(e));
        return false;
    }

    void copy()
    {
        size_t n = kMinBytes + (size_t)next() % (kMaxBytes - kMinBytes);
        unsigned char salt = (unsigned char)next();
        for (size_t i = 0; i < n; i++)
            out[i] = (unsigned char)(i * 31 + salt);
        if (ok(cudaMemcpy(dev, out.data(), n, cudaMemcpyHostToDevice), "cudaMemcpy H2D") &&
            ok(cudaMemcpy(back.data(), dev, n, cudaMemcpyDeviceToHost), "cudaMemcpy D2H"))
            for (size_t i = 0; i < n; i++)
                wrong += back[i] != out[i];
    }

    void memset_()
    {
        size_t n = kMinBytes + (size_t)next() % (kMaxBytes - kMinBytes);
        int v = (int)(next() & 255);
        if (ok(cudaMemset(dev, v, n), "cudaMemset") &&
            ok(cudaMemcpy(back.data(), dev, n, cudaMemcpyDeviceToHost), "cudaMemcpy D2H"))
            for (size_t i = 0; i < n; i++)
                wrong += back[i] != (unsigned char)v;
    }

    void gemm()
    {
        std::vector<float> a(kDim * kDim), b(kDim * kDim), c(kDim * kDim), want(kDim * kDim, 0.0f);
        for (int i = 0; i < kDim * kDim; i++) {
            a[i] = (float)(next() % 5);
            b[i] = (float)(next() % 5);
        }
        for (int j = 0; j < kDim; j++) // column-major C = A B, small integers: exact in float
            for (int k = 0; k < kDim; k++)
                for (int i = 0; i < kDim; i++)
                    want[i + j * kDim] += a[i + k * kDim] * b[k + j * kDim];
        float *d = (float *)dev, one = 1.0f, zero = 0.0f;
        size_t bytes = sizeof(float) * kDim * kDim;
        if (!ok(cudaMemcpy(d, a.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy A") ||
            !ok(cudaMemcpy(d + kDim * kDim, b.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy B"))
            return;
        if (cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, kDim, kDim, kDim, &one, d, kDim, d + kDim * kDim, kDim, &zero,
                        d + 2 * kDim * kDim, kDim) != CUBLAS_STATUS_SUCCESS) {
            if (errors++ == 0)
                printf("error cublasSgemm\n");
            return;
        }
        if (ok(cudaMemcpy(c.data(), d + 2 * kDim * kDim, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy C"))
            for (int i = 0; i < kDim * kDim; i++)
                wrong += c[i] != want[i];
    }

    void launch()
    {
        unsigned *d = (unsigned *)dev, *h = (unsigned *)out.data(), *r = (unsigned *)back.data();
        unsigned base = next();
        for (size_t i = 0; i < kLaunchN; i++)
            h[i] = base + (unsigned)i;
        if (!ok(cudaMemcpy(d, h, kLaunchN * 4, cudaMemcpyHostToDevice), "cudaMemcpy H2D"))
            return;
        add_one<<<(unsigned)(kLaunchN / 256), 256>>>(d, kLaunchN);
        if (ok(cudaGetLastError(), "add_one") && ok(cudaMemcpy(r, d, kLaunchN * 4, cudaMemcpyDeviceToHost), "D2H"))
            for (size_t i = 0; i < kLaunchN; i++)
                wrong += r[i] != h[i] + 1;
    }
};

static double percentile(std::vector<double> v, double p)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, (size_t)(p * (double)v.size()))];
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: loadmix SECONDS SEED\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    Load l;
    l.rng = (unsigned)atoi(argv[2]);
    l.out.resize(kMaxBytes);
    l.back.resize(kMaxBytes);
    if (!l.ok(cudaMalloc(&l.dev, kMaxBytes), "cudaMalloc") || cublasCreate(&l.blas) != CUBLAS_STATUS_SUCCESS) {
        printf("ops 0 errors 1 wrong 0 p50_us 0 p99_us 0\n");
        return 1;
    }
    auto clock = std::chrono::steady_clock::now;
    auto end = clock() + std::chrono::seconds(atoi(argv[1]));
    long ops = 0;
    printf("started\n");
    while (clock() < end && l.errors == 0) {
        auto t0 = clock();
        switch (l.next() % 4) {
        case 0: l.copy(); break;
        case 1: l.memset_(); break;
        case 2: l.gemm(); break;
        default: l.launch(); break;
        }
        l.micros.push_back(std::chrono::duration<double, std::micro>(clock() - t0).count());
        ops++;
    }
    cublasDestroy(l.blas);
    l.ok(cudaFree(l.dev), "cudaFree");
    printf("ops %ld errors %ld wrong %ld p50_us %.0f p99_us %.0f\n", ops, l.errors, l.wrong,
           percentile(l.micros, 0.50), percentile(l.micros, 0.99));
    return l.errors == 0 && l.wrong == 0 ? 0 : 1;
}
