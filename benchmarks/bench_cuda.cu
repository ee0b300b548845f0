// bench_cuda.cu -- the CUDA side of `make bench`: an ordinary runtime-API program
// (no cudarem code in it) timed the same way locally (real or emulated runtime in
// process) and through the shim, so every remote figure has a local twin.
//
//   bench_cuda info                          device name, versions
//   bench_cuda latency N                     p50/p99 of cheap synchronous calls
//   bench_cuda async N BATCH                 queued memsets and event records
//   bench_cuda copy DATA BATCHES DIRS SIZE...  cudaMemcpy bandwidth by size and direction
//   bench_cuda sgemm LIB REPS N...           cuBLAS SGEMM, data resident / with copies
//   bench_cuda peer BATCHES SIZE...          cudaMemcpyPeer from the first device to the
//                                            last, beside D2H from the first and H2D to the last
//
// Each prints one JSON object on stdout; a failing CUDA call prints its name to
// stderr and exits 1 (3 when cuBLAS is not usable, so the driver says "n/a").
// Times are host wall-clock (CLOCK_MONOTONIC) around the calls: what a program sees.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#define BC_CHECK(call)                                                                   \
    do {                                                                                 \
        cudaError_t bc_e_ = (call);                                                      \
        if (bc_e_ != cudaSuccess) {                                                      \
            fprintf(stderr, "bench_cuda: %s:%d: %s: %s\n", __FILE__, __LINE__, #call,    \
                    cudaGetErrorName(bc_e_));                                            \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

static const size_t BC_BATCH_BYTES = 32u << 20; /* bytes one timed batch moves */
static const int BC_BATCH_MAX = 256;            /* copies in one batch at most */
static const int BC_MIN_TIME_BATCHES = 200;     /* batches BENCH_MIN_SECONDS may add up to */

static double bc_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Value at quantile q of v (sorted in place). */
static double bc_quantile(std::vector<double> &v, double q)
{
    std::sort(v.begin(), v.end());
    size_t i = (size_t)(q * (double)(v.size() - 1) + 0.5);
    return v[std::min(i, v.size() - 1)];
}

static void bc_print_lat(const char *name, std::vector<double> &us, int last)
{
    double p50 = bc_quantile(us, 0.5), p99 = bc_quantile(us, 0.99);
    printf("\"%s\": {\"n\": %zu, \"p50_us\": %.3f, \"p99_us\": %.3f, \"min_us\": %.3f}%s", name, us.size(), p50,
           p99, us[0], last ? "" : ", ");
}

static int bc_info(void)
{
    cudaDeviceProp prop;
    int runtime = 0, driver = 0;
    BC_CHECK(cudaGetDeviceProperties(&prop, 0));
    BC_CHECK(cudaRuntimeGetVersion(&runtime));
    BC_CHECK(cudaDriverGetVersion(&driver));
    printf("{\"device\": \"%s\", \"runtime\": %d, \"driver\": %d}\n", prop.name, runtime, driver);
    return 0;
}

/* Times n calls of each cheap synchronous call after n/10 untimed ones:
 * cudaMemGetInfo (a round trip each time: the server's memory changes under other
 * sessions), cudaEventQuery of a completed event (a remote runtime may answer it
 * from what it already knows) and a 4-byte device-to-host cudaMemcpy. */
static int bc_latency(long n)
{
    int *dev = nullptr, host = 0;
    size_t free_bytes = 0, total_bytes = 0;
    cudaEvent_t ev;
    BC_CHECK(cudaMalloc(&dev, 4));
    BC_CHECK(cudaMemset(dev, 0, 4));
    BC_CHECK(cudaEventCreate(&ev));
    BC_CHECK(cudaEventRecord(ev, 0));
    BC_CHECK(cudaDeviceSynchronize());
    std::vector<double> sq, eq, mc;
    long warm = n / 10 + 1;
    for (long i = 0; i < n + warm; i++) {
        double t0 = bc_now();
        BC_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
        double t1 = bc_now();
        BC_CHECK(cudaEventQuery(ev));
        double t2 = bc_now();
        BC_CHECK(cudaMemcpy(&host, dev, 4, cudaMemcpyDeviceToHost));
        double t3 = bc_now();
        if (i >= warm) {
            sq.push_back((t1 - t0) * 1e6);
            eq.push_back((t2 - t1) * 1e6);
            mc.push_back((t3 - t2) * 1e6);
        }
    }
    printf("{");
    bc_print_lat("sync_call", sq, 0);
    bc_print_lat("event_query", eq, 0);
    bc_print_lat("memcpy_d2h_4", mc, 1);
    printf("}\n");
    BC_CHECK(cudaEventDestroy(ev));
    BC_CHECK(cudaFree(dev));
    return 0;
}

/* Per call cost of n queued calls issued in batches of `batch`, each batch followed
 * by one cudaStreamSynchronize; prints the enqueue time per call and the throughput
 * including the synchronise. n = 0 runs only the setup and teardown, so the driver
 * can subtract their round trips (counted by CUDAREM_STATS). */
static int bc_async(long n, long batch)
{
    unsigned char *dev = nullptr;
    cudaStream_t s;
    cudaEvent_t ev;
    BC_CHECK(cudaMalloc(&dev, 1 << 20));
    BC_CHECK(cudaStreamCreate(&s));
    BC_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    BC_CHECK(cudaStreamSynchronize(s));
    double t_ms = 0, t_ms_sync = 0, t_ev = 0, t_ev_sync = 0;
    long batches = 0;
    for (long done = 0; done < n; done += batch, batches++) {
        long k = std::min(batch, n - done);
        double t0 = bc_now();
        for (long i = 0; i < k; i++)
            BC_CHECK(cudaMemsetAsync(dev + (i % 256) * 4096, (int)(i & 0xff), 4096, s));
        double t1 = bc_now();
        BC_CHECK(cudaStreamSynchronize(s));
        double t2 = bc_now();
        for (long i = 0; i < k; i++)
            BC_CHECK(cudaEventRecord(ev, s));
        double t3 = bc_now();
        BC_CHECK(cudaStreamSynchronize(s));
        double t4 = bc_now();
        t_ms += t1 - t0;
        t_ms_sync += t2 - t0;
        t_ev += t3 - t2;
        t_ev_sync += t4 - t2;
    }
    double dn = n > 0 ? (double)n : 1.0;
    printf("{\"n\": %ld, \"batch\": %ld, \"synchronises\": %ld, "
           "\"memset_us_per_call\": %.3f, \"memset_calls_per_s\": %.0f, "
           "\"event_us_per_call\": %.3f, \"event_calls_per_s\": %.0f}\n",
           n, batch, 2 * batches, t_ms / dn * 1e6, n > 0 ? dn / t_ms_sync : 0.0, t_ev / dn * 1e6,
           n > 0 ? dn / t_ev_sync : 0.0);
    BC_CHECK(cudaEventDestroy(ev));
    BC_CHECK(cudaStreamDestroy(s));
    BC_CHECK(cudaFree(dev));
    return 0;
}

/* Fills buf with the file's bytes, over and over; exits when it cannot be read. */
static void bc_fill_file(unsigned char *buf, size_t n, const char *path)
{
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(buf, 1, n, f) : 0;
    if (f)
        fclose(f);
    if (got == 0) {
        fprintf(stderr, "bench_cuda: cannot read %s\n", path);
        exit(1);
    }
    for (size_t done = got; done < n; done += got)
        memcpy(buf + done, buf, std::min(got, n - done));
}

/* Fills buf: "random" (incompressible), "zeros", "sparse" (a random float in every
 * tenth 4-byte word, zeros elsewhere, as after a ReLU), "lowentropy" (random
 * bytes from a 4-letter alphabet: 2 bits of entropy per byte) or "file:PATH" (a
 * file's bytes repeated: the real tensors of benchmarks/make_tensors.py). */
static void bc_fill(unsigned char *buf, size_t n, const char *data)
{
    if (strncmp(data, "file:", 5) == 0) {
        bc_fill_file(buf, n, data + 5);
        return;
    }
    if (strcmp(data, "zeros") == 0) {
        memset(buf, 0, n);
        return;
    }
    int low = strcmp(data, "lowentropy") == 0, sparse = strcmp(data, "sparse") == 0;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    if (sparse) {
        memset(buf, 0, n);
        for (size_t w = 0; (w + 1) * 4 <= n; w += 10) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            float f = (float)(x >> 40) / (float)(1 << 24);
            memcpy(buf + w * 4, &f, 4);
        }
        return;
    }
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        uint64_t w = low ? (x & 0x0303030303030303ull) : x;
        memcpy(buf + i, &w, 8);
    }
    for (; i < n; i++)
        buf[i] = low ? (unsigned char)(i & 3) : (unsigned char)(i * 131);
}

