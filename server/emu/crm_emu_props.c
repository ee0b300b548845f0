/* crm_emu_props.c -- what the emulated device reports about itself: cudaGetDeviceProperties
 * and cudaDeviceGetAttribute (each attribute backed by a property field reads it).
 *
 * Values follow a compute capability 9.0 part, except that the multiprocessor count
 * is the number of online CPUs, memory is the emulated memory, and features the
 * emulator does not implement (managed memory, memory pools, clusters...) read 0.
 */
#include "server/emu/crm_emu.h"

#include <cuda.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CRM__DEVICE_NAME "cudarem emulated device (CPU)"

static int crm__cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > INT_MAX ? INT_MAX : (int)n;
}

static void crm__props_identity(struct cudaDeviceProp *p, int dev)
{
    snprintf(p->name, sizeof p->name, "%s", CRM__DEVICE_NAME);
    memcpy(p->uuid.bytes, "cudarem-emu-dev", 15);
    p->uuid.bytes[15] = (char)dev;
    p->major = 9;
    p->minor = 0;
    p->pciDomainID = 0;
    p->pciBusID = dev + 1;
    p->pciDeviceID = 0;
    p->multiGpuBoardGroupID = dev;
    p->deviceNumaId = -1;
    p->hostNumaId = -1;
}

static void crm__props_limits(struct cudaDeviceProp *p)
{
    p->totalGlobalMem = crm__emu_mem_size();
    p->sharedMemPerBlock = 48 * 1024;
    p->regsPerBlock = 65536;
    p->warpSize = 32;
    p->memPitch = INT_MAX;
    p->maxThreadsPerBlock = 1024;
    p->maxThreadsDim[0] = 1024, p->maxThreadsDim[1] = 1024, p->maxThreadsDim[2] = 64;
    p->maxGridSize[0] = INT_MAX, p->maxGridSize[1] = 65535, p->maxGridSize[2] = 65535;
    p->totalConstMem = 64 * 1024;
    p->textureAlignment = 512;
    p->texturePitchAlignment = 32;
    p->surfaceAlignment = 512;
    p->multiProcessorCount = crm__cpu_count();
    p->asyncEngineCount = 2;
    p->memoryBusWidth = 5120;
    p->l2CacheSize = 50 * 1024 * 1024;
    p->maxThreadsPerMultiProcessor = 2048;
    p->sharedMemPerMultiprocessor = 228 * 1024;
    p->regsPerMultiprocessor = 65536;
    p->sharedMemPerBlockOptin = 227 * 1024;
    p->maxBlocksPerMultiProcessor = 32;
    p->reservedSharedMemPerBlock = 1024;
}

static void crm__set2(int *a, int x, int y) { a[0] = x, a[1] = y; }
static void crm__set3(int *a, int x, int y, int z) { a[0] = x, a[1] = y, a[2] = z; }

static void crm__props_textures(struct cudaDeviceProp *p)
{
    p->maxTexture1D = 131072;
    p->maxTexture1DMipmap = 32768;
    crm__set2(p->maxTexture2D, 131072, 65536);
    crm__set2(p->maxTexture2DMipmap, 32768, 32768);
    crm__set3(p->maxTexture2DLinear, 131072, 65000, 2097120);
    crm__set2(p->maxTexture2DGather, 32768, 32768);
    crm__set3(p->maxTexture3D, 16384, 16384, 16384);
    crm__set3(p->maxTexture3DAlt, 8192, 8192, 32768);
    p->maxTextureCubemap = 32768;
    crm__set2(p->maxTexture1DLayered, 32768, 2048);
    crm__set3(p->maxTexture2DLayered, 32768, 32768, 2048);
    crm__set2(p->maxTextureCubemapLayered, 32768, 2046);
    p->maxSurface1D = 32768;
    crm__set2(p->maxSurface2D, 131072, 65536);
    crm__set3(p->maxSurface3D, 16384, 16384, 16384);
    crm__set2(p->maxSurface1DLayered, 32768, 2048);
    crm__set3(p->maxSurface2DLayered, 32768, 32768, 2048);
    p->maxSurfaceCubemap = 32768;
    crm__set2(p->maxSurfaceCubemapLayered, 32768, 2046);
}

