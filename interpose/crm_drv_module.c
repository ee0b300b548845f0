/* crm_drv_module.c -- driver modules, libraries, kernels and launches. A CUmodule
 * and a CUlibrary are the same client module (client/crm_modules.h); a CUfunction
 * and a CUkernel the same kernel handle, which the runtime layer's launches accept
 * too. Loading reads the image on the client; its bytes cross the wire when one of
 * its kernels is first launched (by digest first: the server's cache may have it). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "client/crm_modules.h"
#include "common/crm_image.h"
#include "interpose/crm_drv.h"
#include "interpose/crm_export.h"
#include "interpose/crm_rt_managed.h"
#include "interpose/crm_rt_launch.h"

#define CRM__MOD(m) ((crm_kmodule *)(m))

/* The kernel behind a CUfunction or CUkernel, or NULL when it is none of ours. */
static crm_kfunc *crm__func(const void *h)
{
    return h != NULL ? crm_modules_func(h) : NULL;
}

CUresult crm_drv_module_load(CUmodule *out, const void *image, int in_image, int library)
{
    cudaError_t err;
    CUresult rc = library ? crm_drv_check_init() : crm_drv_need_ctx();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (out == NULL || image == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    /* nvcc's wrapper points into the program's image, which outlives the module */
    crm_kmodule *m = crm_modules_load(image, in_image || crm_image_kind(image, 24) == CRM_IMAGE_WRAPPER, &err);
    if (m == NULL)
        return err == cudaErrorInvalidKernelImage ? CUDA_ERROR_INVALID_IMAGE : crm_drv_err(err);
    *out = (CUmodule)m;
    return CUDA_SUCCESS;
}

CRM_EXPORT CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
    return crm_drv_module_load(module, image, 0, 0);
}

/* JIT options tune a compiler that runs on the server; they are not forwarded. */
CRM_EXPORT CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
                                       CUjit_option *options, void **optionValues)
{
    (void)numOptions, (void)options, (void)optionValues;
    return crm_drv_module_load(module, image, 0, 0);
}

CRM_EXPORT CUresult cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin)
{
    return crm_drv_module_load(module, fatCubin, 0, 0);
}

