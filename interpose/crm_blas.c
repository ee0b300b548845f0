/* crm_blas.c -- the shim's cuBLAS handles: creation and destruction on the server,
 * the settings kept by the client (pointer mode, stream, workspace; the others are
 * crm_blas_settings.c's),
 * version, property and status-name queries answered locally, the handle NVIDIA's
 * cuBLAS answers the calls cudarem does not remote with (interpose/crm_fallback.h),
 * and the helpers the other crm_blas*.c files use to send calls and pass scalars. */
#include <pthread.h>
#include <string.h>
#include <stdlib.h>
#include "client/crm_conn.h"
#include "client/crm_graph.h"
#include "client/crm_handles.h"
#include "client/crm_ptrmap.h"
#include "common/crm_idmap.h"
#include "crm_client_gen.h"
#include "interpose/crm_blas.h"
#include "interpose/crm_export.h"
#include "interpose/crm_fallback.h"
#include "common/crm_log.h"

static pthread_mutex_t crm__lock = PTHREAD_MUTEX_INITIALIZER;
static crm_idmap crm__handles; /* id -> crm_blas_state *, guarded by crm__lock */

static crm_blas_state *crm__find(cublasHandle_t h)
{
    void *v;
    if (h == NULL || crm_idmap_get(&crm__handles, (uint64_t)(uintptr_t)h, &v) != 0)
        return NULL;
    return v;
}

