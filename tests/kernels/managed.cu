// managed.cu -- managed memory through the shim, every byte read back and checked:
// host writes then a kernel then host reads (many rounds, parts of the buffer
// rewritten each time); fresh memory reads zero; copies and memsets with managed
// pointers under every kind; prefetches both ways and the range attributes they
// and cudaMemAdvise leave; pointer and device attributes at both layers; stream
// attachment; the driver's cuMemAllocManaged; __managed__ variables (their
// initialisers, host and kernel updates); a freed allocation's addresses used
// again; many threads each with its own buffer; mapped host memory
// (cudaHostAllocMapped, cuMemHostAlloc with DEVICEMAP) reached by kernels through
// its device pointer, which is its host pointer. With argument "counts" it runs only
// a fixed pattern whose transfers the end-to-end suite counts (CUDAREM_STATS).
// Prints "PASS managed".
#include "kcheck.h"
#include <cuda.h>
#include <csignal>
#include <cstring>
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <thread>
#include <vector>

__global__ void add(int *x, int n, int v)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] += v;
}

__global__ void fill_index(int *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = i * 3;
}

/* 1 when the program runs through cudarem (its statistics call is there): then
 * the device reports no concurrent managed access and page-locked memory without
 * the mapped flag is the client's alone; a local GPU may do either. */
static int through_cudarem(void)
{
    return dlsym(RTLD_DEFAULT, "cudaremGetStats") != nullptr;
}

__managed__ int mcounter = 5;
__managed__ float marr[1000];

__global__ void bump()
{
    atomicAdd(&mcounter, 1);
    marr[threadIdx.x] = threadIdx.x * 2.0f;
}

/* __managed__ variables: the initialiser, a host update, a kernel's, read back. */
static void variables(void)
{
    KCHECK(mcounter == 5, "initialiser: %d", mcounter);
    mcounter += 10;
    bump<<<1, 100>>>();
    KCUDA(cudaDeviceSynchronize());
    KCHECK(mcounter == 115 && marr[7] == 14.0f && marr[99] == 198.0f && marr[100] == 0.0f,
           "after a kernel: %d %g %g %g", mcounter, marr[7], marr[99], marr[100]);
    cudaPointerAttributes pa;
    KCUDA(cudaPointerGetAttributes(&pa, &mcounter));
    KCHECK(pa.type == cudaMemoryTypeManaged, "a __managed__ variable's type: %d", (int)pa.type);
}

static void launch_add(int *x, int n, int v, cudaStream_t s = 0)
{
    add<<<(n + 255) / 256, 256, 0, s>>>(x, n, v);
    KCUDA(cudaGetLastError());
}

/* Host writes, kernel, host reads, for several rounds; each round the host also
 * rewrites one slice, which the kernel must see. */
static void rounds(void)
{
    const int n = 300000; /* not a multiple of a block: the last one is short */
    int *x = nullptr;
    KCUDA(cudaMallocManaged(&x, n * sizeof(int)));
    int zeros = 0;
    for (int i = 0; i < n; i++)
        zeros += x[i] == 0;
    KCHECK(zeros == n, "fresh managed memory: %d of %d zero", zeros, n);
    for (int i = 0; i < n; i++)
        x[i] = i;
    std::vector<int> want(n);
    for (int i = 0; i < n; i++)
        want[i] = i;
    for (int round = 1; round <= 4; round++) {
        launch_add(x, n, round);
        KCUDA(cudaDeviceSynchronize());
        for (int i = 0; i < n; i++)
            want[i] += round;
        int bad = 0;
        for (int i = 0; i < n; i++)
            bad += x[i] != want[i];
        KCHECK(bad == 0, "round %d: %d values wrong (x[0]=%d want %d)", round, bad, x[0], want[0]);
        int lo = round * 40000, hi = lo + 25000; /* the host rewrites a slice */
        for (int i = lo; i < hi; i++)
            x[i] = want[i] = -i;
    }
    KCUDA(cudaFree(x));
}

