/* crm_drv_ctx.c -- driver contexts on the client: each device's primary context
 * (the one the runtime layer uses), contexts programs create, the per-thread stack
 * of current contexts, and context-local storage (NVIDIA's runtime keeps its
 * per-context state there).
 *
 * A context is a client object. Making one current makes its device the thread's
 * device, which every later call of the thread is sent to. The server gives a
 * session one context per device, so a created context shares memory and modules
 * with the primary context of its device (docs/driver.md says so). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "client/crm_handles.h"
#include "interpose/crm_drv.h"
#include "interpose/crm_export.h"

#define CRM__MAX_DEV 64
#define CRM__STACK_DEPTH 64
#define CRM__CTX_MAGIC 0x43724d43u

typedef struct crm__cls {
    void *key;
    void *value;
    crm_drv_cls_dtor dtor;
} crm__cls;

struct CUctx_st {
    unsigned magic;          /* CRM__CTX_MAGIC while live */
    CUdevice device;
    int primary;             /* 1: the device's primary context */
    unsigned flags;          /* CU_CTX_* */
    unsigned refs;           /* primary: cuDevicePrimaryCtxRetain count */
    unsigned long long id;   /* cuCtxGetId */
    int rt_retained;         /* primary: the runtime layer holds its reference */
    crm__cls *cls;           /* context-local storage */
    size_t ncls;
    struct CUctx_st *next;   /* created contexts: the live list */
};

static pthread_mutex_t crm__lock = PTHREAD_MUTEX_INITIALIZER;
static struct CUctx_st crm__primary[CRM__MAX_DEV];
static struct CUctx_st *crm__created;            /* live created contexts */
static unsigned long long crm__next_ctx_id = 1;
static _Thread_local CUcontext crm__stack[CRM__STACK_DEPTH];
static _Thread_local int crm__depth;

CUcontext crm_drv_primary(CUdevice dev)
{
    if (dev < 0 || dev >= CRM__MAX_DEV)
        return NULL;
    pthread_mutex_lock(&crm__lock);
    struct CUctx_st *c = &crm__primary[dev];
    if (c->magic != CRM__CTX_MAGIC)
        *c = (struct CUctx_st){.magic = CRM__CTX_MAGIC, .device = dev, .primary = 1, .id = crm__next_ctx_id++};
    pthread_mutex_unlock(&crm__lock);
    return c;
}

int crm_drv_ctx_valid(CUcontext ctx)
{
    int ok = 0;
    if (ctx == NULL)
        return 0;
    pthread_mutex_lock(&crm__lock);
    if (ctx >= crm__primary && ctx < crm__primary + CRM__MAX_DEV)
        ok = ctx->magic == CRM__CTX_MAGIC;
    for (struct CUctx_st *c = crm__created; c != NULL && !ok; c = c->next)
        ok = c == ctx;
    pthread_mutex_unlock(&crm__lock);
    return ok;
}

CUdevice crm_drv_ctx_device(CUcontext ctx)
{
    return ctx->device;
}

CUcontext crm_drv_ctx_current(void)
{
    return crm__depth > 0 ? crm__stack[crm__depth - 1] : NULL;
}

CUresult crm_drv_need_ctx(void)
{
    CUresult rc = crm_drv_check_init();
    if (rc == CUDA_SUCCESS && crm_drv_ctx_current() == NULL)
        rc = CUDA_ERROR_INVALID_CONTEXT;
    return rc;
}

/* The thread's calls go to the current context's device. */
static void crm__follow(void)
{
    CUcontext c = crm_drv_ctx_current();
    if (c != NULL)
        crm_set_thread_device(c->device);
}

/* ctx, or the current context when ctx is NULL; NULL when neither is valid. */
static CUcontext crm__ctx_or_current(CUcontext ctx)
{
    if (ctx == NULL)
        ctx = crm_drv_ctx_current();
    return crm_drv_ctx_valid(ctx) ? ctx : NULL;
}

/* ---- the runtime layer's context -------------------------------------------------- */

/* The primary context of device, retained once for the runtime layer. */
static CUcontext crm__runtime_primary(int device)
{
    CUcontext c = crm_drv_primary(device);
    if (c == NULL)
        return NULL;
    pthread_mutex_lock(&crm__lock);
    if (!c->rt_retained) {
        c->rt_retained = 1;
        c->refs++;
    }
    pthread_mutex_unlock(&crm__lock);
    return c;
}

