/* crm_emu_module.c -- device code modules of the emulated device: cudaLibraryLoadData
 * reads a fatbinary's cubin (or a bare cubin, or PTX) (kernels, parameter layouts,
 * globals) and keeps the module's PTX for the PTX engine, cudaLibraryGetKernel
 * pairs a kernel with its CPU implementation from the CUDAREM_EMU_KERNELS libraries,
 * cudaLibraryGetGlobal gives a global's emulated device memory (initialised from the
 * cubin), cudaLibraryUnload frees it all. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/crm_image.h"
#include "server/emu/crm_emu_kernels.h"

static crm__registry crm__libs;     /* live struct CUlib_st * */
static crm__registry crm__kernels;  /* live struct CUkern_st * */

/* CPU implementations of every --emu-kernels library, read once. */
static const cudarem_emu_kernel **crm__impl_tables;
static size_t crm__nimpl_tables;
static pthread_once_t crm__impl_once = PTHREAD_ONCE_INIT;

static void crm__load_impls(void)
{
    const char *list = getenv("CUDAREM_EMU_KERNELS");
    char *copy = list ? strdup(list) : NULL, *save = NULL;
    for (char *path = copy ? strtok_r(copy, ":", &save) : NULL; path; path = strtok_r(NULL, ":", &save)) {
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        const cudarem_emu_kernel *t = h ? dlsym(h, CUDAREM_EMU_KERNELS_TABLE) : NULL;
        if (t == NULL) {
            crm__emu_log("cannot use kernel library %s: %s", path,
                    h == NULL ? dlerror() : "it exports no " CUDAREM_EMU_KERNELS_TABLE " table");
            continue;
        }
        const cudarem_emu_kernel **n = realloc(crm__impl_tables, (crm__nimpl_tables + 1) * sizeof *n);
        if (n == NULL)
            break;
        crm__impl_tables = n;
        crm__impl_tables[crm__nimpl_tables++] = t;
    }
    free(copy);
}

/* The CPU implementation of kernel `name`, or NULL. */
static cudarem_emu_kernel_fn crm__impl(const char *name)
{
    pthread_once(&crm__impl_once, crm__load_impls);
    for (size_t i = 0; i < crm__nimpl_tables; i++)
        for (const cudarem_emu_kernel *k = crm__impl_tables[i]; k->name != NULL; k++)
            if (k->fn != NULL && strcmp(k->name, name) == 0)
                return k->fn;
    return NULL;
}

int crm__kernel_live(const struct CUkern_st *k)
{
    return k != NULL && crm__registry_has(&crm__kernels, k);
}

static void crm__lib_free(struct CUlib_st *lib)
{
    for (size_t i = 0; i < lib->info.nglobals && lib->globals != NULL; i++)
        for (int d = 0; d < CRM_EMU_MAX_DEVICES; d++)
            if (lib->globals[i].addr[d] != NULL)
                crm__mem_free(lib->globals[i].addr[d]); /* fails harmlessly after a reset freed it */
    for (size_t i = 0; i < lib->nkernels; i++) {
        crm__registry_remove(&crm__kernels, lib->kernels[i]);
        free(lib->kernels[i]);
    }
    crm_module_info_free(&lib->info);
    crm_ptx_free(lib->engine);
    free(lib->engine_err);
    free(lib->ptx);
    free(lib->globals);
    free(lib->kernels);
    free(lib);
}

/* The PTX of an image: the text itself, or a fatbinary's newest PTX entry
 * (decompressed); NULL when there is none. */
static char *crm__image_ptx(const void *code, size_t len, size_t *ptx_len)
{
    enum crm_image_kind kind = crm_image_kind(code, len);
    if (kind == CRM_IMAGE_PTX) {
        *ptx_len = strnlen(code, len);
        return strndup(code, *ptx_len);
    }
    crm_fatbin_entry e[64];
    int n = kind == CRM_IMAGE_FATBIN ? crm_fatbin_entries(code, len, e, 64) : 0, best = -1;
    for (int i = 0; i < n && i < 64; i++)
        if (e[i].kind == CRM_FATBIN_PTX && (best < 0 || e[i].arch > e[best].arch))
            best = i;
    unsigned char *text = NULL;
    char err[128];
    if (best >= 0 && crm_fatbin_payload(&e[best], &text, ptx_len, err, sizeof err) != 0) {
        crm__emu_log("the module's PTX cannot be read: %s", err);
        text = NULL;
    }
    return (char *)text;
}