/* Seconds of timed batches a measurement runs at least (BENCH_MIN_SECONDS, default
 * 0): a fast copy (compressed zeros: a few ms) is repeated until its median stands
 * on enough batches to be judged, a slow one runs its `batches` only. */
static double bc_min_seconds(void)
{
    const char *v = getenv("BENCH_MIN_SECONDS");
    double s = v != NULL ? atof(v) : 0.0;
    return s > 0.0 && s < 60.0 ? s : 0.0;
}

/* Median over `batches` timed batches of k copies (after one untimed copy), or
 * more until BENCH_MIN_SECONDS have passed, in GB/s; each batch ends with
 * cudaDeviceSynchronize, so queued copies count in full. */
static double bc_copy_rate(void *dst, const void *src, size_t len, cudaMemcpyKind kind, int batches)
{
    int k = (int)std::max<size_t>(1, std::min<size_t>(BC_BATCH_BYTES / len, BC_BATCH_MAX));
    double min_s = bc_min_seconds(), spent = 0.0;
    std::vector<double> t;
    BC_CHECK(cudaMemcpy(dst, src, len, kind));
    BC_CHECK(cudaDeviceSynchronize());
    for (int b = 0; b < batches || (spent < min_s && b < BC_MIN_TIME_BATCHES); b++) {
        double t0 = bc_now();
        for (int i = 0; i < k; i++)
            BC_CHECK(cudaMemcpy(dst, src, len, kind));
        BC_CHECK(cudaDeviceSynchronize());
        double took = bc_now() - t0;
        spent += took;
        t.push_back(took / k);
    }
    return (double)len / bc_quantile(t, 0.5) / 1e9;
}

