/* crm_h_kernels.c -- handlers of the kernel calls (protocol/cudart_kernels.api): the
 * modules (fatbinaries) a session loaded, their kernels and symbols under the
 * client's ids, launches rebuilt from their parameter blob, function attributes.
 *
 * A module (a fatbinary, a cubin or PTX text) is a library of the backend
 * (cudaLibraryLoadData) plus what the server read from the image itself (common/crm_fatbin.h): every launch is checked against
 * that layout before the backend reads a single parameter. Modules and functions
 * live in the session's handle table with device -1, so a cudaDeviceReset keeps
 * them (libraries are context-independent) and the session's end releases them.
 * Symbol ranges are entered in the session's allocation table (tagged
 * CRM_RANGE_SYMBOL), so copies to cudaGetSymbolAddress addresses pass its checks.
 */
#include <stdlib.h>
#include <string.h>
#include "common/crm_fatbin.h"
#include "common/crm_image.h"
#include "common/crm_log.h"
#include "crm_server_gen.h"
#include "server/crm_backend.h"
#include "server/crm_kcache.h"
#include "server/crm_session.h"


_Static_assert(sizeof(cudaLaunchAttributeValue) == 64, "launch attribute values are 64 bytes on the wire");

/* A loaded module. */
typedef struct crm__kmod {
    crm_session *s;            /* owning session */
    cudaLibrary_t lib;         /* backend library */
    unsigned char *image;      /* the fatbinary (owned) */
    size_t len;
    crm_module_info info;      /* kernels, layouts, globals */
    uint64_t *funcs;           /* ids of its functions in s->handles */
    size_t nfuncs;
    uint64_t *syms;            /* bases it added to s->allocs */
    size_t nsyms;
    int counted;               /* its bytes count against --session-limits module-bytes */
} crm__kmod;

/* A kernel of a module, with its own copy of the layout. */
typedef struct crm__kfunc {
    cudaKernel_t kernel;
    uint32_t nparams;
    crm_kparam_info *params;
    char *name;                /* for logs */
} crm__kfunc;

static void crm__kfunc_free(void *h)
{
    crm__kfunc *f = h;
    free(f->params);
    free(f->name);
    free(f);
}

static void crm__kmod_free(void *h)
{
    crm__kmod *m = h;
    for (size_t i = 0; i < m->nsyms; i++) {
        const crm_range *r = crm_rangemap_find(&m->s->allocs, m->syms[i]);
        if (r != NULL && r->base == m->syms[i] && r->kind == CRM_RANGE_SYMBOL)
            crm_rangemap_remove(&m->s->allocs, m->syms[i], NULL);
    }
    if (m->counted)
        crm_session_count(m->s, CRM_LIMIT_MODULE_BYTES, -(int64_t)m->len);
    if (m->lib != NULL)
        crm_rt.cudaLibraryUnload(m->lib);
    crm_module_info_free(&m->info);
    free(m->image);
    free(m->funcs);
    free(m->syms);
    free(m);
}

/* Adds a handle that survives cudaDeviceReset. 0, or -1 (id taken, no memory). */
static int crm__keep(crm_session *s, int kind, uint64_t id, void *h, void (*destroy)(void *))
{
    void *v;
    if (id == 0 || crm_session_handle_add(s, kind, id, h, destroy) != 0)
        return -1;
    if (crm_idmap_get(&s->handles, id, &v) == 0)
        ((crm_session_obj *)v)->device = -1;
    return 0;
}

static int crm__append(uint64_t **arr, size_t *n, uint64_t v)
{
    uint64_t *a = realloc(*arr, (*n + 1) * sizeof *a);
    if (a == NULL)
        return -1;
    a[(*n)++] = v;
    *arr = a;
    return 0;
}

/* The image: shipped now or taken from the session's user's cache; NULL when neither. */
static unsigned char *crm__image(const crm_session *s, const crm_digest *digest, const crm_image *image, size_t *len)
{
    unsigned char *data = NULL;
    if (image->data.data_len == 0)
        return crm_kcache_get(s->user, (const unsigned char *)digest->bytes, &data, len) == 0 ? data : NULL;
    if ((data = malloc(image->data.data_len)) == NULL)
        return NULL;
    memcpy(data, image->data.data_val, image->data.data_len);
    *len = image->data.data_len;
    return data;
}

/* A shipped image that loaded is kept for the user's later sessions, under the
 * server's own hash of what it received. */
static void crm__cache(const crm_session *s, const crm__kmod *m)
{
    unsigned char d[CRM_DIGEST_LEN];
    if (crm_sha256(m->image, m->len, d) == 0)
        crm_kcache_put(s->user, d, m->image, m->len);
}