cublasStatus_t crm_blas_get(cublasHandle_t h, crm_blas_state *out)
{
    pthread_mutex_lock(&crm__lock);
    crm_blas_state *st = crm__find(h);
    if (st != NULL)
        *out = *st;
    pthread_mutex_unlock(&crm__lock);
    return st != NULL ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t crm_blas_with(cublasHandle_t h, cublasStatus_t (*fn)(crm_blas_state *, const void *), const void *arg)
{
    pthread_mutex_lock(&crm__lock);
    crm_blas_state *st = crm__find(h);
    cublasStatus_t rc = st != NULL ? fn(st, arg) : CUBLAS_STATUS_NOT_INITIALIZED;
    pthread_mutex_unlock(&crm__lock);
    return rc;
}

/* crm_conn_async gives cudaSuccess, a transport error, or (while calls still wait
 * for their reply) the call's own status, which is a cuBLAS status. */
static int crm__is_cublas_status(int v)
{
    switch (v) {
    case CUBLAS_STATUS_NOT_INITIALIZED: case CUBLAS_STATUS_ALLOC_FAILED: case CUBLAS_STATUS_INVALID_VALUE:
    case CUBLAS_STATUS_ARCH_MISMATCH: case CUBLAS_STATUS_MAPPING_ERROR: case CUBLAS_STATUS_EXECUTION_FAILED:
    case CUBLAS_STATUS_INTERNAL_ERROR: case CUBLAS_STATUS_NOT_SUPPORTED: case CUBLAS_STATUS_LICENSE_ERROR:
        return 1;
    default:
        return 0;
    }
}

cublasStatus_t crm_blas_async(crm_call *call)
{
    crm_blas_log_call(call->api);
    int err = (int)crm_conn_async(call);
    if (err == 0)
        return CUBLAS_STATUS_SUCCESS;
    return crm__is_cublas_status(err) ? (cublasStatus_t)err : CUBLAS_STATUS_INTERNAL_ERROR;
}

cublasStatus_t crm_blas_work(crm_call *call, uint64_t stream)
{
    crm_blas_log_call(call->api);
    int err = (int)crm_conn_async_on(call, stream);
    if (err == 0)
        return CUBLAS_STATUS_SUCCESS;
    return crm__is_cublas_status(err) ? (cublasStatus_t)err : CUBLAS_STATUS_INTERNAL_ERROR;
}

cublasStatus_t crm_blas_refuse_in_capture(uint64_t stream)
{
    static int logged;
    if (crm_capture_refuse_sync(stream, CRM_WIRE_BAD_HANDLE) == cudaSuccess)
        return CUBLAS_STATUS_SUCCESS;
    if (!__atomic_exchange_n(&logged, 1, __ATOMIC_RELAXED))
        crm_warn("a cuBLAS call returning its result to the host was made on a capturing stream: it would wait for "
                 "the stream, which a capture forbids; CUBLAS_STATUS_NOT_SUPPORTED, and the capture is invalidated");
    return CUBLAS_STATUS_NOT_SUPPORTED;
}

cudaError_t crm_blas_exec(crm_call *call, crm_reply *reply)
{
    crm_blas_log_call(call->api);
    return crm_conn_exec(call, reply, 1);
}

cublasStatus_t crm_blas_scalar(int pmode, const void *p, size_t size, void *out, size_t cap)
{
    uint64_t addr = CRM_BLAS_DEV(p);
    memset(out, 0, cap);
    if (p == NULL || size > cap || cap < sizeof addr)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (pmode == CUBLAS_POINTER_MODE_DEVICE) {
        memcpy(out, &addr, sizeof addr);
        return CUBLAS_STATUS_SUCCESS;
    }
    if (crm_ptrmap_classify(addr, NULL) == CRM_MEM_DEVICE)
        return CUBLAS_STATUS_INVALID_VALUE; /* not readable here */
    memcpy(out, p, size);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t crm_blas_result(void *p, size_t size, const void *value, size_t cap)
{
    if (size > cap || crm_ptrmap_classify(CRM_BLAS_DEV(p), NULL) == CRM_MEM_DEVICE)
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(p, value, size);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t crm_blas_word(int pmode, const void *p, size_t size, uint64_t *word)
{
    unsigned char bytes[sizeof *word];
    int by_value = pmode != CUBLAS_POINTER_MODE_DEVICE;
    cublasStatus_t rc = crm_blas_scalar(pmode, p, by_value && size <= sizeof bytes ? size : 0, bytes, sizeof bytes);
    if (rc == CUBLAS_STATUS_SUCCESS && by_value && size != 2 && size != 4 && size != 8)
        rc = CUBLAS_STATUS_NOT_SUPPORTED; /* a word carries halves, floats and doubles only */
    if (rc == CUBLAS_STATUS_SUCCESS)
        memcpy(word, bytes, sizeof *word); /* zero-extended: the bytes were cleared */
    return rc;
}

/* --- handles ---------------------------------------------------------------------------- */

cublasStatus_t crm_blas_create_remote(crm_call *call, size_t status_at, pthread_mutex_t *lock,
                                      crm_idmap *handles, uint64_t id, void *state)
{
    crm_reply reply;
    int status;
    memset(&reply, 0, sizeof reply);
    if (crm_conn_exec(call, &reply, 1) != cudaSuccess) {
        crm_conn_reply_free(&reply);
        return CUBLAS_STATUS_NOT_INITIALIZED;
    }
    memcpy(&status, (const char *)&reply + status_at, sizeof status);
    crm_conn_reply_free(&reply);
    if (status != CUBLAS_STATUS_SUCCESS)
        return (cublasStatus_t)status;
    pthread_mutex_lock(lock);
    int filed = crm_idmap_put(handles, id, state) == 0;
    pthread_mutex_unlock(lock);
    return filed ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

/* Synchronous, so that a server without cuBLAS is reported here and not at the
 * first computation. A server that cannot be reached is NOT_INITIALIZED, as cuBLAS
 * reports a CUDA runtime that cannot start. */
CRM_EXPORT cublasStatus_t cublasCreate_v2(cublasHandle_t *handle)
{
    crm_call call = {.api = CRM_API_cublasCreate_v2};
    if (handle == NULL)
        return CUBLAS_STATUS_INVALID_VALUE;
    crm_blas_state *st = calloc(1, sizeof *st);
    if (st == NULL)
        return CUBLAS_STATUS_ALLOC_FAILED;
    st->id = crm_handle_new_id();
    st->pmode = CUBLAS_POINTER_MODE_HOST;
    st->math = CUBLAS_DEFAULT_MATH;
    call.crm_call_u.cublasCreate_v2.id = st->id;
    cublasStatus_t rc = crm_blas_create_remote(&call, offsetof(crm_reply, crm_reply_u.cublasCreate_v2.err),
                                               &crm__lock, &crm__handles, st->id, st);
    if (rc != CUBLAS_STATUS_SUCCESS) {
        free(st);
        return rc;
    }
    *handle = (cublasHandle_t)(uintptr_t)st->id;
    return CUBLAS_STATUS_SUCCESS;
}

/* ---- the handle NVIDIA's cuBLAS answers calls of this one with ----------------- */

typedef cublasStatus_t (*crm__real_fn)();

static crm__real_fn crm__real(const char *name)
{
    return (crm__real_fn)crm_fallback_symbol(CRM_FALLBACK_CUBLAS, name);
}

/* Gives the real handle the settings of st it does not have yet; lock held. */
static void crm__apply(crm_blas_state *st)
{
    crm__real_fn set_stream = crm__real("cublasSetStream_v2"), set_pmode = crm__real("cublasSetPointerMode_v2"),
                 set_math = crm__real("cublasSetMathMode"), set_ws = crm__real("cublasSetWorkspace_v2"),
                 set_atomics = crm__real("cublasSetAtomicsMode"), set_sms = crm__real("cublasSetSmCountTarget");
    struct crm_blas_applied *a = &st->applied;
    if (a->stream != st->stream && set_stream != NULL && set_stream(st->real, st->stream) == CUBLAS_STATUS_SUCCESS)
        a->stream = st->stream;
    if (a->pmode != st->pmode && set_pmode != NULL && set_pmode(st->real, st->pmode) == CUBLAS_STATUS_SUCCESS)
        a->pmode = st->pmode;
    if (a->math != st->math && set_math != NULL && set_math(st->real, st->math) == CUBLAS_STATUS_SUCCESS)
        a->math = st->math;
    if (a->atomics != st->atomics && set_atomics != NULL && set_atomics(st->real, st->atomics) == CUBLAS_STATUS_SUCCESS)
        a->atomics = st->atomics;
    if (a->sm_target != st->sm_target && set_sms != NULL && set_sms(st->real, st->sm_target) == CUBLAS_STATUS_SUCCESS)
        a->sm_target = st->sm_target;
    if ((a->workspace != st->workspace || a->workspace_size != st->workspace_size) && set_ws != NULL &&
        set_ws(st->real, st->workspace, st->workspace_size) == CUBLAS_STATUS_SUCCESS) {
        a->workspace = st->workspace;
        a->workspace_size = st->workspace_size;
    }
}

/* The handle NVIDIA's cuBLAS made for handle (made at its first call there, with
 * handle's settings, which follow it); handle itself when it is none of ours or
 * NVIDIA's cuBLAS cannot make one (its call then fails as with a bad handle). */
void *crm_blas_real_handle(void *handle)
{
    crm__real_fn create = crm__real("cublasCreate_v2");
    pthread_mutex_lock(&crm__lock);
    crm_blas_state *st = crm__find(handle);
    if (st != NULL && st->real == NULL && create != NULL) {
        cublasStatus_t rc = create(&st->real);
        if (rc != CUBLAS_STATUS_SUCCESS) {
            crm_warn("NVIDIA's cublasCreate failed with status %d: calls it would answer fail", (int)rc);
            st->real = NULL;
        } else {
            st->applied = (struct crm_blas_applied){CUBLAS_POINTER_MODE_HOST, CUBLAS_DEFAULT_MATH, NULL, NULL, 0,
                                                    CUBLAS_ATOMICS_NOT_ALLOWED, 0};
        }
    }
    if (st != NULL && st->real != NULL)
        crm__apply(st);
    void *real = st != NULL && st->real != NULL ? st->real : handle;
    pthread_mutex_unlock(&crm__lock);
    return real;
}

/* Forgets the handle locally whatever the server says: it is gone either way. The
 * client knows it was live, so the server's destruction is queued (no round trip). */
CRM_EXPORT cublasStatus_t cublasDestroy_v2(cublasHandle_t handle)
{
    void *v;
    pthread_mutex_lock(&crm__lock);
    int known = handle != NULL && crm_idmap_del(&crm__handles, (uint64_t)(uintptr_t)handle, &v) == 0;
    pthread_mutex_unlock(&crm__lock);
    if (!known)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    crm__real_fn destroy = ((crm_blas_state *)v)->real != NULL ? crm__real("cublasDestroy_v2") : NULL;
    if (destroy != NULL)
        destroy(((crm_blas_state *)v)->real);
    free(v);
    return crm_rpc_cublasDestroy_v2_queued((uint64_t)(uintptr_t)handle);
}

CRM_EXPORT cublasStatus_t cublasGetVersion_v2(cublasHandle_t handle, int *version)
{
    crm_blas_state st;
    cublasStatus_t rc = crm_blas_get(handle, &st);
    if (rc != CUBLAS_STATUS_SUCCESS)
        return rc;
    if (version == NULL)
        return CUBLAS_STATUS_INVALID_VALUE;
    return crm_rpc_cublasGetVersion_v2(st.id, version);
}

/* The version of the cuBLAS headers the shim was built with. */
CRM_EXPORT cublasStatus_t cublasGetProperty(libraryPropertyType type, int *value)
{
    if (value == NULL)
        return CUBLAS_STATUS_INVALID_VALUE;
    switch (type) {
    case MAJOR_VERSION: *value = CUBLAS_VER_MAJOR; return CUBLAS_STATUS_SUCCESS;
    case MINOR_VERSION: *value = CUBLAS_VER_MINOR; return CUBLAS_STATUS_SUCCESS;
    case PATCH_LEVEL: *value = CUBLAS_VER_PATCH; return CUBLAS_STATUS_SUCCESS;
    default: return CUBLAS_STATUS_INVALID_VALUE;
    }
}

/* --- settings ----------------------------------------------------------------------------- */

static cublasStatus_t crm__set_stream(crm_blas_state *st, const void *arg)
{
    cudaStream_t stream = *(const cudaStream_t *)arg;
    if (stream == st->stream)
        return CUBLAS_STATUS_SUCCESS;
    crm_call call = {.api = CRM_API_cublasSetStream_v2};
    call.crm_call_u.cublasSetStream_v2.handle = st->id;
    call.crm_call_u.cublasSetStream_v2.streamId = crm_stream_wire(stream, CRM_PTDS_OFF);
    cublasStatus_t rc = crm_blas_async(&call);
    if (rc == CUBLAS_STATUS_SUCCESS)
        st->stream = stream;
    return rc;
}

CRM_EXPORT cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t streamId)
{
    return crm_blas_with(handle, crm__set_stream, &streamId);
}

CRM_EXPORT cublasStatus_t cublasGetStream_v2(cublasHandle_t handle, cudaStream_t *streamId)
{
    crm_blas_state st;
    cublasStatus_t rc = crm_blas_get(handle, &st);
    if (rc == CUBLAS_STATUS_SUCCESS && streamId == NULL)
        rc = CUBLAS_STATUS_INVALID_VALUE;
    if (rc == CUBLAS_STATUS_SUCCESS)
        *streamId = st.stream;
    return rc;
}

/* The pointer mode travels with every call that uses it: nothing to send here. */
static cublasStatus_t crm__set_pmode(crm_blas_state *st, const void *arg)
{
    cublasPointerMode_t mode = *(const cublasPointerMode_t *)arg;
    if (mode != CUBLAS_POINTER_MODE_HOST && mode != CUBLAS_POINTER_MODE_DEVICE)
        return CUBLAS_STATUS_INVALID_VALUE;
    st->pmode = mode;
    return CUBLAS_STATUS_SUCCESS;
}

CRM_EXPORT cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t mode)
{
    return crm_blas_with(handle, crm__set_pmode, &mode);
}

CRM_EXPORT cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t *mode)
{
    crm_blas_state st;
    cublasStatus_t rc = crm_blas_get(handle, &st);
    if (rc == CUBLAS_STATUS_SUCCESS && mode == NULL)
        rc = CUBLAS_STATUS_INVALID_VALUE;
    if (rc == CUBLAS_STATUS_SUCCESS)
        *mode = st.pmode;
    return rc;
}

typedef struct crm__ws {
    void *ptr;
    size_t size;
} crm__ws;

static cublasStatus_t crm__set_ws(crm_blas_state *st, const void *arg)
{
    const crm__ws *ws = arg;
    if (ws->size > 0 && crm_ptrmap_classify(CRM_BLAS_DEV(ws->ptr), NULL) != CRM_MEM_DEVICE)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (ws->ptr == st->workspace && ws->size == st->workspace_size)
        return CUBLAS_STATUS_SUCCESS;
    crm_call call = {.api = CRM_API_cublasSetWorkspace_v2};
    call.crm_call_u.cublasSetWorkspace_v2.handle = st->id;
    call.crm_call_u.cublasSetWorkspace_v2.workspace = CRM_BLAS_DEV(ws->ptr);
    call.crm_call_u.cublasSetWorkspace_v2.workspaceSizeInBytes = ws->size;
    cublasStatus_t rc = crm_blas_async(&call);
    if (rc == CUBLAS_STATUS_SUCCESS) {
        st->workspace = ws->ptr;
        st->workspace_size = ws->size;
    }
    return rc;
}

CRM_EXPORT cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void *workspace, size_t workspaceSizeInBytes)
{
    crm__ws ws = {workspace, workspaceSizeInBytes};
    return crm_blas_with(handle, crm__set_ws, &ws);
}