crm_ptx_module *crm__lib_engine(struct CUlib_st *lib)
{
    char err[512];
    if (lib->engine != NULL || lib->ptx == NULL || lib->engine_err != NULL)
        return lib->engine;
    if (crm_ptx_load(lib->ptx, lib->ptx_len, &lib->engine, err, sizeof err) != 0) {
        lib->engine_err = strdup(err);
        crm__emu_log("the PTX engine cannot read this module: %s", err);
    }
    return lib->engine;
}

/* Accepts a fatbinary holding a cubin or PTX, a cubin, or PTX; JIT options are ignored. */
CRM_EXPORT cudaError_t cudaLibraryLoadData(cudaLibrary_t *library, const void *code, enum cudaJitOption *jitOptions,
                                           void **jitOptionsValues, unsigned int numJitOptions,
                                           enum cudaLibraryOption *libraryOptions, void **libraryOptionValues,
                                           unsigned int numLibraryOptions)
{
    char err[256];
    (void)jitOptions, (void)jitOptionsValues, (void)numJitOptions;
    (void)libraryOptions, (void)libraryOptionValues, (void)numLibraryOptions;
    if (library == NULL || code == NULL)
        return crm__emu_ret(cudaErrorInvalidValue);
    struct CUlib_st *lib = calloc(1, sizeof *lib);
    if (lib == NULL)
        return crm__emu_ret(cudaErrorMemoryAllocation);
    const void *inner;
    size_t len = crm_image_kind(code, 24) == CRM_IMAGE_WRAPPER ? 0 : crm_image_size(code, CRM_IMAGE_BYTES_MAX, &inner);
    int rc = len ? crm_module_info_from_image(code, len, &lib->info, err, sizeof err) : -1;
    if (len == 0)
        snprintf(err, sizeof err, "not a fatbinary, cubin or PTX image");
    cudaError_t ret = cudaErrorInvalidKernelImage;
    if (rc != 0)
        crm__emu_log("bad device code module: %s", err);
    if (rc == 0)
        lib->ptx = crm__image_ptx(code, len, &lib->ptx_len);
    if (rc == 0 && (lib->globals = calloc(lib->info.nglobals + 1, sizeof *lib->globals)) == NULL) {
        ret = cudaErrorMemoryAllocation;
        rc = -1;
    }
    for (size_t i = 0; rc == 0 && i < lib->info.nglobals; i++)
        lib->globals[i].info = &lib->info.globals[i];
    crm__emu_wrlock();
    if (rc == 0 && crm__registry_add(&crm__libs, lib) != 0) {
        ret = cudaErrorMemoryAllocation;
        rc = -1;
    }
    crm__emu_unlock();
    if (rc != 0) {
        crm__emu_wrlock();
        crm__lib_free(lib);
        crm__emu_unlock();
        return crm__emu_ret(ret);
    }
    *library = lib;
    return cudaSuccess;
}

CRM_EXPORT cudaError_t cudaLibraryUnload(cudaLibrary_t library)
{
    cudaError_t err = cudaErrorInvalidResourceHandle;
    crm__emu_wrlock();
    if (crm__registry_remove(&crm__libs, library) == 0) {
        crm__lib_free(library);
        err = cudaSuccess;
    }
    crm__emu_unlock();
    return crm__emu_ret(err);
}

/* 1 when the PTX engine can run kern; else logged once, naming why. */
static int crm__ptx_runnable(struct CUlib_st *lib, struct CUkern_st *kern)
{
    char why[512] = "its module carries no PTX";
    crm__emu_wrlock();
    crm_ptx_module *m = crm__lib_engine(lib);
    int ok = m != NULL && crm_ptx_runnable(m, kern->k->name, why, sizeof why);
    if (m == NULL && lib->engine_err != NULL)
        snprintf(why, sizeof why, "its PTX cannot be read: %s", lib->engine_err);
    if (!ok && !kern->warned)
        crm__emu_log("kernel %s has no CPU implementation (give the server one with --emu-kernels) "
                        "and cannot run on the PTX engine: %s", kern->k->name, why);
    kern->warned |= !ok;
    crm__emu_unlock();
    return ok;
}

