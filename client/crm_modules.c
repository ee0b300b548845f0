/* crm_modules.c -- registered device code and its per-session state.
 *
 * Modules, kernels and variables are created by the registration calls nvcc's
 * constructors make and live until __cudaUnregisterFatBinary. The session state
 * (wire ids, loaded flags) is tagged with the process id and a per-module
 * generation, so a forked child, which opens its own session, loads again; in a
 * pool each server loads a module and names a kernel under the same wire ids the
 * first time a thread whose device it serves uses them. One
 * mutex guards everything; it is held across the few calls that load a module or
 * name a kernel, which happen once per session each.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "client/crm_conn.h"
#include "client/crm_handles.h"
#include "client/crm_modules.h"
#include "client/crm_cubin_ptx.h"
#include "client/crm_ptrmap.h"
#include "common/crm_digest.h"
#include "common/crm_image.h"
#include "common/crm_idmap.h"
#include "common/crm_log.h"
#include "crm_client_gen.h"

#define CRM__MAX_DEV 16
#define CRM__SERVER_BITS 32 /* servers a module's and a kernel's bit masks can name */

struct crm_kmodule {
    const unsigned char *fatbin;   /* the image: in the program's image, or owned */
    size_t len;                    /* 0: not an image cudarem reads */
    unsigned char *owned;          /* the copy a driver load made, or NULL */
    int parsed;                    /* info and digest are valid */
    crm_module_info info;
    crm_digest digest;             /* of the image shipped to this session */
    pid_t pid;                     /* process whose sessions the fields below describe */
    uint64_t id;                   /* wire id on every server, 0 = none chosen yet */
    unsigned gen;                  /* bumped for each process that uses it */
    uint32_t loaded_on;            /* servers of the pool (bit per index) that loaded it */
    uint32_t failed_on;            /* servers that refused it, */
    cudaError_t load_err;          /* with this sticky failure */
};

struct crm_kfunc {
    crm_kmodule *m;
    const void *host;              /* the host stub */
    char *name;                    /* mangled device name */
    unsigned gen;                  /* m->gen when id was chosen, 0 = never */
    uint64_t id;                   /* wire id, the same on every server */
    uint32_t named_on;             /* servers it was named to under that id */
    crm_kparam *params;            /* layout in wire form, from m->info */
    uint32_t nparams, param_bytes;
    int told;                      /* 1: the user was told it cannot run there */
};

struct crm_kvar {
    crm_kmodule *m;
    const void *host;              /* the host shadow */
    char *name;
    size_t size;                   /* registered size */
    unsigned gen[CRM__MAX_DEV];    /* m->gen when resolved on each device */
    uint64_t addr[CRM__MAX_DEV];
    uint64_t dsize[CRM__MAX_DEV];
};

static pthread_mutex_t crm__lock = PTHREAD_MUTEX_INITIALIZER;
static crm_idmap crm__funcs;       /* host stub -> crm_kfunc */
static crm_idmap crm__handles;     /* crm_kfunc address -> itself (valid cudaKernel_t) */
static crm_idmap crm__vars;        /* host shadow -> crm_kvar */
static crm_idmap crm__mods;        /* crm_kmodule address -> itself (live modules) */

crm_kmodule *crm_modules_register(const void *wrapper)
{
    const struct { int magic; int version; const void *data; void *extra; } *w = wrapper;
    crm_kmodule *m = calloc(1, sizeof *m);
    if (m == NULL)
        return NULL;
    if (w != NULL && (unsigned)w->magic == CRM_FATBIN_WRAPPER_MAGIC && w->data != NULL) {
        m->fatbin = w->data;
        m->len = crm_fatbin_size(w->data, CRM_FATBIN_MAX);
    }
    if (m->len == 0)
        crm_warn("a registered fatbinary is not in a format cudarem reads: its kernels cannot run");
    pthread_mutex_lock(&crm__lock);
    if (crm_idmap_put(&crm__mods, (uint64_t)(uintptr_t)m, m) != 0) {
        free(m);
        m = NULL;
    }
    pthread_mutex_unlock(&crm__lock);
    return m;
}

