/* drv_api.c -- a program that uses only the CUDA driver API (linked with -lcuda, so
 * it has DT_NEEDED libcuda.so.1): initialisation, devices, the primary and a
 * created context, memory and every copy form it checks byte for byte, memsets of
 * 8/16/32-bit patterns, streams, events, modules loaded from a cubin and from PTX,
 * launches with kernelParams and with a packed `extra` buffer, function queries,
 * the occupancy calculators (a block-size callback called on the client),
 * the linker, error names, cuGetProcAddress, and the errors bad arguments give.
 *
 * usage: drv_api CUBIN PTX
 * The vadd kernel (tests/kernels/vadd.cu) runs from the cubin and from the PTX (a
 * GPU's driver compiles it; the emulated device's PTX engine runs it).
 * Prints "PASS drv_api" when every check held. */
#include <cuda.h>
#include <stdio.h>
#include "dcheck.h"
#include <stdlib.h>
#include <string.h>


#define CU(call)                                                           \
    do {                                                                   \
        CUresult rc_ = (call);                                             \
        const char *name_ = NULL;                                          \
        cuGetErrorName(rc_, &name_);                                       \
        CHECK(rc_ == CUDA_SUCCESS, "%s: %s", #call, name_ ? name_ : "?"); \
    } while (0)

#define N 1000

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)len + 1);
    if (buf != NULL && fread(buf, 1, (size_t)len, f) != (size_t)len) {
        free(buf);
        buf = NULL;
    }
    if (buf != NULL)
        buf[len] = '\0';
    fclose(f);
    return buf;
}

static void check_devices(CUdevice *dev)
{
    int count = 0, major = 0, v = 0;
    char name[256], bus[32];
    size_t total = 0;
    CU(cuDriverGetVersion(&v));
    CHECK(v >= 12000, "driver version %d", v);
    CU(cuDeviceGetCount(&count));
    CHECK(count >= 1, "%d devices", count);
    CU(cuDeviceGet(dev, 0));
    CU(cuDeviceGetName(name, sizeof name, *dev));
    CU(cuDeviceTotalMem(&total, *dev));
    CU(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, *dev));
    CU(cuDeviceGetPCIBusId(bus, sizeof bus, *dev));
    CUdevice again = -1;
    CU(cuDeviceGetByPCIBusId(&again, bus));
    CHECK(again == *dev, "device by PCI bus id %s: %d", bus, again);
    CHECK(cuDeviceGet(dev + 1, count) == CUDA_ERROR_INVALID_DEVICE, "device %d exists?", count);
    printf("INFO device 0: %s, sm_%d, %zu MiB, %s\n", name, major * 10, total >> 20, bus);
}

/* Every copy direction and form, checked byte for byte. */
static void check_copies(CUstream s)
{
    static unsigned char host[N], back[N];
    CUdeviceptr a, b;
    for (int i = 0; i < N; i++)
        host[i] = (unsigned char)(i * 7 + 3);
    CU(cuMemAlloc(&a, N));
    CU(cuMemAlloc(&b, N));
    CU(cuMemcpyHtoD(a, host, N));
    CU(cuMemcpyDtoD(b, a, N));
    CU(cuMemcpyDtoH(back, b, N));
    CHECK(memcmp(host, back, N) == 0, "HtoD/DtoD/DtoH bytes differ");
    memset(back, 0, N);
    CU(cuMemcpyHtoDAsync(a, host, N, s));
    CU(cuMemcpyDtoDAsync(b, a, N, s));
    CU(cuMemcpyDtoHAsync(back, b, N, s));
    CU(cuStreamSynchronize(s));
    CHECK(memcmp(host, back, N) == 0, "async copies differ");
    memset(back, 0, N);
    CU(cuMemcpy((CUdeviceptr)back, b, N)); /* unified addressing: the pointer says where */
    CHECK(memcmp(host, back, N) == 0, "cuMemcpy differs");
    /* 2D: the middle 10x10 bytes of a 20-wide, 20-high device block */
    CUDA_MEMCPY2D p = {0};
    p.srcMemoryType = CU_MEMORYTYPE_HOST, p.srcHost = host, p.srcPitch = 20;
    p.dstMemoryType = CU_MEMORYTYPE_DEVICE, p.dstDevice = a, p.dstPitch = 20, p.dstXInBytes = 5, p.dstY = 5;
    p.WidthInBytes = 10, p.Height = 10;
    CU(cuMemsetD8(a, 0, 400));
    CU(cuMemcpy2D(&p));
    CU(cuMemcpyDtoH(back, a, 400));
    CHECK(back[5 * 20 + 5] == host[0] && back[14 * 20 + 14] == host[9 * 20 + 9] && back[0] == 0 && back[4 * 20 + 5] == 0,
          "2D copy misplaced");
    CU(cuMemFree(a));
    CU(cuMemFree(b));
}

