/* device.cu -- self-checking test of CUDA device management through the runtime API.
 *
 * Covers cudaGetDeviceCount, cudaGetDevice/cudaSetDevice (valid and invalid
 * ordinals), cudaGetDeviceProperties, cudaDeviceGetAttribute against the
 * properties, driver/runtime versions, cudaSetDeviceFlags/cudaGetDeviceFlags,
 * cudaMemGetInfo, cudaDeviceSynchronize and cudaDeviceReset. Expectations are
 * what a local GPU returns per the CUDA runtime documentation. No kernels.
 */
#include "cuda_check.h"

/* Properties of device DEV must be sane and agree with cudaDeviceGetAttribute. */
static void check_props(int dev)
{
    cudaDeviceProp p;
    memset(&p, 0xff, sizeof p);
    CT_OK(cudaGetDeviceProperties(&p, dev));
    CT_TRUE(memchr(p.name, '\0', sizeof p.name) != NULL);
    CT_TRUE(p.name[0] != '\0');
    CT_TRUE(p.totalGlobalMem > 0);
    CT_TRUE(p.major >= 1);
    CT_TRUE(p.minor >= 0);
    CT_TRUE(p.multiProcessorCount >= 1);
    CT_EQ(p.warpSize, 32);
    CT_TRUE(p.maxThreadsPerBlock >= 32);
    for (int i = 0; i < 3; i++) {
        CT_TRUE(p.maxThreadsDim[i] >= 1);
        CT_TRUE(p.maxGridSize[i] >= 1);
    }
    CT_TRUE(p.sharedMemPerBlock > 0);
    CT_TRUE(p.regsPerBlock > 0);
    CT_TRUE(p.totalConstMem > 0);
    CT_TRUE(p.memPitch > 0);
    CT_TRUE(p.textureAlignment > 0);
    CT_TRUE(p.l2CacheSize >= 0);
    CT_TRUE(p.maxThreadsPerMultiProcessor >= p.maxThreadsPerBlock);
    CT_EQ(p.unifiedAddressing, 1); /* every 64-bit Linux device supports UVA */

    struct { cudaDeviceAttr attr; long long want; const char *name; } tab[] = {
        { cudaDevAttrComputeCapabilityMajor, p.major, "major" },
        { cudaDevAttrComputeCapabilityMinor, p.minor, "minor" },
        { cudaDevAttrMultiProcessorCount, p.multiProcessorCount, "multiProcessorCount" },
        { cudaDevAttrWarpSize, p.warpSize, "warpSize" },
        { cudaDevAttrMaxThreadsPerBlock, p.maxThreadsPerBlock, "maxThreadsPerBlock" },
        { cudaDevAttrMaxBlockDimX, p.maxThreadsDim[0], "maxThreadsDim[0]" },
        { cudaDevAttrMaxBlockDimY, p.maxThreadsDim[1], "maxThreadsDim[1]" },
        { cudaDevAttrMaxBlockDimZ, p.maxThreadsDim[2], "maxThreadsDim[2]" },
        { cudaDevAttrMaxGridDimX, p.maxGridSize[0], "maxGridSize[0]" },
        { cudaDevAttrMaxGridDimY, p.maxGridSize[1], "maxGridSize[1]" },
        { cudaDevAttrMaxGridDimZ, p.maxGridSize[2], "maxGridSize[2]" },
        { cudaDevAttrMaxSharedMemoryPerBlock, (long long)p.sharedMemPerBlock, "sharedMemPerBlock" },
        { cudaDevAttrMaxRegistersPerBlock, p.regsPerBlock, "regsPerBlock" },
        { cudaDevAttrTotalConstantMemory, (long long)p.totalConstMem, "totalConstMem" },
        { cudaDevAttrMaxPitch, (long long)p.memPitch, "memPitch" },
        { cudaDevAttrTextureAlignment, (long long)p.textureAlignment, "textureAlignment" },
        { cudaDevAttrL2CacheSize, p.l2CacheSize, "l2CacheSize" },
        { cudaDevAttrPciBusId, p.pciBusID, "pciBusID" },
        { cudaDevAttrPciDeviceId, p.pciDeviceID, "pciDeviceID" },
        { cudaDevAttrPciDomainId, p.pciDomainID, "pciDomainID" },
        { cudaDevAttrIntegrated, p.integrated, "integrated" },
        { cudaDevAttrConcurrentKernels, p.concurrentKernels, "concurrentKernels" },
        { cudaDevAttrEccEnabled, p.ECCEnabled, "ECCEnabled" },
        { cudaDevAttrAsyncEngineCount, p.asyncEngineCount, "asyncEngineCount" },
        { cudaDevAttrUnifiedAddressing, p.unifiedAddressing, "unifiedAddressing" },
        { cudaDevAttrManagedMemory, p.managedMemory, "managedMemory" },
        { cudaDevAttrCanMapHostMemory, p.canMapHostMemory, "canMapHostMemory" },
        { cudaDevAttrMaxThreadsPerMultiProcessor, p.maxThreadsPerMultiProcessor,
          "maxThreadsPerMultiProcessor" },
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        int v = -12345;
        cudaError_t e = cudaDeviceGetAttribute(&v, tab[i].attr, dev);
        if (e != cudaSuccess)
            ct_fail(__FILE__, __LINE__, tab[i].name, "cudaSuccess", cudaGetErrorName(e));
        else if (v != tab[i].want) {
            char want[32], got[32];
            snprintf(want, sizeof want, "%lld", tab[i].want);
            snprintf(got, sizeof got, "%d", v);
            ct_fail(__FILE__, __LINE__, tab[i].name, want, got);
        }
    }
}