static void bc_print_list(const char *name, const std::vector<double> &v, int last)
{
    printf("\"%s\": [", name);
    for (size_t i = 0; i < v.size(); i++)
        printf("%s%.4f", i ? ", " : "", v[i]);
    printf("]%s", last ? "" : ", ");
}

/* Bandwidth of cudaMemcpy per size for the directions named in dirs ("all" or a
 * comma list of h2d_pinned, h2d_pageable, d2h_pinned): host-to-device from pinned
 * (cudaMallocHost) and pageable (malloc) memory, device-to-host into pinned memory. */
static int bc_copy(const char *data, int batches, const char *dirs, int nsizes, char **sizes)
{
    static const char *names[3] = {"h2d_pinned", "h2d_pageable", "d2h_pinned"};
    std::vector<size_t> len;
    size_t max = 0;
    for (int i = 0; i < nsizes; i++) {
        len.push_back(strtoull(sizes[i], NULL, 10));
        if (len.back() == 0)
            return 2;
        max = std::max(max, len.back());
    }
    int want[3];
    for (int d = 0; d < 3; d++)
        want[d] = strcmp(dirs, "all") == 0 || strstr(dirs, names[d]) != nullptr;
    unsigned char *pinned = nullptr, *pinned_out = nullptr, *dev = nullptr;
    unsigned char *pageable = (unsigned char *)malloc(max);
    BC_CHECK(cudaMallocHost(&pinned, max));
    BC_CHECK(cudaMallocHost(&pinned_out, max));
    BC_CHECK(cudaMalloc(&dev, max));
    if (pageable == nullptr)
        return 1;
    bc_fill(pinned, max, data);
    bc_fill(pageable, max, data);
    BC_CHECK(cudaMemcpy(dev, pinned, max, cudaMemcpyHostToDevice)); /* device holds DATA too */
    memset(pinned_out, 1, max);
    std::vector<double> rate[3];
    for (size_t n : len) {
        if (want[0])
            rate[0].push_back(bc_copy_rate(dev, pinned, n, cudaMemcpyHostToDevice, batches));
        if (want[1])
            rate[1].push_back(bc_copy_rate(dev, pageable, n, cudaMemcpyHostToDevice, batches));
        if (want[2])
            rate[2].push_back(bc_copy_rate(pinned_out, dev, n, cudaMemcpyDeviceToHost, batches));
    }
    BC_CHECK(cudaMemcpy(pinned_out, dev, len.back(), cudaMemcpyDeviceToHost));
    int ok = memcmp(pinned_out, pinned, len.back()) == 0;
    printf("{\"data\": \"%s\", \"sizes\": [", data);
    for (size_t i = 0; i < len.size(); i++)
        printf("%s%zu", i ? ", " : "", len[i]);
    printf("], ");
    for (int d = 0; d < 3; d++) {
        char key[40];
        snprintf(key, sizeof key, "%s_GBps", names[d]);
        if (want[d])
            bc_print_list(key, rate[d], 0);
    }
    printf("\"verified\": %s}\n", ok ? "true" : "false");
    BC_CHECK(cudaFree(dev));
    BC_CHECK(cudaFreeHost(pinned));
    BC_CHECK(cudaFreeHost(pinned_out));
    free(pageable);
    if (!ok)
        fprintf(stderr, "bench_cuda: copied data differs from what was sent\n");
    return ok ? 0 : 1;
}

