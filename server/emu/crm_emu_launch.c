/* crm_emu_launch.c -- kernel launches and function attributes of the emulated device:
 * the launch configuration is checked as a GPU checks it, then the kernel's CPU
 * implementation runs once per thread of the grid, or, for a kernel without one,
 * the PTX engine runs it from its module's PTX (server/emu/ptx/); synchronously
 * (streams execute in order anyway). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/crm_errors.h"
#include "server/emu/crm_emu_kernels.h"

#define CRM__MAX_THREADS 1024
#define CRM__SMEM_DEFAULT (48 * 1024)
#define CRM__SMEM_OPTIN (227 * 1024)
#define CRM__SMEM_PER_SM (228 * 1024)
#define CRM__THREADS_PER_SM 2048
#define CRM__BLOCKS_PER_SM 32

static void *crm__ctx_symbol(const cudarem_emu_ctx *ctx, const char *name, size_t *size)
{
    const struct CUkern_st *k = ctx->priv;
    return name != NULL ? crm__global_addr(k->lib, name, size) : NULL;
}

/* cudaErrorInvalidConfiguration for geometry a GPU refuses, cudaErrorInvalidValue
 * for too much dynamic shared memory. */
static cudaError_t crm__check_config(const struct CUkern_st *k, dim3 g, dim3 b, size_t shmem)
{
    if (b.x == 0 || b.y == 0 || b.z == 0 || b.x > 1024 || b.y > 1024 || b.z > 64 ||
        (unsigned long long)b.x * b.y * b.z > CRM__MAX_THREADS)
        return cudaErrorInvalidConfiguration;
    if (g.x == 0 || g.y == 0 || g.z == 0 || g.x > 0x7fffffffu || g.y > 65535 || g.z > 65535)
        return cudaErrorInvalidConfiguration;
    if (shmem > (size_t)(k->max_dyn_smem > CRM__SMEM_DEFAULT ? k->max_dyn_smem : CRM__SMEM_DEFAULT))
        return cudaErrorInvalidValue;
    return cudaSuccess;
}

/* Runs every thread of the grid. */
static void crm__run(struct CUkern_st *k, dim3 g, dim3 b, void **args, void *smem, size_t shmem)
{
    cudarem_emu_ctx ctx = {
        .gridDim = {g.x, g.y, g.z}, .blockDim = {b.x, b.y, b.z}, .dynamicSmem = smem,
        .dynamicSmemBytes = shmem, .symbol = crm__ctx_symbol, .priv = k,
    };
    for (ctx.blockIdx.z = 0; ctx.blockIdx.z < g.z; ctx.blockIdx.z++)
        for (ctx.blockIdx.y = 0; ctx.blockIdx.y < g.y; ctx.blockIdx.y++)
            for (ctx.blockIdx.x = 0; ctx.blockIdx.x < g.x; ctx.blockIdx.x++) {
                if (smem != NULL)
                    memset(smem, 0, shmem);
                for (ctx.threadIdx.z = 0; ctx.threadIdx.z < b.z; ctx.threadIdx.z++)
                    for (ctx.threadIdx.y = 0; ctx.threadIdx.y < b.y; ctx.threadIdx.y++)
                        for (ctx.threadIdx.x = 0; ctx.threadIdx.x < b.x; ctx.threadIdx.x++)
                            k->fn(&ctx, args);
            }
}

/* The PTX engine's view of device memory: what the allocation table holds. The
 * bounds of a plain allocation are handed back for the engine to check later
 * accesses itself: a kernel runs alone in its session, so the table does not
 * change under it. */
static int crm__engine_memory(void *ctx, uint64_t addr, uint64_t n, uint64_t *lo, uint64_t *hi)
{
    (void)ctx;
    uintptr_t l = 0, h = 0;
    crm__emu_rdlock();
    int ok = n > 0 && crm__mem_range((const void *)(uintptr_t)addr, n, NULL);
    if (ok && !crm__mem_bounds((const void *)(uintptr_t)addr, &l, &h))
        l = h = 0; /* a reservation's mapping: asked each time */
    crm__emu_unlock();
    if (ok) {
        *lo = l;
        *hi = h;
    }
    return ok;
}

static void *crm__engine_variable(void *ctx, const char *name, size_t *size)
{
    return crm__global_addr(((struct CUkern_st *)ctx)->lib, name, size);
}

/* What a kernel printed goes to this process's standard output, as a GPU's
 * runtime writes it there at the next synchronisation (the launch has ended by
 * then); a server session hands it to its client (server/crm_devout.c). */