cudaError_t crm_srv_crm_module_load(crm_session *s, uint64_t id, const crm_digest *digest, const crm_image *image,
                                    int *loaded)
{
    char err[256];
    void *v;
    *loaded = 0;
    if (id == 0 || crm_idmap_get(&s->handles, id, &v) == 0)
        return cudaErrorInvalidValue;
    uint64_t shipped = image->data.data_len; /* a cached image's size is known once read */
    if (crm_session_room(s, CRM_LIMIT_MODULES, 1) != 0 || crm_session_room(s, CRM_LIMIT_MODULE_BYTES, shipped) != 0)
        return cudaErrorMemoryAllocation;
    crm__kmod *m = calloc(1, sizeof *m);
    if (m == NULL)
        return cudaErrorMemoryAllocation;
    m->s = s;
    if ((m->image = crm__image(s, digest, image, &m->len)) == NULL) {
        free(m);
        return image->data.data_len == 0 ? cudaSuccess : cudaErrorMemoryAllocation; /* not cached: send it */
    }
    cudaError_t rc = cudaErrorMemoryAllocation;
    if (shipped == 0 && crm_session_room(s, CRM_LIMIT_MODULE_BYTES, m->len) != 0)
        goto fail;
    rc = cudaErrorInvalidKernelImage;
    if (crm_image_check(m->image, m->len) != 0 ||
        crm_module_info_from_image(m->image, m->len, &m->info, err, sizeof err) != 0) {
        crm_warn("session %llu: rejected a device code module: %s", (unsigned long long)s->id,
                 crm_image_check(m->image, m->len) != 0 ? "not a fatbinary, cubin or PTX image" : err);
        goto fail;
    }
    rc = crm_rt.cudaLibraryLoadData(&m->lib, m->image, NULL, NULL, 0, NULL, NULL, 0);
    if (rc != cudaSuccess) {
        crm_rt.cudaGetLastError();
        goto fail;
    }
    if (image->data.data_len > 0)
        crm__cache(s, m); /* checked and loaded: an image, not just bytes */
    if (crm__keep(s, CRM_HANDLE_kernel_module, id, m, crm__kmod_free) != 0) {
        rc = cudaErrorMemoryAllocation;
        goto fail;
    }
    m->counted = 1;
    crm_session_count(s, CRM_LIMIT_MODULE_BYTES, (int64_t)m->len);
    *loaded = 1;
    return cudaSuccess;
fail:
    crm__kmod_free(m);
    return rc;
}

cudaError_t crm_srv_crm_module_unload(crm_session *s, uint64_t id)
{
    void *h, *f;
    if (crm_session_handle_del(s, CRM_HANDLE_kernel_module, id, &h) != 0)
        return cudaErrorInvalidResourceHandle;
    crm__kmod *m = h;
    for (size_t i = 0; i < m->nfuncs; i++)
        if (crm_session_handle_del(s, CRM_HANDLE_kernel_func, m->funcs[i], &f) == 0)
            crm__kfunc_free(f);
    crm__kmod_free(m);
    return cudaSuccess;
}

static crm__kmod *crm__module(crm_session *s, uint64_t id)
{
    void *h;
    return crm_session_handle(s, CRM_HANDLE_kernel_module, id, &h) == 0 ? h : NULL;
}

static crm__kfunc *crm__func(crm_session *s, uint64_t id)
{
    void *h;
    return crm_session_handle(s, CRM_HANDLE_kernel_func, id, &h) == 0 ? h : NULL;
}

static crm__kfunc *crm__kfunc_new(const crm_kernel_info *k, cudaKernel_t kernel)
{
    crm__kfunc *f = calloc(1, sizeof *f);
    if (f == NULL)
        return NULL;
    f->kernel = kernel;
    f->nparams = k->nparams;
    f->name = strdup(k->name);
    f->params = malloc((k->nparams ? k->nparams : 1) * sizeof *f->params);
    if (f->name == NULL || f->params == NULL) {
        crm__kfunc_free(f);
        return NULL;
    }
    if (k->nparams > 0) /* a kernel without parameters has no layout array at all */
        memcpy(f->params, k->params, k->nparams * sizeof *f->params);
    return f;
}