/* Features the emulator provides read 1; the rest stay 0 from the memset. */
static void crm__props_features(struct cudaDeviceProp *p)
{
    p->canMapHostMemory = 1;
    p->concurrentKernels = 1;
    p->unifiedAddressing = 1;
    p->streamPrioritiesSupported = 1;
    p->globalL1CacheSupported = 1;
    p->localL1CacheSupported = 1;
    p->computePreemptionSupported = 1;
    p->hostRegisterSupported = 1;
    p->hostRegisterReadOnlySupported = 1;
    p->memoryPoolsSupported = 1; /* stream-ordered allocation: the client's (interpose/crm_drv_pool.c) */
}

/* Fills every field of *p for device dev (valid). */
static void crm__props_fill(struct cudaDeviceProp *p, int dev)
{
    memset(p, 0, sizeof *p);
    crm__props_identity(p, dev);
    crm__props_limits(p);
    crm__props_textures(p);
    crm__props_features(p);
}

CRM_EXPORT cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    if (prop == NULL)
        return crm__emu_ret(cudaErrorInvalidValue);
    if (!crm__emu_valid_device(device))
        return crm__emu_ret(cudaErrorInvalidDevice);
    crm__props_fill(prop, device);
    return cudaSuccess;
}

/* --- attributes --- */

enum { CRM__T_INT, CRM__T_UINT, CRM__T_SIZE };

typedef struct crm__attr_field {
    int attr;        /* enum cudaDeviceAttr */
    size_t off;      /* offset of the field in struct cudaDeviceProp */
    int type;        /* CRM__T_* */
} crm__attr_field;

#define CRM__F(attr, field, type) { attr, offsetof(struct cudaDeviceProp, field), type }
#define CRM__I(attr, field) CRM__F(attr, field, CRM__T_INT)

