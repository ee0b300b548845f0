/* check_emu.c -- unit tests of the CPU-emulated CUDA device (libcudarem-emu.so): results
 * and error codes of every function it exports.
 *
 * The suite runs with CUDAREM_EMU_DEVICES=2 and CUDAREM_EMU_MEM=64M, set before the
 * library first reads them. Each test starts from a reset of both devices, so the
 * tests also pass with CK_FORK=no.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "common/crm_emu_window.h"
#include "server/emu/crm_emu.h"
#include "tests/unit/crm_check.h"

#define EMU_MEM ((size_t)64 << 20)
#define CK_CUDA(call, want) ck_assert_int_eq((int)(call), (int)(want))
#define CK_OK(call) CK_CUDA(call, cudaSuccess)

static void setup(void)
{
    for (int d = 1; d >= 0; d--) {
        CK_OK(cudaSetDevice(d));
        CK_OK(cudaDeviceReset());
    }
    (void)cudaGetLastError();
}

/* Returns 1 when the n bytes at p can be read (a write(2) from them does not EFAULT). */
static int readable(const void *p, size_t n)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    ssize_t w = write(fds[1], p, n);
    int err = errno;
    close(fds[0]);
    close(fds[1]);
    return w == (ssize_t)n ? 1 : (err == EFAULT ? 0 : -1);
}

static void *dmalloc(size_t n)
{
    void *p = NULL;
    CK_OK(cudaMalloc(&p, n));
    ck_assert_ptr_nonnull(p);
    return p;
}

/* ------------------------------------------------------------------ configuration */

START_TEST(test_env_parse_size)
{
    size_t v = 0;
    ck_assert_int_eq(crm__emu_parse_size("64M", &v), 0);
    ck_assert_uint_eq(v, (size_t)64 << 20);
    ck_assert_int_eq(crm__emu_parse_size("2k", &v), 0);
    ck_assert_uint_eq(v, 2048);
    ck_assert_int_eq(crm__emu_parse_size("3GB", &v), 0);
    ck_assert_uint_eq(v, (size_t)3 << 30);
    ck_assert_int_eq(crm__emu_parse_size("1T", &v), 0);
    ck_assert_uint_eq(v, (size_t)1 << 40);
    ck_assert_int_eq(crm__emu_parse_size("4096", &v), 0);
    ck_assert_uint_eq(v, 4096);
    const char *bad[] = { "", "abc", "12X", "0", "-5", " 5", "5MM", "99999999999999T",
                          "99999999999999999999999" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_int_eq(crm__emu_parse_size(bad[i], &v), -1);
    ck_assert_int_eq(crm__emu_parse_size(NULL, &v), -1);
}
END_TEST

START_TEST(test_env_parse_devices)
{
    ck_assert_int_eq(crm__emu_parse_devices(NULL, 1), 1);
    ck_assert_int_eq(crm__emu_parse_devices("3", 1), 3);
    ck_assert_int_eq(crm__emu_parse_devices("0", 1), 1);
    ck_assert_int_eq(crm__emu_parse_devices("9", 1), 8);
    ck_assert_int_eq(crm__emu_parse_devices("x", 1), 1);
    ck_assert_int_eq(crm__emu_parse_devices("", 1), 1);
}
END_TEST

/* ------------------------------------------------------------------ device */

START_TEST(test_device_count_and_select)
{
    int n = 0, d = -1;
    CK_OK(cudaGetDeviceCount(&n));
    ck_assert_int_eq(n, 2);
    CK_OK(cudaGetDevice(&d));
    ck_assert_int_eq(d, 0);
    CK_OK(cudaSetDevice(1));
    CK_OK(cudaGetDevice(&d));
    ck_assert_int_eq(d, 1);
    CK_CUDA(cudaSetDevice(2), cudaErrorInvalidDevice);
    CK_CUDA(cudaSetDevice(-1), cudaErrorInvalidDevice);
    CK_OK(cudaGetDevice(&d));
    ck_assert_int_eq(d, 1);
    CK_CUDA(cudaGetLastError(), cudaErrorInvalidDevice);
    CK_CUDA(cudaGetDeviceCount(NULL), cudaErrorInvalidValue);
    CK_CUDA(cudaGetDevice(NULL), cudaErrorInvalidValue);
}
END_TEST

static void *thread_get_device(void *arg)
{
    int *out = arg;
    if (cudaGetDevice(out) != cudaSuccess)
        *out = -1;
    return NULL;
}

START_TEST(test_device_current_is_per_thread)
{
    int seen = -1;
    pthread_t t;
    CK_OK(cudaSetDevice(1));
    ck_assert_int_eq(pthread_create(&t, NULL, thread_get_device, &seen), 0);
    pthread_join(t, NULL);
    ck_assert_int_eq(seen, 0);
}
END_TEST

START_TEST(test_device_versions)
{
    int v = 0;
    CK_OK(cudaDriverGetVersion(&v));
    ck_assert_int_eq(v, CUDART_VERSION);
    v = 0;
    CK_OK(cudaRuntimeGetVersion(&v));
    ck_assert_int_eq(v, CUDART_VERSION);
    CK_CUDA(cudaDriverGetVersion(NULL), cudaErrorInvalidValue);
    CK_CUDA(cudaRuntimeGetVersion(NULL), cudaErrorInvalidValue);
}
END_TEST

START_TEST(test_device_flags)
{
    unsigned f = 0xdead;
    CK_OK(cudaGetDeviceFlags(&f));
    ck_assert_uint_eq(f, cudaDeviceMapHost);
    CK_OK(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync | cudaDeviceLmemResizeToMax));
    CK_OK(cudaGetDeviceFlags(&f));
    ck_assert_uint_eq(f, cudaDeviceScheduleBlockingSync | cudaDeviceLmemResizeToMax |
                             cudaDeviceMapHost);
    CK_CUDA(cudaSetDeviceFlags(0x100), cudaErrorInvalidValue);
    CK_CUDA(cudaSetDeviceFlags(cudaDeviceScheduleSpin | cudaDeviceScheduleYield),
            cudaErrorInvalidValue);
    CK_CUDA(cudaSetDeviceFlags(cudaDeviceScheduleMask), cudaErrorInvalidValue);
    CK_CUDA(cudaGetDeviceFlags(NULL), cudaErrorInvalidValue);
    CK_OK(cudaSetDevice(1)); /* flags are per device */
    CK_OK(cudaGetDeviceFlags(&f));
    ck_assert_uint_eq(f, cudaDeviceMapHost);
    CK_OK(cudaSetDevice(0));
    CK_OK(cudaDeviceReset());
    CK_OK(cudaGetDeviceFlags(&f));
    ck_assert_uint_eq(f, cudaDeviceMapHost);
}
END_TEST

START_TEST(test_device_synchronize)
{
    CK_OK(cudaDeviceSynchronize());
    CK_OK(cudaGetLastError());
}
END_TEST

START_TEST(test_device_reset_frees_everything_of_current_device)
{
    void *d0 = dmalloc(4096), *h0 = NULL, *d1;
    cudaStream_t s0, s1;
    cudaEvent_t e0, e1;
    CK_OK(cudaMallocHost(&h0, 100));
    CK_OK(cudaStreamCreate(&s0));
    CK_OK(cudaEventCreate(&e0));
    CK_OK(cudaSetDevice(1));
    d1 = dmalloc(4096);
    CK_OK(cudaStreamCreate(&s1));
    CK_OK(cudaEventCreate(&e1));
    CK_OK(cudaSetDevice(0));
    CK_OK(cudaDeviceReset());
    size_t fr, tot;
    CK_OK(cudaMemGetInfo(&fr, &tot));
    ck_assert_uint_eq(fr, tot);
    ck_assert_int_eq(readable(d0, 1), 0);
    CK_CUDA(cudaFree(d0), cudaErrorInvalidValue);
    CK_CUDA(cudaFreeHost(h0), cudaErrorInvalidValue);
    CK_CUDA(cudaStreamQuery(s0), cudaErrorInvalidResourceHandle);
    CK_CUDA(cudaEventQuery(e0), cudaErrorInvalidResourceHandle);
    /* device 1 is untouched */
    CK_OK(cudaStreamQuery(s1));
    CK_OK(cudaEventQuery(e1));
    CK_OK(cudaMemset(d1, 1, 4096));
    CK_OK(cudaFree(d1));
}
END_TEST