/* Copies and memsets with managed pointers, whatever kind the program names. */
static void copies(void)
{
    const int n = 50000;
    size_t bytes = n * sizeof(int);
    int *m = nullptr, *d = nullptr;
    std::vector<int> h(n), back(n);
    KCUDA(cudaMallocManaged(&m, bytes));
    KCUDA(cudaMalloc(&d, bytes));
    for (int i = 0; i < n; i++)
        h[i] = 7 * i + 1;
    KCUDA(cudaMemcpy(m, h.data(), bytes, cudaMemcpyHostToDevice));
    KCHECK(m[0] == 1 && m[n - 1] == 7 * (n - 1) + 1, "H2D into managed: %d %d", m[0], m[n - 1]);
    m[5] = 555; /* a host write, then a copy from it */
    KCUDA(cudaMemcpy(d, m, bytes, cudaMemcpyHostToDevice)); /* managed source named as host */
    KCUDA(cudaMemcpy(back.data(), d, bytes, cudaMemcpyDeviceToHost));
    KCHECK(back[5] == 555 && back[6] == 43, "copy from managed: %d %d", back[5], back[6]);
    KCUDA(cudaMemset(m, 0xff, bytes / 2));
    KCHECK(m[0] == -1 && m[n / 2 - 1] == -1 && m[n / 2] == 7 * (n / 2) + 1, "memset on managed: %d %d %d", m[0],
           m[n / 2 - 1], m[n / 2]);
    fill_index<<<(n + 255) / 256, 256>>>(d, n);
    KCUDA(cudaMemcpy(m, d, bytes, cudaMemcpyDeviceToDevice));
    KCUDA(cudaMemcpy(back.data(), m, bytes, cudaMemcpyDefault));
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += back[i] != 3 * i || m[i] != 3 * i;
    KCHECK(bad == 0, "copies through managed: %d wrong", bad);
    KCUDA(cudaMemcpy(h.data(), m, bytes, cudaMemcpyHostToHost)); /* managed as host memory */
    KCHECK(h[10] == 30, "host-to-host from managed: %d", h[10]);
    KCUDA(cudaFree(d));
    KCUDA(cudaFree(m));
}

static int range_int(cudaMemRangeAttribute a, const void *p, size_t n)
{
    int v = -100;
    KCUDA(cudaMemRangeGetAttribute(&v, sizeof v, a, p, n));
    return v;
}