crm_kmodule *crm_modules_load(const void *image, int in_image, cudaError_t *err)
{
    const void *inner;
    size_t len = crm_image_size(image, CRM_IMAGE_BYTES_MAX, &inner);
    *err = cudaErrorInvalidKernelImage;
    if (len == 0)
        return NULL;
    crm_kmodule *m = calloc(1, sizeof *m);
    if (m == NULL || (!in_image && (m->owned = malloc(len)) == NULL)) {
        free(m);
        *err = cudaErrorMemoryAllocation;
        return NULL;
    }
    if (m->owned != NULL)
        memcpy(m->owned, inner, len);
    m->fatbin = m->owned != NULL ? m->owned : inner;
    m->len = len;
    pthread_mutex_lock(&crm__lock);
    if (crm_idmap_put(&crm__mods, (uint64_t)(uintptr_t)m, m) != 0) {
        free(m->owned);
        free(m);
        m = NULL;
        *err = cudaErrorMemoryAllocation;
    }
    pthread_mutex_unlock(&crm__lock);
    if (m != NULL)
        *err = cudaSuccess;
    return m;
}

int crm_modules_valid(const crm_kmodule *m)
{
    void *v;
    pthread_mutex_lock(&crm__lock);
    int ok = m != NULL && crm_idmap_get(&crm__mods, (uint64_t)(uintptr_t)m, &v) == 0;
    pthread_mutex_unlock(&crm__lock);
    return ok;
}

/* Ids (keys) of the entries of map whose value belongs to m; *n of them. */
static uint64_t *crm__entries_of(crm_idmap *map, crm_kmodule *m, int funcs, size_t *n)
{
    uint64_t *ids = malloc((map->used + 1) * sizeof *ids);
    *n = 0;
    for (size_t i = 0; ids != NULL && i < map->cap; i++) {
        if (map->slots[i].state != 1)
            continue;
        void *v = map->slots[i].value;
        if ((funcs ? ((crm_kfunc *)v)->m : ((crm_kvar *)v)->m) == m)
            ids[(*n)++] = map->slots[i].id;
    }
    return ids;
}

/* Frees m's kernels (registered by host stub or got by name) and variables. */
static void crm__drop_entries(crm_kmodule *m)
{
    size_t n;
    uint64_t *ids = crm__entries_of(&crm__handles, m, 1, &n);
    for (size_t i = 0; i < n; i++) {
        void *v;
        crm_idmap_del(&crm__handles, ids[i], &v);
        crm_kfunc *f = v;
        if (f->host != NULL)
            crm_idmap_del(&crm__funcs, (uint64_t)(uintptr_t)f->host, NULL);
        free(f->params);
        free(f->name);
        free(f);
    }
    free(ids);
    ids = crm__entries_of(&crm__vars, m, 0, &n);
    for (size_t i = 0; i < n; i++) {
        void *v;
        crm_idmap_del(&crm__vars, ids[i], &v);
        free(((crm_kvar *)v)->name);
        free(v);
    }
    free(ids);
}

/* Frees module `id` on server `server` of the pool, through one of its devices. */
static void crm__unload_on(uint64_t id, int server)
{
    int local, dev = crm_conn_server_device(server);
    if (dev < 0)
        return;
    int saved = crm_conn_device_begin(dev, &local);
    crm_call call = {.api = CRM_API_crm_module_unload};
    call.crm_call_u.crm_module_unload.id = id;
    crm_conn_async(&call);
    crm_conn_device_end(saved);
}

void crm_modules_unregister(crm_kmodule *m)
{
    if (m == NULL)
        return;
    pthread_mutex_lock(&crm__lock);
    crm__drop_entries(m);
    crm_idmap_del(&crm__mods, (uint64_t)(uintptr_t)m, NULL);
    uint32_t loaded_on = m->pid == getpid() ? m->loaded_on : 0;
    pthread_mutex_unlock(&crm__lock);
    for (int server = 0; server < CRM__SERVER_BITS; server++) /* a library being dlclose'd: free its module */
        if (loaded_on & (1u << server))
            crm__unload_on(m->id, server);
    crm_module_info_free(&m->info);
    free(m->owned);
    free(m);
}

