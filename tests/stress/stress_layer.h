/* stress_layer.h -- the two API layers the stress program drives, behind one table:
 * the CUDA runtime (cuda*) and the driver (cu*, reached through
 * cudaGetDriverEntryPointByVersion, as torch and CuPy reach it, so the program
 * needs no -lcuda). A thread picks one table; streams and events are one object
 * whichever layer made them, so threads of either layer hand events to each other.
 * Every call returns 0 or the layer's error code (cudaError_t or CUresult).
 */
#ifndef STRESS_LAYER_H
#define STRESS_LAYER_H

#include <cuda.h>
#include <cuda_runtime.h>
#include <cstddef>
#include <cstdint>

/* Adds k to each of n bytes at p (the kernel both layers launch). */
__global__ void stress_add_bytes(unsigned char *p, size_t n, unsigned k)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = (unsigned char)(p[i] + k);
}

enum stress_stream_kind { STREAM_BLOCKING, STREAM_NONBLOCKING, STREAM_PER_THREAD, STREAM_LEGACY, STREAM_KINDS };
static const char *const stress_stream_names[] = {"blocking", "non-blocking", "per-thread default", "legacy default"};

typedef struct stress_layer {
    const char *name;
    int (*thread_init)(int device);
    int (*stream_create)(cudaStream_t *s, enum stress_stream_kind kind);
    int (*stream_destroy)(cudaStream_t s);
    int (*alloc)(void **p, size_t n);
    int (*dfree)(void *p);
    int (*alloc_async)(void **p, size_t n, cudaStream_t s);
    int (*free_async)(void *p, cudaStream_t s);
    int (*h2d)(void *d, const void *h, size_t n, cudaStream_t s, int async);
    int (*d2h)(void *h, const void *d, size_t n, cudaStream_t s, int async);
    int (*d2d)(void *d, const void *src, size_t n, cudaStream_t s);
    /* height rows of width bytes, pitches apart; the runtime infers the direction */
    int (*h2d_2d)(void *d, size_t dpitch, const void *h, size_t hpitch, size_t width, size_t height,
                  cudaStream_t s, int async);
    int (*d2h_2d)(void *h, size_t hpitch, const void *d, size_t dpitch, size_t width, size_t height,
                  cudaStream_t s, int async);
    int (*memset8)(void *d, unsigned char v, size_t n, cudaStream_t s);
    int (*add_bytes)(void *d, size_t n, unsigned k, cudaStream_t s);
    int (*event_create)(cudaEvent_t *e);
    int (*event_record)(cudaEvent_t e, cudaStream_t s);
    int (*event_sync)(cudaEvent_t e);
    int (*event_destroy)(cudaEvent_t e);
    int (*stream_wait)(cudaStream_t s, cudaEvent_t e);
    int (*host_func)(cudaStream_t s, void (*fn)(void *), void *data);
    int (*stream_sync)(cudaStream_t s);
    int (*stream_query)(cudaStream_t s); /* 0 done, 1 not yet, else an error */
    const char *(*error_name)(int code);
} stress_layer;

/* ---- the runtime --------------------------------------------------------------------- */

static int rt_thread_init(int device) { return cudaSetDevice(device); }

static int rt_stream_create(cudaStream_t *s, enum stress_stream_kind kind)
{
    switch (kind) {
    case STREAM_BLOCKING: return cudaStreamCreate(s);
    case STREAM_NONBLOCKING: return cudaStreamCreateWithFlags(s, cudaStreamNonBlocking);
    case STREAM_PER_THREAD: *s = cudaStreamPerThread; return 0;
    default: *s = 0; return 0;
    }
}

static int rt_stream_destroy(cudaStream_t s)
{
    return s == 0 || s == cudaStreamPerThread ? 0 : cudaStreamDestroy(s);
}