/* Prefetches, advice, attributes and attachment. */
static void attributes(void)
{
    const int n = 1 << 18;
    size_t bytes = n * sizeof(int);
    int *m = nullptr, value = -1;
    KCUDA(cudaDeviceGetAttribute(&value, cudaDevAttrManagedMemory, 0));
    KCHECK(value == 1, "managedMemory %d", value);
    KCUDA(cudaDeviceGetAttribute(&value, cudaDevAttrConcurrentManagedAccess, 0));
    KCHECK(value == 0 || !through_cudarem(), "concurrentManagedAccess %d", value);
    KCUDA(cudaMallocManaged(&m, bytes));
    cudaPointerAttributes pa;
    KCUDA(cudaPointerGetAttributes(&pa, m + 10));
    KCHECK(pa.type == cudaMemoryTypeManaged && pa.devicePointer == m + 10 && pa.hostPointer == m + 10,
           "pointer attributes: type %d", (int)pa.type);
    KCHECK(range_int(cudaMemRangeAttributeLastPrefetchLocation, m, bytes) == cudaInvalidDeviceId,
           "never prefetched");
    for (int i = 0; i < n; i++)
        m[i] = i;
    cudaMemLocation dev = {cudaMemLocationTypeDevice, 0}, host = {cudaMemLocationTypeHost, 0};
    KCUDA(cudaMemPrefetchAsync(m, bytes, dev, 0, 0));
    KCHECK(range_int(cudaMemRangeAttributeLastPrefetchLocation, m, bytes) == 0, "prefetched to device 0");
    launch_add(m, n, 5);
    KCUDA(cudaMemPrefetchAsync(m, bytes, host, 0, 0));
    KCUDA(cudaDeviceSynchronize());
    KCHECK(range_int(cudaMemRangeAttributeLastPrefetchLocation, m, bytes) == cudaCpuDeviceId, "prefetched home");
    KCHECK(range_int(cudaMemRangeAttributeLastPrefetchLocationType, m, bytes) == cudaMemLocationTypeHost,
           "prefetch location type");
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += m[i] != i + 5;
    KCHECK(bad == 0, "after prefetches: %d wrong", bad);
    KCUDA(cudaMemAdvise(m, bytes, cudaMemAdviseSetReadMostly, dev));
    KCHECK(range_int(cudaMemRangeAttributeReadMostly, m, bytes) == 1, "read mostly");
    KCUDA(cudaMemAdvise(m, bytes / 2, cudaMemAdviseUnsetReadMostly, dev));
    KCHECK(range_int(cudaMemRangeAttributeReadMostly, m, bytes) == 0, "read mostly, half unset");
    KCUDA(cudaMemAdvise(m, bytes, cudaMemAdviseSetPreferredLocation, dev));
    KCHECK(range_int(cudaMemRangeAttributePreferredLocation, m, bytes) == 0, "preferred location");
    KCUDA(cudaMemAdvise(m, bytes, cudaMemAdviseSetAccessedBy, host));
    int by[3] = {7, 7, 7};
    KCUDA(cudaMemRangeGetAttribute(by, sizeof by, cudaMemRangeAttributeAccessedBy, m, bytes));
    KCHECK(by[0] == cudaCpuDeviceId && by[1] == cudaInvalidDeviceId, "accessed by %d %d", by[0], by[1]);
    KCHECK(cudaMemAdvise(m, bytes, (cudaMemoryAdvise)99, dev) == cudaErrorInvalidValue, "bad advice accepted");
    KCHECK(cudaMemPrefetchAsync(&value, sizeof value, dev, 0, 0) == cudaErrorInvalidValue,
           "prefetch of host memory accepted");
    cudaGetLastError();
    cudaStream_t s;
    KCUDA(cudaStreamCreate(&s));
    KCUDA(cudaStreamAttachMemAsync(s, m, 0, cudaMemAttachSingle));
    launch_add(m, n, 1, s);
    KCUDA(cudaStreamSynchronize(s));
    KCHECK(m[n - 1] == n - 1 + 6, "after an attached stream's kernel: %d", m[n - 1]);
    KCHECK(cudaStreamAttachMemAsync(s, m + 1, 0, cudaMemAttachSingle) == cudaErrorInvalidValue,
           "attachment inside an allocation accepted");
    cudaGetLastError();
    KCUDA(cudaStreamDestroy(s));
    KCUDA(cudaFree(m));
    int *none = m;
    KCUDA(cudaMallocManaged(&none, 0)); /* as NVIDIA's runtime answers */
    KCHECK(none == nullptr, "size 0 gave %p", (void *)none);
    KCHECK(cudaMallocManaged(&none, 64, 99) == cudaErrorInvalidValue, "bad flags accepted");
    cudaGetLastError();
}

/* The driver's API on the same memory. */
static void driver(void)
{
    typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t, unsigned);
    typedef CUresult (*attr_fn)(void *, CUpointer_attribute, CUdeviceptr);
    alloc_fn alloc = (alloc_fn)kcheck_driver_fn("cuMemAllocManaged", 6000);
    attr_fn attr = (attr_fn)kcheck_driver_fn("cuPointerGetAttribute", 4000);
    if (alloc == nullptr || attr == nullptr)
        return;
    CUdeviceptr p = 0;
    KCHECK(alloc(&p, 4096 * sizeof(int), CU_MEM_ATTACH_GLOBAL) == CUDA_SUCCESS, "cuMemAllocManaged");
    int *x = (int *)p, managed = -1;
    KCHECK(attr(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, p) == CUDA_SUCCESS && managed == 1, "IS_MANAGED %d",
           managed);
    for (int i = 0; i < 4096; i++)
        x[i] = 2 * i;
    launch_add(x, 4096, 1);
    KCUDA(cudaDeviceSynchronize());
    KCHECK(x[0] == 1 && x[4095] == 8191, "driver allocation after a kernel: %d %d", x[0], x[4095]);
    KCUDA(cudaFree(x));
}

