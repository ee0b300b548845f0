/* stress.cu -- many host threads, one CUDA program, every byte checked.
 *
 * Each thread has a stream of its own kind (blocking, non-blocking, the per-thread
 * default stream, the legacy default stream), or all share one (--one-stream),
 * drives the runtime or the driver API (--layer) on device i % N (--devices; in a
 * pool, devices of several servers), and runs iterations of work drawn from a
 * seeded sequence: device buffers of every size class allocated (plainly or in
 * stream order), copies (1D and pitched 2D) from and to pageable, pinned and
 * registered memory, memsets, kernels, cuBLAS, cuBLASLt and cuDNN calls on inputs
 * just copied, host functions that check a copy before them, synchronisations of
 * every kind; then every buffer is copied back and every byte compared with a host
 * shadow of what it must hold, and the buffers are freed. Pairs of threads hand a
 * buffer across: one records an event after writing it, the other makes its stream
 * wait for that event and copies from it. A wrong byte or an error prints a FAIL
 * line with the seed, thread, iteration and that iteration's operations.
 *
 * usage: stress [--seed N] [--threads N] [--iters N] [--layer runtime|driver|mixed]
 *               [--streams KIND] [--one-stream] [--no-libs] [--devices N]
 * Prints `PASS stress` when nothing was wrong; exit status 0 only then.
 */
#include "stress_work.h"
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

struct stress_opts {
    uint64_t seed = 1;
    int threads = 16;
    int iters = 40;
    int layer = 2;       /* 0 runtime, 1 driver, 2 mixed by thread */
    int streams = -1;    /* a stress_stream_kind for every thread, -1 mixed */
    int one_stream = 0;
    int libs = 1;
    int devices = 1;     /* thread i works on device i % devices */
};

/* One direction of a pair's hand-over: a buffer, the event after its last write. */
struct stress_mailbox {
    std::mutex m;
    std::condition_variable cv;
    int state = 0; /* 0 empty, 1 offered, 2 taken and copied, -1 a partner failed */
    cudaEvent_t ev = nullptr;
    const stress_buf *buf = nullptr;
};

static stress_opts opts;
static std::vector<stress_mailbox> mailboxes;
static std::atomic<int> wrong_iters(0), total_iters(0), broken_threads(0);
static std::atomic<unsigned long> total_ops(0);
static std::mutex print_lock;
static cudaStream_t shared_stream;

static void stress_report(stress_worker &w, const std::string &what)
{
    std::lock_guard<std::mutex> g(print_lock);
    printf("FAIL seed=%llu thread=%d (%s layer, %s stream) iteration=%u: %s\n", (unsigned long long)w.seed, w.id,
           w.L->name, opts.one_stream ? "one shared" : stress_stream_names[w.kind], w.iter, what.c_str());
    printf("  its operations, in order:\n");
    for (const std::string &line : w.log)
        printf("    %s\n", line.c_str());
    fflush(stdout);
}

/* Waits for a mailbox state, bounded so that a lost hand-over fails rather than hangs. */
static void stress_await(stress_mailbox &mb, int state, const char *what)
{
    std::unique_lock<std::mutex> g(mb.m);
    if (!mb.cv.wait_for(g, std::chrono::seconds(40), [&] { return mb.state == state || mb.state < 0; }))
        stress_throw("hand-over: %s timed out", what);
    if (mb.state < 0)
        stress_throw("hand-over: %s: the partner failed (its FAIL line)", what);
}

/* Sets a state; a failed pair's mailbox stays failed. */
static void stress_set(stress_mailbox &mb, int state)
{
    std::lock_guard<std::mutex> g(mb.m);
    if (mb.state >= 0)
        mb.state = state;
    mb.cv.notify_all();
}