cudaError_t crm_srv_crm_function_get(crm_session *s, uint64_t module, uint64_t id, const crm_kname *name)
{
    crm__kmod *m = crm__module(s, module);
    cudaKernel_t kernel;
    void *v;
    if (m == NULL)
        return cudaErrorInvalidResourceHandle;
    const crm_kernel_info *k = crm_module_info_kernel(&m->info, name->name);
    if (k == NULL)
        return cudaErrorInvalidDeviceFunction;
    if (id == 0 || crm_idmap_get(&s->handles, id, &v) == 0)
        return cudaErrorInvalidValue;
    if (crm_session_room(s, CRM_LIMIT_FUNCTIONS, 1) != 0)
        return cudaErrorMemoryAllocation;
    cudaError_t err = crm_rt.cudaLibraryGetKernel(&kernel, m->lib, k->name);
    if (err != cudaSuccess) {
        crm_rt.cudaGetLastError();
        return err;
    }
    crm__kfunc *f = crm__kfunc_new(k, kernel);
    if (f == NULL || crm__append(&m->funcs, &m->nfuncs, id) != 0 ||
        crm__keep(s, CRM_HANDLE_kernel_func, id, f, crm__kfunc_free) != 0) {
        if (f != NULL)
            crm__kfunc_free(f);
        return cudaErrorMemoryAllocation;
    }
    return cudaSuccess;
}

cudaError_t crm_srv_crm_symbol_get(crm_session *s, uint64_t module, const crm_kname *name, uint64_t *addr,
                                   uint64_t *size)
{
    crm__kmod *m = crm__module(s, module);
    void *p = NULL;
    size_t bytes = 0;
    if (m == NULL)
        return cudaErrorInvalidResourceHandle;
    cudaError_t err = crm_rt.cudaLibraryGetGlobal(&p, &bytes, m->lib, name->name);
    if (err != cudaSuccess) {
        crm_rt.cudaGetLastError();
        return err == cudaErrorSymbolNotFound ? cudaErrorInvalidSymbol : err;
    }
    crm_range r = {.base = (uint64_t)(uintptr_t)p, .size = bytes ? bytes : 1, .kind = CRM_RANGE_SYMBOL,
                   .device = crm_session_device()};
    const crm_range *have = crm_rangemap_find(&s->allocs, r.base);
    if (have == NULL && crm_rangemap_add(&s->allocs, r) == 0 && crm__append(&m->syms, &m->nsyms, r.base) != 0)
        crm_rangemap_remove(&s->allocs, r.base, NULL);
    *addr = r.base;
    *size = bytes;
    return cudaSuccess;
}

/* Launch attributes a launch may carry: none refers to a handle of the client. */
static int crm__attr_allowed(int id)
{
    switch (id) {
    case cudaLaunchAttributeIgnore:
    case cudaLaunchAttributeAccessPolicyWindow:
    case cudaLaunchAttributeCooperative:
    case cudaLaunchAttributeClusterDimension:
    case cudaLaunchAttributeClusterSchedulingPolicyPreference:
    case cudaLaunchAttributeProgrammaticStreamSerialization:
    case cudaLaunchAttributePriority:
    case cudaLaunchAttributeMemSyncDomainMap:
    case cudaLaunchAttributeMemSyncDomain:
    case cudaLaunchAttributePreferredClusterDimension:
    case cudaLaunchAttributePreferredSharedMemoryCarveout:
        return 1;
    default:
        return 0;
    }
}

/* Points args[i] at parameter i of the blob after checking the client's layout
 * against the kernel's own. */
static cudaError_t crm__args(const crm__kfunc *f, const crm_launch *l, void **args)
{
    if (l->params.params_len != f->nparams)
        return cudaErrorInvalidValue;
    for (uint32_t i = 0; i < f->nparams; i++) {
        const crm_kparam *p = &l->params.params_val[i];
        if (p->offset != f->params[i].offset || p->size != f->params[i].size ||
            (uint64_t)p->offset + p->size > l->blob.blob_len)
            return cudaErrorInvalidValue;
        args[i] = l->blob.blob_val + p->offset;
    }
    return cudaSuccess;
}

static cudaError_t crm__launch_ex(const crm__kfunc *f, const crm_launch *l, cudaStream_t stream, void **args)
{
    cudaLaunchAttribute attrs[CRM_KATTRS_MAX];
    cudaLaunchConfig_t cfg = {
        .gridDim = {l->grid[0], l->grid[1], l->grid[2]}, .blockDim = {l->block[0], l->block[1], l->block[2]},
        .dynamicSmemBytes = l->shmem, .stream = stream, .attrs = attrs, .numAttrs = l->attrs.attrs_len,
    };
    if (l->attrs.attrs_len > CRM_KATTRS_MAX)
        return cudaErrorInvalidValue;
    for (u_int i = 0; i < l->attrs.attrs_len; i++) {
        if (!crm__attr_allowed(l->attrs.attrs_val[i].id))
            return cudaErrorNotSupported;
        memset(&attrs[i], 0, sizeof attrs[i]);
        attrs[i].id = (cudaLaunchAttributeID)l->attrs.attrs_val[i].id;
        memcpy(&attrs[i].val, l->attrs.attrs_val[i].val, sizeof attrs[i].val);
    }
    return crm_rt.cudaLaunchKernelExC(&cfg, (const void *)f->kernel, args);
}