static int rt_alloc(void **p, size_t n) { return cudaMalloc(p, n); }
static int rt_free(void *p) { return cudaFree(p); }
static int rt_alloc_async(void **p, size_t n, cudaStream_t s) { return cudaMallocAsync(p, n, s); }
static int rt_free_async(void *p, cudaStream_t s) { return cudaFreeAsync(p, s); }

static int rt_h2d(void *d, const void *h, size_t n, cudaStream_t s, int async)
{
    return async ? cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, s) : cudaMemcpy(d, h, n, cudaMemcpyHostToDevice);
}

static int rt_d2h(void *h, const void *d, size_t n, cudaStream_t s, int async)
{
    return async ? cudaMemcpyAsync(h, d, n, cudaMemcpyDeviceToHost, s) : cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost);
}

static int rt_d2d(void *d, const void *src, size_t n, cudaStream_t s)
{
    return cudaMemcpyAsync(d, src, n, cudaMemcpyDefault, s);
}

static int rt_h2d_2d(void *d, size_t dpitch, const void *h, size_t hpitch, size_t width, size_t height,
                     cudaStream_t s, int async)
{
    return async ? cudaMemcpy2DAsync(d, dpitch, h, hpitch, width, height, cudaMemcpyDefault, s)
                 : cudaMemcpy2D(d, dpitch, h, hpitch, width, height, cudaMemcpyDefault);
}

static int rt_d2h_2d(void *h, size_t hpitch, const void *d, size_t dpitch, size_t width, size_t height,
                     cudaStream_t s, int async)
{
    return async ? cudaMemcpy2DAsync(h, hpitch, d, dpitch, width, height, cudaMemcpyDefault, s)
                 : cudaMemcpy2D(h, hpitch, d, dpitch, width, height, cudaMemcpyDefault);
}

static int rt_memset8(void *d, unsigned char v, size_t n, cudaStream_t s) { return cudaMemsetAsync(d, v, n, s); }

static int rt_add_bytes(void *d, size_t n, unsigned k, cudaStream_t s)
{
    stress_add_bytes<<<(unsigned)((n + 255) / 256), 256, 0, s>>>((unsigned char *)d, n, k);
    return cudaGetLastError();
}

static int rt_event_create(cudaEvent_t *e) { return cudaEventCreateWithFlags(e, cudaEventDisableTiming); }
static int rt_event_record(cudaEvent_t e, cudaStream_t s) { return cudaEventRecord(e, s); }
static int rt_event_sync(cudaEvent_t e) { return cudaEventSynchronize(e); }
static int rt_event_destroy(cudaEvent_t e) { return cudaEventDestroy(e); }
static int rt_stream_wait(cudaStream_t s, cudaEvent_t e) { return cudaStreamWaitEvent(s, e, 0); }
static int rt_host_func(cudaStream_t s, void (*fn)(void *), void *data) { return cudaLaunchHostFunc(s, fn, data); }
static int rt_stream_sync(cudaStream_t s) { return cudaStreamSynchronize(s); }

static int rt_stream_query(cudaStream_t s)
{
    cudaError_t e = cudaStreamQuery(s);
    return e == cudaErrorNotReady ? 1 : e;
}

static const char *rt_error_name(int code) { return cudaGetErrorName((cudaError_t)code); }

static const stress_layer stress_runtime = {
    "runtime", rt_thread_init, rt_stream_create, rt_stream_destroy, rt_alloc, rt_free, rt_alloc_async,
    rt_free_async, rt_h2d, rt_d2h, rt_d2d, rt_h2d_2d, rt_d2h_2d, rt_memset8, rt_add_bytes, rt_event_create, rt_event_record,
    rt_event_sync, rt_event_destroy, rt_stream_wait, rt_host_func, rt_stream_sync, rt_stream_query, rt_error_name,
};

/* ---- the driver ---------------------------------------------------------------------- */