void crm_drv_runtime_bind(void)
{
    if (crm__depth > 0)
        return;
    CUcontext c = crm__runtime_primary(crm_thread_device());
    if (c == NULL)
        return;
    crm_drv_mark_init();
    crm__stack[0] = c;
    crm__depth = 1;
}

void crm_drv_runtime_set_device(int device)
{
    CUcontext c = crm__runtime_primary(device);
    if (c == NULL)
        return;
    crm_drv_mark_init();
    if (crm__depth == 0)
        crm__depth = 1;
    crm__stack[crm__depth - 1] = c;
}

/* ---- the current-context stack --------------------------------------------------- */

CRM_EXPORT CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    CUresult rc = crm_drv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (pctx == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = crm_drv_ctx_current();
    return CUDA_SUCCESS;
}

CRM_EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
    CUresult rc = crm_drv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (ctx != NULL && !crm_drv_ctx_valid(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    if (ctx == NULL) { /* replaces the top: with NULL the stack loses it */
        if (crm__depth > 0)
            crm__depth--;
        return CUDA_SUCCESS;
    }
    if (crm__depth == 0)
        crm__depth = 1;
    crm__stack[crm__depth - 1] = ctx;
    crm__follow();
    return CUDA_SUCCESS;
}

CRM_EXPORT CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
    CUresult rc = crm_drv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!crm_drv_ctx_valid(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    if (crm__depth == CRM__STACK_DEPTH)
        return CUDA_ERROR_OUT_OF_MEMORY;
    crm__stack[crm__depth++] = ctx;
    crm__follow();
    return CUDA_SUCCESS;
}

CRM_EXPORT CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
    CUresult rc = crm_drv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (crm__depth == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    CUcontext c = crm__stack[--crm__depth];
    if (pctx != NULL)
        *pctx = c;
    crm__follow();
    return CUDA_SUCCESS;
}

CRM_EXPORT CUresult cuCtxGetDevice(CUdevice *device)
{
    CUresult rc = crm_drv_need_ctx();
    if (rc == CUDA_SUCCESS && device == NULL)
        rc = CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS)
        *device = crm_drv_ctx_current()->device;
    return rc;
}

CRM_EXPORT CUresult cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
    CUresult rc = crm_drv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    CUcontext c = crm__ctx_or_current(ctx);
    if (device == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (c == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    *device = c->device;
    return CUDA_SUCCESS;
}

CRM_EXPORT CUresult cuCtxGetFlags(unsigned int *flags)
{
    CUresult rc = crm_drv_need_ctx();
    if (rc == CUDA_SUCCESS && flags == NULL)
        rc = CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS)
        *flags = crm_drv_ctx_current()->flags;
    return rc;
}

CRM_EXPORT CUresult cuCtxSetFlags(unsigned int flags)
{
    CUresult rc = crm_drv_need_ctx();
    if (rc == CUDA_SUCCESS)
        crm_drv_ctx_current()->flags = flags;
    return rc;
}