/* ------------------------------------------------------------------ properties */

START_TEST(test_props_values)
{
    struct cudaDeviceProp p;
    memset(&p, 0x5a, sizeof p);
    CK_OK(cudaGetDeviceProperties(&p, 0));
    ck_assert_str_eq(p.name, "cudarem emulated device (CPU)");
    ck_assert_int_eq(p.major, 9);
    ck_assert_int_eq(p.minor, 0);
    ck_assert_int_eq(p.multiProcessorCount, (int)sysconf(_SC_NPROCESSORS_ONLN));
    ck_assert_uint_eq(p.totalGlobalMem, EMU_MEM);
    ck_assert_int_eq(p.warpSize, 32);
    ck_assert_int_eq(p.maxThreadsPerBlock, 1024);
    ck_assert_int_eq(p.maxThreadsDim[0], 1024);
    ck_assert_int_eq(p.maxThreadsDim[1], 1024);
    ck_assert_int_eq(p.maxThreadsDim[2], 64);
    ck_assert_int_eq(p.maxGridSize[0], 2147483647);
    ck_assert_int_eq(p.maxGridSize[1], 65535);
    ck_assert_int_eq(p.maxGridSize[2], 65535);
    ck_assert_uint_eq(p.sharedMemPerBlock, 48 * 1024);
    ck_assert_uint_eq(p.textureAlignment, 512);
    ck_assert_uint_eq(p.texturePitchAlignment, 32);
    ck_assert_uint_gt(p.memPitch, 0);
    ck_assert_int_eq(p.unifiedAddressing, 1);
    ck_assert_int_eq(p.concurrentKernels, 1);
    ck_assert_int_gt(p.asyncEngineCount, 0);
    ck_assert_int_eq(p.pciBusID, 1);
    ck_assert_int_eq(p.reserved[0], 0);
    ck_assert_int_eq(p.reserved[55], 0);
    CK_OK(cudaGetDeviceProperties(&p, 1));
    ck_assert_int_eq(p.pciBusID, 2);
    ck_assert_uint_eq(p.totalGlobalMem, EMU_MEM);
}
END_TEST

START_TEST(test_props_errors)
{
    struct cudaDeviceProp p;
    CK_CUDA(cudaGetDeviceProperties(&p, 2), cudaErrorInvalidDevice);
    CK_CUDA(cudaGetDeviceProperties(&p, -1), cudaErrorInvalidDevice);
    CK_CUDA(cudaGetDeviceProperties(NULL, 0), cudaErrorInvalidValue);
    CK_CUDA(cudaPeekAtLastError(), cudaErrorInvalidValue);
}
END_TEST

static int attr(enum cudaDeviceAttr a, int dev)
{
    int v = -12345;
    CK_OK(cudaDeviceGetAttribute(&v, a, dev));
    return v;
}

START_TEST(test_attr_match_props)
{
    struct cudaDeviceProp p;
    CK_OK(cudaGetDeviceProperties(&p, 1));
    ck_assert_int_eq(attr(cudaDevAttrMaxThreadsPerBlock, 1), p.maxThreadsPerBlock);
    ck_assert_int_eq(attr(cudaDevAttrMaxBlockDimZ, 1), p.maxThreadsDim[2]);
    ck_assert_int_eq(attr(cudaDevAttrMaxGridDimX, 1), p.maxGridSize[0]);
    ck_assert_int_eq(attr(cudaDevAttrMaxGridDimY, 1), p.maxGridSize[1]);
    ck_assert_int_eq(attr(cudaDevAttrMaxSharedMemoryPerBlock, 1), (int)p.sharedMemPerBlock);
    ck_assert_int_eq(attr(cudaDevAttrTotalConstantMemory, 1), (int)p.totalConstMem);
    ck_assert_int_eq(attr(cudaDevAttrWarpSize, 1), p.warpSize);
    ck_assert_int_eq(attr(cudaDevAttrMaxPitch, 1), (int)p.memPitch);
    ck_assert_int_eq(attr(cudaDevAttrTextureAlignment, 1), (int)p.textureAlignment);
    ck_assert_int_eq(attr(cudaDevAttrTexturePitchAlignment, 1), (int)p.texturePitchAlignment);
    ck_assert_int_eq(attr(cudaDevAttrMultiProcessorCount, 1), p.multiProcessorCount);
    ck_assert_int_eq(attr(cudaDevAttrComputeCapabilityMajor, 1), 9);
    ck_assert_int_eq(attr(cudaDevAttrComputeCapabilityMinor, 1), 0);
    ck_assert_int_eq(attr(cudaDevAttrPciBusId, 1), p.pciBusID);
    ck_assert_int_eq(attr(cudaDevAttrUnifiedAddressing, 1), 1);
    ck_assert_int_eq(attr(cudaDevAttrConcurrentKernels, 1), 1);
    ck_assert_int_eq(attr(cudaDevAttrAsyncEngineCount, 1), p.asyncEngineCount);
    ck_assert_int_eq(attr(cudaDevAttrMaxTexture2DLayeredLayers, 1), p.maxTexture2DLayered[2]);
    ck_assert_int_eq(attr(cudaDevAttrMaxSurfaceCubemapLayeredLayers, 1),
                     p.maxSurfaceCubemapLayered[1]);
    ck_assert_int_eq(attr(cudaDevAttrMaxSharedMemoryPerBlockOptin, 1),
                     (int)p.sharedMemPerBlockOptin);
    ck_assert_int_eq(attr(cudaDevAttrHostNumaId, 1), p.hostNumaId);
    ck_assert_int_eq(attr(cudaDevAttrStreamPrioritiesSupported, 1), 1);
    ck_assert_int_eq(attr(cudaDevAttrManagedMemory, 1), p.managedMemory);
    ck_assert_int_eq(attr(cudaDevAttrComputeMode, 1), cudaComputeModeDefault);
    ck_assert_int_gt(attr(cudaDevAttrClockRate, 1), 0);
}
END_TEST

START_TEST(test_attr_every_value)
{
    int known = 0, v;
    for (int a = 0; a <= cudaDevAttrMax + 5; a++) {
        cudaError_t e = cudaDeviceGetAttribute(&v, (enum cudaDeviceAttr)a, 0);
        ck_assert(e == cudaSuccess || e == cudaErrorInvalidValue);
        known += e == cudaSuccess;
    }
    ck_assert_int_ge(known, 124); /* every non-reserved enumerator of CUDA 13 */
    (void)cudaGetLastError();
}
END_TEST

START_TEST(test_attr_errors)
{
    int v;
    CK_CUDA(cudaDeviceGetAttribute(&v, (enum cudaDeviceAttr)0, 0), cudaErrorInvalidValue);
    /* Numbers the runtime reserves but the driver defines are answered, as the
     * runtime forwards them to the driver: the emulated device lacks both. */
    v = -1;
    CK_CUDA(cudaDeviceGetAttribute(&v, (enum cudaDeviceAttr)44, 0), cudaSuccess); /* CAN_TEX2D_GATHER */
    ck_assert_int_eq(v, 0);
    v = -1;
    CK_CUDA(cudaDeviceGetAttribute(&v, cudaDevAttrReserved92, 0), cudaSuccess); /* CAN_USE_STREAM_MEM_OPS_V1 */
    ck_assert_int_eq(v, 0);
    CK_CUDA(cudaDeviceGetAttribute(&v, cudaDevAttrMax, 0), cudaErrorInvalidValue);
    CK_CUDA(cudaDeviceGetAttribute(&v, cudaDevAttrWarpSize, 2), cudaErrorInvalidDevice);
    CK_CUDA(cudaDeviceGetAttribute(&v, cudaDevAttrWarpSize, -1), cudaErrorInvalidDevice);
    CK_CUDA(cudaDeviceGetAttribute(NULL, cudaDevAttrWarpSize, 0), cudaErrorInvalidValue);
}
END_TEST