/* The even thread of a pair offers its first buffer behind an event. */
static void stress_offer(stress_worker &w, stress_mailbox &mb)
{
    cudaEvent_t e;
    STRESS_CALL(w, w.L->event_create(&e));
    stress_note(w, "event record, offered to thread %d with %p", w.id + 1, (void *)w.bufs[0].d);
    STRESS_CALL(w, w.L->event_record(e, w.s));
    mb.ev = e;
    mb.buf = &w.bufs[0];
    stress_set(mb, 1);
}

/* The odd thread waits for that event on its stream and copies the buffer. */
static void stress_take(stress_worker &w, stress_mailbox &mb)
{
    stress_await(mb, 1, "waiting for the partner's buffer");
    const stress_buf &from = *mb.buf;
    stress_buf &to = w.bufs[0];
    size_t len = from.n < to.n ? from.n : to.n;
    int host_waits = w.rng.below(4) == 0;
    stress_note(w, "%s thread %d's event, d2d %zu bytes from its %p to %p", host_waits ? "host waits for" : "stream waits for",
                w.id - 1, len, (void *)from.d, (void *)to.d);
    if (host_waits)
        STRESS_CALL(w, w.L->event_sync(mb.ev));
    else
        STRESS_CALL(w, w.L->stream_wait(w.s, mb.ev));
    STRESS_CALL(w, w.L->d2d(to.d, from.d, len, w.s));
    memcpy(to.shadow.data(), from.shadow.data(), len);
}

static void stress_alloc_all(stress_worker &w)
{
    size_t count = 2 + w.rng.below(2);
    w.bufs.assign(count, stress_buf());
    for (stress_buf &b : w.bufs) {
        b.n = stress_size(w);
        b.shadow.assign(b.n, 0);
        b.async_alloc = w.rng.below(6) == 0;
        if (b.async_alloc)
            STRESS_CALL(w, w.L->alloc_async((void **)&b.d, b.n, w.s));
        else
            STRESS_CALL(w, w.L->alloc((void **)&b.d, b.n));
        stress_note(w, "%s %zu bytes: %p", b.async_alloc ? "alloc in stream order" : "alloc", b.n, (void *)b.d);
        if (w.rng.below(2)) {
            std::vector<unsigned char> src(b.n);
            stress_fill(w, src.data(), b.n);
            stress_h2d_bytes(w, b, 0, src.data(), b.n);
        } else {
            unsigned char v = (unsigned char)w.rng.next();
            stress_note(w, "memset all %zu bytes of %p to 0x%02x", b.n, (void *)b.d, v);
            STRESS_CALL(w, w.L->memset8(b.d, v, b.n, w.s));
            memset(b.shadow.data(), v, b.n);
        }
    }
}

static void stress_one_op(stress_worker &w)
{
    stress_buf &a = w.bufs[w.rng.below(w.bufs.size())], &b = w.bufs[w.rng.below(w.bufs.size())];
    size_t pick = w.rng.below(w.libs ? 100 : 83);
    if (pick < 20)
        stress_op_h2d(w, a);
    else if (pick < 25)
        (pick % 2 ? stress_op_h2d_2d : stress_op_d2h_2d)(w, a);
    else if (pick < 35)
        stress_op_memset(w, a);
    else if (pick < 50)
        stress_op_kernel(w, a);
    else if (pick < 64)
        stress_op_d2d(w, a, b);
    else if (pick < 78)
        stress_op_d2h_check(w, a);
    else if (pick < 83)
        stress_sync(w);
    else if (pick < 91)
        stress_op_saxpy(w, a, b);
    else if (pick < 96)
        stress_op_dnn_add(w, a, b);
    else
        stress_op_lt_matmul(w, a, b);
}

/* Where a buffer comes back to: the thread's staging, or memory allocated for the
 * one copy (pageable, pinned or registered) and released once compared. */
enum stress_back_kind { BACK_STAGED_PINNED, BACK_STAGED_REGISTERED, BACK_PAGEABLE, BACK_FRESH_PINNED,
                        BACK_FRESH_REGISTERED, BACK_KINDS };