/* A freed allocation's addresses come back in a new one, which reads zero. */
static void reuse(void)
{
    int *a = nullptr, *b = nullptr;
    KCUDA(cudaMallocManaged(&a, 1 << 20));
    for (int i = 0; i < (1 << 18); i++)
        a[i] = 99;
    launch_add(a, 1 << 18, 1);
    KCUDA(cudaDeviceSynchronize());
    KCHECK(a[123] == 100, "before free: %d", a[123]);
    KCUDA(cudaFree(a));
    KCUDA(cudaMallocManaged(&b, 1 << 20));
    int nonzero = 0;
    for (int i = 0; i < (1 << 18); i++)
        nonzero += b[i] != 0;
    KCHECK(nonzero == 0, "a new allocation (at %p, was %p) holds %d old values", (void *)b, (void *)a, nonzero);
    KCUDA(cudaFree(b));
}

/* Mapped host memory: kernels reach it through cudaHostGetDevicePointer's pointer. */
static void mapped(void)
{
    const int n = 70000;
    int *h = nullptr, *d = nullptr, *dev = nullptr, value = 0;
    unsigned flags = 0;
    KCUDA(cudaDeviceGetAttribute(&value, cudaDevAttrCanMapHostMemory, 0));
    KCHECK(value == 1, "canMapHostMemory %d", value);
    KCUDA(cudaHostAlloc(&h, n * sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable));
    for (int i = 0; i < n; i++)
        h[i] = 4 * i;
    KCUDA(cudaHostGetDevicePointer((void **)&d, h, 0));
    KCHECK(d == h, "device pointer %p of host pointer %p", (void *)d, (void *)h);
    launch_add(d, n, 3);
    KCUDA(cudaDeviceSynchronize());
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += h[i] != 4 * i + 3;
    KCHECK(bad == 0, "mapped memory after a kernel: %d wrong (h[1] = %d)", bad, h[1]);
    KCUDA(cudaHostGetFlags(&flags, h + 5));
    KCHECK(flags == (cudaHostAllocMapped | cudaHostAllocPortable), "flags %u", flags);
    cudaPointerAttributes pa;
    KCUDA(cudaPointerGetAttributes(&pa, h));
    KCHECK(pa.type == cudaMemoryTypeHost && pa.hostPointer == h && pa.devicePointer == h, "attributes: type %d",
           (int)pa.type);
    KCUDA(cudaMalloc(&dev, n * sizeof(int)));
    KCUDA(cudaMemcpy(dev, h, n * sizeof(int), cudaMemcpyHostToDevice));
    KCUDA(cudaMemset(h, 0, n * sizeof(int)));
    KCUDA(cudaMemcpy(h, dev, n * sizeof(int), cudaMemcpyDeviceToHost));
    KCHECK(h[n - 1] == 4 * (n - 1) + 3, "copies through mapped memory: %d", h[n - 1]);
    KCHECK(cudaFree(h) == cudaErrorInvalidValue, "cudaFree of host memory accepted");
    cudaGetLastError();
    KCUDA(cudaFreeHost(h));
    KCUDA(cudaFree(dev));
    /* registered memory made mapped: the device reaches it through its device pointer */
    int *reg = nullptr, *regdev = nullptr;
    void *none_reg = nullptr;
    size_t page = (size_t)sysconf(_SC_PAGESIZE), rn = 3 * page / sizeof(int) + 100;
    KCHECK(posix_memalign((void **)&reg, page, rn * sizeof(int) + page) == 0, "posix_memalign");
    for (size_t i = 0; i < rn; i++)
        reg[i] = (int)i;
    KCUDA(cudaHostRegister(reg + 10, (rn - 10) * sizeof(int), cudaHostRegisterMapped));
    KCUDA(cudaHostGetDevicePointer((void **)&regdev, reg + 10, 0));
    launch_add(regdev, (int)(rn - 10), 1000);
    KCUDA(cudaDeviceSynchronize());
    KCHECK(reg[9] == 9 && reg[10] == 1010 && reg[rn - 1] == (int)rn - 1 + 1000,
           "registered mapped memory after a kernel: %d %d %d", reg[9], reg[10], reg[rn - 1]);
    reg[11] = -5; /* the host's write reaches the device before its next use */
    launch_add(regdev, 2, 1);
    KCUDA(cudaDeviceSynchronize());
    KCHECK(reg[11] == -4 && reg[10] == 1011, "after a host write: %d %d", reg[11], reg[10]);
    KCUDA(cudaHostUnregister(reg + 10));
    reg[12] += 1; /* ordinary memory again, holding the device's last bytes */
    KCHECK(reg[12] == 1013 && reg[10] == 1011, "after cudaHostUnregister: %d %d", reg[12], reg[10]);
    free(reg);
    /* a file's pages stay the file's: cudarem does not give the device a twin of them */
    char path[] = "/tmp/managed_test_XXXXXX";
    int fd = mkstemp(path);
    KCHECK(fd >= 0 && ftruncate(fd, (off_t)page) == 0, "a scratch file");
    char *file = (char *)mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    KCHECK(file != MAP_FAILED, "mmap of the file");
    if (fd >= 0 && file != MAP_FAILED) {
        KCUDA(cudaHostRegister(file, page, cudaHostRegisterMapped));
        if (through_cudarem()) {
            KCHECK(cudaHostGetDevicePointer(&none_reg, file, 0) == cudaErrorNotSupported,
                   "a file's pages were given a device twin");
            cudaGetLastError();
        }
        file[3] = 'x';
        char byte = 0;
        KCHECK(pread(fd, &byte, 1, 3) == 1 && byte == 'x', "a write to the registered file mapping reached the file");
        KCUDA(cudaHostUnregister(file));
        munmap(file, page);
    }
    if (fd >= 0) {
        close(fd);
        unlink(path);
    }
    int *plain = nullptr;
    void *none = nullptr;
    KCUDA(cudaMallocHost(&plain, 4096));
    if (through_cudarem()) {
        KCHECK(cudaHostGetDevicePointer(&none, plain, 0) == cudaErrorNotSupported,
               "page-locked memory without the flag is not the device's");
        cudaGetLastError();
    }
    KCUDA(cudaFreeHost(plain));
    typedef CUresult (*halloc_fn)(void **, size_t, unsigned);
    typedef CUresult (*hptr_fn)(CUdeviceptr *, void *, unsigned);
    typedef CUresult (*hfree_fn)(void *);
    halloc_fn halloc = (halloc_fn)kcheck_driver_fn("cuMemHostAlloc", 3020);
    hptr_fn hptr = (hptr_fn)kcheck_driver_fn("cuMemHostGetDevicePointer", 3020);
    hfree_fn hfree = (hfree_fn)kcheck_driver_fn("cuMemFreeHost", 2000);
    void *hp = nullptr;
    CUdeviceptr dp = 0;
    if (halloc == nullptr || hptr == nullptr || hfree == nullptr)
        return;
    KCHECK(halloc(&hp, 4096, CU_MEMHOSTALLOC_DEVICEMAP) == CUDA_SUCCESS, "cuMemHostAlloc");
    KCHECK(hptr(&dp, hp, 0) == CUDA_SUCCESS && dp == (CUdeviceptr)hp, "cuMemHostGetDevicePointer");
    ((int *)hp)[10] = 7;
    launch_add((int *)dp, 1024, 1);
    KCUDA(cudaDeviceSynchronize());
    KCHECK(((int *)hp)[10] == 8 && ((int *)hp)[11] == 1, "driver mapped memory: %d %d", ((int *)hp)[10],
           ((int *)hp)[11]);
    KCHECK(hfree(hp) == CUDA_SUCCESS, "cuMemFreeHost");
}