void crm_modules_add_function(crm_kmodule *m, const void *hostFun, const char *deviceName)
{
    crm_kfunc *f = calloc(1, sizeof *f);
    if (m == NULL || f == NULL || deviceName == NULL || (f->name = strdup(deviceName)) == NULL) {
        free(f);
        return;
    }
    f->m = m;
    f->host = hostFun;
    pthread_mutex_lock(&crm__lock);
    if (crm_idmap_put(&crm__funcs, (uint64_t)(uintptr_t)hostFun, f) != 0 ||
        crm_idmap_put(&crm__handles, (uint64_t)(uintptr_t)f, f) != 0) {
        crm_idmap_del(&crm__funcs, (uint64_t)(uintptr_t)hostFun, NULL);
        free(f->name);
        free(f);
    }
    pthread_mutex_unlock(&crm__lock);
}

void crm_modules_add_var(crm_kmodule *m, const void *hostVar, const char *deviceName, size_t size)
{
    crm_kvar *v = calloc(1, sizeof *v);
    if (m == NULL || v == NULL || deviceName == NULL || (v->name = strdup(deviceName)) == NULL) {
        free(v);
        return;
    }
    v->m = m;
    v->host = hostVar;
    v->size = size;
    pthread_mutex_lock(&crm__lock);
    if (crm_idmap_put(&crm__vars, (uint64_t)(uintptr_t)hostVar, v) != 0) {
        free(v->name);
        free(v);
    }
    pthread_mutex_unlock(&crm__lock);
}

crm_kfunc *crm_modules_func(const void *func)
{
    void *v = NULL;
    pthread_mutex_lock(&crm__lock);
    if (func != NULL && crm_idmap_get(&crm__funcs, (uint64_t)(uintptr_t)func, &v) != 0 &&
        crm_idmap_get(&crm__handles, (uint64_t)(uintptr_t)func, &v) != 0)
        v = NULL;
    pthread_mutex_unlock(&crm__lock);
    return v;
}

cudaKernel_t crm_modules_kernel_handle(crm_kfunc *f)
{
    return (cudaKernel_t)f;
}

/* Reads the module's kernels once; lock held. */
static cudaError_t crm__parse(crm_kmodule *m)
{
    char err[256];
    if (m->parsed)
        return cudaSuccess;
    if (m->len == 0)
        return cudaErrorInvalidKernelImage;
    if (crm_module_info_from_image(m->fatbin, m->len, &m->info, err, sizeof err) != 0) {
        crm_error("cannot read a device code module: %s", err);
        return cudaErrorInvalidKernelImage;
    }
    m->parsed = 1;
    return cudaSuccess;
}

/* Architecture of the thread's device (90 for sm_90); 0 for the emulated device,
 * which runs the CPU implementations of any cubin's kernels, or when unknown. */
static unsigned crm__device_arch(void)
{
    crm_session_info info;
    int major = 0, minor = 0, dev = crm_thread_device();
    if (crm_conn_session(&info) != cudaSuccess || strcmp(info.backend, "emu") == 0)
        return 0;
    cudaError_t saved = crm_peek_error();
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess)
        major = minor = 0;
    crm_put_error(saved);
    return (unsigned)(major * 10 + minor);
}

static int crm__server_runs_ptx(void)
{
    crm_session_info info;
    return crm_conn_session(&info) == cudaSuccess && strcmp(info.backend, "emu") == 0;
}

int crm_modules_server_runs_ptx(void)
{
    return crm__server_runs_ptx();
}

/* What crosses the wire for m: of a fatbinary, only the entry the server's device
 * loads (its machine code, else its PTX), so a module built for many architectures
 * costs one; the emulated device gets it whole (it needs the PTX beside the
 * cubin), and for a cubin this process compiled (NVRTC) the PTX kept beside it
 * (client/crm_cubin_ptx.h); any other image whole. *owned is set when the bytes
 * are a new buffer. */