static const char *const stress_back_names[] = {"pinned staging", "registered staging", "fresh pageable",
                                                "fresh pinned", "fresh registered"};

struct stress_pending {
    size_t index;
    enum stress_back_kind kind;
    unsigned char *host;
};

static unsigned char *stress_back_alloc(stress_worker &w, enum stress_back_kind kind, size_t n)
{
    unsigned char *h = nullptr;
    switch (kind) {
    case BACK_STAGED_PINNED: return stress_host(w, HOST_PINNED, n);
    case BACK_STAGED_REGISTERED: return stress_host(w, HOST_REGISTERED, n);
    case BACK_FRESH_PINNED: STRESS_CALL(w, cudaMallocHost((void **)&h, n)); return h;
    default: break;
    }
    if ((h = (unsigned char *)malloc(n)) == nullptr)
        stress_throw("out of host memory");
    if (kind == BACK_FRESH_REGISTERED && cudaHostRegister(h, n, cudaHostRegisterDefault) != cudaSuccess) {
        free(h);
        stress_throw("cudaHostRegister of %zu bytes failed", n);
    }
    return h;
}

static void stress_back_free(const stress_pending &p)
{
    if (p.kind == BACK_FRESH_PINNED && cudaFreeHost(p.host) != cudaSuccess)
        stress_throw("cudaFreeHost failed");
    if (p.kind == BACK_FRESH_REGISTERED && cudaHostUnregister(p.host) != cudaSuccess)
        stress_throw("cudaHostUnregister failed");
    if (p.kind == BACK_PAGEABLE || p.kind == BACK_FRESH_REGISTERED)
        free(p.host);
}

/* Synchronises, then compares each pending copy with its buffer's shadow. */
static void stress_compare_pending(stress_worker &w, std::vector<stress_pending> &pending)
{
    std::string fault;
    try {
        stress_sync(w);
    } catch (stress_fault &f) {
        fault = f.what;
    }
    for (const stress_pending &p : pending) {
        const stress_buf &b = w.bufs[p.index];
        char what[112];
        snprintf(what, sizeof what, "buffer %zu (%p, %zu bytes) copied back to %s memory", p.index, (void *)b.d, b.n,
                 stress_back_names[p.kind]);
        try {
            if (fault.empty())
                stress_compare(p.host, b.shadow.data(), b.n, what);
            stress_back_free(p);
        } catch (stress_fault &f) {
            if (fault.empty())
                fault = f.what;
        }
    }
    pending.clear();
    if (!fault.empty())
        throw stress_fault{fault};
}

/* Copies every buffer back into host memory of a random kind and compares it; when
 * the staging runs out, what is pending is compared before it is used again. */
static void stress_check_all(stress_worker &w)
{
    std::vector<stress_pending> pending;
    for (size_t i = 0; i < w.bufs.size(); i++) {
        enum stress_back_kind kind = (enum stress_back_kind)w.rng.below(BACK_KINDS);
        unsigned char *h = stress_back_alloc(w, kind, w.bufs[i].n);
        if (h == nullptr) { /* staging full */
            stress_compare_pending(w, pending);
            h = stress_back_alloc(w, kind, w.bufs[i].n);
        }
        pending.push_back({i, kind, h});
        stress_note(w, "d2h all %zu bytes of %p to %s", w.bufs[i].n, (void *)w.bufs[i].d, stress_back_names[kind]);
        STRESS_CALL(w, w.L->d2h(h, w.bufs[i].d, w.bufs[i].n, w.s, 1));
    }
    stress_compare_pending(w, pending);
}

static void stress_free_all(stress_worker &w, int quiet)
{
    for (size_t k = w.bufs.size(); k-- > 0;) {
        stress_buf &b = w.bufs[(k + w.iter) % w.bufs.size()];
        if (b.d == nullptr)
            continue;
        int e = b.async_alloc ? w.L->free_async(b.d, w.s) : w.L->dfree(b.d);
        b.d = nullptr;
        if (e != 0 && !quiet)
            stress_throw("free returned %d (%s)", e, w.L->error_name(e));
    }
    w.bufs.clear();
}