/* Reads the whole file, then loads its contents as an image. */
CRM_EXPORT CUresult cuModuleLoad(CUmodule *module, const char *fname)
{
    if (fname == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    FILE *f = fopen(fname, "rb");
    if (f == NULL)
        return CUDA_ERROR_FILE_NOT_FOUND;
    size_t cap = 1 << 16, len = 0, got;
    char *buf = malloc(cap + 1);
    while (buf != NULL && (got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        char *n = len == cap ? realloc(buf, (cap *= 2) + 1) : buf;
        if (n == NULL)
            free(buf);
        buf = n;
    }
    fclose(f);
    if (buf == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    buf[len] = '\0'; /* PTX read from a file has no NUL of its own */
    CUresult rc = crm_drv_module_load(module, buf, 0, 0);
    free(buf);
    return rc;
}

CRM_EXPORT CUresult cuModuleUnload(CUmodule hmod)
{
    CUresult rc = crm_drv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!crm_modules_valid(CRM__MOD(hmod)))
        return CUDA_ERROR_INVALID_HANDLE;
    crm_modules_unregister(CRM__MOD(hmod));
    return CUDA_SUCCESS;
}

CRM_EXPORT CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    crm_kfunc *f;
    CUresult rc = crm_drv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (hfunc == NULL || name == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (!crm_modules_valid(CRM__MOD(hmod)))
        return CUDA_ERROR_INVALID_HANDLE;
    cudaError_t err = crm_modules_get_function(CRM__MOD(hmod), name, &f);
    if (err == cudaErrorSymbolNotFound)
        return CUDA_ERROR_NOT_FOUND;
    if (err != cudaSuccess)
        return err == cudaErrorInvalidKernelImage ? CUDA_ERROR_INVALID_IMAGE : crm_drv_err(err);
    *hfunc = (CUfunction)f;
    return CUDA_SUCCESS;
}

/* Global `name` of a module: its address and size (either may be NULL); managed:
 * made managed memory (a __managed__ variable). */
static CUresult crm__global(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod, const char *name, int managed)
{
    uint64_t addr = 0;
    size_t size = 0;
    if (name == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (!crm_modules_valid(CRM__MOD(hmod)))
        return CUDA_ERROR_INVALID_HANDLE;
    CUresult rc = CRM_DRV_RT(crm_modules_get_global(CRM__MOD(hmod), name, &addr, &size));
    if (rc == CUDA_SUCCESS && managed)
        rc = crm_drv_err(crm_managed_adopt(addr, size));
    if (rc == CUDA_SUCCESS && dptr != NULL)
        *dptr = addr;
    if (rc == CUDA_SUCCESS && bytes != NULL)
        *bytes = size;
    return rc;
}

CRM_EXPORT CUresult cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod, const char *name)
{
    CUresult rc = crm_drv_need_ctx();
    return rc != CUDA_SUCCESS ? rc : crm__global(dptr, bytes, hmod, name, 0);
}

CRM_EXPORT CUresult cuModuleGetLoadingMode(CUmoduleLoadingMode *mode)
{
    if (mode == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    *mode = CU_MODULE_LAZY_LOADING; /* modules travel at their first use */
    return CUDA_SUCCESS;
}

CRM_EXPORT CUresult cuModuleGetFunctionCount(unsigned int *count, CUmodule mod)
{
    size_t n = 0;
    if (count == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (!crm_modules_valid(CRM__MOD(mod)))
        return CUDA_ERROR_INVALID_HANDLE;
    CUresult rc = CRM_DRV_RT(crm_modules_kernel_names(CRM__MOD(mod), NULL, &n));
    if (rc == CUDA_SUCCESS)
        *count = (unsigned)n;
    return rc;
}

CRM_EXPORT CUresult cuModuleEnumerateFunctions(CUfunction *functions, unsigned int numFunctions, CUmodule mod)
{
    const char **names = NULL;
    size_t n = 0;
    if (functions == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (!crm_modules_valid(CRM__MOD(mod)))
        return CUDA_ERROR_INVALID_HANDLE;
    CUresult rc = CRM_DRV_RT(crm_modules_kernel_names(CRM__MOD(mod), &names, &n));
    for (size_t i = 0; rc == CUDA_SUCCESS && i < n && i < numFunctions; i++)
        rc = cuModuleGetFunction(&functions[i], mod, names[i]);
    free(names);
    return rc;
}

/* ---- libraries: context-independent modules -------------------------------------- */

CRM_EXPORT CUresult cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions,
                                      void **jitOptionsValues, unsigned int numJitOptions,
                                      CUlibraryOption *libraryOptions, void **libraryOptionValues,
                                      unsigned int numLibraryOptions)
{
    (void)jitOptions, (void)jitOptionsValues, (void)numJitOptions;
    (void)libraryOptions, (void)libraryOptionValues, (void)numLibraryOptions;
    return crm_drv_module_load((CUmodule *)library, code, 0, 1);
}

CRM_EXPORT CUresult cuLibraryUnload(CUlibrary library) { return cuModuleUnload((CUmodule)library); }

CRM_EXPORT CUresult cuLibraryGetModule(CUmodule *pMod, CUlibrary library)
{
    if (pMod == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (!crm_modules_valid(CRM__MOD(library)))
        return CUDA_ERROR_INVALID_HANDLE;
    *pMod = (CUmodule)library;
    return CUDA_SUCCESS;
}

CRM_EXPORT CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
    return cuModuleGetFunction((CUfunction *)pKernel, (CUmodule)library, name);
}

CRM_EXPORT CUresult cuLibraryGetKernelCount(unsigned int *count, CUlibrary lib)
{
    return cuModuleGetFunctionCount(count, (CUmodule)lib);
}

CRM_EXPORT CUresult cuLibraryEnumerateKernels(CUkernel *kernels, unsigned int numKernels, CUlibrary lib)
{
    return cuModuleEnumerateFunctions((CUfunction *)kernels, numKernels, (CUmodule)lib);
}

CRM_EXPORT CUresult cuLibraryGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUlibrary library, const char *name)
{
    return cuModuleGetGlobal_v2(dptr, bytes, (CUmodule)library, name);
}

/* A __managed__ variable, as NVIDIA's static runtime asks for each at its first
 * host use, with or without a current context: managed memory belongs to none. */
CRM_EXPORT CUresult cuLibraryGetManaged(CUdeviceptr *dptr, size_t *bytes, CUlibrary library, const char *name)
{
    CUresult rc = crm_drv_check_init();
    return rc != CUDA_SUCCESS ? rc : crm__global(dptr, bytes, (CUmodule)library, name, 1);
}

CRM_EXPORT CUresult cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
    CUresult rc = crm_drv_need_ctx();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (pFunc == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (crm__func(kernel) == NULL)
        return CUDA_ERROR_INVALID_HANDLE;
    *pFunc = (CUfunction)kernel;
    return CUDA_SUCCESS;
}

CRM_EXPORT CUresult cuKernelGetLibrary(CUlibrary *pLib, CUkernel kernel)
{
    crm_kfunc *f = crm__func(kernel);
    if (pLib == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (f == NULL)
        return CUDA_ERROR_INVALID_HANDLE;
    *pLib = (CUlibrary)crm_modules_func_module(f);
    return CUDA_SUCCESS;
}

CRM_EXPORT CUresult cuFuncGetModule(CUmodule *hmod, CUfunction hfunc)
{
    return cuKernelGetLibrary((CUlibrary *)hmod, (CUkernel)hfunc);
}

CRM_EXPORT CUresult cuFuncGetName(const char **name, CUfunction hfunc)
{
    crm_kfunc *f = crm__func(hfunc);
    if (name == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (f == NULL)
        return CUDA_ERROR_INVALID_HANDLE;
    *name = crm_modules_func_name(f);
    return CUDA_SUCCESS;
}

CRM_EXPORT CUresult cuKernelGetName(const char **name, CUkernel hfunc) { return cuFuncGetName(name, (CUfunction)hfunc); }

CRM_EXPORT CUresult cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t *paramOffset, size_t *paramSize)
{
    size_t off = 0, size = 0;
    crm_kfunc *f = crm__func(func);
    if (f == NULL)
        return CUDA_ERROR_INVALID_HANDLE;
    cudaError_t err = crm_modules_func_param(f, paramIndex, &off, &size);
    if (err != cudaSuccess)
        return crm_drv_err(err);
    if (paramOffset != NULL)
        *paramOffset = off;
    if (paramSize != NULL)
        *paramSize = size;
    return CUDA_SUCCESS;
}

CRM_EXPORT CUresult cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex, size_t *paramOffset, size_t *paramSize)
{
    return cuFuncGetParamInfo((CUfunction)kernel, paramIndex, paramOffset, paramSize);
}

CRM_EXPORT CUresult cuFuncIsLoaded(CUfunctionLoadingState *state, CUfunction function)
{
    crm_kfunc *f = crm__func(function);
    if (state == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (f == NULL)
        return CUDA_ERROR_INVALID_HANDLE;
    *state = crm_modules_func_loaded(f) ? CU_FUNCTION_LOADING_STATE_LOADED : CU_FUNCTION_LOADING_STATE_UNLOADED;
    return CUDA_SUCCESS;
}

/* Makes the kernel launchable now: its module crosses the wire if it has not. */
CRM_EXPORT CUresult cuFuncLoad(CUfunction function)
{
    crm_kready k;
    crm_kfunc *f = crm__func(function);
    CUresult rc = crm_drv_need_ctx();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (f == NULL)
        return CUDA_ERROR_INVALID_HANDLE;
    return CRM_DRV_RT(crm_modules_prepare(f, &k));
}

/* ---- function attributes and occupancy -------------------------------------------- */

/* The attribute from the server's struct cudaFuncAttributes of f. */
static CUresult crm__func_attr(int *pi, CUfunction_attribute a, crm_kfunc *f)
{
    struct cudaFuncAttributes fa;
    CUresult rc = CRM_DRV_RT(cudaFuncGetAttributes(&fa, f));
    if (rc != CUDA_SUCCESS)
        return rc;
    switch (a) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = fa.maxThreadsPerBlock; break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *pi = (int)fa.sharedSizeBytes; break;
    case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: *pi = (int)fa.constSizeBytes; break;
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *pi = (int)fa.localSizeBytes; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *pi = fa.numRegs; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION: *pi = fa.ptxVersion; break;
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *pi = fa.binaryVersion; break;
    case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA: *pi = fa.cacheModeCA; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *pi = fa.maxDynamicSharedSizeBytes; break;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *pi = fa.preferredShmemCarveout; break;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET: *pi = fa.clusterDimMustBeSet; break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH: *pi = fa.requiredClusterWidth; break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT: *pi = fa.requiredClusterHeight; break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH: *pi = fa.requiredClusterDepth; break;
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED: *pi = fa.nonPortableClusterSizeAllowed; break;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE: *pi = fa.clusterSchedulingPolicyPreference; break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

CRM_EXPORT CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
{
    crm_kfunc *f = crm__func(hfunc);
    CUresult rc = crm_drv_need_ctx();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (pi == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    return f == NULL ? CUDA_ERROR_INVALID_HANDLE : crm__func_attr(pi, attrib, f);
}

CRM_EXPORT CUresult cuKernelGetAttribute(int *pi, CUfunction_attribute attrib, CUkernel kernel, CUdevice dev)
{
    CUresult rc = crm_drv_check_device(dev);
    return rc != CUDA_SUCCESS ? rc : cuFuncGetAttribute(pi, attrib, (CUfunction)kernel);
}

/* CUfunction_attribute and cudaFuncAttribute number the settable ones alike. */
CRM_EXPORT CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value)
{
    crm_kfunc *f = crm__func(hfunc);
    CUresult rc = crm_drv_need_ctx();
    if (rc != CUDA_SUCCESS)
        return rc;
    return f == NULL ? CUDA_ERROR_INVALID_HANDLE
                     : CRM_DRV_RT(cudaFuncSetAttribute(f, (enum cudaFuncAttribute)attrib, value));
}

CRM_EXPORT CUresult cuKernelSetAttribute(CUfunction_attribute attrib, int val, CUkernel kernel, CUdevice dev)
{
    CUresult rc = crm_drv_check_device(dev);
    return rc != CUDA_SUCCESS ? rc : cuFuncSetAttribute((CUfunction)kernel, attrib, val);
}

CRM_EXPORT CUresult cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config)
{
    crm_kfunc *f = crm__func(hfunc);
    CUresult rc = crm_drv_need_ctx();
    if (rc != CUDA_SUCCESS)
        return rc;
    return f == NULL ? CUDA_ERROR_INVALID_HANDLE : CRM_DRV_RT(cudaFuncSetCacheConfig(f, (enum cudaFuncCache)config));
}

CRM_EXPORT CUresult cuKernelSetCacheConfig(CUkernel kernel, CUfunc_cache config, CUdevice dev)
{
    CUresult rc = crm_drv_check_device(dev);
    return rc != CUDA_SUCCESS ? rc : cuFuncSetCacheConfig((CUfunction)kernel, config);
}

CRM_EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, CUfunction func,
                                                                         int blockSize, size_t dynamicSMemSize,
                                                                         unsigned int flags)
{
    crm_kfunc *f = crm__func(func);
    CUresult rc = crm_drv_need_ctx();
    if (rc != CUDA_SUCCESS)
        return rc;
    return f == NULL ? CUDA_ERROR_INVALID_HANDLE
                     : CRM_DRV_RT(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, f, blockSize,
                                                                                        dynamicSMemSize, flags));
}

CRM_EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, CUfunction func, int blockSize,
                                                                size_t dynamicSMemSize)
{
    return cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize, dynamicSMemSize, 0);
}