/* ------------------------------------------------------------------ device memory */

START_TEST(test_malloc_basic)
{
    char *p = dmalloc(1000);
    ck_assert(crm_emu_in_window(p));
    ck_assert_uint_eq((uintptr_t)p % 256, 0);
    memset(p, 7, 1000); /* device pointers are addresses of this process */
    ck_assert_int_eq(p[999], 7);
    CK_OK(cudaFree(p));
    ck_assert_int_eq(readable(p, 1), 0);
    void *z = (void *)1;
    CK_OK(cudaMalloc(&z, 0));
    ck_assert_ptr_null(z);
    CK_CUDA(cudaMalloc(NULL, 16), cudaErrorInvalidValue);
}
END_TEST

START_TEST(test_malloc_alignment_and_distinct)
{
    void *a = dmalloc(1), *b = dmalloc(1), *c = dmalloc(300);
    ck_assert_ptr_ne(a, b);
    ck_assert_uint_eq((uintptr_t)b % 256, 0);
    ck_assert_uint_eq((uintptr_t)c % 256, 0);
    CK_OK(cudaFree(a));
    CK_OK(cudaFree(b));
    CK_OK(cudaFree(c));
}
END_TEST

START_TEST(test_free_errors)
{
    char *p = dmalloc(1000);
    int local;
    CK_CUDA(cudaFree(p + 256), cudaErrorInvalidValue);
    CK_CUDA(cudaFree(&local), cudaErrorInvalidValue);
    CK_CUDA(cudaFree((void *)CRM_EMU_WINDOW_BASE + CRM_EMU_WINDOW_SIZE / 2),
            cudaErrorInvalidValue);
    CK_OK(cudaFree(p));
    CK_CUDA(cudaFree(p), cudaErrorInvalidValue);
    CK_OK(cudaFree(NULL));
    CK_CUDA(cudaGetLastError(), cudaErrorInvalidValue);
}
END_TEST

START_TEST(test_malloc_out_of_memory)
{
    void *p = (void *)1;
    CK_CUDA(cudaMalloc(&p, EMU_MEM + 1), cudaErrorMemoryAllocation);
    CK_CUDA(cudaMalloc(&p, SIZE_MAX), cudaErrorMemoryAllocation);
    CK_CUDA(cudaGetLastError(), cudaErrorMemoryAllocation);
    void *a = dmalloc(EMU_MEM / 2), *b = dmalloc(EMU_MEM / 4);
    CK_CUDA(cudaMalloc(&p, EMU_MEM / 2), cudaErrorMemoryAllocation);
    CK_OK(cudaFree(a));
    CK_OK(cudaFree(b));
    a = dmalloc(EMU_MEM); /* everything is usable again */
    CK_OK(cudaFree(a));
}
END_TEST

START_TEST(test_meminfo_per_device)
{
    size_t fr, tot;
    CK_OK(cudaMemGetInfo(&fr, &tot));
    ck_assert_uint_eq(tot, EMU_MEM);
    ck_assert_uint_eq(fr, EMU_MEM);
    void *a = dmalloc(40 << 20);
    CK_OK(cudaMemGetInfo(&fr, &tot));
    ck_assert_uint_le(fr, EMU_MEM - (40 << 20));
    CK_OK(cudaSetDevice(1)); /* device 1 has its own memory */
    CK_OK(cudaMemGetInfo(&fr, &tot));
    ck_assert_uint_eq(fr, EMU_MEM);
    void *b = dmalloc(40 << 20);
    CK_OK(cudaFree(a)); /* freeing another device's memory works (unified addressing) */
    CK_OK(cudaSetDevice(0));
    CK_OK(cudaMemGetInfo(&fr, &tot));
    ck_assert_uint_eq(fr, EMU_MEM);
    CK_OK(cudaFree(b));
    CK_CUDA(cudaMemGetInfo(NULL, &tot), cudaErrorInvalidValue);
    CK_CUDA(cudaMemGetInfo(&fr, NULL), cudaErrorInvalidValue);
}
END_TEST

START_TEST(test_malloc_reuses_freed_range)
{
    void *a = dmalloc(1 << 20);
    CK_OK(cudaFree(a));
    void *b = dmalloc(1 << 20);
    ck_assert_ptr_eq(a, b);
    CK_OK(cudaFree(b));
}
END_TEST

/* 30000 x 48 MiB is more than the 1 TiB window: only reuse lets this pass. */
START_TEST(test_malloc_free_loop_never_exhausts_window)
{
    for (int i = 0; i < 30000; i++) {
        void *p = NULL;
        ck_assert_int_eq(cudaMalloc(&p, (size_t)48 << 20), cudaSuccess);
        ((char *)p)[i % 4096] = 1;
        ck_assert_int_eq(cudaFree(p), cudaSuccess);
    }
}
END_TEST

START_TEST(test_malloc_pitch)
{
    void *p;
    size_t pitch = 0;
    CK_OK(cudaMallocPitch(&p, &pitch, 100, 10));
    ck_assert_uint_eq(pitch, 512);
    CK_OK(cudaMemset2D(p, pitch, 0, 100, 10));
    CK_OK(cudaMemset(p, 1, pitch * 10));
    CK_CUDA(cudaMemset(p, 1, pitch * 10 + 1), cudaErrorInvalidValue);
    CK_OK(cudaFree(p));
    CK_OK(cudaMallocPitch(&p, &pitch, 513, 3));
    ck_assert_uint_eq(pitch, 1024);
    CK_OK(cudaFree(p));
    CK_OK(cudaMallocPitch(&p, &pitch, 512, 1));
    ck_assert_uint_eq(pitch, 512);
    CK_OK(cudaFree(p));
    CK_CUDA(cudaMallocPitch(NULL, &pitch, 1, 1), cudaErrorInvalidValue);
    CK_CUDA(cudaMallocPitch(&p, NULL, 1, 1), cudaErrorInvalidValue);
    CK_CUDA(cudaMallocPitch(&p, &pitch, 1 << 20, 1 << 20), cudaErrorMemoryAllocation);
    CK_CUDA(cudaMallocPitch(&p, &pitch, SIZE_MAX, 2), cudaErrorMemoryAllocation);
}
END_TEST

/* ------------------------------------------------------------------ host memory */

START_TEST(test_malloc_host)
{
    char *h = NULL;
    CK_OK(cudaMallocHost((void **)&h, 10000));
    ck_assert_uint_eq((uintptr_t)h % (uintptr_t)sysconf(_SC_PAGESIZE), 0);
    ck_assert(!crm_emu_in_window(h));
    memset(h, 3, 10000);
    struct cudaPointerAttributes a;
    CK_OK(cudaPointerGetAttributes(&a, h + 5000));
    ck_assert_int_eq(a.type, cudaMemoryTypeHost);
    ck_assert_int_eq(a.device, 0);
    ck_assert_ptr_eq(a.hostPointer, h + 5000);
    ck_assert_ptr_eq(a.devicePointer, h + 5000);
    CK_CUDA(cudaFreeHost(h + 8), cudaErrorInvalidValue);
    CK_CUDA(cudaFree(h), cudaErrorInvalidValue);
    CK_OK(cudaFreeHost(h));
    CK_CUDA(cudaFreeHost(h), cudaErrorInvalidValue);
    CK_OK(cudaFreeHost(NULL));
    CK_CUDA(cudaMallocHost(NULL, 10), cudaErrorInvalidValue);
    void *z = (void *)1;
    CK_OK(cudaMallocHost(&z, 0));
    ck_assert_ptr_null(z);
}
END_TEST

