/* check_ptx.c -- unit tests of the emulated device's PTX engine (server/emu/ptx/):
 * the kernels of tests/ptx/ptx_kernels.cu, compiled to PTX by nvcc at build time
 * (PTX_KERNELS names the file), run on host buffers and compared with CPU
 * references; then faults (an access outside the kernel's memory, a misaligned
 * one), an instruction the engine does not execute, and text that is not PTX. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/emu/ptx/crm_ptx.h"
#include "tests/unit/crm_check.h"

#ifndef PTX_KERNELS
#define PTX_KERNELS "build/tests/ptx_kernels.ptx"
#endif

/* The buffers a kernel may touch: what the emulated device's memory table says. */
#define MAX_BUFS 32
static struct { uint64_t base, size; } bufs[MAX_BUFS];
static int nbufs;

static void *dev(size_t size)
{
    void *p = calloc(1, size);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_lt(nbufs, MAX_BUFS);
    bufs[nbufs].base = (uint64_t)(uintptr_t)p;
    bufs[nbufs++].size = size;
    return p;
}

static void dev_free_all(void)
{
    for (int i = 0; i < nbufs; i++)
        free((void *)(uintptr_t)bufs[i].base);
    nbufs = 0;
}

static int device_memory(void *ctx, uint64_t addr, uint64_t n, uint64_t *lo, uint64_t *hi)
{
    (void)ctx;
    for (int i = 0; i < nbufs; i++)
        if (addr >= bufs[i].base && n <= bufs[i].size && addr - bufs[i].base <= bufs[i].size - n) {
            *lo = bufs[i].base;
            *hi = bufs[i].base + bufs[i].size;
            return 1;
        }
    return 0;
}

static crm_ptx_module *mod;
static crm_module_info info;          /* the module's variables, as the emulated device reads them */
static void *var_addr[64];