/* --- status names (local) ------------------------------------------------------------------ */

#define CRM_BLAS_STATUS_MAP(XX)                                                                       \
    XX(CUBLAS_STATUS_SUCCESS, "the operation completed successfully")                                 \
    XX(CUBLAS_STATUS_NOT_INITIALIZED, "the library was not initialized")                              \
    XX(CUBLAS_STATUS_ALLOC_FAILED, "the resource allocation failed")                                  \
    XX(CUBLAS_STATUS_INVALID_VALUE, "an invalid numeric value was used as an argument")               \
    XX(CUBLAS_STATUS_ARCH_MISMATCH, "an absent device architectural feature is required")             \
    XX(CUBLAS_STATUS_MAPPING_ERROR, "an access to GPU memory space failed")                           \
    XX(CUBLAS_STATUS_EXECUTION_FAILED, "the GPU program failed to execute")                           \
    XX(CUBLAS_STATUS_INTERNAL_ERROR, "an internal operation failed")                                  \
    XX(CUBLAS_STATUS_NOT_SUPPORTED, "the functionality requested is not supported")                   \
    XX(CUBLAS_STATUS_LICENSE_ERROR, "an error was detected when checking the current licensing")

CRM_EXPORT const char *cublasGetStatusName(cublasStatus_t status)
{
    switch (status) {
#define CRM__NAME(code, text) \
    case code:                \
        return #code;
        CRM_BLAS_STATUS_MAP(CRM__NAME)
#undef CRM__NAME
    default:
        return "CUBLAS_STATUS_UNKNOWN";
    }
}

CRM_EXPORT const char *cublasGetStatusString(cublasStatus_t status)
{
    switch (status) {
#define CRM__TEXT(code, text) \
    case code:                \
        return text;
        CRM_BLAS_STATUS_MAP(CRM__TEXT)
#undef CRM__TEXT
    default:
        return "unknown cuBLAS status";
    }
}