/* Attributes that mirror a property field. */
static const crm__attr_field crm__attr_fields[] = {
    CRM__I(cudaDevAttrMaxThreadsPerBlock, maxThreadsPerBlock),
    CRM__I(cudaDevAttrMaxBlockDimX, maxThreadsDim[0]),
    CRM__I(cudaDevAttrMaxBlockDimY, maxThreadsDim[1]),
    CRM__I(cudaDevAttrMaxBlockDimZ, maxThreadsDim[2]),
    CRM__I(cudaDevAttrMaxGridDimX, maxGridSize[0]),
    CRM__I(cudaDevAttrMaxGridDimY, maxGridSize[1]),
    CRM__I(cudaDevAttrMaxGridDimZ, maxGridSize[2]),
    CRM__F(cudaDevAttrMaxSharedMemoryPerBlock, sharedMemPerBlock, CRM__T_SIZE),
    CRM__F(cudaDevAttrTotalConstantMemory, totalConstMem, CRM__T_SIZE),
    CRM__I(cudaDevAttrWarpSize, warpSize),
    CRM__F(cudaDevAttrMaxPitch, memPitch, CRM__T_SIZE),
    CRM__I(cudaDevAttrMaxRegistersPerBlock, regsPerBlock),
    CRM__F(cudaDevAttrTextureAlignment, textureAlignment, CRM__T_SIZE),
    CRM__I(cudaDevAttrMultiProcessorCount, multiProcessorCount),
    CRM__I(cudaDevAttrIntegrated, integrated),
    CRM__I(cudaDevAttrCanMapHostMemory, canMapHostMemory),
    CRM__I(cudaDevAttrMaxTexture1DWidth, maxTexture1D),
    CRM__I(cudaDevAttrMaxTexture2DWidth, maxTexture2D[0]),
    CRM__I(cudaDevAttrMaxTexture2DHeight, maxTexture2D[1]),
    CRM__I(cudaDevAttrMaxTexture3DWidth, maxTexture3D[0]),
    CRM__I(cudaDevAttrMaxTexture3DHeight, maxTexture3D[1]),
    CRM__I(cudaDevAttrMaxTexture3DDepth, maxTexture3D[2]),
    CRM__I(cudaDevAttrMaxTexture2DLayeredWidth, maxTexture2DLayered[0]),
    CRM__I(cudaDevAttrMaxTexture2DLayeredHeight, maxTexture2DLayered[1]),
    CRM__I(cudaDevAttrMaxTexture2DLayeredLayers, maxTexture2DLayered[2]),
    CRM__F(cudaDevAttrSurfaceAlignment, surfaceAlignment, CRM__T_SIZE),
    CRM__I(cudaDevAttrConcurrentKernels, concurrentKernels),
    CRM__I(cudaDevAttrEccEnabled, ECCEnabled),
    CRM__I(cudaDevAttrPciBusId, pciBusID),
    CRM__I(cudaDevAttrPciDeviceId, pciDeviceID),
    CRM__I(cudaDevAttrTccDriver, tccDriver),
    CRM__I(cudaDevAttrGlobalMemoryBusWidth, memoryBusWidth),
    CRM__I(cudaDevAttrL2CacheSize, l2CacheSize),
    CRM__I(cudaDevAttrMaxThreadsPerMultiProcessor, maxThreadsPerMultiProcessor),
    CRM__I(cudaDevAttrAsyncEngineCount, asyncEngineCount),
    CRM__I(cudaDevAttrUnifiedAddressing, unifiedAddressing),
    CRM__I(cudaDevAttrMaxTexture1DLayeredWidth, maxTexture1DLayered[0]),
    CRM__I(cudaDevAttrMaxTexture1DLayeredLayers, maxTexture1DLayered[1]),
    CRM__I(cudaDevAttrMaxTexture2DGatherWidth, maxTexture2DGather[0]),
    CRM__I(cudaDevAttrMaxTexture2DGatherHeight, maxTexture2DGather[1]),
    CRM__I(cudaDevAttrMaxTexture3DWidthAlt, maxTexture3DAlt[0]),
    CRM__I(cudaDevAttrMaxTexture3DHeightAlt, maxTexture3DAlt[1]),
    CRM__I(cudaDevAttrMaxTexture3DDepthAlt, maxTexture3DAlt[2]),
    CRM__I(cudaDevAttrPciDomainId, pciDomainID),
    CRM__F(cudaDevAttrTexturePitchAlignment, texturePitchAlignment, CRM__T_SIZE),
    CRM__I(cudaDevAttrMaxTextureCubemapWidth, maxTextureCubemap),
    CRM__I(cudaDevAttrMaxTextureCubemapLayeredWidth, maxTextureCubemapLayered[0]),
    CRM__I(cudaDevAttrMaxTextureCubemapLayeredLayers, maxTextureCubemapLayered[1]),
    CRM__I(cudaDevAttrMaxSurface1DWidth, maxSurface1D),
    CRM__I(cudaDevAttrMaxSurface2DWidth, maxSurface2D[0]),
    CRM__I(cudaDevAttrMaxSurface2DHeight, maxSurface2D[1]),
    CRM__I(cudaDevAttrMaxSurface3DWidth, maxSurface3D[0]),
    CRM__I(cudaDevAttrMaxSurface3DHeight, maxSurface3D[1]),
    CRM__I(cudaDevAttrMaxSurface3DDepth, maxSurface3D[2]),
    CRM__I(cudaDevAttrMaxSurface1DLayeredWidth, maxSurface1DLayered[0]),
    CRM__I(cudaDevAttrMaxSurface1DLayeredLayers, maxSurface1DLayered[1]),
    CRM__I(cudaDevAttrMaxSurface2DLayeredWidth, maxSurface2DLayered[0]),
    CRM__I(cudaDevAttrMaxSurface2DLayeredHeight, maxSurface2DLayered[1]),
    CRM__I(cudaDevAttrMaxSurface2DLayeredLayers, maxSurface2DLayered[2]),
    CRM__I(cudaDevAttrMaxSurfaceCubemapWidth, maxSurfaceCubemap),
    CRM__I(cudaDevAttrMaxSurfaceCubemapLayeredWidth, maxSurfaceCubemapLayered[0]),
    CRM__I(cudaDevAttrMaxSurfaceCubemapLayeredLayers, maxSurfaceCubemapLayered[1]),
    CRM__I(cudaDevAttrMaxTexture2DLinearWidth, maxTexture2DLinear[0]),
    CRM__I(cudaDevAttrMaxTexture2DLinearHeight, maxTexture2DLinear[1]),
    CRM__I(cudaDevAttrMaxTexture2DLinearPitch, maxTexture2DLinear[2]),
    CRM__I(cudaDevAttrMaxTexture2DMipmappedWidth, maxTexture2DMipmap[0]),
    CRM__I(cudaDevAttrMaxTexture2DMipmappedHeight, maxTexture2DMipmap[1]),
    CRM__I(cudaDevAttrComputeCapabilityMajor, major),
    CRM__I(cudaDevAttrComputeCapabilityMinor, minor),
    CRM__I(cudaDevAttrMaxTexture1DMipmappedWidth, maxTexture1DMipmap),
    CRM__I(cudaDevAttrStreamPrioritiesSupported, streamPrioritiesSupported),
    CRM__I(cudaDevAttrGlobalL1CacheSupported, globalL1CacheSupported),
    CRM__I(cudaDevAttrLocalL1CacheSupported, localL1CacheSupported),
    CRM__F(cudaDevAttrMaxSharedMemoryPerMultiprocessor, sharedMemPerMultiprocessor, CRM__T_SIZE),
    CRM__I(cudaDevAttrMaxRegistersPerMultiprocessor, regsPerMultiprocessor),
    CRM__I(cudaDevAttrManagedMemory, managedMemory),
    CRM__I(cudaDevAttrIsMultiGpuBoard, isMultiGpuBoard),
    CRM__I(cudaDevAttrMultiGpuBoardGroupID, multiGpuBoardGroupID),
    CRM__I(cudaDevAttrHostNativeAtomicSupported, hostNativeAtomicSupported),
    CRM__I(cudaDevAttrPageableMemoryAccess, pageableMemoryAccess),
    CRM__I(cudaDevAttrConcurrentManagedAccess, concurrentManagedAccess),
    CRM__I(cudaDevAttrComputePreemptionSupported, computePreemptionSupported),
    CRM__I(cudaDevAttrCanUseHostPointerForRegisteredMem, canUseHostPointerForRegisteredMem),
    CRM__I(cudaDevAttrCooperativeLaunch, cooperativeLaunch),
    CRM__F(cudaDevAttrMaxSharedMemoryPerBlockOptin, sharedMemPerBlockOptin, CRM__T_SIZE),
    CRM__I(cudaDevAttrHostRegisterSupported, hostRegisterSupported),
    CRM__I(cudaDevAttrPageableMemoryAccessUsesHostPageTables,
           pageableMemoryAccessUsesHostPageTables),
    CRM__I(cudaDevAttrDirectManagedMemAccessFromHost, directManagedMemAccessFromHost),
    CRM__I(cudaDevAttrMaxBlocksPerMultiprocessor, maxBlocksPerMultiProcessor),
    CRM__I(cudaDevAttrMaxPersistingL2CacheSize, persistingL2CacheMaxSize),
    CRM__I(cudaDevAttrMaxAccessPolicyWindowSize, accessPolicyMaxWindowSize),
    CRM__F(cudaDevAttrReservedSharedMemoryPerBlock, reservedSharedMemPerBlock, CRM__T_SIZE),
    CRM__I(cudaDevAttrSparseCudaArraySupported, sparseCudaArraySupported),
    CRM__I(cudaDevAttrHostRegisterReadOnlySupported, hostRegisterReadOnlySupported),
    CRM__I(cudaDevAttrTimelineSemaphoreInteropSupported, timelineSemaphoreInteropSupported),
    CRM__I(cudaDevAttrMemoryPoolsSupported, memoryPoolsSupported),
    CRM__I(cudaDevAttrGPUDirectRDMASupported, gpuDirectRDMASupported),
    CRM__F(cudaDevAttrGPUDirectRDMAFlushWritesOptions, gpuDirectRDMAFlushWritesOptions,
           CRM__T_UINT),
    CRM__I(cudaDevAttrGPUDirectRDMAWritesOrdering, gpuDirectRDMAWritesOrdering),
    CRM__F(cudaDevAttrMemoryPoolSupportedHandleTypes, memoryPoolSupportedHandleTypes,
           CRM__T_UINT),
    CRM__I(cudaDevAttrClusterLaunch, clusterLaunch),
    CRM__I(cudaDevAttrDeferredMappingCudaArraySupported, deferredMappingCudaArraySupported),
    CRM__I(cudaDevAttrIpcEventSupport, ipcEventSupported),
    CRM__I(cudaDevAttrNumaConfig, deviceNumaConfig),
    CRM__I(cudaDevAttrNumaId, deviceNumaId),
    CRM__I(cudaDevAttrMpsEnabled, mpsEnabled),
    CRM__I(cudaDevAttrHostNumaId, hostNumaId),
    CRM__F(cudaDevAttrGpuPciDeviceId, gpuPciDeviceID, CRM__T_UINT),
    CRM__F(cudaDevAttrGpuPciSubsystemId, gpuPciSubsystemID, CRM__T_UINT),
    CRM__I(cudaDevAttrHostNumaMultinodeIpcSupported, hostNumaMultinodeIpcSupported),
};