static void crm__shipped_image(crm_kmodule *m, const unsigned char **bytes, size_t *len, unsigned char **owned)
{
    unsigned arch = crm__device_arch();
    size_t ptx_len = 0;
    const char *ptx;
    *bytes = m->fatbin;
    *len = m->len;
    *owned = NULL;
    if (crm_image_kind(m->fatbin, m->len) == CRM_IMAGE_ELF && crm__server_runs_ptx() &&
        (ptx = crm_cubin_ptx_find(m->fatbin, m->len, &ptx_len)) != NULL) {
        *bytes = (const unsigned char *)ptx;
        *len = ptx_len + 1; /* with its NUL */
        return;
    }
    if (crm_image_kind(m->fatbin, m->len) == CRM_IMAGE_FATBIN && !crm__server_runs_ptx() &&
        crm_fatbin_slim(m->fatbin, m->len, arch, owned, len) == 0)
        *bytes = *owned;
    else
        *len = m->len;
}

/* The bit of the calling thread's server: each server of a pool loads a module,
 * and names a kernel, the first time a thread of its devices uses it. Without a
 * pool (or before the sessions open) it is server 0's, with no lock taken: the
 * launch path asks on every launch. A load recomputes it after its round trip,
 * which opens the sessions. */
static uint32_t crm__server_bit(void)
{
    if (!crm_conn_pooled())
        return 1u;
    int server = crm_conn_thread_server();
    return server >= 0 && server < CRM__SERVER_BITS ? 1u << server : 0;
}

/* A module is the session's: in a forked child nothing of it is loaded yet. */
static void crm__follow_process(crm_kmodule *m)
{
    if (m->pid == getpid())
        return;
    m->pid = getpid();
    m->id = 0;
    m->loaded_on = m->failed_on = 0;
    m->gen++;
}

/* Loads m on the calling thread's server once: by digest first, then shipping the
 * image when the server has not cached it; *bit: that server's bit. Lock held. */
static cudaError_t crm__load_at(crm_kmodule *m, uint32_t *bit)
{
    const unsigned char *bytes;
    unsigned char *owned;
    size_t len;
    int loaded = 0;
    crm__follow_process(m);
    if ((*bit = crm__server_bit()) == 0)
        return cudaErrorNoDevice; /* no session: try again at the next use */
    if (m->loaded_on & *bit)
        return cudaSuccess;
    if (m->failed_on & *bit)
        return m->load_err;
    cudaError_t err = crm__parse(m);
    if (err != cudaSuccess)
        return err;
    crm__shipped_image(m, &bytes, &len, &owned);
    if (crm_sha256(bytes, len, (unsigned char *)m->digest.bytes) != 0) {
        free(owned);
        return cudaErrorInvalidKernelImage;
    }
    crm_image none = {{0, NULL}}, image = {{(u_int)len, (char *)bytes}};
    if (m->id == 0)
        m->id = crm_handle_new_shared_id();
    err = crm_rpc_crm_module_load(m->id, &m->digest, &none, &loaded);
    if (err == cudaSuccess && !loaded) {
        err = crm_rpc_crm_module_load(m->id, &m->digest, &image, &loaded);
        if (err == cudaSuccess)
            crm_conn_count_bulk(len, 0);
    }
    free(owned);
    if (err == cudaErrorNoDevice || err == cudaErrorDevicesUnavailable)
        return err; /* no session: try again at the next use */
    if (err == cudaSuccess && !loaded)
        err = cudaErrorInvalidKernelImage;
    if ((*bit = crm__server_bit()) == 0) /* the sessions are open now: a pool is known */
        return cudaErrorNoDevice;
    if (err == cudaSuccess) {
        m->loaded_on |= *bit;
    } else {
        m->failed_on |= *bit;
        m->load_err = err;
    }
    return err;
}

static cudaError_t crm__load(crm_kmodule *m)
{
    uint32_t bit;
    return crm__load_at(m, &bit);
}