static void crm__engine_output(void *ctx, const char *text, size_t len)
{
    (void)ctx;
    fwrite(text, 1, len, stdout);
    fflush(stdout);
}

/* Runs k from its module's PTX (cudaLibraryGetKernel handed k out only once the
 * engine could run it); a fault is logged. */
static cudaError_t crm__launch_ptx(struct CUkern_st *k, dim3 g, dim3 b, void **args, size_t shmem)
{
    char msg[512] = "";
    crm__emu_wrlock();
    crm_ptx_module *m = crm__lib_engine(k->lib);
    crm__emu_unlock();
    if (m == NULL)
        return cudaErrorNoKernelImageForDevice;
    crm_ptx_launch l = {{g.x, g.y, g.z}, {b.x, b.y, b.z}, args, k->k->params, k->k->nparams, shmem,
                        crm__engine_memory, crm__engine_variable, k, NULL, crm__engine_output,
                        crm__emu_limit(crm__emu_current(), cudaLimitPrintfFifoSize)};
    cudaError_t err = crm_ptx_run(m, k->k->name, &l, msg, sizeof msg);
    if (err != cudaSuccess)
        crm__emu_log("%s (%s)", msg, crm_error_name((int)err));
    crm__emu_poison(err);
    return err;
}

static cudaError_t crm__launch(const void *func, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t stream)
{
    const void *kernel;
    cudaError_t err = crm__host_kernel(func, &kernel);
    struct CUkern_st *k = (struct CUkern_st *)kernel;
    if (err != cudaSuccess)
        return err;
    crm__emu_rdlock();
    err = crm__kernel_live(k) ? crm__stream_check(stream, NULL) : cudaErrorInvalidDeviceFunction;
    crm__emu_unlock();
    if (err == cudaSuccess)
        err = crm__check_config(k, g, b, shmem);
    if (err != cudaSuccess)
        return err;
    if (k->k->nparams > 0 && args == NULL)
        return cudaErrorInvalidValue;
    if (k->fn == NULL)
        return crm__launch_ptx(k, g, b, args, shmem);
    void *smem = shmem ? malloc(shmem) : NULL;
    if (shmem && smem == NULL)
        return cudaErrorMemoryAllocation;
    crm__run(k, g, b, args, smem, shmem);
    free(smem);
    return cudaSuccess;
}

/* func is a cudaKernel_t (cudaLibraryGetKernel, __cudaGetKernel) or a host function nvcc's
 * program registered. */
CRM_EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                                        cudaStream_t stream)
{
    CRM__EMU_STICKY();
    return crm__emu_ret(crm__launch(func, gridDim, blockDim, args, sharedMem, stream));
}

/* Attributes are checked for being known; none changes how the CPU runs the grid. */
static cudaError_t crm__check_attrs(const cudaLaunchConfig_t *c)
{
    if (c->numAttrs > 0 && c->attrs == NULL)
        return cudaErrorInvalidValue;
    for (unsigned i = 0; i < c->numAttrs; i++) {
        const cudaLaunchAttribute *a = &c->attrs[i];
        if (a->id == cudaLaunchAttributeClusterDimension) {
            const dim3 *cl = (const dim3 *)&a->val.clusterDim;
            if (cl->x == 0 || cl->y == 0 || cl->z == 0 || c->gridDim.x % cl->x || c->gridDim.y % cl->y ||
                c->gridDim.z % cl->z)
                return cudaErrorInvalidClusterSize;
        } else if ((int)a->id < 0 || (int)a->id > cudaLaunchAttributePreferredSharedMemoryCarveout) {
            return cudaErrorInvalidValue;
        }
    }
    return cudaSuccess;
}

CRM_EXPORT cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func, void **args)
{
    CRM__EMU_STICKY();
    if (config == NULL)
        return crm__emu_ret(cudaErrorInvalidValue);
    cudaError_t err = crm__check_attrs(config);
    if (err == cudaSuccess)
        err = crm__launch(func, config->gridDim, config->blockDim, args, config->dynamicSmemBytes, config->stream);
    return crm__emu_ret(err);
}

/* The kernel handle func, or NULL (cudaErrorInvalidDeviceFunction). */
static struct CUkern_st *crm__kernel(const void *func)
{
    if (crm__host_kernel(func, &func) != cudaSuccess)
        return NULL;
    crm__emu_rdlock();
    struct CUkern_st *k = crm__kernel_live(func) ? (struct CUkern_st *)func : NULL;
    crm__emu_unlock();
    return k;
}