/* Attributes with no property field in CUDA 13: fixed values. */
static const struct { int attr; int value; } crm__attr_consts[] = {
    { cudaDevAttrClockRate, 1500000 },          /* kHz */
    { cudaDevAttrGpuOverlap, 1 },
    { cudaDevAttrKernelExecTimeout, 0 },
    { cudaDevAttrComputeMode, cudaComputeModeDefault },
    { cudaDevAttrMemoryClockRate, 2619000 },    /* kHz */
    { cudaDevAttrMaxTexture1DLinearWidth, 1 << 28 },
    { cudaDevAttrSingleToDoublePrecisionPerfRatio, 2 },
    { cudaDevAttrCanFlushRemoteWrites, 0 },
    { cudaDevAttrMemSyncDomainCount, 1 },
    { cudaDevAttrD3D12CigSupported, 0 },
    { cudaDevAttrVulkanCigSupported, 0 },
    { cudaDevAttrHostNumaMemoryPoolsSupported, 0 },
    { cudaDevAttrHostMemoryPoolsSupported, 0 },
    { cudaDevAttrOnlyPartialHostNativeAtomicSupported, 0 },
    /* Capabilities the driver reports (the runtime numbers them alike, most as
     * reserved) that the emulated device does not have. */
    { CU_DEVICE_ATTRIBUTE_CAN_TEX2D_GATHER, 0 },
    { CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1, 0 },
    { CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS_V1, 0 },
    { CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR_V1, 0 },
    { CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH, 0 },
    { CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 1 }, /* crm_emu_vmm.c */
    { CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, 0 },
    { CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED, 0 },
    { CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED, 0 },
    { CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED, 0 },
    { CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, 0 },
    { CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, 0 },
    { CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR, 0 },
    { CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, 0 },
    { CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED, 0 },
    { CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, 0 },
    { CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS, 0 },
    { CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, 0 },
    { CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK, 0 },
    { CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_MAXIMUM_LENGTH, 0 },
    { CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0 },
    { CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0 },
    { CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED, 0 },
};