CRM_EXPORT CUresult cuCtxGetId(CUcontext ctx, unsigned long long *ctxId)
{
    CUresult rc = crm_drv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    CUcontext c = crm__ctx_or_current(ctx);
    if (ctxId == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (c == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    *ctxId = c->id;
    return CUDA_SUCCESS;
}

CRM_EXPORT CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
    CUresult rc = crm_drv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (version == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (crm__ctx_or_current(ctx) == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    *version = 3020; /* the context ABI every context since CUDA 3.2 reports */
    return CUDA_SUCCESS;
}

/* The context's limits are its device's on the server (CUlimit and cudaLimit share
 * values). The driver's own three are about CIG contexts (CUDA in graphics), which
 * this driver never makes: none is CIG-enabled, the shared memory a kernel may use
 * is the device's, and the CIG fallback is on. They can only be read (the fallback
 * can be set on a CIG context alone). */
CRM_EXPORT CUresult cuCtxSetLimit(CUlimit limit, size_t value)
{
    if (limit == CU_LIMIT_SHMEM_SIZE || limit == CU_LIMIT_CIG_ENABLED)
        return CUDA_ERROR_INVALID_VALUE;
    if (limit == CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED)
        return CUDA_ERROR_NOT_SUPPORTED;
    CRM_DRV_IN_CTX(cudaDeviceSetLimit((enum cudaLimit)limit, value));
}

CRM_EXPORT CUresult cuCtxGetLimit(size_t *pvalue, CUlimit limit)
{
    CUdevice dev;
    int smem = 0;
    CUresult rc = crm_drv_need_ctx();
    if (rc != CUDA_SUCCESS || pvalue == NULL || (limit != CU_LIMIT_SHMEM_SIZE && limit != CU_LIMIT_CIG_ENABLED &&
                                                 limit != CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED))
        CRM_DRV_IN_CTX(cudaDeviceGetLimit(pvalue, (enum cudaLimit)limit));
    if (limit == CU_LIMIT_SHMEM_SIZE) {
        if ((rc = cuCtxGetDevice(&dev)) == CUDA_SUCCESS)
            rc = cuDeviceGetAttribute(&smem, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev);
        *pvalue = (size_t)smem;
        return rc;
    }
    *pvalue = limit == CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED;
    return CUDA_SUCCESS;
}

CRM_EXPORT CUresult cuCtxSynchronize(void)
{
    CUresult rc = crm_drv_need_ctx();
    return rc != CUDA_SUCCESS ? rc : crm_drv_err(cudaDeviceSynchronize());
}

CRM_EXPORT CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
    CUresult rc = crm_drv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    CUcontext c = crm__ctx_or_current(ctx);
    if (c == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    int saved = crm_thread_device();
    crm_set_thread_device(c->device);
    rc = crm_drv_err(cudaDeviceSynchronize());
    crm_set_thread_device(saved);
    return rc;
}

CRM_EXPORT CUresult cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
    CUresult rc = crm_drv_need_ctx();
    if (rc != CUDA_SUCCESS)
        return rc;
    int least = 0, greatest = 0;
    rc = crm_drv_err(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    if (rc == CUDA_SUCCESS && leastPriority != NULL)
        *leastPriority = least;
    if (rc == CUDA_SUCCESS && greatestPriority != NULL)
        *greatestPriority = greatest;
    return rc;
}

/* ---- primary contexts ------------------------------------------------------------- */

CRM_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    CUresult rc = crm_drv_check_device(dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (pctx == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUcontext c = crm_drv_primary(dev);
    pthread_mutex_lock(&crm__lock);
    c->refs++;
    pthread_mutex_unlock(&crm__lock);
    *pctx = c;
    return CUDA_SUCCESS;
}

CRM_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    CUresult rc = crm_drv_check_device(dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    CUcontext c = crm_drv_primary(dev);
    pthread_mutex_lock(&crm__lock);
    if (c->refs == 0)
        rc = CUDA_ERROR_INVALID_CONTEXT;
    else
        c->refs--;
    pthread_mutex_unlock(&crm__lock);
    return rc;
}

CRM_EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    CUresult rc = crm_drv_check_device(dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (flags == NULL || active == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUcontext c = crm_drv_primary(dev);
    pthread_mutex_lock(&crm__lock);
    *flags = c->flags;
    *active = c->refs > 0;
    pthread_mutex_unlock(&crm__lock);
    return CUDA_SUCCESS;
}

CRM_EXPORT CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
    CUresult rc = crm_drv_check_device(dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    crm_drv_primary(dev)->flags = flags;
    return CUDA_SUCCESS;
}

/* Runs and forgets the context's local storage destructors (the runtime frees its
 * per-context state there). */
static void crm__cls_destroy(CUcontext c)
{
    pthread_mutex_lock(&crm__lock);
    crm__cls *cls = c->cls;
    size_t n = c->ncls;
    c->cls = NULL;
    c->ncls = 0;
    pthread_mutex_unlock(&crm__lock);
    for (size_t i = 0; i < n; i++)
        if (cls[i].dtor != NULL)
            cls[i].dtor(c, cls[i].key, cls[i].value);
    free(cls);
}

CRM_EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    CUresult rc = crm_drv_check_device(dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    CUcontext c = crm_drv_primary(dev);
    crm__cls_destroy(c);
    int saved = crm_thread_device();
    crm_set_thread_device(dev);
    rc = crm_drv_err(cudaDeviceReset());
    crm_set_thread_device(saved);
    pthread_mutex_lock(&crm__lock);
    c->refs = 0;
    pthread_mutex_unlock(&crm__lock);
    return rc;
}

/* ---- created contexts ------------------------------------------------------------- */

static CUresult crm__ctx_create(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    CUresult rc = crm_drv_check_device(dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (pctx == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUctx_st *c = calloc(1, sizeof *c);
    if (c == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&crm__lock);
    *c = (struct CUctx_st){.magic = CRM__CTX_MAGIC, .device = dev, .flags = flags, .id = crm__next_ctx_id++,
                           .next = crm__created};
    crm__created = c;
    pthread_mutex_unlock(&crm__lock);
    rc = cuCtxPushCurrent_v2(c);
    *pctx = c;
    return rc;
}

CRM_EXPORT CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    return crm__ctx_create(pctx, flags, dev);
}

CRM_EXPORT CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams,
                                   unsigned int flags, CUdevice dev)
{
    if (numParams > 0 || paramsArray != NULL)
        return CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY;
    return crm__ctx_create(pctx, flags, dev);
}

CRM_EXPORT CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags,
                                   CUdevice dev)
{
    if (ctxCreateParams != NULL && (ctxCreateParams->numExecAffinityParams > 0 || ctxCreateParams->cigParams != NULL))
        return CUDA_ERROR_NOT_SUPPORTED;
    return crm__ctx_create(pctx, flags, dev);
}

/* Removes c from every slot of this thread's stack. */
static void crm__unstack(CUcontext c)
{
    int k = 0;
    for (int i = 0; i < crm__depth; i++)
        if (crm__stack[i] != c)
            crm__stack[k++] = crm__stack[i];
    crm__depth = k;
    crm__follow();
}

CRM_EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx)
{
    CUresult rc = crm_drv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!crm_drv_ctx_valid(ctx) || ctx->primary)
        return CUDA_ERROR_INVALID_CONTEXT;
    crm__cls_destroy(ctx);
    pthread_mutex_lock(&crm__lock);
    for (struct CUctx_st **p = &crm__created; *p != NULL; p = &(*p)->next)
        if (*p == ctx) {
            *p = ctx->next;
            break;
        }
    pthread_mutex_unlock(&crm__lock);
    crm__unstack(ctx);
    ctx->magic = 0;
    free(ctx);
    return CUDA_SUCCESS;
}

/* ---- context-local storage -------------------------------------------------------- */

CUresult crm_drv_cls_put(CUcontext ctx, void *key, void *value, crm_drv_cls_dtor dtor)
{
    CUcontext c = crm__ctx_or_current(ctx);
    if (c == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&crm__lock);
    size_t i = 0;
    while (i < c->ncls && c->cls[i].key != key)
        i++;
    if (i == c->ncls) {
        crm__cls *n = realloc(c->cls, (c->ncls + 1) * sizeof *n);
        if (n == NULL)
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        else
            c->cls = n, c->ncls++;
    }
    if (rc == CUDA_SUCCESS)
        c->cls[i] = (crm__cls){key, value, dtor};
    pthread_mutex_unlock(&crm__lock);
    return rc;
}

CUresult crm_drv_cls_get(void **value, CUcontext ctx, void *key)
{
    CUcontext c = crm__ctx_or_current(ctx);
    if (c == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    CUresult rc = CUDA_ERROR_INVALID_HANDLE; /* no value under key */
    pthread_mutex_lock(&crm__lock);
    for (size_t i = 0; i < c->ncls; i++)
        if (c->cls[i].key == key) {
            *value = c->cls[i].value;
            rc = CUDA_SUCCESS;
            break;
        }
    pthread_mutex_unlock(&crm__lock);
    return rc;
}

CUresult crm_drv_cls_delete(CUcontext ctx, void *key)
{
    CUcontext c = crm__ctx_or_current(ctx);
    if (c == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&crm__lock);
    for (size_t i = 0; i < c->ncls; i++)
        if (c->cls[i].key == key) {
            c->cls[i] = c->cls[--c->ncls];
            break;
        }
    pthread_mutex_unlock(&crm__lock);
    return CUDA_SUCCESS;
}

/* ---- the CUDA 7 forms of the primary context calls (same arguments) --------------- */

#undef cuDevicePrimaryCtxRelease
#undef cuDevicePrimaryCtxReset
#undef cuDevicePrimaryCtxSetFlags
#undef cuCtxDestroy
#undef cuCtxPopCurrent
#undef cuCtxPushCurrent

CRM_EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice dev) { return cuDevicePrimaryCtxRelease_v2(dev); }
CRM_EXPORT CUresult cuDevicePrimaryCtxReset(CUdevice dev) { return cuDevicePrimaryCtxReset_v2(dev); }
CRM_EXPORT CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags)
{
    return cuDevicePrimaryCtxSetFlags_v2(dev, flags);
}
CRM_EXPORT CUresult cuCtxDestroy(CUcontext ctx) { return cuCtxDestroy_v2(ctx); }
CRM_EXPORT CUresult cuCtxPopCurrent(CUcontext *pctx) { return cuCtxPopCurrent_v2(pctx); }
CRM_EXPORT CUresult cuCtxPushCurrent(CUcontext ctx) { return cuCtxPushCurrent_v2(ctx); }