/* The program's own SIGSEGV handler, installed after managed memory is in use (as
 * Python's faulthandler is under pytest): its faults still reach it, and managed
 * memory's still reach cudarem. */
static char *guarded;
static size_t guarded_len;
static volatile sig_atomic_t handled;

static void own_handler(int, siginfo_t *si, void *)
{
    char *a = (char *)si->si_addr;
    if (a >= guarded && a < guarded + guarded_len) {
        mprotect(guarded, guarded_len, PROT_READ | PROT_WRITE);
        handled = handled + 1;
        return;
    }
    signal(SIGSEGV, SIG_DFL); /* not ours either: die of it */
}

static void chained(void)
{
    int *m = nullptr;
    KCUDA(cudaMallocManaged(&m, 1 << 20));
    m[0] = 1; /* cudarem's handler is in place from here */
    guarded_len = (size_t)sysconf(_SC_PAGESIZE);
    guarded = (char *)mmap(nullptr, guarded_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct sigaction sa, before;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = own_handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    KCHECK(sigaction(SIGSEGV, &sa, &before) == 0, "sigaction");
    guarded[10] = 42; /* the program's own fault */
    KCHECK(handled == 1 && guarded[10] == 42, "the program's handler ran %d times", (int)handled);
    launch_add(m, 1 << 18, 5);
    KCUDA(cudaDeviceSynchronize());
    KCHECK(m[0] == 6 && m[(1 << 18) - 1] == 5, "managed memory after the program's handler: %d %d", m[0],
           m[(1 << 18) - 1]);
    KCHECK(handled == 1, "managed memory's faults reached the program's handler (%d)", (int)handled);
    struct sigaction now;
    KCHECK(sigaction(SIGSEGV, &before, &now) == 0 && now.sa_sigaction == own_handler,
           "sigaction answers with the program's own handler");
    munmap(guarded, guarded_len);
    KCUDA(cudaFree(m));
}

/* A touch before the program synchronised, while a kernel on a non-blocking stream
 * may still run: a GPU without concurrent access would stop the program; through
 * cudarem the touch waits for the device and reads what the kernel wrote, never
 * bytes from before it. (A local GPU with concurrent access races: cudarem only.) */
static void touch_while_running(void)
{
    const int n = 1 << 18;
    int *x = nullptr;
    cudaStream_t s;
    if (!through_cudarem())
        return;
    KCUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    KCUDA(cudaMallocManaged(&x, n * sizeof(int)));
    for (int round = 1; round <= 3; round++) {
        fill_index<<<(n + 255) / 256, 256, 0, s>>>(x, n);
        add<<<(n + 255) / 256, 256, 0, s>>>(x, n, round);
        int last = x[n - 1], first = x[0]; /* no synchronisation first */
        KCHECK(first == round && last == 3 * (n - 1) + round, "round %d read %d %d before synchronising", round,
               first, last);
    }
    KCUDA(cudaStreamSynchronize(s));
    KCUDA(cudaStreamDestroy(s));
    KCUDA(cudaFree(x));
}

/* A forked child does not share managed memory with its parent: a write there ends
 * the child (no memory is there) instead of reaching the parent's bytes. cudarem
 * only: a local driver's behaviour after fork is its own. */
static void forked(void)
{
    int *x = nullptr;
    if (!through_cudarem())
        return;
    KCUDA(cudaMallocManaged(&x, 4096 * sizeof(int)));
    x[0] = 41;
    pid_t child = fork();
    if (child == 0) {
        x[0] = 99; /* must not reach the parent */
        _exit(0);
    }
    int status = 0;
    KCHECK(child > 0 && waitpid(child, &status, 0) == child, "fork and wait");
    /* ended by the fault (a sanitizer's handler reports it and exits non-zero instead) */
    KCHECK(!(WIFEXITED(status) && WEXITSTATUS(status) == 0), "the child's write to managed memory succeeded");
    KCHECK(x[0] == 41, "the child's write reached the parent: %d", x[0]);
    launch_add(x, 1, 1);
    KCUDA(cudaDeviceSynchronize());
    KCHECK(x[0] == 42, "managed memory after a fork: %d", x[0]);
    KCUDA(cudaFree(x));
}

/* cudaDeviceReset frees managed memory with the rest; what is allocated after it works. */
static void after_reset(void)
{
    int *a = nullptr, *b = nullptr;
    KCUDA(cudaMallocManaged(&a, 1 << 20));
    for (int i = 0; i < 1024; i++)
        a[i] = 7;
    launch_add(a, 1024, 1);
    KCUDA(cudaDeviceSynchronize());
    KCHECK(a[5] == 8, "before the reset: %d", a[5]);
    KCUDA(cudaDeviceReset());
    KCUDA(cudaMallocManaged(&b, 1 << 20));
    KCHECK(b[5] == 0, "after the reset a new allocation reads %d", b[5]);
    b[5] = 3;
    launch_add(b, 1024, 1);
    KCUDA(cudaDeviceSynchronize());
    KCHECK(b[5] == 4 && b[6] == 1, "after the reset: %d %d", b[5], b[6]);
    KCUDA(cudaFree(b));
}

/* Threads each with a buffer of their own, each round written, added to, read. */
static void threads(void)
{
    const int nthreads = 8, n = 40000, nrounds = 6;
    std::vector<std::thread> pool;
    std::vector<int> bad(nthreads, 0), first(nthreads, -1), seen(nthreads, 0), round(nthreads, 0);
    for (int t = 0; t < nthreads; t++)
        pool.emplace_back([t, &bad, &first, &seen, &round] {
            int *x = nullptr;
            cudaStream_t s;
            if (cudaMallocManaged(&x, n * sizeof(int)) != cudaSuccess || cudaStreamCreate(&s) != cudaSuccess) {
                bad[t] = -1;
                return;
            }
            for (int r = 0; r < nrounds; r++) {
                for (int i = 0; i < n; i++)
                    x[i] = t * 1000 + r + i;
                add<<<(n + 255) / 256, 256, 0, s>>>(x, n, t);
                cudaStreamSynchronize(s);
                for (int i = 0; i < n; i++)
                    if (x[i] != t * 1000 + r + i + t && bad[t]++ == 0) {
                        first[t] = i;
                        seen[t] = x[i];
                        round[t] = r;
                    }
            }
            cudaStreamDestroy(s);
            cudaFree(x);
        });
    for (auto &th : pool)
        th.join();
    for (int t = 0; t < nthreads; t++)
        KCHECK(bad[t] == 0, "thread %d: %d values wrong, first x[%d] = %d in round %d (want %d)", t, bad[t],
               first[t], seen[t], round[t], t * 1000 + round[t] + first[t] + t);
}

/* The pattern the suite counts: 1 MiB written by the host (every 64 KiB block
 * once), a kernel, the whole of it read back in order, and read again. */
static void counts(void)
{
    const int n = (1 << 20) / sizeof(int);
    int *x = nullptr;
    KCUDA(cudaMallocManaged(&x, n * sizeof(int)));
    for (int i = 0; i < n; i++)
        x[i] = i;
    launch_add(x, n, 2);
    KCUDA(cudaDeviceSynchronize());
    long long sum = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n; i++)
            sum += x[i];
    KCHECK(sum == 2 * ((long long)n * (n - 1) / 2 + 2LL * n), "sum %lld", sum);
    KCUDA(cudaFree(x));
}

int main(int argc, char **argv)
{
    if (argc > 1 && std::strcmp(argv[1], "threads") == 0) {
        threads();
        return kcheck_finish("managed");
    }
    if (argc > 1 && std::strcmp(argv[1], "counts") == 0) {
        counts();
        return kcheck_finish("managed");
    }
    variables();
    rounds();
    copies();
    attributes();
    driver();
    reuse();
    mapped();
    chained();
    threads();
    touch_while_running();
    forked();
    after_reset();
    return kcheck_finish("managed");
}