/* The kernel's layout in wire form, from the module's info; lock held. */
static cudaError_t crm__layout(crm_kfunc *f)
{
    const crm_kernel_info *k = crm_module_info_kernel(&f->m->info, f->name);
    if (k == NULL)
        return cudaErrorInvalidDeviceFunction;
    if (f->params != NULL)
        return cudaSuccess;
    f->params = calloc(k->nparams + 1, sizeof *f->params);
    if (f->params == NULL)
        return cudaErrorMemoryAllocation;
    for (uint32_t i = 0; i < k->nparams; i++)
        f->params[i] = (crm_kparam){k->params[i].offset, k->params[i].size};
    f->nparams = k->nparams;
    f->param_bytes = k->param_bytes;
    return cudaSuccess;
}

cudaError_t crm_modules_prepare(crm_kfunc *f, crm_kready *out)
{
    uint32_t bit;
    pthread_mutex_lock(&crm__lock);
    cudaError_t err = crm__load_at(f->m, &bit);
    if (err == cudaSuccess)
        err = crm__layout(f);
    if (err == cudaSuccess && f->gen != f->m->gen) { /* a wire id for this process's sessions */
        f->id = crm_handle_new_shared_id();
        f->gen = f->m->gen;
        f->named_on = 0;
    }
    if (err == cudaSuccess && !(f->named_on & bit)) {
        crm_kname name = {f->name};
        err = crm_rpc_crm_function_get(f->m->id, f->id, &name);
        if (err == cudaSuccess) {
            f->named_on |= bit;
        } else if (err == cudaErrorNoKernelImageForDevice && !f->told) {
            f->told = 1; /* once per kernel: a framework may retry it in a loop */
            crm_warn("kernel %s cannot run on the server's device: no kernel image for it "
                     "(cudaErrorNoKernelImageForDevice)", f->name);
        }
    }
    if (err == cudaSuccess)
        *out = (crm_kready){f->id, f->nparams, f->params, f->param_bytes};
    pthread_mutex_unlock(&crm__lock);
    return err;
}

crm_kvar *crm_modules_var(const void *symbol)
{
    void *v = NULL;
    pthread_mutex_lock(&crm__lock);
    if (symbol == NULL || crm_idmap_get(&crm__vars, (uint64_t)(uintptr_t)symbol, &v) != 0)
        v = NULL;
    pthread_mutex_unlock(&crm__lock);
    return v;
}

size_t crm_modules_var_size(const crm_kvar *v)
{
    return v->size;
}

/* 1 when the cached address is still a device range of the pointer table (a
 * cudaDeviceReset drops those, and the address may change after it). */
static int crm__still_mapped(uint64_t addr, uint64_t size)
{
    crm_range r;
    return crm_ptrmap_classify(addr, &r) == CRM_MEM_DEVICE && r.base == addr && r.size >= size;
}

cudaError_t crm_modules_var_resolve(crm_kvar *v, uint64_t *addr, size_t *size)
{
    int dev = crm_thread_device();
    cudaError_t err;
    pthread_mutex_lock(&crm__lock);
    if ((err = crm__load(v->m)) != cudaSuccess)
        goto out;
    if (dev >= 0 && dev < CRM__MAX_DEV && v->gen[dev] == v->m->gen && crm__still_mapped(v->addr[dev], v->dsize[dev])) {
        *addr = v->addr[dev];
        *size = v->dsize[dev];
        goto out;
    }
    crm_kname name = {v->name};
    uint64_t a = 0, n = 0;
    if ((err = crm_rpc_crm_symbol_get(v->m->id, &name, &a, &n)) != cudaSuccess)
        goto out;
    crm_ptrmap_add_fresh(a, n ? n : 1, dev, 0, crm_conn_pooled());
    if (dev >= 0 && dev < CRM__MAX_DEV) {
        v->gen[dev] = v->m->gen;
        v->addr[dev] = a;
        v->dsize[dev] = n;
    }
    *addr = a;
    *size = n;
out:
    pthread_mutex_unlock(&crm__lock);
    return err;
}