static void check_memsets(void)
{
    CUdeviceptr d;
    unsigned int words[N / 4];
    unsigned short halves[N / 2];
    CU(cuMemAlloc(&d, N));
    CU(cuMemsetD32(d, 0xdeadbeefu, N / 4));
    CU(cuMemcpyDtoH(words, d, N));
    CHECK(words[0] == 0xdeadbeefu && words[N / 4 - 1] == 0xdeadbeefu, "D32 pattern: %x", words[0]);
    CU(cuMemsetD16(d, 0x1234, N / 2));
    CU(cuMemcpyDtoH(halves, d, N));
    CHECK(halves[0] == 0x1234 && halves[N / 2 - 1] == 0x1234, "D16 pattern: %x", halves[0]);
    CU(cuMemsetD2D32(d, 40, 0x01020304u, 5, 4)); /* 5 words in each of 4 rows of 40 bytes */
    CU(cuMemcpyDtoH(words, d, 160));
    CHECK(words[0] == 0x01020304u && words[4] == 0x01020304u && words[5] == 0x12341234u && words[10] == 0x01020304u,
          "2D D32 pattern: %x %x %x", words[0], words[5], words[10]);
    CHECK(cuMemsetD32(d + 2, 0, 1) == CUDA_ERROR_INVALID_VALUE, "misaligned D32 accepted");
    CUdeviceptr base = 0;
    size_t size = 0;
    CU(cuMemGetAddressRange(&base, &size, d + 100));
    CHECK(base == d && size == N, "address range %llx+%zu", (unsigned long long)base, size);
    unsigned type = 0;
    CU(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d));
    CHECK(type == CU_MEMORYTYPE_DEVICE, "memory type %u", type);
    CU(cuMemFree(d));
}

static void vadd_args(CUdeviceptr *a, CUdeviceptr *b, CUdeviceptr *c, float *ha, float *hb)
{
    for (int i = 0; i < N; i++)
        ha[i] = (float)i, hb[i] = 2.0f * (float)i;
    CU(cuMemAlloc(a, N * sizeof(float)));
    CU(cuMemAlloc(b, N * sizeof(float)));
    CU(cuMemAlloc(c, N * sizeof(float)));
    CU(cuMemcpyHtoD(*a, ha, N * sizeof(float)));
    CU(cuMemcpyHtoD(*b, hb, N * sizeof(float)));
    CU(cuMemsetD32(*c, 0, N));
}

static int vadd_right(CUdeviceptr c, const float *ha, const float *hb)
{
    static float hc[N];
    CU(cuMemcpyDtoH(hc, c, sizeof hc));
    for (int i = 0; i < N; i++)
        if (hc[i] != ha[i] + hb[i])
            return 0;
    return 1;
}

/* Launches vadd of module m both ways; returns the launch's result. */
/* Dynamic shared memory the kernel would want per block (the calculator calls it). */
static size_t smem_for_block(int block_size)
{
    return (size_t)block_size * sizeof(float);
}

/* The occupancy calculators the client computes: a block size a warp multiple
 * within the limits, a grid that fills the device, shared memory that fits. */
static void check_occupancy(CUfunction f)
{
    int grid = 0, block = 0;
    CU(cuOccupancyMaxPotentialBlockSize(&grid, &block, f, smem_for_block, 0, 0));
    CHECK(block > 0 && block % 32 == 0 && block <= 1024 && grid > 0, "potential block size %d, grid %d", block,
          grid);
    CU(cuOccupancyMaxPotentialBlockSizeWithFlags(&grid, &block, f, NULL, 0, 96, 0));
    CHECK(block > 0 && block <= 96 && grid > 0, "block size limited to 96: %d, grid %d", block, grid);
    size_t dyn = 0;
    CU(cuOccupancyAvailableDynamicSMemPerBlock(&dyn, f, 2, 128));
    CHECK(dyn > 0 && dyn <= 256 * 1024, "dynamic shared memory per block for 2 blocks: %zu", dyn);
    CU(cuOccupancyAvailableDynamicSMemPerBlock(&dyn, f, 4096, 1024));
    CHECK(dyn == 0, "4096 blocks of 1024 threads fit with %zu bytes", dyn);
}