CRM_EXPORT cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func)
{
    struct CUkern_st *k = crm__kernel(func);
    if (attr == NULL)
        return crm__emu_ret(cudaErrorInvalidValue);
    if (k == NULL)
        return crm__emu_ret(cudaErrorInvalidDeviceFunction);
    memset(attr, 0, sizeof *attr);
    attr->maxThreadsPerBlock = CRM__MAX_THREADS;
    attr->numRegs = 32;
    attr->ptxVersion = (int)k->lib->info.arch;
    attr->binaryVersion = (int)k->lib->info.arch;
    attr->maxDynamicSharedSizeBytes = k->max_dyn_smem;
    attr->preferredShmemCarveout = k->carveout;
    attr->requiredClusterWidth = k->cluster[0];
    attr->requiredClusterHeight = k->cluster[1];
    attr->requiredClusterDepth = k->cluster[2];
    return cudaSuccess;
}

CRM_EXPORT cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value)
{
    struct CUkern_st *k = crm__kernel(func);
    if (k == NULL)
        return crm__emu_ret(cudaErrorInvalidDeviceFunction);
    switch (attr) {
    case cudaFuncAttributeMaxDynamicSharedMemorySize:
        if (value < 0 || value > CRM__SMEM_OPTIN)
            return crm__emu_ret(cudaErrorInvalidValue);
        k->max_dyn_smem = value;
        return cudaSuccess;
    case cudaFuncAttributePreferredSharedMemoryCarveout:
        if (value < -1 || value > 100)
            return crm__emu_ret(cudaErrorInvalidValue);
        k->carveout = value;
        return cudaSuccess;
    case cudaFuncAttributeRequiredClusterWidth:
    case cudaFuncAttributeRequiredClusterHeight:
    case cudaFuncAttributeRequiredClusterDepth:
        if (value < 0 || value > 8)
            return crm__emu_ret(cudaErrorInvalidValue);
        k->cluster[attr - cudaFuncAttributeRequiredClusterWidth] = value;
        return cudaSuccess;
    case cudaFuncAttributeClusterDimMustBeSet:
    case cudaFuncAttributeNonPortableClusterSizeAllowed:
    case cudaFuncAttributeClusterSchedulingPolicyPreference:
        return cudaSuccess;
    default:
        return crm__emu_ret(cudaErrorInvalidValue);
    }
}

CRM_EXPORT cudaError_t cudaFuncSetCacheConfig(const void *func, enum cudaFuncCache cacheConfig)
{
    struct CUkern_st *k = crm__kernel(func);
    if (k == NULL)
        return crm__emu_ret(cudaErrorInvalidDeviceFunction);
    if ((int)cacheConfig < cudaFuncCachePreferNone || (int)cacheConfig > cudaFuncCachePreferEqual)
        return crm__emu_ret(cudaErrorInvalidValue);
    k->cache_config = (int)cacheConfig;
    return cudaSuccess;
}

/* Blocks per SM limited by threads (whole warps), blocks and shared memory. */
CRM_EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, const void *func,
                                                                               int blockSize, size_t dynamicSMemSize,
                                                                               unsigned int flags)
{
    struct CUkern_st *k = crm__kernel(func);
    if (numBlocks == NULL || (flags & ~1u) != 0)
        return crm__emu_ret(cudaErrorInvalidValue);
    if (k == NULL)
        return crm__emu_ret(cudaErrorInvalidDeviceFunction);
    if (blockSize <= 0 || blockSize > CRM__MAX_THREADS || dynamicSMemSize > (size_t)k->max_dyn_smem) {
        *numBlocks = 0;
        return blockSize <= 0 || blockSize > CRM__MAX_THREADS ? crm__emu_ret(cudaErrorInvalidValue) : cudaSuccess;
    }
    int warps = (blockSize + 31) / 32, n = CRM__THREADS_PER_SM / 32 / warps;
    if (n > CRM__BLOCKS_PER_SM)
        n = CRM__BLOCKS_PER_SM;
    if (dynamicSMemSize > 0 && (size_t)n > CRM__SMEM_PER_SM / (dynamicSMemSize + 1024))
        n = (int)(CRM__SMEM_PER_SM / (dynamicSMemSize + 1024));
    *numBlocks = n;
    return cudaSuccess;
}

CRM_EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, const void *func, int blockSize,
                                                                      size_t dynamicSMemSize)
{
    return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize, dynamicSMemSize, 0);
}
