/* crm_emu_register.c -- the registration entry points that nvcc-built programs call
 * from their constructors and launch stubs (CUDA 13 ABI, crt/host_runtime.h), for
 * the emulated device in process (LD_PRELOAD=libcudarem-emu.so): a registered
 * fatbinary becomes a library at its first use, a host stub names its kernel, and
 * __cudaLaunchKernel launches on the emulated device (the per-thread <<<>>>
 * configuration: common/crm_launch_cfg.c). Without them NVIDIA's runtime takes
 * these calls, and a kernel launched with <<<>>> never runs. __device__ variables
 * (__cudaRegisterVar) stay NVIDIA's: cudaMemcpyToSymbol of one fails here. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/crm_image.h"
#include "common/crm_launch_cfg.h"
#include "server/emu/crm_emu_kernels.h"

/* What __cudaRegisterFatBinary hands out: the program keeps &handle. */
typedef struct crm__fatreg {
    void *handle;             /* first member: &handle is the program's void ** */
    const void *image;        /* the fatbinary nvcc's wrapper points to; NULL when unreadable */
    cudaLibrary_t lib;        /* loaded at the first use of one of its kernels */
    cudaError_t load_err;     /* why loading failed (then lib stays NULL) */
} crm__fatreg;

/* A kernel's host stub and what it stands for. */
typedef struct crm__stub {
    const void *host_fun;
    crm__fatreg *reg;
    char *name;
    cudaKernel_t kernel;      /* looked up at its first use */
} crm__stub;

static pthread_mutex_t crm__stubs_lock = PTHREAD_MUTEX_INITIALIZER;
static crm__stub *crm__stubs;
static size_t crm__nstubs;

CRM_EXPORT void **__cudaRegisterFatBinary(void *fatCubin)
{
    crm__fatreg *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    const void *inner = NULL;
    if (fatCubin != NULL && crm_image_kind(fatCubin, 24) == CRM_IMAGE_WRAPPER &&
        crm_image_size(fatCubin, CRM_IMAGE_BYTES_MAX, &inner) > 0)
        r->image = inner;
    r->handle = r;
    return &r->handle;
}

CRM_EXPORT void __cudaRegisterFatBinaryEnd(void **fatCubinHandle)
{
    (void)fatCubinHandle;
}

CRM_EXPORT char __cudaInitModule(void **fatCubinHandle)
{
    (void)fatCubinHandle;
    return 0;
}

/* Forgets the stubs of r and unloads its library. */
CRM_EXPORT void __cudaUnregisterFatBinary(void **fatCubinHandle)
{
    crm__fatreg *r = fatCubinHandle != NULL ? (crm__fatreg *)fatCubinHandle : NULL;
    if (r == NULL)
        return;
    pthread_mutex_lock(&crm__stubs_lock);
    size_t kept = 0;
    for (size_t i = 0; i < crm__nstubs; i++) {
        if (crm__stubs[i].reg == r)
            free(crm__stubs[i].name);
        else
            crm__stubs[kept++] = crm__stubs[i];
    }
    crm__nstubs = kept;
    pthread_mutex_unlock(&crm__stubs_lock);
    if (r->lib != NULL)
        cudaLibraryUnload(r->lib);
    free(r);
}

CRM_EXPORT void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
                                       const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim,
                                       dim3 *gDim, int *wSize)
{
    (void)deviceFun, (void)thread_limit, (void)tid, (void)bid, (void)bDim, (void)gDim, (void)wSize;
    if (fatCubinHandle == NULL || hostFun == NULL || deviceName == NULL)
        return;
    pthread_mutex_lock(&crm__stubs_lock);
    crm__stub *grown = realloc(crm__stubs, (crm__nstubs + 1) * sizeof *grown);
    char *name = strdup(deviceName);
    if (grown != NULL)
        crm__stubs = grown;
    if (grown != NULL && name != NULL)
        crm__stubs[crm__nstubs++] = (crm__stub){hostFun, (crm__fatreg *)fatCubinHandle, name, NULL};
    else
        free(name);
    pthread_mutex_unlock(&crm__stubs_lock);
}

/* The stub registered for host_fun (lock held), NULL when none. */
static crm__stub *crm__find(const void *host_fun)
{
    for (size_t i = 0; i < crm__nstubs; i++)
        if (crm__stubs[i].host_fun == host_fun)
            return &crm__stubs[i];
    return NULL;
}

/* Loads s's library and finds its kernel, once (lock held). */
static cudaError_t crm__resolve(crm__stub *s)
{
    crm__fatreg *r = s->reg;
    if (s->kernel != NULL)
        return cudaSuccess;
    if (r->lib == NULL && r->load_err == cudaSuccess) {
        r->load_err = r->image == NULL ? cudaErrorInvalidKernelImage
                                       : cudaLibraryLoadData(&r->lib, r->image, NULL, NULL, 0, NULL, NULL, 0);
        if (r->load_err != cudaSuccess)
            r->lib = NULL;
    }
    if (r->lib == NULL)
        return r->load_err;
    return cudaLibraryGetKernel(&s->kernel, r->lib, s->name);
}

const void *crm__stub_kernel(const void *func)
{
    pthread_mutex_lock(&crm__stubs_lock);
    crm__stub *s = crm__find(func);
    const void *k = s != NULL && crm__resolve(s) == cudaSuccess ? (const void *)s->kernel : NULL;
    pthread_mutex_unlock(&crm__stubs_lock);
    return s != NULL ? k : func;
}

/* The kernel handle the stub of hostFun launches with. */
CRM_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun)
{
    if (kernel == NULL)
        return crm__emu_ret(cudaErrorInvalidValue);
    pthread_mutex_lock(&crm__stubs_lock);
    crm__stub *s = crm__find(hostFun);
    cudaError_t err = s != NULL ? crm__resolve(s) : cudaErrorInvalidDeviceFunction;
    if (err == cudaSuccess)
        *kernel = s->kernel;
    pthread_mutex_unlock(&crm__stubs_lock);
    return crm__emu_ret(err);
}

CRM_EXPORT cudaError_t cudaGetKernel(cudaKernel_t *kernelPtr, const void *entryFuncAddr)
{
    return __cudaGetKernel(kernelPtr, entryFuncAddr);
}

CRM_EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                                          size_t sharedMem, cudaStream_t stream)
{
    return cudaLaunchKernel(kernel, gridDim, blockDim, args, sharedMem, stream);
}

/* The emulated device runs every stream in order: per-thread default streams too. */
CRM_EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                                               size_t sharedMem, cudaStream_t stream)
{
    return cudaLaunchKernel(kernel, gridDim, blockDim, args, sharedMem, stream);
}

/* How a refused <<<>>> configuration (common/crm_launch_cfg.c) becomes this
 * thread's last error. */
cudaError_t crm_launch_cfg_error(cudaError_t err)
{
    return crm__emu_ret(err);
}