START_TEST(test_host_alloc_flags)
{
    void *h;
    CK_OK(cudaHostAlloc(&h, 100, cudaHostAllocMapped | cudaHostAllocPortable |
                                     cudaHostAllocWriteCombined));
    CK_OK(cudaFreeHost(h));
    CK_CUDA(cudaHostAlloc(&h, 100, 0x8), cudaErrorInvalidValue);
    CK_CUDA(cudaHostAlloc(NULL, 100, 0), cudaErrorInvalidValue);
    void *d = dmalloc(64);
    CK_CUDA(cudaFreeHost(d), cudaErrorInvalidValue);
    CK_OK(cudaFree(d));
    int local;
    CK_CUDA(cudaFreeHost(&local), cudaErrorInvalidValue);
}
END_TEST

START_TEST(test_host_register)
{
    size_t n = 3 * 4096;
    char *buf = aligned_alloc(4096, n);
    struct cudaPointerAttributes a;
    CK_OK(cudaHostRegister(buf, n, cudaHostRegisterDefault));
    CK_OK(cudaPointerGetAttributes(&a, buf + 10));
    ck_assert_int_eq(a.type, cudaMemoryTypeHost);
    CK_CUDA(cudaHostRegister(buf, n, 0), cudaErrorHostMemoryAlreadyRegistered);
    CK_CUDA(cudaHostRegister(buf + 4096, 10, 0), cudaErrorHostMemoryAlreadyRegistered);
    CK_CUDA(cudaFreeHost(buf), cudaErrorInvalidValue);
    CK_CUDA(cudaHostUnregister(buf + 4096), cudaErrorHostMemoryNotRegistered);
    CK_OK(cudaHostUnregister(buf));
    CK_CUDA(cudaHostUnregister(buf), cudaErrorHostMemoryNotRegistered);
    CK_OK(cudaPointerGetAttributes(&a, buf + 10));
    ck_assert_int_eq(a.type, cudaMemoryTypeUnregistered);
    CK_OK(cudaHostRegister(buf, n, cudaHostRegisterMapped | cudaHostRegisterPortable |
                                       cudaHostRegisterReadOnly));
    CK_OK(cudaHostUnregister(buf));
    free(buf);
}
END_TEST

START_TEST(test_host_get_flags_and_device_pointer)
{
    char *h, local[8];
    void *d = NULL;
    unsigned f = 0;
    CK_OK(cudaHostAlloc((void **)&h, 10000, cudaHostAllocPortable));
    CK_OK(cudaHostGetFlags(&f, h + 9999));
    ck_assert_uint_eq(f, cudaHostAllocPortable | cudaHostAllocMapped);
    CK_OK(cudaHostGetDevicePointer(&d, h + 10, 0));
    ck_assert_ptr_eq(d, h + 10);
    CK_CUDA(cudaHostGetDevicePointer(&d, h, 1), cudaErrorInvalidValue);
    CK_CUDA(cudaHostGetDevicePointer(NULL, h, 0), cudaErrorInvalidValue);
    CK_CUDA(cudaHostGetDevicePointer(&d, local, 0), cudaErrorInvalidValue);
    CK_CUDA(cudaHostGetFlags(&f, local), cudaErrorInvalidValue);
    CK_CUDA(cudaHostGetFlags(NULL, h), cudaErrorInvalidValue);
    CK_OK(cudaFreeHost(h));
    CK_CUDA(cudaHostGetFlags(&f, h), cudaErrorInvalidValue);
    CK_OK(cudaHostRegister(local, sizeof local, cudaHostRegisterMapped));
    CK_OK(cudaHostGetFlags(&f, local));
    ck_assert_uint_eq(f, cudaHostRegisterMapped);
    CK_OK(cudaHostGetDevicePointer(&d, local, 0));
    ck_assert_ptr_eq(d, local);
    CK_OK(cudaHostUnregister(local));
}
END_TEST

START_TEST(test_host_register_errors)
{
    char buf[64];
    void *d = dmalloc(4096), *h;
    CK_CUDA(cudaHostRegister(NULL, 10, 0), cudaErrorInvalidValue);
    CK_CUDA(cudaHostRegister(buf, 0, 0), cudaErrorInvalidValue);
    CK_CUDA(cudaHostRegister(buf, sizeof buf, 0x10), cudaErrorInvalidValue);
    CK_CUDA(cudaHostRegister(d, 4096, 0), cudaErrorInvalidValue);
    CK_CUDA(cudaHostUnregister(NULL), cudaErrorInvalidValue);
    CK_OK(cudaMallocHost(&h, 100));
    CK_CUDA(cudaHostUnregister(h), cudaErrorHostMemoryNotRegistered);
    CK_CUDA(cudaHostRegister(h, 100, 0), cudaErrorHostMemoryAlreadyRegistered);
    CK_OK(cudaFreeHost(h));
    CK_OK(cudaFree(d));
}
END_TEST

/* ------------------------------------------------------------------ pointer attributes */

START_TEST(test_pointer_attributes)
{
    char *d0 = dmalloc(1000), *d1, local[8];
    struct cudaPointerAttributes a;
    CK_OK(cudaSetDevice(1));
    d1 = dmalloc(100);
    CK_OK(cudaSetDevice(0));
    CK_OK(cudaPointerGetAttributes(&a, d0 + 999));
    ck_assert_int_eq(a.type, cudaMemoryTypeDevice);
    ck_assert_int_eq(a.device, 0);
    ck_assert_ptr_eq(a.devicePointer, d0 + 999);
    ck_assert_ptr_null(a.hostPointer);
    CK_OK(cudaPointerGetAttributes(&a, d1));
    ck_assert_int_eq(a.type, cudaMemoryTypeDevice);
    ck_assert_int_eq(a.device, 1);
    CK_OK(cudaPointerGetAttributes(&a, local));
    ck_assert_int_eq(a.type, cudaMemoryTypeUnregistered);
    ck_assert_int_eq(a.device, cudaInvalidDeviceId);
    ck_assert_ptr_null(a.devicePointer);
    ck_assert_ptr_eq(a.hostPointer, local);
    CK_OK(cudaPointerGetAttributes(&a, NULL));
    ck_assert_int_eq(a.type, cudaMemoryTypeUnregistered);
    CK_OK(cudaFree(d0));
    CK_OK(cudaPointerGetAttributes(&a, d0));
    ck_assert_int_eq(a.type, cudaMemoryTypeUnregistered);
    CK_CUDA(cudaPointerGetAttributes(NULL, d1), cudaErrorInvalidValue);
    CK_OK(cudaFree(d1));
}
END_TEST

/* ------------------------------------------------------------------ copies */

START_TEST(test_memcpy_round_trip)
{
    unsigned char src[1024], back[1024];
    for (int i = 0; i < 1024; i++)
        src[i] = (unsigned char)(i * 7);
    char *a = dmalloc(1024), *b = dmalloc(2048);
    CK_OK(cudaMemcpy(a, src, 1024, cudaMemcpyHostToDevice));
    CK_OK(cudaMemcpy(b + 1024, a, 1024, cudaMemcpyDeviceToDevice));
    memset(back, 0, sizeof back);
    CK_OK(cudaMemcpy(back, b + 1024, 1024, cudaMemcpyDeviceToHost));
    ck_assert_mem_eq(back, src, 1024);
    CK_OK(cudaMemcpy(a, a + 1, 100, cudaMemcpyDeviceToDevice)); /* overlap is fine */
    ck_assert_int_eq((unsigned char)a[0], src[1]);
    CK_OK(cudaFree(a));
    CK_OK(cudaFree(b));
}
END_TEST