/* ---- launches --------------------------------------------------------------------- */

/* The parameter buffer of cuLaunchKernel's `extra` list, or NULL. */
static CUresult crm__extra(void **extra, const void **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    for (size_t i = 0; extra != NULL && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
        if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
            *buf = extra[i + 1];
        else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[i + 1] != NULL)
            *len = *(size_t *)extra[i + 1];
        else
            return CUDA_ERROR_INVALID_VALUE;
    }
    return extra != NULL && *buf == NULL ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

static CUresult crm__launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                            unsigned bz, unsigned shmem, CUstream s, void **params, void **extra,
                            const CUlaunchAttribute *attrs, unsigned nattrs, int ptsz)
{
    crm_launch_req r = {
        .func = crm__func(f), .grid = {gx, gy, gz}, .block = {bx, by, bz}, .shmem = shmem,
        .stream = (cudaStream_t)s, .args = params, .attrs = (const cudaLaunchAttribute *)attrs, .nattrs = nattrs,
        .ptds = ptsz, .origin = f,
    };
    CUresult rc = crm_drv_need_ctx();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (r.func == NULL)
        return CUDA_ERROR_INVALID_HANDLE;
    if (params != NULL && extra != NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if ((rc = crm__extra(extra, &r.packed, &r.packed_len)) != CUDA_SUCCESS)
        return rc;
    cudaError_t err = crm_kernel_launch(&r);
    return err == cudaErrorInvalidKernelImage ? CUDA_ERROR_INVALID_IMAGE : crm_drv_err(err);
}

_Static_assert(sizeof(CUlaunchAttribute) == sizeof(cudaLaunchAttribute), "launch attributes share one layout");

CRM_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                   unsigned bz, unsigned shmem, CUstream s, void **params, void **extra)
{
    return crm__launch(f, gx, gy, gz, bx, by, bz, shmem, s, params, extra, NULL, 0, 0);
}