static void load_module(void)
{
    FILE *f = fopen(PTX_KERNELS, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", PTX_KERNELS);
    static char text[1 << 20];
    size_t len = fread(text, 1, sizeof text, f);
    fclose(f);
    char err[256];
    ck_assert_msg(crm_ptx_load(text, len, &mod, err, sizeof err) == 0, "load: %s", err);
    crm_module_info_free(&info);
    ck_assert_msg(crm_module_info_from_ptx(text, len, &info, err, sizeof err) == 0, "info: %s", err);
    memset(var_addr, 0, sizeof var_addr);
}

static void unload_module(void)
{
    crm_ptx_free(mod);
    mod = NULL;
    crm_module_info_free(&info);
    dev_free_all();
}

/* A module variable's memory, made at its first use with its initial bytes. */
static void *variable(void *ctx, const char *name, size_t *size)
{
    (void)ctx;
    for (size_t i = 0; i < info.nglobals && i < 64; i++)
        if (strcmp(info.globals[i].name, name) == 0) {
            if (var_addr[i] == NULL) {
                var_addr[i] = dev(info.globals[i].size);
                if (info.globals[i].init != NULL)
                    memcpy(var_addr[i], info.globals[i].init, info.globals[i].size);
            }
            if (size != NULL)
                *size = info.globals[i].size;
            return var_addr[i];
        }
    return NULL;
}

/* What kernels printed, as the emulated device receives it after each launch. */
static char printed[1 << 16];
static size_t printed_len;

static void capture(void *ctx, const char *text, size_t len)
{
    (void)ctx;
    ck_assert_uint_le(printed_len + len, sizeof printed - 1);
    memcpy(printed + printed_len, text, len);
    printed_len += len;
    printed[printed_len] = '\0';
}

/* Blocks run in parallel, so, as on a GPU, the order of different blocks' lines is
 * not fixed: compare printed text with its lines sorted. */
static int line_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void sort_lines(char *text)
{
    char *lines[256], copy[1 << 16];
    size_t n = 0, len = strlen(text);
    ck_assert_uint_lt(len, sizeof copy);
    memcpy(copy, text, len + 1);
    for (char *save = NULL, *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        ck_assert_uint_lt(n, 256);
        lines[n++] = l;
    }
    qsort(lines, n, sizeof *lines, line_cmp);
    text[0] = '\0';
    for (size_t i = 0, at = 0; i < n; i++)
        at += (size_t)snprintf(text + at, len + 1 - at, "%s\n", lines[i]);
}

/* Every argument may be as large as any parameter here (16 bytes: the struct). */
static const crm_kparam_info arg_sizes[] = {{0, 16}, {16, 16}, {32, 16}, {48, 16}, {64, 16}, {80, 16}, {96, 16}, {112, 16}};

static cudaError_t run_n(const char *name, unsigned grid, unsigned block, size_t smem, void **args, unsigned nargs)
{
    crm_ptx_launch l = {{grid, 1, 1}, {block, 1, 1}, args, arg_sizes, nargs, smem, device_memory, variable, NULL, NULL, capture, 0};
    char msg[512];
    cudaError_t err = crm_ptx_run(mod, name, &l, msg, sizeof msg);
    if (err != cudaSuccess)
        fprintf(stderr, "%s: %s\n", name, msg);
    return err;
}

/* run_n with the argument count of the array args. */
#define run(name, grid, block, smem, args) run_n(name, grid, block, smem, args, sizeof(args) / sizeof((args)[0]))

START_TEST(test_vadd)
{
    int n = 1000;
    float *a = dev(n * 4), *b = dev(n * 4), *c = dev(n * 4);
    for (int i = 0; i < n; i++)
        a[i] = (float)i, b[i] = 0.5f * (float)i;
    void *args[] = {&a, &b, &c, &n};
    ck_assert_int_eq(run("vadd", (n + 127) / 128, 128, 0, args), cudaSuccess);
    for (int i = 0; i < n; i++)
        ck_assert_float_eq(c[i], 1.5f * (float)i);
}
END_TEST

struct Affine {
    float scale;
    int n;
    double shift;
};

START_TEST(test_struct_parameter)
{
    struct Affine p = {2.5f, 77, -0.25};
    float *x = dev(77 * 4);
    double *y = dev(77 * 8);
    for (int i = 0; i < 77; i++)
        x[i] = (float)i;
    void *args[] = {&p, &x, &y};
    ck_assert_int_eq(run("affine", 3, 32, 0, args), cudaSuccess);
    for (int i = 0; i < 77; i++)
        ck_assert_double_eq(y[i], (double)(2.5f * (float)i) - 0.25);
}
END_TEST

START_TEST(test_shared_reduction)
{
    int n = 5000;
    float *x = dev(n * 4), *out = dev(4), want = 0;
    for (int i = 0; i < n; i++) {
        x[i] = (float)(i % 17);
        want += x[i];
    }
    void *args[] = {&x, &out, &n};
    ck_assert_int_eq(run("block_sum", 4, 256, 256 * 4, args), cudaSuccess);
    ck_assert_float_eq(*out, want);
}
END_TEST

START_TEST(test_warp_shuffle)
{
    int *x = dev(128 * 4), *out = dev(4 * 4);
    for (int i = 0; i < 128; i++)
        x[i] = i * 3 - 50;
    void *args[] = {&x, &out};
    ck_assert_int_eq(run("warp_sum", 2, 64, 0, args), cudaSuccess);
    for (int w = 0; w < 4; w++) {
        int want = 0;
        for (int i = w * 32; i < w * 32 + 32; i++)
            want += x[i];
        ck_assert_int_eq(out[w], want);
    }
}
END_TEST

START_TEST(test_histogram_atomics)
{
    int n = 3001;
    unsigned char *x = dev(n);
    unsigned *h = dev(16 * 4), want[16] = {0};
    for (int i = 0; i < n; i++) {
        x[i] = (unsigned char)(i * 7 + 3);
        want[x[i] % 16]++;
    }
    void *args[] = {&x, &h, &n};
    ck_assert_int_eq(run("histogram", 3, 128, 0, args), cudaSuccess);
    for (int k = 0; k < 16; k++)
        ck_assert_uint_eq(h[k], want[k]);
}
END_TEST

/* Nested divergent branches, a loop whose trip count differs per lane, then a
 * ballot every lane must reach together. */
START_TEST(test_divergence_reconverges)
{
    int *out = dev(64 * 4);
    void *args[] = {&out};
    ck_assert_int_eq(run("branches", 1, 64, 0, args), cudaSuccess);
    for (int t = 0; t < 64; t++) {
        int v = 0, base = t / 32 * 32, ballot = 0;
        if (t % 2 == 0) {
            v = t % 4 == 0 ? t * 3 : -t;
            for (int k = 0; k < t % 5; k++)
                v += k;
        } else {
            while (v < t)
                v += 7;
        }
        for (int l = base; l < base + 32; l++)
            ballot += l % 3 == 0;
        ck_assert_int_eq(out[t], v + ballot);
    }
}
END_TEST

START_TEST(test_grid_stride_64bit)
{
    long long n = 3000;
    double *x = dev(n * 8), *y = dev(n * 8);
    for (long long i = 0; i < n; i++)
        x[i] = 0.001 * (double)i;
    void *args[] = {&x, &y, &n};
    ck_assert_int_eq(run("grid_stride", 2, 96, 0, args), cudaSuccess);
    for (long long i = 0; i < n; i++)
        ck_assert_double_eq_tol(y[i], x[i] * x[i] - 1.0 / (1.0 + (double)i), 1e-15);
}
END_TEST

START_TEST(test_conversions)
{
    float *x = dev(32 * 4), *back = dev(32 * 4);
    int *i32 = dev(32 * 4);
    unsigned short *h16 = dev(32 * 2);
    double *f64 = dev(32 * 8);
    static const float in[4] = {1.75f, -2.5f, 65504.0f, 0.000123f};
    static const unsigned short half[4] = {0x3f00, 0xc100, 0x7bff, 0x0808};
    for (int t = 0; t < 32; t++)
        x[t] = in[t % 4] * (t < 4 ? 1.0f : 1.0f);
    void *args[] = {&x, &i32, &h16, &f64, &back};
    ck_assert_int_eq(run("conversions", 1, 32, 0, args), cudaSuccess);
    for (int t = 0; t < 4; t++) {
        ck_assert_int_eq(i32[t], (int)in[t]);
        ck_assert_uint_eq(h16[t], half[t]);
        ck_assert_double_eq(f64[t], (double)in[t] * 3.0);
    }
    ck_assert_float_eq_tol(back[1], -2.5f + 1.0f + sqrtf(2.5f), 1e-6f);
}
END_TEST

/* A read outside every buffer, and one misaligned: the errors a GPU gives. */
START_TEST(test_faults)
{
    int n = 64;
    float *a = dev(n * 4), *c = dev(n * 4), *b = (float *)(uintptr_t)0x10;
    void *args[] = {&a, &b, &c, &n};
    ck_assert_int_eq(run("vadd", 1, 64, 0, args), cudaErrorIllegalAddress);
    float *odd = (float *)((char *)a + 2);
    void *args2[] = {&a, &odd, &c, &n};
    ck_assert_int_eq(run("vadd", 1, 32, 0, args2), cudaErrorMisalignedAddress);
    ck_assert_int_eq(run_n("vadd", 1, 32, 0, args, 3), cudaErrorInvalidValue); /* one argument short */
}
END_TEST

START_TEST(test_unsupported_and_bad_text)
{
    static const char ptx[] = ".version 9.0\n.target sm_90\n.address_size 64\n"
                              ".visible .entry k(.param .u64 p)\n{\n.reg .b32 %r<3>;\n"
                              "tex.1d.v4.f32.s32 {%r1, %r1, %r1, %r1}, [t, {%r2}];\nret;\n}\n";
    crm_ptx_module *m = NULL;
    char err[256], msg[256];
    ck_assert_int_eq(crm_ptx_load(ptx, sizeof ptx - 1, &m, err, sizeof err), 0);
    uint64_t p = 0;
    void *args[] = {&p};
    crm_ptx_launch l = {{1, 1, 1}, {1, 1, 1}, args, arg_sizes, 1, 0, device_memory, variable, NULL, NULL, capture, 0};
    ck_assert_int_eq(crm_ptx_run(m, "k", &l, msg, sizeof msg), cudaErrorNoKernelImageForDevice);
    ck_assert_ptr_nonnull(strstr(msg, "tex.1d.v4.f32.s32"));
    ck_assert_int_eq(crm_ptx_run(m, "nope", &l, msg, sizeof msg), cudaErrorInvalidDeviceFunction);
    crm_ptx_free(m);
    static const char junk[] = ".version 9.0\n.entry k(.param .u64 p) { mov.u32 %undeclared, 1; }";
    ck_assert_int_eq(crm_ptx_load(junk, sizeof junk - 1, &m, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "%undeclared"));
    static const char empty_vec[] = ".entry k() { .reg .b64 %rd<2>; mov.b64 %rd1, {}; ret; }";
    ck_assert_int_eq(crm_ptx_load(empty_vec, sizeof empty_vec - 1, &m, err, sizeof err), -1);
    static const char cut[] = ".entry k(.param .u64 p) { .reg .b32 %r<2>; add.s32 %r1, [";
    ck_assert_int_eq(crm_ptx_load(cut, sizeof cut - 1, &m, err, sizeof err), -1);
}
END_TEST

static uint32_t ref_perm(uint32_t a, uint32_t b, uint32_t c)
{
    uint64_t bytes = (uint64_t)b << 32 | a;
    uint32_t d = 0;
    for (int i = 0; i < 4; i++)
        d |= (uint32_t)((bytes >> (8 * ((c >> (4 * i)) & 7))) & 0xff) << (8 * i);
    return d;
}

static uint32_t ref_brev(uint32_t v)
{
    uint32_t r = 0;
    for (int i = 0; i < 32; i++)
        r |= ((v >> i) & 1u) << (31 - i);
    return r;
}

/* Byte permute, bit reverse, funnel shift, clz/ffs, activemask, redux, match,
 * isnan/isinf, copysign, 64-bit shifts: one warp, each lane its own value. */
START_TEST(test_bit_and_warp_intrinsics)
{
    unsigned *o = dev(32 * 8 * 4), *x = dev(32 * 4);
    float *f = dev(32 * 4);
    unsigned long long *r = dev(32 * 8);
    unsigned sum = 0;
    for (int t = 0; t < 32; t++) {
        x[t] = 0x9e3779b9u * (unsigned)(t + 1);
        sum += x[t];
        f[t] = t % 4 == 0 ? NAN : t % 4 == 1 ? -INFINITY : (float)(t - 16);
    }
    float f0[32];
    memcpy(f0, f, sizeof f0);
    void *args[] = {&o, &x, &f, &r};
    ck_assert_int_eq(run("bits", 1, 32, 0, args), cudaSuccess);
    for (int t = 0; t < 32; t++) {
        unsigned v = x[t], match = 0;
        for (int k = 0; k < 32; k++)
            match |= (unsigned)((x[k] & 3u) == (v & 3u)) << k;
        uint64_t funnel = (uint64_t)(v ^ 0xdeadbeefu) << 32 | v;
        ck_assert_uint_eq(o[t * 8 + 0], ref_perm(v, v * 3u, 0x3120));
        ck_assert_uint_eq(o[t * 8 + 1], ref_brev(v) ^ (unsigned)__builtin_popcount(v));
        ck_assert_uint_eq(o[t * 8 + 2], (uint32_t)((funnel << (t & 31)) >> 32));
        ck_assert_uint_eq(o[t * 8 + 3], (unsigned)__builtin_clz(v) + (unsigned)__builtin_ffs((int)v));
        ck_assert_uint_eq(o[t * 8 + 4], 0xffffffffu);
        ck_assert_uint_eq(o[t * 8 + 5], sum);
        ck_assert_uint_eq(o[t * 8 + 6], match);
        ck_assert_uint_eq(o[t * 8 + 7], (unsigned)(isnan(f0[t]) ? 1 : 0) + (isinf(f0[t]) ? 2u : 0u));
        ck_assert_float_eq(f[t], signbit(f0[t]) ? -2.0f : 2.0f);
        int s = t % 40;
        ck_assert_uint_eq(r[t], (unsigned long long)v << s | (unsigned long long)v >> (64 - s - 1));
    }
}
END_TEST

START_TEST(test_cp_async)
{
    float *in = dev(64 * 4), *out = dev(64 * 4);
    for (int i = 0; i < 64; i++)
        in[i] = (float)i * 0.5f;
    void *args[] = {&in, &out};
    ck_assert_int_eq(run("async_copy", 1, 64, 0, args), cudaSuccess);
    for (int i = 0; i < 64; i++)
        ck_assert_float_eq(out[i], (float)(63 - i) * 0.5f);
}
END_TEST

static int ref_fib(int n)
{
    return n < 2 ? n : ref_fib(n - 1) + ref_fib(n - 2);
}

/* Device functions: recursion, a float argument and result, a local array passed
 * by pointer, and lanes of one warp calling different functions. */
START_TEST(test_device_function_calls)
{
    int *o = dev(64 * 4);
    float *f = dev(64 * 4);
    void *args[] = {&o, &f};
    ck_assert_int_eq(run("calls", 1, 64, 0, args), cudaSuccess);
    for (int t = 0; t < 64; t++) {
        int want = 0;
        for (int i = 0; i < 1 + t % 8; i++)
            want += t * i;
        ck_assert_int_eq(o[t], t % 2 ? ref_fib(t % 10) : want);
        ck_assert_float_eq(f[t], (float)t * 0.5f + 1.0f);
    }
}
END_TEST

/* printf from a kernel with device-function calls: the text arrives after the launch. */
START_TEST(test_printf_after_calls)
{
    int *o = dev(32 * 4);
    void *args[] = {&o};
    char msg[512];
    printed_len = 0;
    ck_assert_int_eq(crm_ptx_runnable(mod, "calls_print", msg, sizeof msg), 1);
    ck_assert_int_eq(run("calls_print", 1, 32, 0, args), cudaSuccess);
    ck_assert_str_eq(printed, "calls 0\n");
}
END_TEST

/* Every conversion printf has, against the C library's rendering of the same
 * values; a string argument, a NULL string, widths, precision, flags, %%. */
START_TEST(test_printf_conversions)
{
    char want[4096] = "";
    size_t n = 0;
    void *args[] = {&n};
    long long big = -1234567890123LL;
    printed_len = 0;
    ck_assert_int_eq(run("printf_all", 2, 2, 0, args), cudaSuccess);
    for (int b = 0; b < 2; b++)
        for (int t = 0; t < 2; t++)
            n += (size_t)snprintf(want + n, sizeof want - n,
                                  "[%d,%d] %i|%5u|%-6x|%08X|%o|%c|%lld|%llu|%.3f|%10.2e|%g|%s|%-8s|%s|%%|%5.1f\n", b, t,
                                  -t - 1, 42u + (unsigned)t, 255u, 0xbeefu, 8u, 'A' + t, big, 18446744073709551615ULL,
                                  3.14159, -0.000123, 1e20 * (t + 1), "device", "str", "(null)", 2.5f * (float)(b + t));
    sort_lines(printed);
    sort_lines(want);
    ck_assert_str_eq(printed, want);
}
END_TEST

/* A failed assert: the line a GPU prints for each failing thread, then cudaErrorAssert. */
START_TEST(test_assert_fails_the_launch)
{
    int *x = dev(64 * 4);
    for (int i = 0; i < 64; i++)
        x[i] = i == 33 || i == 40 ? -1 : i;
    void *args[] = {&x};
    printed_len = 0;
    ck_assert_int_eq(run("asserts", 2, 32, 0, args), cudaErrorAssert);
    ck_assert_ptr_nonnull(strstr(printed, "block: [1,0,0], thread: [1,0,0] Assertion `x[i] >= 0` failed."));
    ck_assert_ptr_nonnull(strstr(printed, "block: [1,0,0], thread: [8,0,0] Assertion `x[i] >= 0` failed."));
    ck_assert_ptr_nonnull(strstr(printed, "ptx_kernels.cu:"));
    ck_assert_ptr_null(strstr(printed, "block: [0,0,0]"));
}
END_TEST

/* The sweep kernel's 40 results per thread, on edge values (INT_MIN, -1, 0, shifts
 * past the width, NaN, infinities, -0), computed once by the fast path and once by
 * the general one (CUDAREM_EMU_PTX_FAST=off when the module is prepared): the two
 * must agree bit for bit; a few results are also checked against the CPU. */
static void run_sweep(int fast, unsigned long long *o)
{
    static const int ie[] = {0, 1, -1, 2147483647, -2147483647 - 1, 12345, -98765, 65535};
    static const float fe[] = {0.0f, -0.0f, 1.5f, -3.25f, 1e30f, -1e-30f, INFINITY, NAN};
    int *i = dev(64 * 4);
    unsigned *u = dev(64 * 4);
    float *f = dev(64 * 4);
    double *d = dev(64 * 8);
    signed char *s8 = dev(64);
    short *s16 = dev(64 * 2);
    unsigned long long *out = dev(64 * 40 * 8);
    for (int t = 0; t < 64; t++) {
        i[t] = ie[t % 8] ^ (t / 8) * 0x01010101;
        u[t] = (unsigned)ie[(t + 3) % 8] + (unsigned)t * 97u;
        f[t] = fe[t % 8] * (float)(1 + t / 8);
        d[t] = (double)fe[(t + 1) % 8] / 3.0 + t;
        s8[t] = (signed char)(t * 37);
        s16[t] = (short)(t * 3001);
    }
    crm_ptx_free(mod);
    if (!fast)
        setenv("CUDAREM_EMU_PTX_FAST", "off", 1);
    load_module();
    unsetenv("CUDAREM_EMU_PTX_FAST");
    void *args[] = {&i, &u, &f, &d, &s8, &s16, &out};
    ck_assert_int_eq(run("sweep", 1, 64, 0, args), cudaSuccess);
    memcpy(o, out, 64 * 40 * 8);
    for (int t = 0; t < 64; t++) {
        int a = i[t], b = i[(t + 7) % 64];
        ck_assert_uint_eq(o[t * 40 + 0], (unsigned)a + (unsigned)b);
        ck_assert_uint_eq(o[t * 40 + 3], (unsigned long long)((long long)a * b));
        ck_assert_uint_eq(o[t * 40 + 20], (unsigned long long)(long long)s8[t] +
                                              ((unsigned long long)(long long)s16[t] << 20));
        ck_assert_uint_eq(o[t * 40 + 31], (unsigned long long)t << 40 | 64u);
    }
}

START_TEST(test_fast_path_matches_general_path)
{
    static unsigned long long fast[64 * 40], general[64 * 40];
    run_sweep(1, fast);
    run_sweep(0, general);
    for (int k = 0; k < 64 * 40; k++)
        ck_assert_msg(fast[k] == general[k], "thread %d result %d: fast %#llx, general %#llx", k / 40, k % 40,
                      fast[k], general[k]);
}
END_TEST

/* bar.red's block-wide count/and/or, nanosleep, and redux/ballot where the lanes
 * of one warp pass different member masks. */
START_TEST(test_block_votes_and_member_masks)
{
    int *x = dev(96 * 4);
    unsigned *o = dev(96 * 5 * 4);
    int positive = 0;
    for (int t = 0; t < 96; t++) {
        x[t] = t % 3 == 0 ? -5 : t;
        positive += x[t] > 0;
    }
    void *args[] = {&x, &o};
    ck_assert_int_eq(run("block_votes", 1, 96, 0, args), cudaSuccess);
    for (int t = 0; t < 96; t++) {
        unsigned lane = (unsigned)t % 32, sum = 0, ballot = 0;
        for (unsigned l = lane & 1; l < 32; l += 2) {
            sum += l;
            ballot |= (unsigned)(x[t - (int)lane + (int)l] > 0) << l;
        }
        ck_assert_uint_eq(o[t * 5 + 0], (unsigned)positive);
        ck_assert_uint_eq(o[t * 5 + 1], 1);
        ck_assert_uint_eq(o[t * 5 + 2], 0);
        ck_assert_uint_eq(o[t * 5 + 3], sum);
        ck_assert_uint_eq(o[t * 5 + 4], ballot);
    }
}
END_TEST

static int byte_of(unsigned v, int k, int is_signed)
{
    int x = (int)((v >> (8 * k)) & 0xffu);
    return is_signed && x > 127 ? x - 256 : x;
}

static int half_of(unsigned v, int k, int is_signed)
{
    int x = (int)((v >> (16 * k)) & 0xffffu);
    return is_signed && x > 32767 ? x - 65536 : x;
}

/* dp4a/dp2a signed and unsigned, bmsk clamped past 32 bits. */
START_TEST(test_dot_products_and_bmsk)
{
    int *a = dev(32 * 4), *b = dev(32 * 4), *o = dev(32 * 6 * 4);
    for (int t = 0; t < 32; t++) {
        a[t] = (int)(0x9e3779b9u * (unsigned)(t + 1));
        b[t] = (int)(0x85ebca6bu * (unsigned)(t + 3));
    }
    void *args[] = {&a, &b, &o};
    ck_assert_int_eq(run("dots", 1, 32, 0, args), cudaSuccess);
    for (int t = 0; t < 32; t++) {
        unsigned ua = (unsigned)a[t], ub = (unsigned)b[t], start = ua & 63u, width = ub & 63u;
        int s4 = t, u4 = 7, s2lo = -t, s2hi = 3, u2lo = 1;
        for (int k = 0; k < 4; k++) {
            s4 += byte_of(ua, k, 1) * byte_of(ub, k, 1);
            u4 += byte_of(ua, k, 0) * byte_of(ub, k, 0);
        }
        for (int k = 0; k < 2; k++) {
            s2lo += half_of(ua, k, 1) * byte_of(ub, k, 1);
            s2hi += half_of(ua, k, 1) * byte_of(ub, k + 2, 1);
            u2lo += half_of(ua, k, 0) * byte_of(ub, k, 0);
        }
        unsigned long long ones = (width > 32 ? 32 : width) == 32 ? 0xffffffffull : (1ull << width) - 1;
        unsigned mask = start >= 32 ? 0 : (unsigned)(ones << start);
        ck_assert_int_eq(o[t * 6 + 0], s4);
        ck_assert_int_eq(o[t * 6 + 1], u4);
        ck_assert_int_eq(o[t * 6 + 2], s2lo);
        ck_assert_int_eq(o[t * 6 + 3], s2hi);
        ck_assert_uint_eq((unsigned)o[t * 6 + 4], mask);
        ck_assert_int_eq(o[t * 6 + 5], u2lo);
    }
}
END_TEST

/* A special register the engine does not provide refuses only the kernel that
 * reads it, naming it; the module's other kernels (one with a 300-character
 * name, as CUB's are) still run. */
START_TEST(test_unknown_special_register_refuses_one_kernel)
{
    char name[301], text[2048], err[256], msg[512];
    memset(name, 'k', 300);
    name[300] = '\0';
    snprintf(text, sizeof text,
             ".version 9.0\n.target sm_90\n.address_size 64\n"
             ".visible .entry bad(.param .u64 p)\n{\n.reg .b32 %%r<2>;\nmov.u32 %%r1, %%reserved_smem_offset_1;\nret;\n}\n"
             ".visible .entry %s(.param .u64 %s_p)\n{\n.reg .b32 %%r<2>;\n.reg .b64 %%rd<3>;\n"
             "ld.param.u64 %%rd1, [%s_p];\ncvta.to.global.u64 %%rd2, %%rd1;\nmov.u32 %%r1, 5;\n"
             "st.global.u32 [%%rd2], %%r1;\nret;\n}\n", name, name, name);
    crm_ptx_module *m = NULL;
    ck_assert_msg(crm_ptx_load(text, strlen(text), &m, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(crm_ptx_runnable(m, "bad", msg, sizeof msg), 0);
    ck_assert_ptr_nonnull(strstr(msg, "%reserved_smem_offset_1"));
    int *out = dev(4);
    void *args[] = {&out};
    crm_ptx_launch l = {{1, 1, 1}, {1, 1, 1}, args, arg_sizes, 1, 0, device_memory, NULL, NULL, NULL, NULL, 0};
    ck_assert_int_eq(crm_ptx_run(m, name, &l, msg, sizeof msg), cudaSuccess);
    ck_assert_int_eq(*out, 5);
    crm_ptx_free(m);
}
END_TEST

/* Inputs the PTX fuzzer (tests/ptx/fuzz_ptx.c) found mishandled: text that ends
 * inside a register declaration (looped forever), a call whose argument is no
 * parameter (freed twice), and a kernel without instructions (its threads never
 * ended). Each now fails to load, or runs, cleanly. */
START_TEST(test_fuzzer_findings)
{
    static const char cut_reg[] = ".version 9.0\n.entry k() {\n.reg .b32 a";
    static const char bad_arg[] = ".version 9.0\n.func f(.param .b32 x) { ret; }\n"
                                  ".entry k() {\n.reg .b32 %r<2>;\ncall.uni f, (%r1);\nret;\n}\n";
    static const char empty[] = ".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n}\n";
    crm_ptx_module *m = NULL;
    char err[256], msg[256];
    ck_assert_int_eq(crm_ptx_load(cut_reg, sizeof cut_reg - 1, &m, err, sizeof err), -1);
    ck_assert_int_eq(crm_ptx_load(bad_arg, sizeof bad_arg - 1, &m, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "not a parameter variable"));
    ck_assert_msg(crm_ptx_load(empty, sizeof empty - 1, &m, err, sizeof err) == 0, "%s", err);
    crm_ptx_launch l = {{2, 1, 1}, {40, 1, 1}, NULL, NULL, 0, 0, device_memory, NULL, NULL, NULL, NULL, 0};
    ck_assert_int_eq(crm_ptx_run(m, "k", &l, msg, sizeof msg), cudaSuccess);
    crm_ptx_free(m);
}
END_TEST

/* `.ptr .align 1` is the alignment of what a pointer parameter points to, not the
 * parameter's: after a 12-byte struct the pointer lies at 16, in the driver's
 * layout (common/crm_ptx.c) and in the engine's. Also: `[%r+-4]` offsets, WARP_SZ,
 * and a kernel parameter read through its generic address (cvta.param). */
START_TEST(test_pointer_parameter_layout)
{
    static const char ptx[] =
        ".version 9.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry k(.param .align 4 .b8 k_param_0[12], .param .u64 .ptr .global .align 1 k_param_1)\n{\n"
        ".reg .b32 %r<4>;\n.reg .b64 %rd<5>;\n"
        "ld.param.u64 %rd1, [k_param_1];\ncvta.to.global.u64 %rd2, %rd1;\n"
        "mov.u64 %rd3, k_param_0;\ncvta.param.u64 %rd4, %rd3;\nld.u32 %r1, [%rd4+8];\n"
        "add.s64 %rd2, %rd2, 4;\nmov.u32 %r2, WARP_SZ;\nadd.s32 %r3, %r1, %r2;\n"
        "st.global.u32 [%rd2+-4], %r3;\nret;\n}\n";
    crm_ptx_module *m = NULL;
    crm_module_info mi;
    char err[256], msg[256];
    ck_assert_msg(crm_ptx_load(ptx, sizeof ptx - 1, &m, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(crm_module_info_from_ptx(ptx, sizeof ptx - 1, &mi, err, sizeof err), 0);
    ck_assert_uint_eq(mi.kernels[0].nparams, 2);
    ck_assert_uint_eq(mi.kernels[0].params[1].offset, 16);
    int s[3] = {1, 2, 40}, *out = dev(4);
    void *args[] = {s, &out};
    crm_ptx_launch l = {{1, 1, 1}, {1, 1, 1}, args, mi.kernels[0].params, 2, 0, device_memory, NULL, NULL, NULL, NULL, 0};
    ck_assert_int_eq(crm_ptx_run(m, "k", &l, msg, sizeof msg), cudaSuccess);
    ck_assert_int_eq(*out, 72);
    crm_module_info_free(&mi);
    crm_ptx_free(m);
}
END_TEST

/* trap fails the launch; a kernel that never ends is stopped by the watchdog. */
START_TEST(test_trap_and_watchdog)
{
    int *p = dev(64 * 4);
    void *args[] = {&p};
    ck_assert_int_eq(run("traps", 1, 32, 0, args), cudaErrorLaunchFailure);
    setenv("CUDAREM_EMU_KERNEL_TIMEOUT", "0.5", 1);
    ck_assert_int_eq(run("forever", 1, 1, 0, args), cudaErrorLaunchTimeout);
    unsetenv("CUDAREM_EMU_KERNEL_TIMEOUT");
}
END_TEST

static Suite *ptx_suite(void)
{
    Suite *s = suite_create("ptx");
    TCase *tc = tcase_create("kernels");
    tcase_add_checked_fixture(tc, load_module, unload_module);
    tcase_add_test(tc, test_vadd);
    tcase_add_test(tc, test_struct_parameter);
    tcase_add_test(tc, test_shared_reduction);
    tcase_add_test(tc, test_warp_shuffle);
    tcase_add_test(tc, test_histogram_atomics);
    tcase_add_test(tc, test_divergence_reconverges);
    tcase_add_test(tc, test_grid_stride_64bit);
    tcase_add_test(tc, test_conversions);
    tcase_add_test(tc, test_faults);
    tcase_add_test(tc, test_bit_and_warp_intrinsics);
    tcase_add_test(tc, test_cp_async);
    tcase_add_test(tc, test_trap_and_watchdog);
    tcase_add_test(tc, test_device_function_calls);
    tcase_add_test(tc, test_printf_after_calls);
    tcase_add_test(tc, test_printf_conversions);
    tcase_add_test(tc, test_assert_fails_the_launch);
    tcase_add_test(tc, test_fast_path_matches_general_path);
    tcase_add_test(tc, test_block_votes_and_member_masks);
    tcase_add_test(tc, test_dot_products_and_bmsk);
    suite_add_tcase(s, tc);
    TCase *te = tcase_create("errors");
    tcase_add_test(te, test_unsupported_and_bad_text);
    tcase_add_test(te, test_pointer_parameter_layout);
    tcase_add_test(te, test_unknown_special_register_refuses_one_kernel);
    tcase_add_test(te, test_fuzzer_findings);
    suite_add_tcase(s, te);
    return s;
}

CRM_CHECK_MAIN(ptx_suite)