START_TEST(test_memcpy_default_and_host)
{
    char h1[64] = "unified addressing", h2[64] = { 0 }, h3[64] = { 0 };
    char *d = dmalloc(64);
    CK_OK(cudaMemcpy(d, h1, 64, cudaMemcpyDefault));
    CK_OK(cudaMemcpy(h2, d, 64, cudaMemcpyDefault));
    ck_assert_str_eq(h2, h1);
    CK_OK(cudaMemcpy(h3, h2, 64, cudaMemcpyDefault));
    ck_assert_str_eq(h3, h1);
    memset(h3, 0, sizeof h3);
    CK_OK(cudaMemcpy(h3, h2, 64, cudaMemcpyHostToHost));
    ck_assert_str_eq(h3, h1);
    void *pinned;
    CK_OK(cudaMallocHost(&pinned, 64));
    CK_OK(cudaMemcpy(pinned, d, 64, cudaMemcpyDeviceToHost));
    ck_assert_str_eq(pinned, h1);
    CK_OK(cudaFreeHost(pinned));
    CK_OK(cudaFree(d));
}
END_TEST

START_TEST(test_memcpy_kind_mismatch)
{
    char h[64] = { 0 };
    char *d = dmalloc(64), *d2 = dmalloc(64);
    CK_CUDA(cudaMemcpy(h, h + 32, 8, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
    CK_CUDA(cudaMemcpy(d, d2, 8, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
    CK_CUDA(cudaMemcpy(h, h + 32, 8, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
    CK_CUDA(cudaMemcpy(d, d2, 8, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
    CK_CUDA(cudaMemcpy(h, d, 8, cudaMemcpyDeviceToDevice), cudaErrorInvalidValue);
    CK_CUDA(cudaMemcpy(d, h, 8, cudaMemcpyDeviceToDevice), cudaErrorInvalidValue);
    CK_CUDA(cudaMemcpy(h, d, 8, cudaMemcpyHostToHost), cudaErrorInvalidValue);
    CK_CUDA(cudaMemcpy(d, h, 8, (enum cudaMemcpyKind)5), cudaErrorInvalidMemcpyDirection);
    CK_CUDA(cudaMemcpy(d, h, 8, (enum cudaMemcpyKind)-1), cudaErrorInvalidMemcpyDirection);
    CK_CUDA(cudaGetLastError(), cudaErrorInvalidMemcpyDirection);
    CK_OK(cudaFree(d));
    CK_OK(cudaFree(d2));
}
END_TEST

START_TEST(test_memcpy_ranges)
{
    char h[2048] = { 0 };
    char *d = dmalloc(1000), *e = dmalloc(1000);
    CK_OK(cudaMemcpy(d + 999, h, 1, cudaMemcpyHostToDevice));
    CK_CUDA(cudaMemcpy(d + 999, h, 2, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
    CK_CUDA(cudaMemcpy(h, d, 1001, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
    CK_CUDA(cudaMemcpy(h, d, 2048, cudaMemcpyDefault), cudaErrorInvalidValue);
    CK_CUDA(cudaMemcpy(d, e, 1001, cudaMemcpyDeviceToDevice), cudaErrorInvalidValue);
    CK_CUDA(cudaMemcpy(NULL, d, 10, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
    CK_CUDA(cudaMemcpy(d, NULL, 10, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
    CK_CUDA(cudaMemcpy(NULL, d, 10, cudaMemcpyDefault), cudaErrorInvalidValue);
    CK_OK(cudaMemcpy(NULL, NULL, 0, cudaMemcpyHostToDevice));
    CK_OK(cudaFree(e));
    CK_CUDA(cudaMemcpy(e, h, 1, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
    CK_CUDA(cudaMemcpy(h, e, 1, cudaMemcpyDefault), cudaErrorInvalidValue);
    CK_OK(cudaFree(d));
}
END_TEST

START_TEST(test_memcpy_async)
{
    char h[32] = "streams", back[32] = { 0 };
    char *d = dmalloc(32);
    cudaStream_t s;
    CK_OK(cudaStreamCreate(&s));
    CK_OK(cudaMemcpyAsync(d, h, 32, cudaMemcpyHostToDevice, s));
    CK_OK(cudaMemcpyAsync(back, d, 32, cudaMemcpyDeviceToHost, 0));
    CK_OK(cudaStreamSynchronize(s));
    ck_assert_str_eq(back, h);
    CK_OK(cudaMemcpyAsync(back, d, 32, cudaMemcpyDeviceToHost, cudaStreamLegacy));
    CK_OK(cudaMemcpyAsync(back, d, 32, cudaMemcpyDeviceToHost, cudaStreamPerThread));
    CK_CUDA(cudaMemcpyAsync(back, d, 33, cudaMemcpyDeviceToHost, s), cudaErrorInvalidValue);
    CK_OK(cudaStreamDestroy(s));
    CK_CUDA(cudaMemcpyAsync(back, d, 32, cudaMemcpyDeviceToHost, s),
            cudaErrorInvalidResourceHandle);
    CK_OK(cudaFree(d));
}
END_TEST

START_TEST(test_memcpy_2d)
{
    unsigned char h[8][64], back[8][64];
    for (int r = 0; r < 8; r++)
        for (int c = 0; c < 64; c++)
            h[r][c] = (unsigned char)(r * 64 + c);
    void *d;
    size_t pitch;
    CK_OK(cudaMallocPitch(&d, &pitch, 48, 8));
    CK_OK(cudaMemset(d, 0xee, pitch * 8));
    CK_OK(cudaMemcpy2D(d, pitch, h, 64, 48, 8, cudaMemcpyHostToDevice));
    ck_assert_int_eq(((unsigned char *)d)[pitch + 48], 0xee); /* past width untouched */
    memset(back, 0, sizeof back);
    CK_OK(cudaMemcpy2D(back, 64, d, pitch, 48, 8, cudaMemcpyDeviceToHost));
    for (int r = 0; r < 8; r++) {
        ck_assert_mem_eq(back[r], h[r], 48);
        ck_assert_int_eq(back[r][48], 0);
    }
    CK_CUDA(cudaMemcpy2D(d, 32, h, 64, 48, 8, cudaMemcpyHostToDevice),
            cudaErrorInvalidPitchValue);
    CK_CUDA(cudaMemcpy2D(d, pitch, h, 32, 48, 8, cudaMemcpyHostToDevice),
            cudaErrorInvalidPitchValue);
    CK_CUDA(cudaMemcpy2D(d, pitch, h, 64, 48, 9, cudaMemcpyHostToDevice),
            cudaErrorInvalidValue);
    CK_CUDA(cudaMemcpy2D(d, pitch, h, 64, 48, 8, (enum cudaMemcpyKind)9),
            cudaErrorInvalidMemcpyDirection);
    CK_CUDA(cudaMemcpy2D(d, SIZE_MAX / 2, h, 64, 48, 8, cudaMemcpyHostToDevice),
            cudaErrorInvalidValue);
    CK_OK(cudaMemcpy2D(d, pitch, h, 64, 0, 8, cudaMemcpyHostToDevice));
    CK_OK(cudaMemcpy2D(d, pitch, h, 64, 48, 0, cudaMemcpyHostToDevice));
    cudaStream_t s;
    CK_OK(cudaStreamCreate(&s));
    CK_OK(cudaMemcpy2DAsync(back, 64, d, pitch, 48, 8, cudaMemcpyDefault, s));
    CK_OK(cudaStreamDestroy(s));
    CK_CUDA(cudaMemcpy2DAsync(back, 64, d, pitch, 48, 8, cudaMemcpyDefault, s),
            cudaErrorInvalidResourceHandle);
    CK_OK(cudaFree(d));
}
END_TEST

/* ------------------------------------------------------------------ memsets */

START_TEST(test_memset)
{
    unsigned char back[100];
    char *d = dmalloc(100), local[8];
    CK_OK(cudaMemset(d, 0x1ab, 100));
    CK_OK(cudaMemcpy(back, d, 100, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 100; i++)
        ck_assert_int_eq(back[i], 0xab);
    CK_OK(cudaMemset(d + 50, 0, 50));
    ck_assert_int_eq(d[49], (char)0xab);
    ck_assert_int_eq(d[50], 0);
    CK_CUDA(cudaMemset(d + 50, 0, 51), cudaErrorInvalidValue);
    CK_CUDA(cudaMemset(local, 0, sizeof local), cudaErrorInvalidValue);
    CK_CUDA(cudaMemset(NULL, 0, 1), cudaErrorInvalidValue);
    CK_OK(cudaMemset(NULL, 0, 0));
    cudaStream_t s;
    CK_OK(cudaStreamCreate(&s));
    CK_OK(cudaMemsetAsync(d, 5, 100, s));
    ck_assert_int_eq(d[99], 5);
    CK_OK(cudaMemsetAsync(d, 6, 100, 0));
    ck_assert_int_eq(d[99], 6);
    CK_OK(cudaStreamDestroy(s));
    CK_CUDA(cudaMemsetAsync(d, 5, 100, s), cudaErrorInvalidResourceHandle);
    CK_OK(cudaFree(d));
    CK_CUDA(cudaMemset(d, 0, 1), cudaErrorInvalidValue);
}
END_TEST

START_TEST(test_memset_2d)
{
    void *d;
    size_t pitch;
    CK_OK(cudaMallocPitch(&d, &pitch, 100, 4));
    unsigned char *p = d;
    CK_OK(cudaMemset(d, 0, pitch * 4));
    CK_OK(cudaMemset2D(d, pitch, 9, 100, 4));
    for (int r = 0; r < 4; r++) {
        ck_assert_int_eq(p[r * pitch], 9);
        ck_assert_int_eq(p[r * pitch + 99], 9);
        ck_assert_int_eq(p[r * pitch + 100], 0);
    }
    CK_CUDA(cudaMemset2D(d, 64, 9, 100, 4), cudaErrorInvalidPitchValue);
    CK_CUDA(cudaMemset2D(d, pitch, 9, 100, 5), cudaErrorInvalidValue);
    CK_OK(cudaMemset2D(d, pitch, 9, 0, 5));
    cudaStream_t s;
    CK_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK_OK(cudaMemset2DAsync(d, pitch, 3, 10, 4, s));
    ck_assert_int_eq(p[3 * pitch + 9], 3);
    ck_assert_int_eq(p[3 * pitch + 10], 9);
    CK_OK(cudaStreamDestroy(s));
    CK_CUDA(cudaMemset2DAsync(d, pitch, 3, 10, 4, s), cudaErrorInvalidResourceHandle);
    CK_OK(cudaFree(d));
}
END_TEST

/* ------------------------------------------------------------------ streams */

START_TEST(test_stream_lifecycle)
{
    cudaStream_t s;
    int forged;
    CK_OK(cudaStreamCreate(&s));
    ck_assert_ptr_nonnull(s);
    CK_OK(cudaStreamQuery(s));
    CK_OK(cudaStreamSynchronize(s));
    CK_OK(cudaStreamDestroy(s));
    CK_CUDA(cudaStreamDestroy(s), cudaErrorInvalidResourceHandle);
    CK_CUDA(cudaStreamQuery(s), cudaErrorInvalidResourceHandle);
    CK_CUDA(cudaStreamSynchronize(s), cudaErrorInvalidResourceHandle);
    CK_CUDA(cudaStreamQuery((cudaStream_t)&forged), cudaErrorInvalidResourceHandle);
    CK_CUDA(cudaStreamDestroy(0), cudaErrorInvalidResourceHandle);
    CK_CUDA(cudaStreamDestroy(cudaStreamPerThread), cudaErrorInvalidResourceHandle);
    CK_OK(cudaStreamQuery(0));
    CK_OK(cudaStreamQuery(cudaStreamLegacy));
    CK_OK(cudaStreamSynchronize(cudaStreamPerThread));
    CK_CUDA(cudaStreamCreate(NULL), cudaErrorInvalidValue);
}
END_TEST

START_TEST(test_stream_flags_and_priority)
{
    cudaStream_t s;
    unsigned f = 99;
    int least = 99, greatest = 99, prio = 99;
    CK_OK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    ck_assert_int_eq(least, 0);
    ck_assert_int_eq(greatest, -5);
    CK_OK(cudaDeviceGetStreamPriorityRange(NULL, NULL));
    CK_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK_OK(cudaStreamGetFlags(s, &f));
    ck_assert_uint_eq(f, cudaStreamNonBlocking);
    CK_OK(cudaStreamGetPriority(s, &prio));
    ck_assert_int_eq(prio, 0);
    CK_OK(cudaStreamDestroy(s));
    CK_CUDA(cudaStreamGetFlags(s, &f), cudaErrorInvalidResourceHandle);
    CK_CUDA(cudaStreamGetPriority(s, &prio), cudaErrorInvalidResourceHandle);
    CK_OK(cudaStreamCreateWithPriority(&s, cudaStreamDefault, -3));
    CK_OK(cudaStreamGetPriority(s, &prio));
    ck_assert_int_eq(prio, -3);
    CK_CUDA(cudaStreamGetFlags(s, NULL), cudaErrorInvalidValue);
    CK_CUDA(cudaStreamGetPriority(s, NULL), cudaErrorInvalidValue);
    CK_OK(cudaStreamDestroy(s));
    CK_OK(cudaStreamCreateWithPriority(&s, 0, -100));
    CK_OK(cudaStreamGetPriority(s, &prio));
    ck_assert_int_eq(prio, -5);
    CK_OK(cudaStreamDestroy(s));
    CK_OK(cudaStreamCreateWithPriority(&s, 0, 7));
    CK_OK(cudaStreamGetPriority(s, &prio));
    ck_assert_int_eq(prio, 0);
    CK_OK(cudaStreamDestroy(s));
    CK_CUDA(cudaStreamCreateWithFlags(&s, 2), cudaErrorInvalidValue);
    CK_CUDA(cudaStreamCreateWithPriority(&s, 4, 0), cudaErrorInvalidValue);
    CK_OK(cudaStreamGetFlags(0, &f));
    ck_assert_uint_eq(f, cudaStreamDefault);
    CK_OK(cudaStreamGetPriority(cudaStreamPerThread, &prio));
    ck_assert_int_eq(prio, 0);
}
END_TEST

START_TEST(test_stream_wait_event)
{
    cudaStream_t s;
    cudaEvent_t e;
    CK_OK(cudaStreamCreate(&s));
    CK_OK(cudaEventCreate(&e));
    CK_OK(cudaStreamWaitEvent(s, e, 0)); /* never recorded: nothing to wait for */
    CK_OK(cudaEventRecord(e, 0));
    CK_OK(cudaStreamWaitEvent(s, e, cudaEventWaitDefault));
    CK_OK(cudaStreamWaitEvent(0, e, cudaEventWaitExternal));
    CK_CUDA(cudaStreamWaitEvent(s, e, 2), cudaErrorInvalidValue);
    CK_OK(cudaEventDestroy(e));
    CK_CUDA(cudaStreamWaitEvent(s, e, 0), cudaErrorInvalidResourceHandle);
    CK_OK(cudaEventCreate(&e));
    CK_OK(cudaStreamDestroy(s));
    CK_CUDA(cudaStreamWaitEvent(s, e, 0), cudaErrorInvalidResourceHandle);
    CK_OK(cudaEventDestroy(e));
}
END_TEST

/* ------------------------------------------------------------------ events */

START_TEST(test_event_timing)
{
    cudaEvent_t a, b;
    float ms = -1;
    CK_OK(cudaEventCreate(&a));
    CK_OK(cudaEventCreateWithFlags(&b, cudaEventBlockingSync));
    CK_OK(cudaEventQuery(a)); /* unrecorded events are complete */
    CK_OK(cudaEventSynchronize(a));
    CK_CUDA(cudaEventElapsedTime(&ms, a, b), cudaErrorInvalidResourceHandle);
    CK_OK(cudaEventRecord(a, 0));
    CK_CUDA(cudaEventElapsedTime(&ms, a, b), cudaErrorInvalidResourceHandle);
    struct timespec nap = { 0, 20 * 1000 * 1000 };
    nanosleep(&nap, NULL);
    CK_OK(cudaEventRecord(b, 0));
    CK_OK(cudaEventSynchronize(b));
    CK_OK(cudaEventQuery(b));
    CK_OK(cudaEventElapsedTime(&ms, a, b));
    ck_assert_float_ge(ms, 19.0f);
    ck_assert_float_lt(ms, 2000.0f);
    CK_OK(cudaEventElapsedTime(&ms, b, a));
    ck_assert_float_le(ms, -19.0f);
    CK_CUDA(cudaEventElapsedTime(NULL, a, b), cudaErrorInvalidValue);
    CK_OK(cudaEventDestroy(a));
    CK_CUDA(cudaEventElapsedTime(&ms, a, b), cudaErrorInvalidResourceHandle);
    CK_OK(cudaEventDestroy(b));
}
END_TEST

START_TEST(test_event_disable_timing)
{
    cudaEvent_t a, b;
    float ms;
    CK_OK(cudaEventCreateWithFlags(&a, cudaEventDisableTiming));
    CK_OK(cudaEventCreate(&b));
    CK_OK(cudaEventRecord(a, 0));
    CK_OK(cudaEventRecord(b, 0));
    CK_CUDA(cudaEventElapsedTime(&ms, a, b), cudaErrorInvalidResourceHandle);
    CK_CUDA(cudaEventElapsedTime(&ms, b, a), cudaErrorInvalidResourceHandle);
    CK_OK(cudaEventDestroy(a));
    CK_OK(cudaEventDestroy(b));
}
END_TEST

START_TEST(test_event_create_flags)
{
    cudaEvent_t e;
    CK_CUDA(cudaEventCreateWithFlags(&e, 0x8), cudaErrorInvalidValue);
    CK_CUDA(cudaEventCreateWithFlags(&e, cudaEventInterprocess), cudaErrorInvalidValue);
    CK_CUDA(cudaEventCreateWithFlags(NULL, 0), cudaErrorInvalidValue);
    CK_CUDA(cudaEventCreate(NULL), cudaErrorInvalidValue);
    CK_OK(cudaEventCreateWithFlags(&e, cudaEventInterprocess | cudaEventDisableTiming));
    CK_OK(cudaEventDestroy(e));
}
END_TEST

START_TEST(test_event_record_errors)
{
    cudaEvent_t e, e1;
    cudaStream_t s;
    int forged;
    CK_OK(cudaEventCreate(&e));
    CK_OK(cudaStreamCreate(&s));
    CK_OK(cudaEventRecord(e, s));
    CK_OK(cudaEventRecordWithFlags(e, s, cudaEventRecordExternal));
    CK_CUDA(cudaEventRecordWithFlags(e, s, 2), cudaErrorInvalidValue);
    CK_OK(cudaStreamDestroy(s));
    CK_CUDA(cudaEventRecord(e, s), cudaErrorInvalidResourceHandle);
    CK_CUDA(cudaEventRecord((cudaEvent_t)&forged, 0), cudaErrorInvalidResourceHandle);
    CK_CUDA(cudaEventRecord(NULL, 0), cudaErrorInvalidResourceHandle);
    CK_OK(cudaSetDevice(1)); /* an event belongs to the device current at creation */
    CK_OK(cudaEventCreate(&e1));
    CK_OK(cudaSetDevice(0));
    CK_CUDA(cudaEventRecord(e1, 0), cudaErrorInvalidResourceHandle);
    CK_OK(cudaEventDestroy(e1));
    CK_OK(cudaEventDestroy(e));
    CK_CUDA(cudaEventDestroy(e), cudaErrorInvalidResourceHandle);
    CK_CUDA(cudaEventDestroy(NULL), cudaErrorInvalidResourceHandle);
    CK_CUDA(cudaEventQuery(e), cudaErrorInvalidResourceHandle);
    CK_CUDA(cudaEventSynchronize(e), cudaErrorInvalidResourceHandle);
    CK_CUDA(cudaEventRecord(e, 0), cudaErrorInvalidResourceHandle);
}
END_TEST

/* ------------------------------------------------------------------ errors */

START_TEST(test_last_error_sticky_until_read)
{
    CK_OK(cudaPeekAtLastError());
    CK_CUDA(cudaSetDevice(42), cudaErrorInvalidDevice);
    CK_OK(cudaDeviceSynchronize()); /* success does not clear it */
    CK_CUDA(cudaPeekAtLastError(), cudaErrorInvalidDevice);
    CK_CUDA(cudaPeekAtLastError(), cudaErrorInvalidDevice);
    CK_CUDA(cudaFree((void *)16), cudaErrorInvalidValue); /* the latest failure wins */
    CK_CUDA(cudaGetLastError(), cudaErrorInvalidValue);
    CK_OK(cudaGetLastError());
    CK_OK(cudaPeekAtLastError());
}
END_TEST

static void *thread_fail_and_report(void *arg)
{
    cudaError_t *out = arg;
    out[0] = cudaPeekAtLastError();
    (void)cudaSetDevice(99);
    out[1] = cudaGetLastError();
    return NULL;
}

START_TEST(test_last_error_per_thread)
{
    cudaError_t seen[2];
    pthread_t t;
    CK_CUDA(cudaMalloc(NULL, 1), cudaErrorInvalidValue);
    ck_assert_int_eq(pthread_create(&t, NULL, thread_fail_and_report, seen), 0);
    pthread_join(t, NULL);
    CK_OK(seen[0]);
    CK_CUDA(seen[1], cudaErrorInvalidDevice);
    CK_CUDA(cudaGetLastError(), cudaErrorInvalidValue);
}
END_TEST

START_TEST(test_error_strings)
{
    ck_assert_str_eq(cudaGetErrorName(cudaSuccess), "cudaSuccess");
    ck_assert_str_eq(cudaGetErrorString(cudaSuccess), "no error");
    ck_assert_str_eq(cudaGetErrorName(cudaErrorInvalidValue), "cudaErrorInvalidValue");
    ck_assert_str_eq(cudaGetErrorString(cudaErrorInvalidValue), "invalid argument");
    ck_assert_str_eq(cudaGetErrorName(cudaErrorMemoryAllocation), "cudaErrorMemoryAllocation");
    ck_assert_str_eq(cudaGetErrorString(cudaErrorMemoryAllocation), "out of memory");
    ck_assert_str_eq(cudaGetErrorName(cudaErrorUnknown), "cudaErrorUnknown");
    ck_assert_str_eq(cudaGetErrorName((cudaError_t)1000), "unrecognized error code");
    ck_assert_str_eq(cudaGetErrorString((cudaError_t)-1), "unrecognized error code");
    CK_OK(cudaGetLastError()); /* the name functions never set the last error */
}
END_TEST

typedef const char *(*errfn_t)(cudaError_t);

/* Every code the real runtime might know gives the same texts as the real runtime. */
START_TEST(test_error_strings_match_real_runtime)
{
    void *h = dlopen("/usr/local/cuda/lib64/libcudart.so.13", RTLD_NOW | RTLD_LOCAL);
    if (h == NULL)
        return; /* no CUDA toolkit: the generated table was checked at build time */
    errfn_t name = (errfn_t)dlsym(h, "cudaGetErrorName");
    errfn_t msg = (errfn_t)dlsym(h, "cudaGetErrorString");
    ck_assert(name != NULL && msg != NULL);
    ck_assert_ptr_ne((void *)name, (void *)cudaGetErrorName);
    for (int c = -3; c < 10010; c++) {
        ck_assert_str_eq(cudaGetErrorName((cudaError_t)c), name((cudaError_t)c));
        ck_assert_str_eq(cudaGetErrorString((cudaError_t)c), msg((cudaError_t)c));
    }
    ck_assert_str_eq(cudaGetErrorName((cudaError_t)INT32_MAX), name((cudaError_t)INT32_MAX));
    ck_assert_str_eq(cudaGetErrorName((cudaError_t)INT32_MIN), name((cudaError_t)INT32_MIN));
    dlclose(h);
}
END_TEST

/* ------------------------------------------------------------------ per-thread stream */

/* Returns the library's symbol NAME (the _ptds/_ptsz names are not declared here). */
static void *emu_sym(const char *name)
{
    void *f = dlsym(RTLD_DEFAULT, name);
    ck_assert_msg(f != NULL, "missing %s", name);
    return f;
}

START_TEST(test_per_thread_default_stream_entry_points)
{
    cudaError_t (*memcpy_ptds)(void *, const void *, size_t, enum cudaMemcpyKind) =
        (cudaError_t (*)(void *, const void *, size_t, enum cudaMemcpyKind))emu_sym(
            "cudaMemcpy_ptds");
    cudaError_t (*memset_async_ptsz)(void *, int, size_t, cudaStream_t) =
        (cudaError_t (*)(void *, int, size_t, cudaStream_t))emu_sym("cudaMemsetAsync_ptsz");
    cudaError_t (*sync_ptsz)(cudaStream_t) =
        (cudaError_t (*)(cudaStream_t))emu_sym("cudaStreamSynchronize_ptsz");
    cudaError_t (*record_ptsz)(cudaEvent_t, cudaStream_t) =
        (cudaError_t (*)(cudaEvent_t, cudaStream_t))emu_sym("cudaEventRecord_ptsz");
    const char *names[] = { "cudaMemcpy2D_ptds", "cudaMemset_ptds", "cudaMemset2D_ptds",
                            "cudaMemcpyAsync_ptsz", "cudaMemcpy2DAsync_ptsz",
                            "cudaMemset2DAsync_ptsz", "cudaStreamQuery_ptsz",
                            "cudaStreamGetFlags_ptsz", "cudaStreamGetPriority_ptsz",
                            "cudaStreamWaitEvent_ptsz", "cudaEventRecordWithFlags_ptsz" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        emu_sym(names[i]);
    char h[16] = "per-thread", back[16] = { 0 };
    char *d = dmalloc(16);
    CK_OK(memcpy_ptds(d, h, 16, cudaMemcpyHostToDevice));
    CK_OK(memcpy_ptds(back, d, 16, cudaMemcpyDeviceToHost));
    ck_assert_str_eq(back, h);
    CK_OK(memset_async_ptsz(d, 1, 16, 0));
    ck_assert_int_eq(d[15], 1);
    CK_CUDA(memcpy_ptds(back, d, 17, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
    CK_CUDA(cudaGetLastError(), cudaErrorInvalidValue);
    cudaStream_t s;
    cudaEvent_t e;
    CK_OK(cudaStreamCreate(&s));
    CK_OK(cudaEventCreate(&e));
    CK_OK(record_ptsz(e, s));
    CK_OK(sync_ptsz(s));
    CK_OK(cudaStreamDestroy(s));
    CK_CUDA(sync_ptsz(s), cudaErrorInvalidResourceHandle);
    CK_OK(cudaEventDestroy(e));
    CK_OK(cudaFree(d));
}
END_TEST

/* ------------------------------------------------------------------ threads */

static void *thread_hammer(void *arg)
{
    (void)arg;
    char h[4096];
    for (int i = 0; i < 300; i++) {
        void *d;
        cudaStream_t s;
        if (cudaMalloc(&d, 4096 + (size_t)i) != cudaSuccess ||
            cudaStreamCreate(&s) != cudaSuccess ||
            cudaMemsetAsync(d, i, 4096, s) != cudaSuccess ||
            cudaMemcpyAsync(h, d, 4096, cudaMemcpyDeviceToHost, s) != cudaSuccess ||
            h[4095] != (char)i || cudaStreamDestroy(s) != cudaSuccess ||
            cudaFree(d) != cudaSuccess)
            return (void *)1;
    }
    return NULL;
}

START_TEST(test_threads_concurrent_use)
{
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, thread_hammer, NULL), 0);
    for (int i = 0; i < 4; i++) {
        void *rc;
        pthread_join(t[i], &rc);
        ck_assert_ptr_null(rc);
    }
    size_t fr, tot;
    CK_OK(cudaMemGetInfo(&fr, &tot));
    ck_assert_uint_eq(fr, tot);
}
END_TEST

/* ------------------------------------------------------------------ suite */

static TCase *tcase(const char *name, const TTest *const *tests, size_t n)
{
    TCase *tc = tcase_create(name);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_set_timeout(tc, 60);
    for (size_t i = 0; i < n; i++)
        tcase_add_test(tc, tests[i]);
    return tc;
}

#define CRM_TCASE(s, name, ...)                                              \
    do {                                                                     \
        const TTest *const t_[] = { __VA_ARGS__ };                           \
        suite_add_tcase(s, tcase(name, t_, sizeof t_ / sizeof t_[0]));       \
    } while (0)

Suite *crm_emu_suite(void)
{
    /* Read once by the library, at its first call: set before any test runs. */
    setenv("CUDAREM_EMU_DEVICES", "2", 1);
    setenv("CUDAREM_EMU_MEM", "64M", 1);
    Suite *s = suite_create("emu");
    CRM_TCASE(s, "config", test_env_parse_size, test_env_parse_devices);
    CRM_TCASE(s, "device", test_device_count_and_select, test_device_current_is_per_thread,
              test_device_versions, test_device_flags, test_device_synchronize,
              test_device_reset_frees_everything_of_current_device);
    CRM_TCASE(s, "props", test_props_values, test_props_errors, test_attr_match_props,
              test_attr_every_value, test_attr_errors);
    CRM_TCASE(s, "malloc", test_malloc_basic, test_malloc_alignment_and_distinct,
              test_free_errors, test_malloc_out_of_memory, test_meminfo_per_device,
              test_malloc_reuses_freed_range, test_malloc_free_loop_never_exhausts_window,
              test_malloc_pitch);
    CRM_TCASE(s, "hostmem", test_malloc_host, test_host_alloc_flags, test_host_register,
              test_host_get_flags_and_device_pointer, test_host_register_errors, test_pointer_attributes);
    CRM_TCASE(s, "copy", test_memcpy_round_trip, test_memcpy_default_and_host,
              test_memcpy_kind_mismatch, test_memcpy_ranges, test_memcpy_async,
              test_memcpy_2d, test_memset, test_memset_2d);
    CRM_TCASE(s, "stream", test_stream_lifecycle, test_stream_flags_and_priority,
              test_stream_wait_event);
    CRM_TCASE(s, "event", test_event_timing, test_event_disable_timing,
              test_event_create_flags, test_event_record_errors);
    CRM_TCASE(s, "error", test_last_error_sticky_until_read, test_last_error_per_thread,
              test_error_strings, test_error_strings_match_real_runtime);
    CRM_TCASE(s, "ptds", test_per_thread_default_stream_entry_points);
    CRM_TCASE(s, "threads", test_threads_concurrent_use);
    return s;
}

CRM_CHECK_MAIN(crm_emu_suite)