/* ---- SGEMM through cuBLAS, loaded by name (the shim answers dlopen of
 * libcublas.so.13) or from LIB (libcudarem-emu.so exports cuBLAS too). */

typedef int (*bc_create_fn)(void **);
typedef int (*bc_destroy_fn)(void *);
typedef int (*bc_sgemm_fn)(void *, int, int, int, int, int, const float *, const float *, int, const float *,
                           int, const float *, float *, int);

typedef struct bc_blas {
    bc_create_fn create;
    bc_destroy_fn destroy;
    bc_sgemm_fn sgemm;
} bc_blas;

static int bc_blas_load(const char *lib, bc_blas *b)
{
    void *h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
    if (h == nullptr) {
        fprintf(stderr, "bench_cuda: cuBLAS not usable: %s\n", dlerror());
        return -1;
    }
    b->create = (bc_create_fn)dlsym(h, "cublasCreate_v2");
    b->destroy = (bc_destroy_fn)dlsym(h, "cublasDestroy_v2");
    b->sgemm = (bc_sgemm_fn)dlsym(h, "cublasSgemm_v2");
    if (!b->create || !b->destroy || !b->sgemm) {
        fprintf(stderr, "bench_cuda: cuBLAS not usable: %s lacks cublasSgemm_v2\n", lib);
        return -1;
    }
    return 0;
}

/* Seconds per SGEMM of size n (median of reps), data resident or with A and B
 * uploaded and C read back around each multiply. */
static double bc_sgemm_time(const bc_blas *b, void *h, int n, int reps, int transfers, float *hA, float *hC,
                            float *dA, float *dB, float *dC)
{
    const float one = 1.0f, zero = 0.0f;
    size_t bytes = (size_t)n * n * sizeof(float);
    std::vector<double> t;
    for (int r = 0; r <= reps; r++) { /* r == 0 warms up */
        double t0 = bc_now();
        if (transfers) {
            BC_CHECK(cudaMemcpy(dA, hA, bytes, cudaMemcpyHostToDevice));
            BC_CHECK(cudaMemcpy(dB, hA, bytes, cudaMemcpyHostToDevice));
        }
        int st = b->sgemm(h, 0, 0, n, n, n, &one, dA, n, dB, n, &zero, dC, n);
        if (st != 0) {
            fprintf(stderr, "bench_cuda: cublasSgemm_v2 returned %d\n", st);
            exit(3);
        }
        if (transfers)
            BC_CHECK(cudaMemcpy(hC, dC, bytes, cudaMemcpyDeviceToHost));
        BC_CHECK(cudaDeviceSynchronize());
        if (r > 0)
            t.push_back(bc_now() - t0);
    }
    return bc_quantile(t, 0.5);
}

static int bc_sgemm(const char *lib, int reps, int nsizes, char **sizes)
{
    bc_blas b;
    void *h = nullptr;
    if (bc_blas_load(lib, &b) != 0)
        return 3;
    int st = b.create(&h);
    if (st != 0) {
        fprintf(stderr, "bench_cuda: cublasCreate_v2 returned %d\n", st);
        return 3;
    }
    printf("{\"n\": [");
    std::vector<double> resident, with_copies;
    for (int i = 0; i < nsizes; i++) {
        int n = atoi(sizes[i]);
        size_t bytes = (size_t)n * n * sizeof(float);
        float *hA = (float *)malloc(bytes), *hC = (float *)malloc(bytes), *dA, *dB, *dC;
        for (size_t j = 0; j < (size_t)n * n; j++)
            hA[j] = (float)((j * 7) % 13) * 0.125f;
        BC_CHECK(cudaMalloc(&dA, bytes));
        BC_CHECK(cudaMalloc(&dB, bytes));
        BC_CHECK(cudaMalloc(&dC, bytes));
        BC_CHECK(cudaMemcpy(dA, hA, bytes, cudaMemcpyHostToDevice));
        BC_CHECK(cudaMemcpy(dB, hA, bytes, cudaMemcpyHostToDevice));
        double flop = 2.0 * n * (double)n * n;
        int r = n >= 4096 ? 1 : reps; /* seconds each on a CPU-emulated device */
        resident.push_back(flop / bc_sgemm_time(&b, h, n, r, 0, hA, hC, dA, dB, dC) / 1e9);
        with_copies.push_back(flop / bc_sgemm_time(&b, h, n, r, 1, hA, hC, dA, dB, dC) / 1e9);
        printf("%s%d", i ? ", " : "", n);
        BC_CHECK(cudaFree(dA));
        BC_CHECK(cudaFree(dB));
        BC_CHECK(cudaFree(dC));
        free(hA);
        free(hC);
    }
    printf("], ");
    bc_print_list("resident_GFLOPs", resident, 0);
    bc_print_list("with_copies_GFLOPs", with_copies, 1);
    printf("}\n");
    b.destroy(h);
    return 0;
}