cudaError_t crm_srv_crm_launch(crm_session *s, const crm_launch *l)
{
    crm__kfunc *f = crm__func(s, l->func);
    cudaStream_t stream;
    void *small[64], **args = small;
    if (f == NULL)
        return cudaErrorInvalidDeviceFunction;
    if (crm_session_stream(s, l->stream, &stream) != cudaSuccess)
        return cudaErrorInvalidResourceHandle;
    if (f->nparams > 64 && (args = malloc(f->nparams * sizeof *args)) == NULL)
        return cudaErrorMemoryAllocation;
    cudaError_t err = crm__args(f, l, args);
    if (err == cudaSuccess && l->attrs.attrs_len == 0)
        err = crm_rt.cudaLaunchKernel((const void *)f->kernel, (dim3){l->grid[0], l->grid[1], l->grid[2]},
                                      (dim3){l->block[0], l->block[1], l->block[2]}, args, l->shmem, stream);
    else if (err == cudaSuccess)
        err = crm__launch_ex(f, l, stream, args);
    if (args != small)
        free(args);
    if (err != cudaSuccess)
        crm_debug("session %llu: launch of %s failed: error %d", (unsigned long long)s->id, f->name, (int)err);
    return err;
}

cudaError_t crm_srv_crm_func_get_attributes(crm_session *s, uint64_t func, crm_func_attrs *out)
{
    crm__kfunc *f = crm__func(s, func);
    struct cudaFuncAttributes a;
    if (f == NULL)
        return cudaErrorInvalidDeviceFunction;
    memset(&a, 0, sizeof a);
    cudaError_t err = crm_rt.cudaFuncGetAttributes(&a, (const void *)f->kernel);
    if (err != cudaSuccess)
        return err;
    *out = (crm_func_attrs){
        .sharedSizeBytes = a.sharedSizeBytes, .constSizeBytes = a.constSizeBytes,
        .localSizeBytes = a.localSizeBytes, .maxThreadsPerBlock = a.maxThreadsPerBlock, .numRegs = a.numRegs,
        .ptxVersion = a.ptxVersion, .binaryVersion = a.binaryVersion, .cacheModeCA = a.cacheModeCA,
        .maxDynamicSharedSizeBytes = a.maxDynamicSharedSizeBytes,
        .preferredShmemCarveout = a.preferredShmemCarveout, .clusterDimMustBeSet = a.clusterDimMustBeSet,
        .requiredClusterWidth = a.requiredClusterWidth, .requiredClusterHeight = a.requiredClusterHeight,
        .requiredClusterDepth = a.requiredClusterDepth,
        .clusterSchedulingPolicyPreference = a.clusterSchedulingPolicyPreference,
        .nonPortableClusterSizeAllowed = a.nonPortableClusterSizeAllowed,
    };
    return cudaSuccess;
}

cudaError_t crm_srv_crm_func_set_attribute(crm_session *s, uint64_t func, int attr, int value)
{
    crm__kfunc *f = crm__func(s, func);
    if (f == NULL)
        return cudaErrorInvalidDeviceFunction;
    return crm_rt.cudaFuncSetAttribute((const void *)f->kernel, (enum cudaFuncAttribute)attr, value);
}

cudaError_t crm_srv_crm_func_set_cache_config(crm_session *s, uint64_t func, int config)
{
    crm__kfunc *f = crm__func(s, func);
    if (f == NULL)
        return cudaErrorInvalidDeviceFunction;
    return crm_rt.cudaFuncSetCacheConfig((const void *)f->kernel, (enum cudaFuncCache)config);
}

cudaError_t crm_srv_crm_occupancy(crm_session *s, uint64_t func, int blockSize, uint64_t dynamicSMemSize,
                                  unsigned int flags, int *numBlocks)
{
    crm__kfunc *f = crm__func(s, func);
    int n = 0;
    if (f == NULL)
        return cudaErrorInvalidDeviceFunction;
    cudaError_t err = crm_rt.cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&n, (const void *)f->kernel,
                                                                                   blockSize, dynamicSMemSize, flags);
    *numBlocks = n;
    return err;
}