/* One iteration: allocate, work, hand over, check every byte, free. */
static void stress_iteration(stress_worker &w)
{
    stress_mailbox *mb = opts.threads > 1 && (w.id | 1) < opts.threads ? &mailboxes[w.id / 2] : nullptr;
    w.log.clear();
    stress_alloc_all(w);
    size_t count = 3 + w.rng.below(8);
    for (size_t i = 0; i < count; i++)
        stress_one_op(w);
    if (mb != nullptr && w.id % 2 == 0)
        stress_offer(w, *mb);
    else if (mb != nullptr)
        stress_take(w, *mb);
    stress_check_all(w);
    if (mb != nullptr && w.id % 2 == 1) {
        stress_set(*mb, 2);
    } else if (mb != nullptr) {
        stress_await(*mb, 2, "waiting for the partner to copy the buffer");
        STRESS_CALL(w, w.L->event_destroy(mb->ev));
        stress_set(*mb, 0);
    }
    stress_free_all(w, 0);
}

static void stress_setup(stress_worker &w)
{
    STRESS_CALL(w, w.L->thread_init(w.id % opts.devices));
    if (opts.one_stream) {
        w.s = shared_stream;
    } else {
        STRESS_CALL(w, w.L->stream_create(&w.s, w.kind));
        w.own_stream = 1;
    }
    w.pageable = (unsigned char *)malloc(STRESS_MAX_BUF);
    w.registered = (unsigned char *)malloc(STRESS_STAGE);
    if (w.pageable == nullptr || w.registered == nullptr)
        stress_throw("out of host memory");
    STRESS_CALL(w, cudaMallocHost((void **)&w.pinned, STRESS_STAGE));
    STRESS_CALL(w, cudaHostRegister(w.registered, STRESS_STAGE, cudaHostRegisterDefault));
    if (w.libs)
        stress_libs_open(w);
}

static void stress_teardown(stress_worker &w)
{
    stress_libs_close(w);
    if (w.registered != nullptr)
        STRESS_CALL(w, cudaHostUnregister(w.registered));
    if (w.pinned != nullptr)
        STRESS_CALL(w, cudaFreeHost(w.pinned));
    free(w.registered);
    free(w.pageable);
    if (w.own_stream)
        STRESS_CALL(w, w.L->stream_destroy(w.s));
}

/* After a fault the pair's hand-over may be half done: the partner is told by the
 * mailbox's time-out; this thread stops, leaving the rest of the run to finish. */
static void stress_thread(int id)
{
    stress_worker w;
    w.id = id;
    w.seed = opts.seed;
    w.rng.state = opts.seed * 0x100000001b3ull + (uint64_t)id;
    w.L = opts.layer == 2 ? (id % 3 == 2 ? &stress_driver : &stress_runtime)
                          : opts.layer == 1 ? &stress_driver : &stress_runtime;
    w.kind = opts.streams >= 0 ? (enum stress_stream_kind)opts.streams
                               : (enum stress_stream_kind)((id + id / 4) % STREAM_KINDS);
    w.libs = opts.libs;
    try {
        stress_setup(w);
        for (w.iter = 0; w.iter < (unsigned)opts.iters; w.iter++) {
            stress_iteration(w);
            total_iters++;
        }
        stress_teardown(w);
    } catch (stress_fault &f) {
        if (opts.threads > 1 && (id | 1) < opts.threads)
            stress_set(mailboxes[id / 2], -1);
        wrong_iters++;
        total_iters++;
        broken_threads++;
        stress_report(w, f.what);
        for (stress_hostcheck *c : w.checks)
            if (c->ran.load())
                delete c; /* one that never ran stays: its stream may still run it */
        w.checks.clear();
    }
    total_ops += w.ops;
}