CRM_EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                        unsigned bz, unsigned shmem, CUstream s, void **params, void **extra)
{
    return crm__launch(f, gx, gy, gz, bx, by, bz, shmem, s, params, extra, NULL, 0, 1);
}

static CUresult crm__launch_ex(const CUlaunchConfig *c, CUfunction f, void **params, void **extra, int ptsz)
{
    if (c == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    return crm__launch(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY, c->blockDimZ,
                       c->sharedMemBytes, c->hStream, params, extra, c->attrs, c->numAttrs, ptsz);
}

CRM_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **params, void **extra)
{
    return crm__launch_ex(config, f, params, extra, 0);
}

CRM_EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **params, void **extra)
{
    return crm__launch_ex(config, f, params, extra, 1);
}

static CUresult crm__launch_coop(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                 unsigned bz, unsigned shmem, CUstream s, void **params, int ptsz)
{
    CUlaunchAttribute coop;
    memset(&coop, 0, sizeof coop);
    coop.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    coop.value.cooperative = 1;
    return crm__launch(f, gx, gy, gz, bx, by, bz, shmem, s, params, NULL, &coop, 1, ptsz);
}

CRM_EXPORT CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                              unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params)
{
    return crm__launch_coop(f, gx, gy, gz, bx, by, bz, shmem, s, params, 0);
}

CRM_EXPORT CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                                   unsigned by, unsigned bz, unsigned shmem, CUstream s,
                                                   void **params)
{
    return crm__launch_coop(f, gx, gy, gz, bx, by, bz, shmem, s, params, 1);
}
