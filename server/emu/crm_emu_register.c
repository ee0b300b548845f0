/* crm_emu_register.c -- the registration entry points that nvcc-built programs call
 * from their constructors and launch code (CUDA 13 ABI, crt/host_runtime.h), for
 * the emulated device in process (LD_PRELOAD=libcudarem-emu.so): a registered
 * fatbinary becomes a library at its first use, a host function names its kernel and
 * a __device__ variable's host address its global, and __cudaLaunchKernel launches
 * on the emulated device (the <<<>>> configuration and the symbol copies over
 * these: common/crm_nvcc_rt.h). Without them NVIDIA's runtime takes these calls,
 * and a kernel launched with <<<>>> never runs. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/crm_idmap.h"
#include "common/crm_image.h"
#include "common/crm_nvcc_rt.h"
#include "server/emu/crm_emu_kernels.h"

/* What __cudaRegisterFatBinary hands out: the program keeps &handle. */
typedef struct crm__fatreg {
    void *handle;             /* first member: &handle is the program's void ** */
    const void *image;        /* the fatbinary nvcc's wrapper points to; NULL when unreadable */
    cudaLibrary_t lib;        /* loaded at the first use of one of its kernels */
    cudaError_t load_err;     /* why loading failed (then lib stays NULL) */
    struct crm__entry *entries; /* what the program registered in it */
} crm__fatreg;

/* A kernel's host function, or a __device__ variable's host shadow, and what it
 * stands for. */
typedef struct crm__entry {
    const void *host_addr;    /* the function's or the variable's host address */
    int is_var;
    crm__fatreg *reg;
    struct crm__entry *next;  /* the next entry of reg */
    char *name;
    cudaKernel_t kernel;      /* a kernel's, looked up at its first use */
    size_t size;              /* a variable's, as registered */
} crm__entry;

/* Host address -> crm__entry, kernels and variables apart (a launch looks its
 * host function up); the lock guards them and each fatbinary's list of entries. */
static pthread_mutex_t crm__entries_lock = PTHREAD_MUTEX_INITIALIZER;
static crm_idmap crm__kernels, crm__vars;

static crm_idmap *crm__table(int is_var)
{
    return is_var ? &crm__vars : &crm__kernels;
}

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

/* Forgets the entries of r and unloads its library. */
CRM_EXPORT void __cudaUnregisterFatBinary(void **fatCubinHandle)
{
    crm__fatreg *r = fatCubinHandle != NULL ? (crm__fatreg *)fatCubinHandle : NULL;
    if (r == NULL)
        return;
    pthread_mutex_lock(&crm__entries_lock);
    for (crm__entry *e = r->entries, *next; e != NULL; e = next) {
        next = e->next;
        crm_idmap_del(crm__table(e->is_var), (uint64_t)(uintptr_t)e->host_addr, NULL);
        free(e->name);
        free(e);
    }
    pthread_mutex_unlock(&crm__entries_lock);
    if (r->lib != NULL)
        cudaLibraryUnload(r->lib);
    free(r);
}

/* Remembers what the host address at stands for in the module of handle. */
static void crm__add(void **handle, const void *at, const char *name, int is_var, size_t size)
{
    if (handle == NULL || at == NULL || name == NULL)
        return;
    crm__fatreg *r = (crm__fatreg *)handle;
    crm__entry *e = calloc(1, sizeof *e);
    char *copy = strdup(name);
    pthread_mutex_lock(&crm__entries_lock);
    if (e != NULL && copy != NULL && crm_idmap_put(crm__table(is_var), (uint64_t)(uintptr_t)at, e) == 0) {
        *e = (crm__entry){at, is_var, r, r->entries, copy, NULL, size};
        r->entries = e;
        e = NULL;
        copy = NULL;
    }
    pthread_mutex_unlock(&crm__entries_lock);
    free(e);
    free(copy);
}