/* One handle per kernel name; the CPU implementation is looked up once. */
CRM_EXPORT cudaError_t cudaLibraryGetKernel(cudaKernel_t *pKernel, cudaLibrary_t library, const char *name)
{
    cudaError_t err = cudaSuccess;
    if (pKernel == NULL || name == NULL)
        return crm__emu_ret(cudaErrorInvalidValue);
    crm__emu_wrlock();
    const crm_kernel_info *k = NULL;
    struct CUkern_st *kern = NULL, **grown;
    if (!crm__registry_has(&crm__libs, library))
        err = cudaErrorInvalidResourceHandle;
    else if ((k = crm_module_info_kernel(&library->info, name)) == NULL)
        err = cudaErrorSymbolNotFound;
    for (size_t i = 0; err == cudaSuccess && i < library->nkernels; i++)
        if (library->kernels[i]->k == k)
            kern = library->kernels[i];
    if (err == cudaSuccess && kern == NULL) {
        grown = realloc(library->kernels, (library->nkernels + 1) * sizeof *grown);
        kern = calloc(1, sizeof *kern);
        if (grown != NULL)
            library->kernels = grown;
        if (grown == NULL || kern == NULL || crm__registry_add(&crm__kernels, kern) != 0) {
            free(kern);
            kern = NULL;
            err = cudaErrorMemoryAllocation;
        } else {
            *kern = (struct CUkern_st){.lib = library, .k = k, .fn = crm__impl(k->name),
                                       .max_dyn_smem = 48 * 1024, .carveout = -1};
            library->kernels[library->nkernels++] = kern;
        }
    }
    crm__emu_unlock();
    /* With no CPU implementation and no PTX the engine can run, the emulated device
     * has no code for this kernel: what a GPU says of a module without code for its
     * architecture, at the kernel's first use. */
    if (err == cudaSuccess && kern->fn == NULL && !crm__ptx_runnable(library, kern))
        err = cudaErrorNoKernelImageForDevice;
    if (err == cudaSuccess)
        *pKernel = kern;
    return crm__emu_ret(err);
}

/* Makes (or remakes, after a reset freed it) global g's memory on dev; lock held
 * exclusively. */
static void *crm__global_mem(crm__eglobal *g, int dev)
{
    int owner = -1;
    if (g->addr[dev] != NULL && crm__mem_range(g->addr[dev], g->info->size, &owner) && owner == dev)
        return g->addr[dev];
    g->addr[dev] = NULL;
    if (crm__mem_alloc(dev, g->info->size, &g->addr[dev]) != cudaSuccess)
        return NULL;
    if (g->info->init != NULL)
        memcpy(g->addr[dev], g->info->init, g->info->size);
    else
        memset(g->addr[dev], 0, g->info->size);
    return g->addr[dev];
}

void *crm__global_addr(struct CUlib_st *lib, const char *name, size_t *size)
{
    void *p = NULL;
    int dev = crm__emu_current();
    crm__emu_wrlock();
    for (size_t i = 0; crm__registry_has(&crm__libs, lib) && i < lib->info.nglobals; i++) {
        if (strcmp(lib->globals[i].info->name, name) != 0)
            continue;
        p = crm__global_mem(&lib->globals[i], dev);
        if (p != NULL && size != NULL)
            *size = lib->globals[i].info->size;
        break;
    }
    crm__emu_unlock();
    return p;
}

CRM_EXPORT cudaError_t cudaLibraryGetGlobal(void **dptr, size_t *bytes, cudaLibrary_t library, const char *name)
{
    size_t size = 0;
    if (name == NULL || (dptr == NULL && bytes == NULL))
        return crm__emu_ret(cudaErrorInvalidValue);
    crm__emu_rdlock();
    int live = crm__registry_has(&crm__libs, library);
    const crm_global_info *g = live ? crm_module_info_global(&library->info, name) : NULL;
    crm__emu_unlock();
    if (!live)
        return crm__emu_ret(cudaErrorInvalidResourceHandle);
    if (g == NULL)
        return crm__emu_ret(cudaErrorSymbolNotFound);
    void *p = crm__global_addr(library, name, &size);
    if (p == NULL)
        return crm__emu_ret(cudaErrorMemoryAllocation);
    if (dptr != NULL)
        *dptr = p;
    if (bytes != NULL)
        *bytes = size;
    return cudaSuccess;
}