/* Ordinals outside [0, n) are rejected and do not change the current device. */
static void check_invalid_devices(int n)
{
    int cur = -1;
    CT_OK(cudaGetDevice(&cur));
    CT_ERR(cudaSetDevice(n), cudaErrorInvalidDevice);
    CT_ERR(cudaGetLastError(), cudaErrorInvalidDevice);
    CT_ERR(cudaSetDevice(-1), cudaErrorInvalidDevice);
    CT_ERR(cudaGetLastError(), cudaErrorInvalidDevice);
    CT_ERR(cudaGetLastError(), cudaSuccess);
    int after = -1;
    CT_OK(cudaGetDevice(&after));
    CT_EQ(after, cur);

    cudaDeviceProp p;
    CT_ERR(cudaGetDeviceProperties(&p, n), cudaErrorInvalidDevice);
    CT_ERR(cudaGetDeviceProperties(&p, -1), cudaErrorInvalidDevice);
    int v;
    CT_ERR(cudaDeviceGetAttribute(&v, cudaDevAttrWarpSize, n), cudaErrorInvalidDevice);
    CT_ERR(cudaDeviceGetAttribute(&v, cudaDevAttrWarpSize, -1), cudaErrorInvalidDevice);
    CT_ERR(cudaGetDeviceProperties(NULL, 0), cudaErrorInvalidValue);
    CT_ERR(cudaDeviceGetAttribute(NULL, cudaDevAttrWarpSize, 0), cudaErrorInvalidValue);
    CT_ERR(cudaDeviceGetAttribute(&v, (cudaDeviceAttr)100000, 0), cudaErrorInvalidValue);
    (void)cudaGetLastError();
}

static void check_versions(void)
{
    int drv = -1, rt = -1;
    CT_OK(cudaDriverGetVersion(&drv));
    /* The runtime refuses to run on a driver older than its major version. */
    CT_TRUE(drv >= (CUDART_VERSION / 1000) * 1000);
    CT_OK(cudaRuntimeGetVersion(&rt));
    CT_EQ(rt, CUDART_VERSION);
    CT_ERR(cudaDriverGetVersion(NULL), cudaErrorInvalidValue);
    CT_ERR(cudaRuntimeGetVersion(NULL), cudaErrorInvalidValue);
    (void)cudaGetLastError();
}

/* Flags are overwritten on an initialized device; the schedule bits read back. */
static void check_flags(void)
{
    unsigned f = 0;
    CT_OK(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));
    CT_OK(cudaGetDeviceFlags(&f));
    CT_EQ(f & cudaDeviceScheduleMask, cudaDeviceScheduleBlockingSync);
    CT_OK(cudaSetDeviceFlags(cudaDeviceScheduleSpin));
    CT_OK(cudaGetDeviceFlags(&f));
    CT_EQ(f & cudaDeviceScheduleMask, cudaDeviceScheduleSpin);
    CT_ERR(cudaSetDeviceFlags(0xffff0000u), cudaErrorInvalidValue);
    CT_ERR(cudaGetLastError(), cudaErrorInvalidValue);
    CT_OK(cudaSetDeviceFlags(cudaDeviceScheduleAuto));
}

/* cudaMemGetInfo reports the device total and a free count that drops by an allocation. */
static void check_meminfo(int dev)
{
    cudaDeviceProp p;
    CT_OK(cudaGetDeviceProperties(&p, dev));
    size_t fr = 0, tot = 0;
    CT_OK(cudaMemGetInfo(&fr, &tot));
    CT_TRUE(tot > 0);
    CT_TRUE(fr <= tot);
    CT_EQ(tot, p.totalGlobalMem);
    const size_t sz = 64u << 20;
    void *d = NULL;
    CT_OK(cudaMalloc(&d, sz));
    size_t fr2 = 0, tot2 = 0;
    CT_OK(cudaMemGetInfo(&fr2, &tot2));
    CT_EQ(tot2, tot);
    CT_TRUE(fr2 + sz <= fr);
    CT_OK(cudaFree(d));
}

int main(void)
{
    int n = -1;
    CT_OK(cudaGetDeviceCount(&n));
    CT_TRUE(n >= 1);
    if (n < 1)
        return ct_finish("device");
    printf("INFO devices %d\n", n);

    int cur = -1;
    CT_OK(cudaGetDevice(&cur));
    CT_EQ(cur, 0);
    for (int d = 0; d < n; d++) {
        CT_OK(cudaSetDevice(d));
        CT_OK(cudaGetDevice(&cur));
        CT_EQ(cur, d);
        check_props(d);
        CT_OK(cudaDeviceSynchronize());
    }
    CT_OK(cudaSetDevice(0));
    check_invalid_devices(n);
    check_versions();
    check_flags();
    check_meminfo(0);

    /* Reset destroys the context; the device stays current and usable. */
    void *d = NULL;
    CT_OK(cudaMalloc(&d, 4096));
    CT_OK(cudaDeviceReset());
    CT_OK(cudaGetDevice(&cur));
    CT_EQ(cur, 0);
    CT_OK(cudaMalloc(&d, 4096));
    CT_OK(cudaMemset(d, 0, 4096));
    CT_OK(cudaDeviceSynchronize());
    CT_OK(cudaFree(d));
    CT_ERR(cudaGetLastError(), cudaSuccess);
    return ct_finish("device");
}