static CUresult run_vadd(CUmodule m, CUstream s, CUevent start, CUevent stop)
{
    static float ha[N], hb[N];
    CUfunction f;
    CUdeviceptr a, b, c;
    int n = N;
    CU(cuModuleGetFunction(&f, m, "_Z4vaddPKfS0_Pfi"));
    CHECK(cuModuleGetFunction(&f, m, "no_such_kernel") == CUDA_ERROR_NOT_FOUND, "unknown kernel found");
    CU(cuModuleGetFunction(&f, m, "_Z4vaddPKfS0_Pfi"));
    size_t off = 0, size = 0;
    CU(cuFuncGetParamInfo(f, 3, &off, &size));
    CHECK(off == 24 && size == 4, "param 3 at %zu size %zu", off, size);
    check_occupancy(f);
    vadd_args(&a, &b, &c, ha, hb);
    void *params[] = {&a, &b, &c, &n};
    CU(cuEventRecord(start, s));
    CUresult rc = cuLaunchKernel(f, (N + 127) / 128, 1, 1, 128, 1, 1, 0, s, params, NULL);
    if (rc == CUDA_SUCCESS) {
        CU(cuEventRecord(stop, s));
        CU(cuEventSynchronize(stop));
        float ms = -1;
        CU(cuEventElapsedTime(&ms, start, stop));
        CHECK(ms >= 0, "elapsed %f", ms);
        CHECK(vadd_right(c, ha, hb), "vadd (kernelParams) computed wrong values");
        /* the same launch with the parameters packed by the caller */
        struct { CUdeviceptr a, b, c; int n; int pad; } packed = {a, b, c, N, 0};
        size_t packed_size = 28;
        void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &packed_size,
                         CU_LAUNCH_PARAM_END};
        CU(cuMemsetD32(c, 0, N));
        CU(cuLaunchKernel(f, (N + 127) / 128, 1, 1, 128, 1, 1, 0, s, NULL, extra));
        CU(cuStreamSynchronize(s));
        CHECK(vadd_right(c, ha, hb), "vadd (extra) computed wrong values");
        CHECK(cuLaunchKernel(f, 1, 1, 1, 4096, 1, 1, 0, s, params, NULL) == (CUresult)9 /* invalid config */,
              "4096 threads per block accepted");
    }
    CU(cuMemFree(a));
    CU(cuMemFree(b));
    CU(cuMemFree(c));
    return rc;
}

static void check_modules(const char *cubin_path, const char *ptx_path)
{
    CUmodule cubin, ptx;
    CUstream s;
    CUevent start, stop;
    char *image = read_file(cubin_path), *text = read_file(ptx_path);
    CHECK(image != NULL && text != NULL, "cannot read %s or %s", cubin_path, ptx_path);
    if (image == NULL || text == NULL)
        return;
    CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CU(cuEventCreate(&start, CU_EVENT_DEFAULT));
    CU(cuEventCreate(&stop, CU_EVENT_DEFAULT));
    CU(cuModuleLoadData(&cubin, image));
    free(image); /* the driver keeps its own copy */
    CU(run_vadd(cubin, s, start, stop));
    CU(cuModuleUnload(cubin));
    CHECK(cuModuleLoadData(&cubin, "not a module") == CUDA_ERROR_INVALID_IMAGE, "garbage image accepted");
    CU(cuModuleLoadData(&ptx, text));
    free(text);
    /* a GPU's driver compiles the PTX; the emulated device's PTX engine runs it */
    CU(run_vadd(ptx, s, start, stop));
    CU(cuModuleUnload(ptx));
    CU(cuEventDestroy(start));
    CU(cuEventDestroy(stop));
    CU(cuStreamDestroy(s));
}

/* The linker hands back its one input, which then loads and runs as a module. */
static void check_linker(const char *cubin_path, const char *ptx_path)
{
    CUlinkState link;
    CUmodule m;
    CUstream s;
    CUevent start, stop;
    void *out = NULL;
    size_t size = 0;
    CU(cuStreamCreate(&s, 0));
    CU(cuEventCreate(&start, 0));
    CU(cuEventCreate(&stop, 0));
    CU(cuLinkCreate(0, NULL, NULL, &link));
    CU(cuLinkAddFile(link, CU_JIT_INPUT_CUBIN, cubin_path, 0, NULL, NULL));
    CHECK(cuLinkAddFile(link, CU_JIT_INPUT_PTX, ptx_path, 0, NULL, NULL) == CUDA_ERROR_NOT_SUPPORTED,
          "a second input was linked");
    CU(cuLinkComplete(link, &out, &size));
    CHECK(out != NULL && size > 64 && memcmp(out, "\177ELF", 4) == 0, "linked image is not the cubin");
    CU(cuModuleLoadData(&m, out));
    CU(cuLinkDestroy(link));
    CU(run_vadd(m, s, start, stop));
    CU(cuModuleUnload(m));
    CU(cuEventDestroy(start));
    CU(cuEventDestroy(stop));
    CU(cuStreamDestroy(s));
}

