/* crm_drv_occupancy.c -- the driver's occupancy calculators that take a host
 * callback or only combine other answers, computed on the client:
 * cuOccupancyMaxPotentialBlockSize[WithFlags] tries each block size a warp apart
 * (asking cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, whose answers the
 * client remembers per function) as NVIDIA's cuda_occupancy.h does, calling the
 * program's block-size-to-shared-memory function here, where it lives; and
 * cuOccupancyAvailableDynamicSMemPerBlock divides an SM's shared memory among the
 * blocks asked for. */
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