static int stress_parse(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : nullptr;
        if (strcmp(a, "--one-stream") == 0) {
            opts.one_stream = 1;
            continue;
        }
        if (strcmp(a, "--no-libs") == 0) {
            opts.libs = 0;
            continue;
        }
        if (v == nullptr)
            return -1;
        i++;
        if (strcmp(a, "--seed") == 0)
            opts.seed = strtoull(v, nullptr, 0);
        else if (strcmp(a, "--threads") == 0)
            opts.threads = atoi(v);
        else if (strcmp(a, "--iters") == 0)
            opts.iters = atoi(v);
        else if (strcmp(a, "--devices") == 0)
            opts.devices = atoi(v);
        else if (strcmp(a, "--layer") == 0)
            opts.layer = strcmp(v, "runtime") == 0 ? 0 : strcmp(v, "driver") == 0 ? 1 : strcmp(v, "mixed") == 0 ? 2 : -1;
        else if (strcmp(a, "--streams") == 0)
            opts.streams = strcmp(v, "blocking") == 0 ? 0 : strcmp(v, "non-blocking") == 0 ? 1
                         : strcmp(v, "per-thread") == 0 ? 2 : strcmp(v, "legacy") == 0 ? 3 : strcmp(v, "mixed") == 0 ? -1 : -2;
        else
            return -1;
    }
    return opts.threads < 1 || opts.threads > 256 || opts.devices < 1 || (opts.devices > 1 && opts.one_stream) || opts.iters < 0 || opts.layer < 0 || opts.streams < -1 ? -1 : 0;
}

int main(int argc, char **argv)
{
    if (stress_parse(argc, argv) != 0) {
        fprintf(stderr, "usage: stress [--seed N] [--threads N] [--iters N] [--layer runtime|driver|mixed]\n"
                        "              [--streams blocking|non-blocking|per-thread|legacy|mixed] [--one-stream] [--no-libs]\n"
                        "              [--devices N]\n");
        return 2;
    }
    printf("stress: seed %llu, %d threads x %d iterations on %d device(s), %s layer, %s streams%s%s\n",
           (unsigned long long)opts.seed, opts.threads, opts.iters, opts.devices,
           opts.layer == 2 ? "mixed" : opts.layer == 1 ? "driver" : "runtime",
           opts.one_stream ? "one shared" : opts.streams < 0 ? "mixed" : stress_stream_names[opts.streams],
           opts.one_stream ? " (one stream for all)" : "", opts.libs ? ", with cuBLAS, cuBLASLt and cuDNN" : "");
    fflush(stdout);
    const char *missing = "";
    int e = cudaSetDevice(0);
    if (e == 0 && opts.layer != 0)
        e = stress_driver_load(&missing);
    if (e == 0 && opts.one_stream)
        e = cudaStreamCreateWithFlags(&shared_stream, opts.seed % 2 ? cudaStreamNonBlocking : cudaStreamDefault);
    if (e != 0) {
        printf("FAIL seed=%llu setup: %s %s\n", (unsigned long long)opts.seed, missing, cudaGetErrorName((cudaError_t)e));
        return 1;
    }
    mailboxes = std::vector<stress_mailbox>((size_t)(opts.threads + 1) / 2);
    auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (int i = 0; i < opts.threads; i++)
        threads.emplace_back(stress_thread, i);
    for (auto &t : threads)
        t.join();
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    e = cudaDeviceSynchronize();
    printf("stress: %d iterations, %lu operations, %d wrong or failed, in %.2f s (seed %llu)\n", total_iters.load(),
           total_ops.load(), wrong_iters.load(), secs, (unsigned long long)opts.seed);
    if (wrong_iters.load() != 0 || e != 0) {
        printf("FAILED stress: seed %llu%s\n", (unsigned long long)opts.seed, e != 0 ? ", and the final synchronize failed" : "");
        return 1;
    }
    printf("PASS stress\n");
    return 0;
}
