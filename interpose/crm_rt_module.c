/* crm_rt_module.c -- the registration entry points nvcc-built programs call from
 * their constructors and launch code (CUDA 13 ABI, crt/host_runtime.h): fatbinaries,
 * kernels and variables (the per-thread <<<>>> configuration: common/crm_launch_cfg.c).
 * None of them contacts the server: modules are shipped at their first use. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <cuda_runtime_api.h>
#include "client/crm_graph.h"
#include "client/crm_handles.h"
#include "client/crm_modules.h"
#include "common/crm_nvcc_rt.h"
#include "common/crm_log.h"
#include "interpose/crm_drv.h"
#include "interpose/crm_export.h"
#include "interpose/crm_rt_managed.h"

/* What __cudaRegisterFatBinary hands out: the handle points to the module. */
typedef struct crm__reg {
    void *handle;          /* the crm_kmodule; &handle is the program's void ** */
} crm__reg;

static crm_kmodule *crm__mod(void **fatCubinHandle)
{
    return fatCubinHandle != NULL ? *fatCubinHandle : NULL;
}

/* The __managed__ variables nvcc registered: the program reaches each through the
 * pointer at `slot`, which __cudaInitModule sets at the first host use. */
typedef struct crm__managed_var {
    void **handle;
    void **slot;
} crm__managed_var;
static crm__managed_var *crm__mvars;
static unsigned crm__nmvars, crm__mvars_cap;
static pthread_mutex_t crm__mvars_lock = PTHREAD_MUTEX_INITIALIZER;

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
    pthread_mutex_lock(&crm__mvars_lock);
    unsigned kept = 0;
    for (unsigned i = 0; i < crm__nmvars; i++)
        if (crm__mvars[i].handle != fatCubinHandle)
            crm__mvars[kept++] = crm__mvars[i];
    crm__nmvars = kept;
    pthread_mutex_unlock(&crm__mvars_lock);
    crm_modules_unregister(crm__mod(fatCubinHandle));
    free((crm__reg *)fatCubinHandle); /* handle is the first member */
}

/* Points every __managed__ variable of the module at its managed memory: 1 when
 * all of them are, 0 when one could not be (logged). */
CRM_EXPORT char __cudaInitModule(void **fatCubinHandle)
{
    char ok = 1;
    crm_drv_runtime_bind();
    pthread_mutex_lock(&crm__mvars_lock);
    for (unsigned i = 0; i < crm__nmvars; i++) {
        if (crm__mvars[i].handle != fatCubinHandle)
            continue;
        crm_kvar *v = crm_modules_var(crm__mvars[i].slot);
        uint64_t addr = 0;
        size_t size = 0;
        cudaError_t err = v != NULL ? crm_modules_var_resolve(v, &addr, &size) : cudaErrorInvalidSymbol;
        if (err == cudaSuccess)
            err = crm_managed_adopt(addr, size);
        if (err == cudaSuccess)
            *crm__mvars[i].slot = (void *)(uintptr_t)addr;
        else
            ok = 0;
    }
    pthread_mutex_unlock(&crm__mvars_lock);
    return ok;
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

/* A __managed__ variable: known by the pointer nvcc's host code reads it through. */
CRM_EXPORT void __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress, char *deviceAddress,
                                         const char *deviceName, int ext, size_t size, int constant, int global)
{
    (void)deviceAddress, (void)ext, (void)constant, (void)global;
    crm_modules_add_var(crm__mod(fatCubinHandle), hostVarPtrAddress, deviceName, size);
    pthread_mutex_lock(&crm__mvars_lock);
    crm__managed_var *grown = crm_grow(crm__mvars, &crm__mvars_cap, crm__nmvars, sizeof *grown);
    if (grown != NULL) {
        crm__mvars = grown;
        crm__mvars[crm__nmvars++] = (crm__managed_var){fatCubinHandle, hostVarPtrAddress};
    } else {
        crm_error("__managed__ variable %s: out of memory", deviceName ? deviceName : "?");
    }
    pthread_mutex_unlock(&crm__mvars_lock);
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
