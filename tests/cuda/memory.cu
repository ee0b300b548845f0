/* memory.cu -- self-checking test of CUDA allocations and pointer attributes.
 *
 * Covers cudaMalloc/cudaFree (alignment, size 0, huge sizes), cudaMallocPitch,
 * cudaMallocHost/cudaHostAlloc (flags, page alignment)/cudaFreeHost,
 * cudaHostRegister/cudaHostUnregister, cudaHostGetDevicePointer (reported,
 * not judged: a remote GPU cannot map client memory) and
 * cudaPointerGetAttributes for device, pinned, registered and plain memory.
 */
#include "cuda_check.h"
#include <cstdlib>

static void check_malloc(void)
{
    void *a = NULL, *b = NULL;
    CT_OK(cudaMalloc(&a, 1 << 20));
    CT_OK(cudaMalloc(&b, 1000));
    CT_TRUE(a != NULL);
    CT_TRUE(b != NULL);
    CT_EQ((uintptr_t)a % 256, 0);
    CT_EQ((uintptr_t)b % 256, 0);
    /* Live allocations never overlap. */
    uintptr_t ua = (uintptr_t)a, ub = (uintptr_t)b;
    CT_TRUE(ua + (1 << 20) <= ub || ub + 1000 <= ua);
    CT_OK(cudaFree(a));
    CT_OK(cudaFree(b));

    void *z = (void *)0x1;
    CT_OK(cudaMalloc(&z, 0));
    CT_TRUE(z == NULL);
    CT_OK(cudaFree(NULL));
    CT_ERR(cudaMalloc(NULL, 16), cudaErrorInvalidValue);
    CT_ERR(cudaGetLastError(), cudaErrorInvalidValue);

    void *huge = NULL;
    CT_ERR(cudaMalloc(&huge, (size_t)1 << 60), cudaErrorMemoryAllocation);
    CT_ERR(cudaGetLastError(), cudaErrorMemoryAllocation);
    /* Out of memory is not sticky: the context keeps working. */
    CT_OK(cudaMalloc(&a, 4096));
    CT_OK(cudaFree(a));
}

static void check_pitch(void)
{
    const size_t widths[] = { 1, 3, 100, 512, 1000, 4097 };
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
        void *p = NULL;
        size_t pitch = 0;
        CT_OK(cudaMallocPitch(&p, &pitch, widths[i], 7));
        CT_TRUE(p != NULL);
        CT_TRUE(pitch >= widths[i]);
        CT_OK(cudaMemset2D(p, pitch, 0x5a, widths[i], 7));
        CT_OK(cudaFree(p));
    }
    size_t pitch = 0;
    CT_ERR(cudaMallocPitch(NULL, &pitch, 16, 16), cudaErrorInvalidValue);
    (void)cudaGetLastError();
}

/* Pinned host memory of every allocation flavour is page aligned and writable. */
static void check_host_alloc(void)
{
    void *h = NULL;
    CT_OK(cudaMallocHost(&h, 1 << 20));
    CT_TRUE(h != NULL);
    if (h != NULL) {
        CT_EQ((uintptr_t)h % 4096, 0);
        ct_fill(h, 1 << 20, 1);
        CT_PATTERN(h, 1 << 20, 1);
    }
    CT_OK(cudaFreeHost(h));

    const unsigned flags[] = { cudaHostAllocDefault, cudaHostAllocPortable,
                               cudaHostAllocMapped, cudaHostAllocWriteCombined,
                               cudaHostAllocPortable | cudaHostAllocMapped };
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        void *p = NULL;
        CT_OK(cudaHostAlloc(&p, 3 * 4096 + 5, flags[i]));
        CT_TRUE(p != NULL);
        if (p == NULL)
            continue;
        CT_EQ((uintptr_t)p % 4096, 0);
        memset(p, 0x77, 3 * 4096 + 5);
        CT_BYTES(p, 3 * 4096 + 5, 0x77);
        unsigned got = 0;
        CT_OK(cudaHostGetFlags(&got, p));
        CT_EQ(got & flags[i], flags[i]);
        CT_OK(cudaFreeHost(p));
    }
    void *p = NULL;
    CT_ERR(cudaHostAlloc(&p, 4096, 0x80000000u), cudaErrorInvalidValue);
    CT_ERR(cudaGetLastError(), cudaErrorInvalidValue);
}

/* Reports cudaHostGetDevicePointer's answer; only consistency is required. */
static void check_host_device_pointer(void)
{
    void *h = NULL;
    CT_OK(cudaHostAlloc(&h, 8192, cudaHostAllocMapped));
    void *d1 = NULL, *d2 = NULL;
    cudaError_t e1 = cudaHostGetDevicePointer(&d1, h, 0);
    cudaError_t e2 = cudaHostGetDevicePointer(&d2, h, 0);
    printf("INFO cudaHostGetDevicePointer: %s\n", cudaGetErrorName(e1));
    CT_EQ(e1, e2);
    if (e1 == cudaSuccess) {
        CT_TRUE(d1 != NULL);
        CT_TRUE(d1 == d2);
    }
    (void)cudaGetLastError();
    /* Whatever the answer, the error must not poison later calls. */
    void *d = NULL;
    CT_OK(cudaMalloc(&d, 64));
    CT_OK(cudaFree(d));
    CT_OK(cudaFreeHost(h));
}