/* The driver entry points, looked up once (stress_driver_load). */
static struct {
    CUresult (*Init)(unsigned);
    CUresult (*DeviceGet)(CUdevice *, int);
    CUresult (*PrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*CtxSetCurrent)(CUcontext);
    CUresult (*StreamCreate)(CUstream *, unsigned);
    CUresult (*StreamDestroy)(CUstream);
    CUresult (*MemAlloc)(CUdeviceptr *, size_t);
    CUresult (*MemFree)(CUdeviceptr);
    CUresult (*MemAllocAsync)(CUdeviceptr *, size_t, CUstream);
    CUresult (*MemFreeAsync)(CUdeviceptr, CUstream);
    CUresult (*HtoD)(CUdeviceptr, const void *, size_t);
    CUresult (*HtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
    CUresult (*DtoH)(void *, CUdeviceptr, size_t);
    CUresult (*DtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
    CUresult (*DtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
    CUresult (*Memcpy2D)(const CUDA_MEMCPY2D *);
    CUresult (*Memcpy2DAsync)(const CUDA_MEMCPY2D *, CUstream);
    CUresult (*MemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
    CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             CUstream, void **, void **);
    CUresult (*KernelGetFunction)(CUfunction *, CUkernel);
    CUresult (*EventCreate)(CUevent *, unsigned);
    CUresult (*EventRecord)(CUevent, CUstream);
    CUresult (*EventSynchronize)(CUevent);
    CUresult (*EventDestroy)(CUevent);
    CUresult (*StreamWaitEvent)(CUstream, CUevent, unsigned);
    CUresult (*LaunchHostFunc)(CUstream, CUhostFn, void *);
    CUresult (*StreamSynchronize)(CUstream);
    CUresult (*StreamQuery)(CUstream);
    CUresult (*GetErrorName)(CUresult, const char **);
    CUfunction add_bytes;
} stress_drv;

/* Looks NAME up (CUDA 12.0's version of it) into *fn; 0 or the runtime's error. */
static int stress_driver_entry(const char *name, void **fn)
{
    cudaDriverEntryPointQueryResult found;
    cudaError_t e = cudaGetDriverEntryPointByVersion(name, fn, 12000, cudaEnableDefault, &found);
    return e != cudaSuccess ? e : found == cudaDriverEntryPointSuccess ? 0 : cudaErrorSymbolNotFound;
}

#define STRESS_DRV(field, name) {(void **)&stress_drv.field, name}

/* Finds every driver entry point and the kernel's driver function; 0 or an error. */
static int stress_driver_load(const char **missing)
{
    struct { void **slot; const char *name; } entries[] = {
        STRESS_DRV(Init, "cuInit"), STRESS_DRV(DeviceGet, "cuDeviceGet"),
        STRESS_DRV(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain"), STRESS_DRV(CtxSetCurrent, "cuCtxSetCurrent"),
        STRESS_DRV(StreamCreate, "cuStreamCreate"), STRESS_DRV(StreamDestroy, "cuStreamDestroy"),
        STRESS_DRV(MemAlloc, "cuMemAlloc"), STRESS_DRV(MemFree, "cuMemFree"),
        STRESS_DRV(MemAllocAsync, "cuMemAllocAsync"), STRESS_DRV(MemFreeAsync, "cuMemFreeAsync"),
        STRESS_DRV(HtoD, "cuMemcpyHtoD"), STRESS_DRV(HtoDAsync, "cuMemcpyHtoDAsync"),
        STRESS_DRV(DtoH, "cuMemcpyDtoH"), STRESS_DRV(DtoHAsync, "cuMemcpyDtoHAsync"),
        STRESS_DRV(DtoDAsync, "cuMemcpyDtoDAsync"), STRESS_DRV(MemsetD8Async, "cuMemsetD8Async"),
        STRESS_DRV(Memcpy2D, "cuMemcpy2D"), STRESS_DRV(Memcpy2DAsync, "cuMemcpy2DAsync"),
        STRESS_DRV(LaunchKernel, "cuLaunchKernel"), STRESS_DRV(KernelGetFunction, "cuKernelGetFunction"),
        STRESS_DRV(EventCreate, "cuEventCreate"), STRESS_DRV(EventRecord, "cuEventRecord"),
        STRESS_DRV(EventSynchronize, "cuEventSynchronize"), STRESS_DRV(EventDestroy, "cuEventDestroy"),
        STRESS_DRV(StreamWaitEvent, "cuStreamWaitEvent"), STRESS_DRV(LaunchHostFunc, "cuLaunchHostFunc"),
        STRESS_DRV(StreamSynchronize, "cuStreamSynchronize"), STRESS_DRV(StreamQuery, "cuStreamQuery"),
        STRESS_DRV(GetErrorName, "cuGetErrorName"),
    };
    for (auto &en : entries) {
        int e = stress_driver_entry(en.name, en.slot);
        if (e != 0) {
            *missing = en.name;
            return e;
        }
    }
    cudaKernel_t k;
    int e = cudaGetKernel(&k, stress_add_bytes);
    if (e != 0) {
        *missing = "cudaGetKernel";
        return e;
    }
    *missing = "cuKernelGetFunction";
    return stress_drv.KernelGetFunction(&stress_drv.add_bytes, (CUkernel)k);
}

#define DP(p) ((CUdeviceptr)(uintptr_t)(p))

static int drv_thread_init(int device)
{
    CUdevice dev;
    CUcontext ctx;
    CUresult e = stress_drv.Init(0);
    if (e == CUDA_SUCCESS)
        e = stress_drv.DeviceGet(&dev, device);
    if (e == CUDA_SUCCESS)
        e = stress_drv.PrimaryCtxRetain(&ctx, dev);
    return e == CUDA_SUCCESS ? stress_drv.CtxSetCurrent(ctx) : e;
}

static int drv_stream_create(cudaStream_t *s, enum stress_stream_kind kind)
{
    switch (kind) {
    case STREAM_BLOCKING: return stress_drv.StreamCreate((CUstream *)s, CU_STREAM_DEFAULT);
    case STREAM_NONBLOCKING: return stress_drv.StreamCreate((CUstream *)s, CU_STREAM_NON_BLOCKING);
    case STREAM_PER_THREAD: *s = (cudaStream_t)CU_STREAM_PER_THREAD; return 0;
    default: *s = (cudaStream_t)CU_STREAM_LEGACY; return 0;
    }
}

static int drv_stream_destroy(cudaStream_t s)
{
    return s == (cudaStream_t)CU_STREAM_PER_THREAD || s == (cudaStream_t)CU_STREAM_LEGACY
               ? 0 : stress_drv.StreamDestroy((CUstream)s);
}

static int drv_alloc(void **p, size_t n)
{
    CUdeviceptr d = 0;
    CUresult e = stress_drv.MemAlloc(&d, n);
    *p = (void *)(uintptr_t)d;
    return e;
}

static int drv_free(void *p) { return stress_drv.MemFree(DP(p)); }

static int drv_alloc_async(void **p, size_t n, cudaStream_t s)
{
    CUdeviceptr d = 0;
    CUresult e = stress_drv.MemAllocAsync(&d, n, (CUstream)s);
    *p = (void *)(uintptr_t)d;
    return e;
}

static int drv_free_async(void *p, cudaStream_t s) { return stress_drv.MemFreeAsync(DP(p), (CUstream)s); }

static int drv_h2d(void *d, const void *h, size_t n, cudaStream_t s, int async)
{
    return async ? stress_drv.HtoDAsync(DP(d), h, n, (CUstream)s) : stress_drv.HtoD(DP(d), h, n);
}

static int drv_d2h(void *h, const void *d, size_t n, cudaStream_t s, int async)
{
    return async ? stress_drv.DtoHAsync(h, DP(d), n, (CUstream)s) : stress_drv.DtoH(h, DP(d), n);
}

static int drv_d2d(void *d, const void *src, size_t n, cudaStream_t s)
{
    return stress_drv.DtoDAsync(DP(d), DP(src), n, (CUstream)s);
}

static int drv_2d(CUDA_MEMCPY2D *c, size_t width, size_t height, cudaStream_t s, int async)
{
    c->WidthInBytes = width;
    c->Height = height;
    return async ? stress_drv.Memcpy2DAsync(c, (CUstream)s) : stress_drv.Memcpy2D(c);
}

static int drv_h2d_2d(void *d, size_t dpitch, const void *h, size_t hpitch, size_t width, size_t height,
                      cudaStream_t s, int async)
{
    CUDA_MEMCPY2D c = {};
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = h;
    c.srcPitch = hpitch;
    c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.dstDevice = DP(d);
    c.dstPitch = dpitch;
    return drv_2d(&c, width, height, s, async);
}

static int drv_d2h_2d(void *h, size_t hpitch, const void *d, size_t dpitch, size_t width, size_t height,
                      cudaStream_t s, int async)
{
    CUDA_MEMCPY2D c = {};
    c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    c.srcDevice = DP(d);
    c.srcPitch = dpitch;
    c.dstMemoryType = CU_MEMORYTYPE_HOST;
    c.dstHost = h;
    c.dstPitch = hpitch;
    return drv_2d(&c, width, height, s, async);
}

static int drv_memset8(void *d, unsigned char v, size_t n, cudaStream_t s)
{
    return stress_drv.MemsetD8Async(DP(d), v, n, (CUstream)s);
}

static int drv_add_bytes(void *d, size_t n, unsigned k, cudaStream_t s)
{
    void *args[] = {&d, &n, &k};
    return stress_drv.LaunchKernel(stress_drv.add_bytes, (unsigned)((n + 255) / 256), 1, 1, 256, 1, 1, 0,
                                   (CUstream)s, args, NULL);
}

static int drv_event_create(cudaEvent_t *e) { return stress_drv.EventCreate((CUevent *)e, CU_EVENT_DISABLE_TIMING); }
static int drv_event_record(cudaEvent_t e, cudaStream_t s) { return stress_drv.EventRecord((CUevent)e, (CUstream)s); }
static int drv_event_sync(cudaEvent_t e) { return stress_drv.EventSynchronize((CUevent)e); }
static int drv_event_destroy(cudaEvent_t e) { return stress_drv.EventDestroy((CUevent)e); }
static int drv_stream_wait(cudaStream_t s, cudaEvent_t e) { return stress_drv.StreamWaitEvent((CUstream)s, (CUevent)e, 0); }

static int drv_host_func(cudaStream_t s, void (*fn)(void *), void *data)
{
    return stress_drv.LaunchHostFunc((CUstream)s, fn, data);
}

static int drv_stream_sync(cudaStream_t s) { return stress_drv.StreamSynchronize((CUstream)s); }

static int drv_stream_query(cudaStream_t s)
{
    CUresult e = stress_drv.StreamQuery((CUstream)s);
    return e == CUDA_ERROR_NOT_READY ? 1 : e;
}

static const char *drv_error_name(int code)
{
    const char *name = "unknown CUresult";
    stress_drv.GetErrorName((CUresult)code, &name);
    return name;
}

static const stress_layer stress_driver = {
    "driver", drv_thread_init, drv_stream_create, drv_stream_destroy, drv_alloc, drv_free, drv_alloc_async,
    drv_free_async, drv_h2d, drv_d2h, drv_d2d, drv_h2d_2d, drv_d2h_2d, drv_memset8, drv_add_bytes, drv_event_create, drv_event_record,
    drv_event_sync, drv_event_destroy, drv_stream_wait, drv_host_func, drv_stream_sync, drv_stream_query,
    drv_error_name,
};

#endif
