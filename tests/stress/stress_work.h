/* stress_work.h -- one stress thread's state and the work it queues: device buffers
 * with a host shadow of what each byte must hold, copies from and to pageable,
 * pinned and registered memory of every size class, memsets, kernels, cuBLAS,
 * cuBLASLt and cuDNN calls, host functions, synchronisations of every kind. Each
 * operation applies to the shadow what the device must do, and logs itself, so a
 * wrong byte is reported with the iteration's operations that led to it. An error
 * or a wrong byte throws stress_fault, which ends the iteration.
 */
#ifndef STRESS_WORK_H
#define STRESS_WORK_H

#include "stress_layer.h"
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cudnn.h>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sched.h>
#include <string>
#include <vector>

/* Largest device buffer, and each pinned and registered staging area. */
enum { STRESS_MAX_BUF = 2 << 20, STRESS_STAGE = 4 << 20, STRESS_KERNEL_MAX = 64 << 10, STRESS_LIB_FLOATS = 4096,
       STRESS_LT_N = 8 };

struct stress_fault {
    std::string what;
};

/* splitmix64: the per-thread sequence every choice comes from. */
struct stress_rng {
    uint64_t state;
    uint64_t next()
    {
        uint64_t z = (state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    size_t below(size_t n) { return n ? (size_t)(next() % n) : 0; }
};

struct stress_buf {
    unsigned char *d = nullptr;
    size_t n = 0;
    int async_alloc = 0;
    std::vector<unsigned char> shadow; /* what every byte must hold once the stream is done */
};

/* A host function's check: the pinned bytes a copy before it wrote, and that host
 * functions of this thread run in the order they were queued. */
struct stress_hostcheck {
    const unsigned char *host;
    std::vector<unsigned char> expect;
    int seq;
    std::atomic<int> *counter;
    std::atomic<int> ran{0}, ok{0};
};

enum stress_host_kind { HOST_PAGEABLE, HOST_PINNED, HOST_REGISTERED, HOST_KINDS };
static const char *const stress_host_names[] = {"pageable", "pinned", "registered"};

struct stress_worker {
    int id = 0;
    uint64_t seed = 0;
    unsigned iter = 0;
    const stress_layer *L = nullptr;
    enum stress_stream_kind kind = STREAM_BLOCKING;
    cudaStream_t s = 0;
    int own_stream = 0;
    int libs = 0;
    stress_rng rng{0};
    unsigned char *pageable = nullptr, *pinned = nullptr, *registered = nullptr;
    size_t pinned_used = 0, registered_used = 0;
    std::vector<stress_buf> bufs;
    std::vector<stress_hostcheck *> checks;
    std::atomic<int> host_seq{0};
    int queued_checks = 0;
    std::vector<std::string> log;
    cublasHandle_t blas = nullptr;
    cudnnHandle_t dnn = nullptr;
    cudnnTensorDescriptor_t dnn_desc = nullptr;
    cublasLtHandle_t lt = nullptr;
    cublasLtMatmulDesc_t lt_op = nullptr;
    cublasLtMatrixLayout_t lt_layout = nullptr;
    unsigned long ops = 0;
};

static void stress_note(stress_worker &w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void stress_note(stress_worker &w, const char *fmt, ...)
{
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    w.log.push_back(line);
    w.ops++;
}

static void stress_throw(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void stress_throw(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    throw stress_fault{line};
}

/* A layer call that must succeed. */
#define STRESS_CALL(w, call)                                                                             \
    do {                                                                                                 \
        int st_e_ = (call);                                                                              \
        if (st_e_ != 0)                                                                                  \
            stress_throw("%s returned %d (%s)", #call, st_e_, (w).L->error_name(st_e_));                \
    } while (0)

#define STRESS_LIB(call, ok)                                                                             \
    do {                                                                                                 \
        int st_e_ = (int)(call);                                                                         \
        if (st_e_ != (int)(ok))                                                                          \
            stress_throw("%s returned status %d", #call, st_e_);                                        \
    } while (0)

/* Compares n bytes the device gave back with what they must be. */
static void stress_compare(const unsigned char *got, const unsigned char *want, size_t n, const char *what)
{
    if (memcmp(got, want, n) == 0)
        return;
    size_t i = 0, wrong = 0;
    while (got[i] == want[i])
        i++;
    for (size_t j = i; j < n; j++)
        wrong += got[j] != want[j];
    stress_throw("%s: %zu of %zu bytes wrong, first at byte %zu: expected 0x%02x, got 0x%02x", what, wrong, n, i,
                 want[i], got[i]);
}

static void stress_fill(stress_worker &w, unsigned char *p, size_t n)
{
    uint64_t x = w.rng.next();
    for (size_t i = 0; i < n; i++) {
        if ((i & 7) == 0)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
        p[i] = (unsigned char)(x >> (8 * (i & 7)));
    }
}

/* A size of one of the classes the transport treats differently: tiny, inline in
 * the call stream (to 32 KiB), on the data channel (to 1 MiB), large. */
static size_t stress_size(stress_worker &w)
{
    size_t cls = w.rng.below(20);
    if (cls < 6)
        return 1 + w.rng.below(512);
    if (cls < 13)
        return 513 + w.rng.below((32 << 10) - 512);
    if (cls < 19)
        return (32 << 10) + 1 + w.rng.below((1 << 20) - (32 << 10));
    return (1 << 20) + 1 + w.rng.below(STRESS_MAX_BUF - (1 << 20));
}

/* A random sub-range [*off, *off + *len) of n bytes, at most max long. */
static void stress_range(stress_worker &w, size_t n, size_t max, size_t *off, size_t *len)
{
    *off = w.rng.below(n);
    size_t room = n - *off;
    *len = 1 + w.rng.below(room < max ? room : max);
}

/* Host memory of `kind` for n bytes that the stream may still read or write: pinned
 * and registered staging is taken afresh until the next synchronisation. */
static unsigned char *stress_host(stress_worker &w, enum stress_host_kind kind, size_t n)
{
    size_t *used = kind == HOST_PINNED ? &w.pinned_used : &w.registered_used;
    if (kind == HOST_PAGEABLE)
        return w.pageable;
    if (*used + n > STRESS_STAGE)
        return nullptr; /* the caller synchronises first */
    unsigned char *p = (kind == HOST_PINNED ? w.pinned : w.registered) + *used;
    *used += (n + 255) & ~(size_t)255;
    return p;
}

static void stress_verify_checks(stress_worker &w)
{
    for (stress_hostcheck *c : w.checks) {
        if (!c->ran.load())
            stress_throw("host function %d never ran before the synchronisation returned", c->seq);
        if (!c->ok.load())
            stress_throw("host function %d saw the bytes of the copy before it wrong, or ran out of order", c->seq);
        delete c;
    }
    w.checks.clear();
}

/* Waits for the stream by one of the ways a program does; staging is free again. */
static void stress_sync(stress_worker &w)
{
    size_t how = w.rng.below(4);
    if (how == 0) {
        stress_note(w, "stream synchronize");
        STRESS_CALL(w, w.L->stream_sync(w.s));
    } else if (how == 1) {
        cudaEvent_t e;
        stress_note(w, "event record + synchronize");
        STRESS_CALL(w, w.L->event_create(&e));
        STRESS_CALL(w, w.L->event_record(e, w.s));
        STRESS_CALL(w, w.L->event_sync(e));
        STRESS_CALL(w, w.L->event_destroy(e));
    } else {
        stress_note(w, "stream query until done");
        int q;
        while ((q = w.L->stream_query(w.s)) == 1)
            sched_yield();
        STRESS_CALL(w, q);
    }
    w.pinned_used = w.registered_used = 0;
    stress_verify_checks(w);
}

static unsigned char *stress_host_room(stress_worker &w, enum stress_host_kind kind, size_t n)
{
    unsigned char *h = stress_host(w, kind, n);
    if (h == nullptr) {
        stress_sync(w);
        h = stress_host(w, kind, n);
    }
    return h;
}

/* Bytes [off, off+len) of buffer b from host memory of a random kind. A pageable
 * source is overwritten as soon as the call returns: CUDA has staged it by then. */
static void stress_h2d_bytes(stress_worker &w, stress_buf &b, size_t off, const unsigned char *src, size_t len)
{
    enum stress_host_kind kind = (enum stress_host_kind)w.rng.below(HOST_KINDS);
    int async = w.rng.below(8) != 0;
    unsigned char *h = stress_host_room(w, kind, len);
    memcpy(h, src, len);
    stress_note(w, "h2d %zu bytes at +%zu of %p from %s%s", len, off, (void *)b.d, stress_host_names[kind],
                async ? " async" : "");
    STRESS_CALL(w, w.L->h2d(b.d + off, h, len, w.s, async));
    if (kind == HOST_PAGEABLE)
        memset(h, 0xa5, len);
    memcpy(b.shadow.data() + off, src, len);
}

static void stress_op_h2d(stress_worker &w, stress_buf &b)
{
    size_t off, len;
    stress_range(w, b.n, b.n, &off, &len);
    std::vector<unsigned char> src(len);
    stress_fill(w, src.data(), len);
    stress_h2d_bytes(w, b, off, src.data(), len);
}

static void stress_op_memset(stress_worker &w, stress_buf &b)
{
    size_t off, len;
    stress_range(w, b.n, b.n, &off, &len);
    unsigned char v = (unsigned char)w.rng.next();
    stress_note(w, "memset %zu bytes at +%zu of %p to 0x%02x", len, off, (void *)b.d, v);
    STRESS_CALL(w, w.L->memset8(b.d + off, v, len, w.s));
    memset(b.shadow.data() + off, v, len);
}

static void stress_op_kernel(stress_worker &w, stress_buf &b)
{
    size_t off, len;
    stress_range(w, b.n, STRESS_KERNEL_MAX, &off, &len);
    unsigned k = 1 + (unsigned)w.rng.below(255);
    stress_note(w, "kernel adds %u to %zu bytes at +%zu of %p", k, len, off, (void *)b.d);
    STRESS_CALL(w, w.L->add_bytes(b.d + off, len, k, w.s));
    for (size_t i = off; i < off + len; i++)
        b.shadow[i] = (unsigned char)(b.shadow[i] + k);
}

static void stress_op_d2d(stress_worker &w, stress_buf &dst, stress_buf &src)
{
    if (&dst == &src)
        return;
    size_t soff, len;
    stress_range(w, src.n, dst.n, &soff, &len);
    size_t doff = w.rng.below(dst.n - len + 1);
    stress_note(w, "d2d %zu bytes from +%zu of %p to +%zu of %p", len, soff, (void *)src.d, doff, (void *)dst.d);
    STRESS_CALL(w, w.L->d2d(dst.d + doff, src.d + soff, len, w.s));
    memcpy(dst.shadow.data() + doff, src.shadow.data() + soff, len);
}

/* A pitched block inside b: height rows of width bytes, pitch apart, from off. */
struct stress_block {
    size_t off, pitch, width, height;
};

static stress_block stress_block_in(stress_worker &w, size_t n)
{
    stress_block k;
    k.width = 1 + w.rng.below(n < 4096 ? n : 4096);
    k.pitch = k.width + w.rng.below(64);
    k.height = 1 + w.rng.below(64);
    while (k.height > 1 && (k.height - 1) * k.pitch + k.width > n)
        k.height--;
    k.off = w.rng.below(n - ((k.height - 1) * k.pitch + k.width) + 1);
    return k;
}

/* A 2D copy into a block of b from rows of host memory of a random kind, laid out
 * with a pitch of their own (a pageable source is overwritten on return). */
static void stress_op_h2d_2d(stress_worker &w, stress_buf &b)
{
    stress_block k = stress_block_in(w, b.n);
    size_t hpitch = k.width + w.rng.below(32), extent = (k.height - 1) * hpitch + k.width;
    enum stress_host_kind kind = (enum stress_host_kind)w.rng.below(HOST_KINDS);
    int async = w.rng.below(8) != 0;
    unsigned char *h = stress_host_room(w, kind, extent);
    stress_fill(w, h, extent);
    stress_note(w, "h2d 2D %zu rows of %zu bytes (pitch %zu, host pitch %zu) at +%zu of %p from %s%s", k.height,
                k.width, k.pitch, hpitch, k.off, (void *)b.d, stress_host_names[kind], async ? " async" : "");
    STRESS_CALL(w, w.L->h2d_2d(b.d + k.off, k.pitch, h, hpitch, k.width, k.height, w.s, async));
    for (size_t r = 0; r < k.height; r++)
        memcpy(b.shadow.data() + k.off + r * k.pitch, h + r * hpitch, k.width);
    if (kind == HOST_PAGEABLE)
        memset(h, 0x5a, extent);
}

/* A 2D copy of a block of b to pageable rows, which hold it on return. */
static void stress_op_d2h_2d(stress_worker &w, stress_buf &b)
{
    stress_block k = stress_block_in(w, b.n);
    size_t hpitch = k.width + w.rng.below(32), extent = (k.height - 1) * hpitch + k.width;
    if (extent > STRESS_MAX_BUF)
        return;
    stress_note(w, "d2h 2D %zu rows of %zu bytes (pitch %zu, host pitch %zu) at +%zu of %p to pageable%s", k.height,
                k.width, k.pitch, hpitch, k.off, (void *)b.d, " async, checked on return");
    STRESS_CALL(w, w.L->d2h_2d(w.pageable, hpitch, b.d + k.off, k.pitch, k.width, k.height, w.s, 1));
    for (size_t r = 0; r < k.height; r++)
        stress_compare(w.pageable + r * hpitch, b.shadow.data() + k.off + r * k.pitch, k.width,
                       "a 2D copy back to pageable rows, read as it returned");
}

/* A copy back whose bytes a pageable destination has on return (CUDA: a copy to
 * pageable memory returns once complete), or a pinned one checked by a host
 * function queued behind it. */
static void stress_op_d2h_check(stress_worker &w, stress_buf &b)
{
    size_t off, len;
    stress_range(w, b.n, b.n, &off, &len);
    if (w.rng.below(2) == 0) {
        stress_note(w, "d2h %zu bytes at +%zu of %p to pageable async, checked on return", len, off, (void *)b.d);
        STRESS_CALL(w, w.L->d2h(w.pageable, b.d + off, len, w.s, 1));
        stress_compare(w.pageable, b.shadow.data() + off, len, "pageable copy back, read as it returned");
        return;
    }
    unsigned char *h = stress_host_room(w, HOST_PINNED, len);
    stress_hostcheck *c = new stress_hostcheck;
    c->host = h;
    c->expect.assign(b.shadow.begin() + off, b.shadow.begin() + off + len);
    c->seq = w.queued_checks++;
    c->counter = &w.host_seq;
    w.checks.push_back(c);
    stress_note(w, "d2h %zu bytes at +%zu of %p to pinned async, then host function %d checks them", len, off,
                (void *)b.d, c->seq);
    STRESS_CALL(w, w.L->d2h(h, b.d + off, len, w.s, 1));
    STRESS_CALL(w, w.L->host_func(w.s, [](void *arg) {
        stress_hostcheck *k = (stress_hostcheck *)arg;
        int in_order = k->counter->fetch_add(1) == k->seq;
        k->ok.store(in_order && memcmp(k->host, k->expect.data(), k->expect.size()) == 0);
        k->ran.store(1);
    }, c));
}

/* ---- library calls: inputs written by copies queued just before, as programs do ---- */

static std::vector<unsigned char> stress_floats(stress_worker &w, size_t n, float *out)
{
    std::vector<unsigned char> bytes(n * sizeof(float));
    int base = (int)w.rng.below(50);
    for (size_t i = 0; i < n; i++)
        out[i] = (float)((int)((i * 7 + base) % 61) - 30);
    memcpy(bytes.data(), out, bytes.size());
    return bytes;
}

/* Fills the first n floats of buffers x and y by copies, as the library's inputs. */
static size_t stress_lib_inputs(stress_worker &w, stress_buf &x, stress_buf &y, std::vector<float> &fx,
                                std::vector<float> &fy)
{
    size_t n = (x.n < y.n ? x.n : y.n) / sizeof(float);
    if (n > STRESS_LIB_FLOATS)
        n = STRESS_LIB_FLOATS;
    fx.resize(n);
    fy.resize(n);
    if (n == 0)
        return 0;
    std::vector<unsigned char> bx = stress_floats(w, n, fx.data()), by = stress_floats(w, n, fy.data());
    stress_h2d_bytes(w, x, 0, bx.data(), bx.size());
    stress_h2d_bytes(w, y, 0, by.data(), by.size());
    return n;
}

static void stress_op_saxpy(stress_worker &w, stress_buf &x, stress_buf &y)
{
    std::vector<float> fx, fy;
    size_t n = &x == &y ? 0 : stress_lib_inputs(w, x, y, fx, fy);
    if (n == 0)
        return;
    float alpha = (float)(1 + w.rng.below(3));
    stress_note(w, "cublasSaxpy n=%zu alpha=%g", n, alpha);
    STRESS_LIB(cublasSaxpy(w.blas, (int)n, &alpha, (const float *)x.d, 1, (float *)y.d, 1), CUBLAS_STATUS_SUCCESS);
    for (size_t i = 0; i < n; i++)
        fy[i] = alpha * fx[i] + fy[i];
    memcpy(y.shadow.data(), fy.data(), n * sizeof(float));
}

static void stress_op_dnn_add(stress_worker &w, stress_buf &a, stress_buf &c)
{
    std::vector<float> fa, fc;
    size_t n = &a == &c ? 0 : stress_lib_inputs(w, a, c, fa, fc);
    if (n == 0)
        return;
    float alpha = (float)(1 + w.rng.below(2)), beta = (float)w.rng.below(3);
    stress_note(w, "cudnnAddTensor n=%zu alpha=%g beta=%g", n, alpha, beta);
    STRESS_LIB(cudnnSetTensor4dDescriptor(w.dnn_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, 1, (int)n),
               CUDNN_STATUS_SUCCESS);
    STRESS_LIB(cudnnAddTensor(w.dnn, &alpha, w.dnn_desc, a.d, &beta, w.dnn_desc, c.d), CUDNN_STATUS_SUCCESS);
    for (size_t i = 0; i < n; i++)
        fc[i] = alpha * fa[i] + beta * fc[i];
    memcpy(c.shadow.data(), fc.data(), n * sizeof(float));
}

/* C = A * B with 8x8 column-major floats: A and B in buffer a, C at the start of c. */
static void stress_op_lt_matmul(stress_worker &w, stress_buf &a, stress_buf &c)
{
    const size_t n = STRESS_LT_N, cells = n * n;
    if (&a == &c || a.n < 2 * cells * sizeof(float) || c.n < cells * sizeof(float))
        return;
    std::vector<float> fa(2 * cells), fc(cells);
    std::vector<unsigned char> ba = stress_floats(w, 2 * cells, fa.data());
    stress_h2d_bytes(w, a, 0, ba.data(), ba.size());
    float alpha = 1.0f, beta = 0.0f;
    const float *A = (const float *)a.d, *B = A + cells;
    stress_note(w, "cublasLtMatmul %zux%zu", n, n);
    STRESS_LIB(cublasLtMatmul(w.lt, w.lt_op, &alpha, A, w.lt_layout, B, w.lt_layout, &beta, c.d, w.lt_layout, c.d,
                              w.lt_layout, nullptr, nullptr, 0, w.s),
               CUBLAS_STATUS_SUCCESS);
    for (size_t col = 0; col < n; col++)
        for (size_t row = 0; row < n; row++) {
            float sum = 0;
            for (size_t k = 0; k < n; k++)
                sum += fa[k * n + row] * fa[cells + col * n + k];
            fc[col * n + row] = sum;
        }
    memcpy(c.shadow.data(), fc.data(), cells * sizeof(float));
}

static void stress_libs_open(stress_worker &w)
{
    STRESS_LIB(cublasCreate(&w.blas), CUBLAS_STATUS_SUCCESS);
    STRESS_LIB(cublasSetStream(w.blas, w.s), CUBLAS_STATUS_SUCCESS);
    STRESS_LIB(cudnnCreate(&w.dnn), CUDNN_STATUS_SUCCESS);
    STRESS_LIB(cudnnSetStream(w.dnn, w.s), CUDNN_STATUS_SUCCESS);
    STRESS_LIB(cudnnCreateTensorDescriptor(&w.dnn_desc), CUDNN_STATUS_SUCCESS);
    STRESS_LIB(cublasLtCreate(&w.lt), CUBLAS_STATUS_SUCCESS);
    STRESS_LIB(cublasLtMatmulDescCreate(&w.lt_op, CUBLAS_COMPUTE_32F, CUDA_R_32F), CUBLAS_STATUS_SUCCESS);
    STRESS_LIB(cublasLtMatrixLayoutCreate(&w.lt_layout, CUDA_R_32F, STRESS_LT_N, STRESS_LT_N, STRESS_LT_N),
               CUBLAS_STATUS_SUCCESS);
}

static void stress_libs_close(stress_worker &w)
{
    if (w.blas != nullptr)
        STRESS_LIB(cublasDestroy(w.blas), CUBLAS_STATUS_SUCCESS);
    if (w.dnn_desc != nullptr)
        STRESS_LIB(cudnnDestroyTensorDescriptor(w.dnn_desc), CUDNN_STATUS_SUCCESS);
    if (w.dnn != nullptr)
        STRESS_LIB(cudnnDestroy(w.dnn), CUDNN_STATUS_SUCCESS);
    if (w.lt_layout != nullptr)
        STRESS_LIB(cublasLtMatrixLayoutDestroy(w.lt_layout), CUBLAS_STATUS_SUCCESS);
    if (w.lt_op != nullptr)
        STRESS_LIB(cublasLtMatmulDescDestroy(w.lt_op), CUBLAS_STATUS_SUCCESS);
    if (w.lt != nullptr)
        STRESS_LIB(cublasLtDestroy(w.lt), CUBLAS_STATUS_SUCCESS);
}

#endif