cudaError_t crm_modules_get_function(crm_kmodule *m, const char *name, crm_kfunc **out)
{
    cudaError_t err;
    pthread_mutex_lock(&crm__lock);
    if ((err = crm__parse(m)) != cudaSuccess)
        goto out;
    if (crm_module_info_kernel(&m->info, name) == NULL) {
        err = cudaErrorSymbolNotFound;
        goto out;
    }
    for (size_t i = 0; i < crm__handles.cap; i++) { /* one crm_kfunc per (module, name) */
        crm_kfunc *f = crm__handles.slots[i].state == 1 ? crm__handles.slots[i].value : NULL;
        if (f != NULL && f->m == m && strcmp(f->name, name) == 0) {
            *out = f;
            goto out;
        }
    }
    crm_kfunc *f = calloc(1, sizeof *f);
    if (f == NULL || (f->name = strdup(name)) == NULL ||
        crm_idmap_put(&crm__handles, (uint64_t)(uintptr_t)f, f) != 0) {
        if (f != NULL)
            free(f->name);
        free(f);
        err = cudaErrorMemoryAllocation;
        goto out;
    }
    f->m = m;
    *out = f;
out:
    pthread_mutex_unlock(&crm__lock);
    return err;
}

cudaError_t crm_modules_get_global(crm_kmodule *m, const char *name, uint64_t *addr, size_t *size)
{
    cudaError_t err;
    pthread_mutex_lock(&crm__lock);
    if ((err = crm__parse(m)) == cudaSuccess && m->info.nglobals > 0 && crm_module_info_global(&m->info, name) == NULL)
        err = cudaErrorSymbolNotFound; /* a cubin lists its globals: answered here */
    if (err == cudaSuccess)
        err = crm__load(m);
    crm_kname kname = {(char *)name};
    uint64_t a = 0, n = 0;
    if (err == cudaSuccess)
        err = crm_rpc_crm_symbol_get(m->id, &kname, &a, &n);
    if (err == cudaSuccess) {
        crm_ptrmap_add_fresh(a, n ? n : 1, crm_thread_device(), 0, crm_conn_pooled());
        *addr = a;
        *size = n;
    }
    pthread_mutex_unlock(&crm__lock);
    return err == cudaErrorInvalidSymbol ? cudaErrorSymbolNotFound : err;
}

crm_kmodule *crm_modules_func_module(const crm_kfunc *f)
{
    return f->m;
}

const char *crm_modules_func_name(const crm_kfunc *f)
{
    return f->name;
}

cudaError_t crm_modules_func_param(crm_kfunc *f, size_t index, size_t *offset, size_t *size)
{
    pthread_mutex_lock(&crm__lock);
    cudaError_t err = crm__parse(f->m);
    if (err == cudaSuccess)
        err = crm__layout(f);
    if (err == cudaSuccess && index >= f->nparams)
        err = cudaErrorInvalidValue;
    if (err == cudaSuccess) {
        *offset = f->params[index].offset;
        *size = f->params[index].size;
    }
    pthread_mutex_unlock(&crm__lock);
    return err;
}

int crm_modules_func_loaded(const crm_kfunc *f)
{
    pthread_mutex_lock(&crm__lock);
    uint32_t bit = crm__server_bit();
    int loaded = bit != 0 && f->gen != 0 && f->gen == f->m->gen && f->m->pid == getpid() && (f->named_on & bit);
    pthread_mutex_unlock(&crm__lock);
    return loaded;
}

cudaError_t crm_modules_kernel_names(crm_kmodule *m, const char ***names, size_t *count)
{
    pthread_mutex_lock(&crm__lock);
    cudaError_t err = crm__parse(m);
    if (err == cudaSuccess) {
        *count = m->info.nkernels;
        if (names != NULL && (*names = malloc((m->info.nkernels + 1) * sizeof **names)) == NULL)
            err = cudaErrorMemoryAllocation;
        for (size_t i = 0; err == cudaSuccess && names != NULL && i < m->info.nkernels; i++)
            (*names)[i] = m->info.kernels[i].name;
    }
    pthread_mutex_unlock(&crm__lock);
    return err;
}