CRM_EXPORT void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
                                       const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim,
                                       dim3 *gDim, int *wSize)
{
    (void)deviceFun, (void)thread_limit, (void)tid, (void)bid, (void)bDim, (void)gDim, (void)wSize;
    crm__add(fatCubinHandle, hostFun, deviceName, 0, 0);
}

CRM_EXPORT void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress, const char *deviceName,
                                  int ext, size_t size, int constant, int global)
{
    (void)deviceAddress, (void)ext, (void)constant, (void)global;
    crm__add(fatCubinHandle, hostVar, deviceName, 1, size);
}

/* What was registered at host address at, a kernel or a variable (lock held);
 * NULL when nothing. */
static crm__entry *crm__find(const void *at, int is_var)
{
    void *e = NULL;
    return crm_idmap_get(crm__table(is_var), (uint64_t)(uintptr_t)at, &e) == 0 ? e : NULL;
}

/* Loads r's library, once (lock held). */
static cudaError_t crm__load(crm__fatreg *r)
{
    if (r->lib == NULL && r->load_err == cudaSuccess) {
        r->load_err = r->image == NULL ? cudaErrorInvalidKernelImage
                                       : cudaLibraryLoadData(&r->lib, r->image, NULL, NULL, 0, NULL, NULL, 0);
        if (r->load_err != cudaSuccess)
            r->lib = NULL;
    }
    return r->lib != NULL ? cudaSuccess : r->load_err;
}

/* Loads s's library and finds its kernel, once (lock held). */
static cudaError_t crm__resolve(crm__entry *s)
{
    if (s->kernel != NULL)
        return cudaSuccess;
    cudaError_t err = crm__load(s->reg);
    return err != cudaSuccess ? err : cudaLibraryGetKernel(&s->kernel, s->reg->lib, s->name);
}

cudaError_t crm_nvcc_rt_symbol(const void *symbol, int resolve, void **addr, size_t *size)
{
    pthread_mutex_lock(&crm__entries_lock);
    crm__entry *s = crm__find(symbol, 1);
    cudaError_t err = s != NULL ? cudaSuccess : cudaErrorInvalidSymbol;
    if (s != NULL && !resolve)
        *size = s->size;
    else if (s != NULL && (err = crm__load(s->reg)) == cudaSuccess)
        err = cudaLibraryGetGlobal(addr, size, s->reg->lib, s->name);
    pthread_mutex_unlock(&crm__entries_lock);
    return err;
}

cudaError_t crm__host_kernel(const void *func, const void **kernel)
{
    pthread_mutex_lock(&crm__entries_lock);
    crm__entry *s = crm__find(func, 0);
    cudaError_t err = s != NULL ? crm__resolve(s) : cudaSuccess;
    *kernel = s == NULL ? func : err == cudaSuccess ? (const void *)s->kernel : NULL;
    pthread_mutex_unlock(&crm__entries_lock);
    return err;
}

/* The kernel handle a <<<>>> launch of hostFun uses: its kernel, or hostFun
 * itself when the kernel cannot run here, so that its launch fails saying why
 * (a GPU refuses a kernel without code for it at the launch, not before). */
CRM_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun)
{
    if (kernel == NULL)
        return crm__emu_ret(cudaErrorInvalidValue);
    pthread_mutex_lock(&crm__entries_lock);
    crm__entry *s = crm__find(hostFun, 0);
    if (s != NULL)
        *kernel = crm__resolve(s) == cudaSuccess ? s->kernel : (cudaKernel_t)(uintptr_t)hostFun;
    pthread_mutex_unlock(&crm__entries_lock);
    return s != NULL ? cudaSuccess : crm__emu_ret(cudaErrorInvalidDeviceFunction);
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

/* How the entry points of common/crm_nvcc_rt.h set this thread's last error. */
cudaError_t crm_nvcc_rt_error(cudaError_t err)
{
    return crm__emu_ret(err);
}