/* Median bandwidth of cudaMemcpyPeer(dst on `to`, src on `from`) in GB/s, as bc_copy_rate. */
static double bc_peer_rate(void *dst, int to, const void *src, int from, size_t len, int batches)
{
    int k = (int)std::max<size_t>(1, std::min<size_t>(BC_BATCH_BYTES / len, BC_BATCH_MAX));
    std::vector<double> t;
    BC_CHECK(cudaMemcpyPeer(dst, to, src, from, len));
    for (int b = 0; b < batches; b++) {
        double t0 = bc_now();
        for (int i = 0; i < k; i++)
            BC_CHECK(cudaMemcpyPeer(dst, to, src, from, len));
        BC_CHECK(cudaDeviceSynchronize());
        t.push_back((bc_now() - t0) / k);
    }
    return (double)len / bc_quantile(t, 0.5) / 1e9;
}

/* Copies between the first and the last device (through the client when they are
 * on two servers of a pool), with the two halves of such a copy for comparison:
 * device-to-host from the first device and host-to-device to the last, pinned. */
static int bc_peer(int batches, int nsizes, char **sizes)
{
    int n = 0;
    BC_CHECK(cudaGetDeviceCount(&n));
    std::vector<double> peer, d2h, h2d;
    printf("{\"devices\": %d, \"sizes\": [", n);
    for (int i = 0; i < nsizes; i++) {
        size_t len = strtoull(sizes[i], NULL, 10);
        void *src, *dst, *host;
        BC_CHECK(cudaSetDevice(0));
        BC_CHECK(cudaMalloc(&src, len));
        BC_CHECK(cudaMemset(src, 7, len));
        BC_CHECK(cudaMallocHost(&host, len));
        BC_CHECK(cudaSetDevice(n - 1));
        BC_CHECK(cudaMalloc(&dst, len));
        BC_CHECK(cudaSetDevice(0));
        peer.push_back(bc_peer_rate(dst, n - 1, src, 0, len, batches));
        d2h.push_back(bc_copy_rate(host, src, len, cudaMemcpyDeviceToHost, batches));
        BC_CHECK(cudaSetDevice(n - 1));
        h2d.push_back(bc_copy_rate(dst, host, len, cudaMemcpyHostToDevice, batches));
        BC_CHECK(cudaFree(dst));
        BC_CHECK(cudaSetDevice(0));
        BC_CHECK(cudaFree(src));
        BC_CHECK(cudaFreeHost(host));
        printf("%s%zu", i ? ", " : "", len);
    }
    printf("], ");
    bc_print_list("peer_GBps", peer, 0);
    bc_print_list("d2h_first_GBps", d2h, 0);
    bc_print_list("h2d_last_GBps", h2d, 1);
    printf("}\n");
    return 0;
}

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : "";
    if (strcmp(cmd, "info") == 0)
        return bc_info();
    if (strcmp(cmd, "latency") == 0 && argc == 3)
        return bc_latency(std::max(1L, atol(argv[2])));
    if (strcmp(cmd, "async") == 0 && argc == 4)
        return bc_async(std::max(0L, atol(argv[2])), std::max(1L, atol(argv[3])));
    if (strcmp(cmd, "copy") == 0 && argc >= 6)
        return bc_copy(argv[2], std::max(1, atoi(argv[3])), argv[4], argc - 5, argv + 5);
    if (strcmp(cmd, "sgemm") == 0 && argc >= 5)
        return bc_sgemm(argv[2], std::max(1, atoi(argv[3])), argc - 4, argv + 4);
    if (strcmp(cmd, "peer") == 0 && argc >= 4)
        return bc_peer(std::max(1, atoi(argv[2])), argc - 3, argv + 3);
    fprintf(stderr, "usage: bench_cuda info | latency N | async N BATCH | copy DATA BATCHES DIRS SIZE... | "
                    "sgemm LIB REPS N... | peer BATCHES SIZE...\n");
    return 2;
}
