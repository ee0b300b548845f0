/* crm_drv_occupancy.c -- the driver's occupancy calculators that take a host
 * callback or only combine other answers, computed on the client:
 * cuOccupancyMaxPotentialBlockSize[WithFlags] tries each block size a warp apart
 * (asking cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, whose answers the
 * client remembers per function) as NVIDIA's cuda_occupancy.h does, calling the
 * program's block-size-to-shared-memory function here, where it lives; and
 * cuOccupancyAvailableDynamicSMemPerBlock divides an SM's shared memory among the
 * blocks asked for; cuOccupancyMaxActiveClusters and
 * cuOccupancyMaxPotentialClusterSize count clusters among the blocks the device
 * keeps resident (NVIDIA's cuBLAS asks for them as it creates a handle). */
#include <cuda.h>
#include "interpose/crm_export.h"

/* The current device's attribute a, or 0. */
static int crm__dev_attr(CUdevice_attribute a)
{
    CUdevice dev;
    int v = 0;
    if (cuCtxGetDevice(&dev) != CUDA_SUCCESS || cuDeviceGetAttribute(&v, a, dev) != CUDA_SUCCESS)
        return 0;
    return v;
}

/* The largest block size the function and the device allow, cut to limit when set. */
static int crm__max_block(CUfunction func, int limit, CUresult *rc)
{
    int fn_max = 0, dev_max = crm__dev_attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    *rc = cuFuncGetAttribute(&fn_max, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, func);
    int max = fn_max < dev_max ? fn_max : dev_max;
    return limit > 0 && limit < max ? limit : max;
}

CRM_EXPORT CUresult cuOccupancyMaxPotentialBlockSizeWithFlags(int *minGridSize, int *blockSize, CUfunction func,
                                                              CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                                              size_t dynamicSMemSize, int blockSizeLimit,
                                                              unsigned int flags)
{
    if (minGridSize == NULL || blockSize == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc;
    int max = crm__max_block(func, blockSizeLimit, &rc), warp = crm__dev_attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    int per_sm = crm__dev_attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
    int sms = crm__dev_attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT), best = 0, best_size = 0, best_blocks = 0;
    if (rc != CUDA_SUCCESS)
        return rc;
    if (warp <= 0 || max <= 0 || sms <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    for (int size = (max + warp - 1) / warp * warp; size > 0 && best < per_sm; size -= warp) {
        int try_size = size > max ? max : size, blocks = 0;
        size_t smem = blockSizeToDynamicSMemSize != NULL ? blockSizeToDynamicSMemSize(try_size) : dynamicSMemSize;
        rc = cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, func, try_size, smem, flags);
        if (rc != CUDA_SUCCESS)
            return rc;
        if (blocks * try_size > best) {
            best = blocks * try_size;
            best_size = try_size;
            best_blocks = blocks;
        }
    }
    *minGridSize = best_blocks * sms;
    *blockSize = best_size;
    return CUDA_SUCCESS;
}

CRM_EXPORT CUresult cuOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize, CUfunction func,
                                                     CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                                     size_t dynamicSMemSize, int blockSizeLimit)
{
    return cuOccupancyMaxPotentialBlockSizeWithFlags(minGridSize, blockSize, func, blockSizeToDynamicSMemSize,
                                                     dynamicSMemSize, blockSizeLimit, 0);
}

/* An SM's shared memory shared out among numBlocks blocks, less what each block
 * reserves and the function's static shared memory, within the function's opt-in
 * limit; 0 when that many blocks of blockSize threads do not fit on an SM. */
CRM_EXPORT CUresult cuOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize, CUfunction func, int numBlocks,
                                                            int blockSize)
{
    int static_smem = 0, max_dyn = 0;
    if (dynamicSmemSize == NULL || numBlocks <= 0 || blockSize <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = cuFuncGetAttribute(&static_smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, func);
    if (rc == CUDA_SUCCESS)
        rc = cuFuncGetAttribute(&max_dyn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, func);
    if (rc != CUDA_SUCCESS)
        return rc;
    long long per_sm = crm__dev_attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    long long reserved = crm__dev_attr(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK);
    int threads = crm__dev_attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
    int blocks = crm__dev_attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
    long long each = per_sm / numBlocks - reserved - static_smem;
    if ((long long)numBlocks * blockSize > threads || numBlocks > blocks || each < 0)
        each = 0;
    *dynamicSmemSize = (size_t)(each < max_dyn ? each : max_dyn);
    return CUDA_SUCCESS;
}

/* ---- clusters --------------------------------------------------------------------- */

/* The cluster size a launch of func with config asks for: the config's cluster
 * dimension, else the function's required one; 0 when neither says, -1 when they
 * disagree. */
static int crm__cluster_size(CUfunction func, const CUlaunchConfig *config)
{
    int w = 0, h = 0, d = 0, asked = 0;
    for (unsigned i = 0; i < config->numAttrs && config->attrs != NULL; i++)
        if (config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
            const CUlaunchAttributeValue *v = &config->attrs[i].value;
            asked = (int)(v->clusterDim.x * v->clusterDim.y * v->clusterDim.z);
        }
    if (cuFuncGetAttribute(&w, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, func) != CUDA_SUCCESS || w <= 0)
        return asked;
    cuFuncGetAttribute(&h, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT, func);
    cuFuncGetAttribute(&d, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH, func);
    int required = w * (h > 0 ? h : 1) * (d > 0 ? d : 1);
    return asked == 0 || asked == required ? required : -1;
}

/* The most blocks of one cluster the device co-schedules: 8 (the portable size), 16
 * when the function allows non-portable sizes; 1 on a device without cluster launch. */
static int crm__cluster_limit(CUfunction func)
{
    int non_portable = 0;
    if (!crm__dev_attr(CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH))
        return 1;
    cuFuncGetAttribute(&non_portable, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, func);
    return non_portable ? 16 : 8;
}

/* Clusters of `size` blocks that fit at once: the device's resident blocks for this
 * block shape (SMs times blocks per SM), a cluster's blocks together. */
static CUresult crm__clusters(CUfunction func, const CUlaunchConfig *config, int size, int *out)
{
    int per_sm = 0;
    unsigned threads = config->blockDimX * config->blockDimY * config->blockDimZ;
    CUresult rc = cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, func, (int)threads, config->sharedMemBytes);
    if (rc == CUDA_SUCCESS)
        *out = per_sm * crm__dev_attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT) / size;
    return rc;
}

CRM_EXPORT CUresult cuOccupancyMaxActiveClusters(int *numClusters, CUfunction func, const CUlaunchConfig *config)
{
    if (numClusters == NULL || config == NULL || func == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    int size = crm__cluster_size(func, config);
    if (size <= 0)
        return size < 0 ? CUDA_ERROR_INVALID_CLUSTER_SIZE : CUDA_ERROR_INVALID_VALUE;
    if (size > crm__cluster_limit(func))
        return CUDA_ERROR_INVALID_CLUSTER_SIZE;
    return crm__clusters(func, config, size, numClusters);
}

CRM_EXPORT CUresult cuOccupancyMaxPotentialClusterSize(int *clusterSize, CUfunction func,
                                                       const CUlaunchConfig *config)
{
    if (clusterSize == NULL || config == NULL || func == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    int limit = crm__cluster_limit(func), fit = 0, size = limit;
    for (; size > 1; size /= 2) /* the largest power of two whose clusters fit at least once */
        if (crm__clusters(func, config, size, &fit) == CUDA_SUCCESS && fit > 0)
            break;
    *clusterSize = size;
    return CUDA_SUCCESS;
}
