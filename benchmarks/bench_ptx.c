/* bench_ptx.c -- how fast the emulated device's PTX engine runs kernels: the
 * kernels of bench_ptx_kernels.cu (an elementwise saxpy, a shared-memory
 * reduction, a warp-shuffle scan) on host buffers, timed, with the lane-
 * instructions the engine executed; and the same saxpy as a hand-written CPU
 * kernel (the --emu-kernels contract: a C function called once per thread) for
 * comparison. Each result is checked. Prints one JSON object per line; the
 * engine uses CUDAREM_EMU_THREADS worker threads (default: one per core).
 *   usage: bench_ptx PTX_FILE [ELEMENTS]                          */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "server/emu/cudarem_emu_kernel.h"
#include "server/emu/ptx/crm_ptx.h"

static struct { uint64_t lo, hi; } bufs[8];
static int nbufs;

static void *buf(size_t bytes)
{
    void *p = calloc(1, bytes);
    if (p == NULL) {
        fprintf(stderr, "bench_ptx: out of memory\n");
        exit(1);
    }
    bufs[nbufs].lo = (uint64_t)(uintptr_t)p;
    bufs[nbufs++].hi = (uint64_t)(uintptr_t)p + bytes;
    return p;
}

static int memory(void *ctx, uint64_t addr, uint64_t n, uint64_t *lo, uint64_t *hi)
{
    (void)ctx;
    for (int i = 0; i < nbufs; i++)
        if (addr >= bufs[i].lo && addr < bufs[i].hi && n <= bufs[i].hi - addr) {
            *lo = bufs[i].lo;
            *hi = bufs[i].hi;
            return 1;
        }
    return 0;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Runs kernel `name` over n threads in blocks of 256; prints its line; returns seconds. */
static double run(const crm_ptx_module *m, const char *name, int n, void **args, const crm_kparam_info *sizes,
                  unsigned nargs, const char *threads)
{
    uint64_t lanes = 0;
    char msg[512];
    crm_ptx_launch l = {{(unsigned)(n + 255) / 256, 1, 1}, {256, 1, 1}, args, sizes, nargs, 0, memory, NULL, NULL,
                        &lanes, NULL, 0};
    double t0 = now();
    cudaError_t err = crm_ptx_run(m, name, &l, msg, sizeof msg);
    double s = now() - t0;
    if (err != cudaSuccess) {
        fprintf(stderr, "bench_ptx: %s: %s\n", name, msg);
        exit(1);
    }
    printf("{\"kernel\": \"%s\", \"elements\": %d, \"threads\": \"%s\", \"seconds\": %.6f, \"lane_insns\": %llu, "
           "\"lane_insns_per_s\": %.0f}\n", name, n, threads, s, (unsigned long long)lanes, (double)lanes / s);
    return s;
}

/* The hand-written twin of saxpy, as --emu-kernels runs it: once per thread. */
static void cpu_saxpy(const cudarem_emu_ctx *c, void **args)
{
    int i = (int)(c->blockIdx.x * c->blockDim.x + c->threadIdx.x);
    if (i < *(int *)args[3])
        (*(float **)args[2])[i] = *(float *)args[0] * (*(float **)args[1])[i] + (*(float **)args[2])[i];
}

static double run_cpu(int n, void **args)
{
    cudarem_emu_ctx c = {.gridDim = {(unsigned)(n + 255) / 256, 1, 1}, .blockDim = {256, 1, 1}};
    double t0 = now();
    for (c.blockIdx.x = 0; c.blockIdx.x < c.gridDim.x; c.blockIdx.x++)
        for (c.threadIdx.x = 0; c.threadIdx.x < 256; c.threadIdx.x++)
            cpu_saxpy(&c, args);
    double s = now() - t0;
    printf("{\"kernel\": \"saxpy (hand-written CPU)\", \"elements\": %d, \"seconds\": %.6f}\n", n, s);
    return s;
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *text = f ? malloc(1 << 20) : NULL;
    *len = text ? fread(text, 1, 1 << 20, f) : 0;
    if (f)
        fclose(f);
    return text;
}

int main(int argc, char **argv)
{
    size_t len = 0;
    char *text = argc > 1 ? read_all(argv[1], &len) : NULL, err[256];
    int n = argc > 2 ? atoi(argv[2]) : 1 << 20, bad = 0;
    crm_ptx_module *m = NULL;
    const char *threads = getenv("CUDAREM_EMU_THREADS") ? getenv("CUDAREM_EMU_THREADS") : "cores";
    if (text == NULL || n < 256 || crm_ptx_load(text, len, &m, err, sizeof err) != 0) {
        fprintf(stderr, "usage: bench_ptx PTX_FILE [ELEMENTS >= 256]%s%s\n", text ? ": " : "", text ? err : "");
        return 2;
    }
    float a = 2.0f, *x = buf((size_t)n * 4), *y = buf((size_t)n * 4), *part = buf((size_t)n / 256 * 4 + 4);
    int *xi = buf((size_t)n * 4), *yi = buf((size_t)n * 4);
    for (int i = 0; i < n; i++)
        x[i] = (float)(i % 7), xi[i] = i % 3;
    const crm_kparam_info s4[] = {{0, 4}, {8, 8}, {16, 8}, {24, 4}}, s3[] = {{0, 8}, {8, 8}, {16, 4}};
    void *sx[] = {&a, &x, &y, &n};
    run(m, "saxpy", n, sx, s4, 4, threads);
    run_cpu(n, sx);
    for (int i = 0; i < n; i++) /* two saxpys ran: y = 4x */
        bad += y[i] != 4.0f * x[i];
    void *rx[] = {&x, &part, &n};
    run(m, "reduce_shared", n, rx, s3, 3, threads);
    float first = 0;
    for (int i = 0; i < 256; i++)
        first += x[i];
    bad += part[0] != first;
    void *wx[] = {&xi, &yi, &n};
    run(m, "scan_warp", n, wx, s3, 3, threads);
    for (int i = 0; i < 64; i++) {
        int want = 0;
        for (int k = i / 32 * 32; k <= i; k++)
            want += xi[k];
        bad += yi[i] != want;
    }
    crm_ptx_free(m);
    if (bad)
        fprintf(stderr, "bench_ptx: %d wrong results\n", bad);
    return bad ? 1 : 0;
}