#define CRM__COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Reads field f of p as an int (size_t values saturate at INT_MAX). */
static int crm__field_value(const struct cudaDeviceProp *p, const crm__attr_field *f)
{
    const char *base = (const char *)p + f->off;
    int i;
    unsigned u;
    size_t z;
    switch (f->type) {
    case CRM__T_INT: memcpy(&i, base, sizeof i); return i;
    case CRM__T_UINT: memcpy(&u, base, sizeof u); return (int)u;
    default: memcpy(&z, base, sizeof z); return z > INT_MAX ? INT_MAX : (int)z;
    }
}

/* Returns 0 and sets *value for attr on dev, or -1 for an unknown attribute. */
static int crm__attr_lookup(int attr, int dev, int *value)
{
    for (size_t i = 0; i < CRM__COUNT(crm__attr_consts); i++) {
        if (crm__attr_consts[i].attr == attr) {
            *value = crm__attr_consts[i].value;
            return 0;
        }
    }
    for (size_t i = 0; i < CRM__COUNT(crm__attr_fields); i++) {
        if (crm__attr_fields[i].attr == attr) {
            struct cudaDeviceProp p;
            crm__props_fill(&p, dev);
            *value = crm__field_value(&p, &crm__attr_fields[i]);
            return 0;
        }
    }
    return -1;
}

/* Invalid device: cudaErrorInvalidDevice; NULL value, reserved or unknown attribute:
 * cudaErrorInvalidValue. */
CRM_EXPORT cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    if (value == NULL)
        return crm__emu_ret(cudaErrorInvalidValue);
    if (!crm__emu_valid_device(device))
        return crm__emu_ret(cudaErrorInvalidDevice);
    if (crm__attr_lookup((int)attr, device, value) != 0)
        return crm__emu_ret(cudaErrorInvalidValue);
    return cudaSuccess;
}
