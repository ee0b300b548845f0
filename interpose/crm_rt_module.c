/* crm_rt_module.c -- the registration entry points nvcc-built programs call from
 * their constructors and launch code (CUDA 13 ABI, crt/host_runtime.h): fatbinaries,
 * kernels and variables (the per-thread <<<>>> configuration: common/crm_launch_cfg.c).
 * None of them contacts the server: modules are shipped at their first use. */
#include <stdlib.h>
#include <cuda_runtime_api.h>
#include "client/crm_handles.h"
#include "client/crm_modules.h"
#include "common/crm_nvcc_rt.h"
#include "common/crm_log.h"
#include "interpose/crm_export.h"

/* What __cudaRegisterFatBinary hands out: the handle points to the module. */
typedef struct crm__reg {
    void *handle;          /* the crm_kmodule; &handle is the program's void ** */
} crm__reg;

static crm_kmodule *crm__mod(void **fatCubinHandle)
{
    return fatCubinHandle != NULL ? *fatCubinHandle : NULL;
}

CRM_EXPORT void **__cudaRegisterFatBinary(void *fatCubin)
{
    crm__reg *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    r->handle = crm_modules_register(fatCubin);
    return &r->handle;
}

CRM_EXPORT void __cudaRegisterFatBinaryEnd(void **fatCubinHandle)
{
    (void)fatCubinHandle;
}

CRM_EXPORT void __cudaUnregisterFatBinary(void **fatCubinHandle)
{
    if (fatCubinHandle == NULL)
        return;
    crm_modules_unregister(crm__mod(fatCubinHandle));
    free((crm__reg *)fatCubinHandle); /* handle is the first member */
}

CRM_EXPORT char __cudaInitModule(void **fatCubinHandle)
{
    (void)fatCubinHandle;
    return 0;
}

CRM_EXPORT void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
                                       const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim,
                                       dim3 *gDim, int *wSize)
{
    (void)deviceFun, (void)thread_limit, (void)tid, (void)bid, (void)bDim, (void)gDim, (void)wSize;
    crm_modules_add_function(crm__mod(fatCubinHandle), hostFun, deviceName);
}

CRM_EXPORT void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress, const char *deviceName,
                                  int ext, size_t size, int constant, int global)
{
    (void)deviceAddress, (void)ext, (void)constant, (void)global;
    crm_modules_add_var(crm__mod(fatCubinHandle), hostVar, deviceName, size);
}

/* __managed__ variables need managed memory, which cudarem does not provide yet. */
CRM_EXPORT void __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress, char *deviceAddress,
                                         const char *deviceName, int ext, size_t size, int constant, int global)
{
    (void)fatCubinHandle, (void)hostVarPtrAddress, (void)deviceAddress, (void)ext, (void)size;
    (void)constant, (void)global;
    crm_error("__managed__ variable %s: managed memory is not supported by cudarem yet; "
              "the program cannot use it", deviceName ? deviceName : "?");
}

/* How the entry points of common/crm_nvcc_rt.h set this thread's last error. */
cudaError_t crm_nvcc_rt_error(cudaError_t err)
{
    return crm_set_error(err);
}

/* The kernel handle a <<<>>> launch of hostFun uses; never contacts the server. */
CRM_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun)
{
    crm_kfunc *f = crm_modules_func(hostFun);
    if (kernel == NULL)
        return crm_set_error(cudaErrorInvalidValue);
    if (f == NULL)
        return crm_set_error(cudaErrorInvalidDeviceFunction);
    *kernel = crm_modules_kernel_handle(f);
    return cudaSuccess;
}

CRM_EXPORT cudaError_t cudaGetKernel(cudaKernel_t *kernelPtr, const void *entryFuncAddr)
{
    return __cudaGetKernel(kernelPtr, entryFuncAddr);
}