static void check_contexts(CUdevice dev)
{
    CUcontext primary, created, cur = NULL;
    CUdevice d = -1;
    unsigned flags = 0;
    int active = 0;
    CHECK(cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur == NULL, "a context before any was made");
    CHECK(cuMemAlloc(&(CUdeviceptr){0}, 16) == CUDA_ERROR_INVALID_CONTEXT, "allocation without a context");
    CU(cuDevicePrimaryCtxRetain(&primary, dev));
    CU(cuDevicePrimaryCtxGetState(dev, &flags, &active));
    CHECK(active == 1, "primary context inactive after retain");
    CU(cuCtxSetCurrent(primary));
    CU(cuCtxGetDevice(&d));
    CHECK(d == dev, "context device %d", d);
    CU(cuCtxCreate(&created, NULL, 0, dev));
    CU(cuCtxGetCurrent(&cur));
    CHECK(cur == created, "created context not current");
    CU(cuCtxPopCurrent(&cur));
    CHECK(cur == created, "popped another context");
    CU(cuCtxGetCurrent(&cur));
    CHECK(cur == primary, "primary not back after pop");
    CU(cuCtxDestroy(created));
    CHECK(cuCtxPushCurrent(created) == CUDA_ERROR_INVALID_CONTEXT, "destroyed context pushed");
}

static void check_proc_address(void)
{
    void *fn = NULL;
    CUdriverProcAddressQueryResult st;
    CU(cuGetProcAddress("cuMemAlloc", &fn, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &st));
    CHECK(fn == (void *)cuMemAlloc && st == CU_GET_PROC_ADDRESS_SUCCESS, "cuMemAlloc entry point");
    CU(cuGetProcAddress("cuMemcpyHtoD", &fn, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st));
    CHECK(fn != NULL && fn != (void *)cuMemcpyHtoD, "no per-thread twin of cuMemcpyHtoD");
    CHECK(cuGetProcAddress("cuNoSuchFunction", &fn, 12000, 0, &st) == CUDA_ERROR_NOT_FOUND &&
              st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, "unknown function found");
    CHECK(cuGetProcAddress("cuLaunchKernelEx", &fn, 11000, 0, &st) == CUDA_ERROR_NOT_FOUND &&
              st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT, "cuLaunchKernelEx given to CUDA 11.0");
    const char *name = NULL, *text = NULL;
    CU(cuGetErrorName(CUDA_ERROR_INVALID_VALUE, &name));
    CU(cuGetErrorString(CUDA_ERROR_INVALID_VALUE, &text));
    CHECK(name && strcmp(name, "CUDA_ERROR_INVALID_VALUE") == 0 && text && *text, "error name %s", name);
}

int main(int argc, char **argv)
{
    CUdevice dev = 0;
    CUcontext ctx = NULL;
    if (argc != 3) {
        fprintf(stderr, "usage: drv_api CUBIN PTX\n");
        return 2;
    }
    CHECK(cuDeviceGetCount(&(int){0}) == CUDA_ERROR_NOT_INITIALIZED, "a driver call before cuInit worked");
    CU(cuInit(0));
    check_devices(&dev);
    check_contexts(dev);
    CU(cuCtxGetCurrent(&ctx));
    CHECK(ctx != NULL, "no current context");
    CUstream s;
    CU(cuStreamCreate(&s, 0));
    check_copies(s);
    CU(cuStreamDestroy(s));
    check_memsets();
    check_modules(argv[1], argv[2]);
    check_linker(argv[1], argv[2]);
    check_proc_address();
    CU(cuCtxSynchronize());
    CU(cuDevicePrimaryCtxRelease(dev));
    if (dcheck_failures == 0)
        printf("PASS drv_api\n");
    else
        printf("FAILED drv_api: %d check(s)\n", dcheck_failures);
    return dcheck_failures == 0 ? 0 : 1;
}