static void check_register(void)
{
    const size_t sz = 16 * 4096;
    void *buf = NULL;
    CT_EQ(posix_memalign(&buf, 4096, sz), 0);
    CT_OK(cudaHostRegister(buf, sz, cudaHostRegisterDefault));
    CT_ERR(cudaHostRegister(buf, sz, cudaHostRegisterDefault),
           cudaErrorHostMemoryAlreadyRegistered);
    (void)cudaGetLastError();

    cudaPointerAttributes a;
    memset(&a, 0, sizeof a);
    CT_OK(cudaPointerGetAttributes(&a, buf));
    CT_EQ(a.type, cudaMemoryTypeHost);
    CT_TRUE(a.hostPointer == buf);

    /* Registered memory is a valid copy source and target. */
    void *d = NULL;
    CT_OK(cudaMalloc(&d, sz));
    ct_fill(buf, sz, 9);
    CT_OK(cudaMemcpy(d, buf, sz, cudaMemcpyHostToDevice));
    memset(buf, 0, sz);
    CT_OK(cudaMemcpy(buf, d, sz, cudaMemcpyDeviceToHost));
    CT_PATTERN(buf, sz, 9);
    CT_OK(cudaFree(d));

    CT_OK(cudaHostUnregister(buf));
    CT_ERR(cudaHostUnregister(buf), cudaErrorHostMemoryNotRegistered);
    CT_ERR(cudaGetLastError(), cudaErrorHostMemoryNotRegistered);
    memset(&a, 0, sizeof a);
    CT_OK(cudaPointerGetAttributes(&a, buf));
    CT_EQ(a.type, cudaMemoryTypeUnregistered);
    free(buf);
}

static void check_attributes(int ndev)
{
    cudaPointerAttributes a;
    void *d = NULL;
    CT_OK(cudaMalloc(&d, 4096));
    memset(&a, 0, sizeof a);
    CT_OK(cudaPointerGetAttributes(&a, d));
    CT_EQ(a.type, cudaMemoryTypeDevice);
    CT_EQ(a.device, 0);
    CT_TRUE(a.devicePointer == d);
    CT_TRUE(a.hostPointer == NULL);
    /* An interior pointer belongs to the same allocation. */
    memset(&a, 0, sizeof a);
    CT_OK(cudaPointerGetAttributes(&a, (char *)d + 100));
    CT_EQ(a.type, cudaMemoryTypeDevice);
    CT_TRUE(a.devicePointer == (char *)d + 100);
    CT_OK(cudaFree(d));

    void *h = NULL;
    CT_OK(cudaMallocHost(&h, 4096));
    memset(&a, 0, sizeof a);
    CT_OK(cudaPointerGetAttributes(&a, h));
    CT_EQ(a.type, cudaMemoryTypeHost);
    CT_EQ(a.device, 0);
    CT_TRUE(a.hostPointer == h);
    CT_OK(cudaFreeHost(h));

    void *m = malloc(100);
    memset(&a, 0, sizeof a);
    CT_OK(cudaPointerGetAttributes(&a, m));
    CT_EQ(a.type, cudaMemoryTypeUnregistered);
    free(m);
    int on_stack = 0;
    memset(&a, 0, sizeof a);
    CT_OK(cudaPointerGetAttributes(&a, &on_stack));
    CT_EQ(a.type, cudaMemoryTypeUnregistered);
    CT_ERR(cudaPointerGetAttributes(NULL, &on_stack), cudaErrorInvalidValue);
    (void)cudaGetLastError();

    if (ndev >= 2) {
        /* The device field names the device the memory lives on. */
        CT_OK(cudaSetDevice(1));
        CT_OK(cudaMalloc(&d, 4096));
        CT_OK(cudaSetDevice(0));
        memset(&a, 0, sizeof a);
        CT_OK(cudaPointerGetAttributes(&a, d));
        CT_EQ(a.type, cudaMemoryTypeDevice);
        CT_EQ(a.device, 1);
        CT_OK(cudaFree(d));
    }
}

int main(void)
{
    int n = 0;
    CT_OK(cudaGetDeviceCount(&n));
    if (n < 1) {
        ct_fail(__FILE__, __LINE__, "device count", ">= 1", "0");
        return ct_finish("memory");
    }
    check_malloc();
    check_pitch();
    check_host_alloc();
    check_host_device_pointer();
    check_register();
    check_attributes(n);
    CT_ERR(cudaGetLastError(), cudaSuccess);
    return ct_finish("memory");
}
