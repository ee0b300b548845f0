/* crm_lt.c -- the shim's cuBLASLt: handles (created and destroyed on the server
 * under client-chosen ids), cublasLtMatmul (queued with its problem by value: no
 * round trip), the heuristic query answered locally, version and status names,
 * and the handle NVIDIA's cuBLASLt answers the calls cudarem does not remote with
 * (interpose/crm_fallback.h). Descriptors are in interpose/crm_lt_desc.c. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "client/crm_conn.h"
#include "client/crm_handles.h"
#include "common/crm_idmap.h"
#include "common/crm_log.h"
#include "crm_client_gen.h"
#include "interpose/crm_blas.h"
#include "interpose/crm_export.h"
#include "interpose/crm_fallback.h"
#include "interpose/crm_lt.h"

void *crm_blas_real_handle(void *handle); /* interpose/crm_blas.c */

/* What the client keeps of a handle. */
typedef struct crm__lt_state {
    uint64_t id;    /* wire id, also the handle's value */
    void *real;     /* NVIDIA's handle for calls it answers, or NULL */
    int real_failed; /* NVIDIA's cublasLtCreate failed once: not asked again */
} crm__lt_state;

static pthread_mutex_t crm__lock = PTHREAD_MUTEX_INITIALIZER;
static crm_idmap crm__handles; /* id -> crm__lt_state *, guarded by crm__lock */

/* 1 for a handle of cublasLtCreate's, 2 for a cuBLAS handle: NVIDIA documents that
 * a cublasHandle_t may be passed where a cublasLtHandle_t is expected, and torch
 * does so. 0 for neither. */
static int crm__known(cublasLtHandle_t h)
{
    void *v;
    crm_blas_state bs;
    pthread_mutex_lock(&crm__lock);
    int known = h != NULL && crm_idmap_get(&crm__handles, (uint64_t)(uintptr_t)h, &v) == 0;
    pthread_mutex_unlock(&crm__lock);
    if (!known && h != NULL && crm_blas_get((cublasHandle_t)(void *)h, &bs) == CUBLAS_STATUS_SUCCESS)
        return 2;
    return known;
}

typedef cublasStatus_t (*crm__real_fn)();

static crm__real_fn crm__real(const char *name)
{
    return (crm__real_fn)crm_fallback_symbol(CRM_FALLBACK_CUBLASLT, name);
}

/* --- handles ---------------------------------------------------------------------------- */

/* Synchronous, as cublasCreate: a server without cuBLASLt is reported here. An
 * unreachable server is NOT_INITIALIZED. */
CRM_EXPORT cublasStatus_t cublasLtCreate(cublasLtHandle_t *lightHandle)
{
    crm_call call = {.api = CRM_API_cublasLtCreate};
    if (lightHandle == NULL)
        return CUBLAS_STATUS_INVALID_VALUE;
    crm__lt_state *st = calloc(1, sizeof *st);
    if (st == NULL)
        return CUBLAS_STATUS_ALLOC_FAILED;
    st->id = crm_handle_new_id();
    call.crm_call_u.cublasLtCreate.id = st->id;
    cublasStatus_t rc = crm_blas_create_remote(&call, offsetof(crm_reply, crm_reply_u.cublasLtCreate.err),
                                               &crm__lock, &crm__handles, st->id, st);
    if (rc != CUBLAS_STATUS_SUCCESS) {
        free(st);
        return rc;
    }
    *lightHandle = (cublasLtHandle_t)(uintptr_t)st->id;
    return CUBLAS_STATUS_SUCCESS;
}

/* Forgets the handle locally whatever the server says: it is gone either way. */
CRM_EXPORT cublasStatus_t cublasLtDestroy(cublasLtHandle_t lightHandle)
{
    void *v;
    pthread_mutex_lock(&crm__lock);
    int known = lightHandle != NULL && crm_idmap_del(&crm__handles, (uint64_t)(uintptr_t)lightHandle, &v) == 0;
    pthread_mutex_unlock(&crm__lock);
    if (!known) {
        crm__real_fn destroy = lightHandle != NULL ? crm__real("cublasLtDestroy") : NULL;
        return destroy != NULL ? destroy(lightHandle) : CUBLAS_STATUS_NOT_INITIALIZED; /* NVIDIA's own */
    }
    crm__real_fn destroy = ((crm__lt_state *)v)->real != NULL ? crm__real("cublasLtDestroy") : NULL;
    if (destroy != NULL)
        destroy(((crm__lt_state *)v)->real);
    free(v);
    return crm_rpc_cublasLtDestroy_queued((uint64_t)(uintptr_t)lightHandle); /* known live: no round trip */
}

void *crm_lt_real_handle(void *handle)
{
    void *v;
    crm__real_fn create = crm__real("cublasLtCreate");
    pthread_mutex_lock(&crm__lock);
    crm__lt_state *st = handle != NULL && crm_idmap_get(&crm__handles, (uint64_t)(uintptr_t)handle, &v) == 0
                            ? v : NULL;
    if (st != NULL && st->real == NULL && !st->real_failed && create != NULL) {
        cublasStatus_t rc = create(&st->real);
        if (rc != CUBLAS_STATUS_SUCCESS) {
            crm_warn("NVIDIA's cublasLtCreate failed with status %d: calls it would answer fail", (int)rc);
            st->real = NULL;
            st->real_failed = 1;
        }
    }
    void *real = st == NULL ? handle : st->real;
    pthread_mutex_unlock(&crm__lock);
    if (st == NULL && crm__known(handle) == 2) { /* a cuBLAS handle: NVIDIA's cuBLAS handle serves */
        real = crm_blas_real_handle(handle);
        return real == handle ? NULL : real;
    }
    return real;
}

/* --- matmul ----------------------------------------------------------------------------- */

/* NOT_SUPPORTED at the call for a type combination an emulated server does not
 * compute (common/crm_lt_desc.h), so a library trying several engines (cuDNN's
 * FFT convolution asks for complex GEMMs) moves on to the next, as it does when
 * a GPU's cuBLASLt has no kernel; a GPU server computes every combination. */
static cublasStatus_t crm__server_computes(const crm_lt_op *op)
{
    crm_session_info info;
    if (crm_conn_session(&info) != cudaSuccess || strcmp(info.backend, "emu") != 0)
        return CUBLAS_STATUS_SUCCESS;
    return crm_lt_emu_types(op);
}

/* The algorithm cudarem reports: the server runs the matmul with the backend's own
 * choice (the real cuBLASLt gets no algo and picks one itself; the emulated device
 * has one), so the contents only mark it as cudarem's. */
#define CRM__LT_ALGO_ID 0x63726d4c54ull /* "crmLT" */

/* Argument errors are returned at once; the computation is queued (its failure on
 * the server is reported later, as a GPU reports asynchronous errors). algo and
 * the workspace are accepted as given: the answer of the heuristic query needs
 * no workspace. A handle that is not the shim's but NVIDIA's own (NVIDIA's cuBLAS
 * calls cuBLASLt with the handles it makes) goes to NVIDIA's cuBLASLt. */
CRM_EXPORT cublasStatus_t cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc,
                                         const void *alpha, const void *A, cublasLtMatrixLayout_t Adesc,
                                         const void *B, cublasLtMatrixLayout_t Bdesc, const void *beta,
                                         const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
                                         cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo,
                                         void *workspace, size_t workspaceSizeInBytes, cudaStream_t stream)
{
    crm_lt_op op;
    uint64_t a, b;
    (void)algo;
    if (!crm__known(lightHandle)) {
        crm__real_fn real = lightHandle != NULL && !crm_lt_is_desc(computeDesc) ? crm__real("cublasLtMatmul") : NULL;
        if (real == NULL)
            return CUBLAS_STATUS_NOT_INITIALIZED;
        return real(lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc, algo, workspace,
                    workspaceSizeInBytes, stream);
    }
    cublasStatus_t rc = crm_lt_problem(computeDesc, Adesc, Bdesc, Cdesc, Ddesc, &op);
    if (rc == CUBLAS_STATUS_SUCCESS)
        rc = crm__server_computes(&op);
    if (rc != CUBLAS_STATUS_SUCCESS || op.m == 0 || op.n == 0)
        return rc;
    size_t size = crm_lt_scale_size(op.scale);
    if ((rc = crm_blas_word(op.pmode, alpha, size, &a)) != CUBLAS_STATUS_SUCCESS ||
        (rc = crm_blas_word(op.pmode, beta, size, &b)) != CUBLAS_STATUS_SUCCESS)
        return rc;
    crm_call call = {.api = CRM_API_cublasLtMatmul};
    crm_args_cublasLtMatmul *w = &call.crm_call_u.cublasLtMatmul;
    w->handle = (uint64_t)(uintptr_t)lightHandle;
    crm_lt_wire(&op, &w->op);
    w->alpha = a;
    w->beta = b;
    w->A = CRM_BLAS_DEV(A);
    w->B = CRM_BLAS_DEV(B);
    w->C = CRM_BLAS_DEV(C);
    w->D = CRM_BLAS_DEV(D);
    w->workspace = CRM_BLAS_DEV(workspace);
    w->workspaceSizeInBytes = workspaceSizeInBytes;
    w->stream = crm_stream_wire(stream, CRM_PTDS_OFF);
    return crm_blas_work(&call, w->stream);
}

/* Answered on the client, without a round trip: one algorithm for every problem
 * the shim can carry, with a workspace of 0 bytes and one wave. This is not a
 * tuned choice: on a GPU server the real cuBLASLt picks its own algorithm at the
 * matmul (it is given none), within the workspace the program passes there. A
 * problem the shim cannot carry gets no algorithm and NOT_SUPPORTED, as cuBLASLt
 * answers a configuration it has no kernel for. */
CRM_EXPORT cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t lightHandle,
                                                         cublasLtMatmulDesc_t operationDesc,
                                                         cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t Bdesc,
                                                         cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
                                                         cublasLtMatmulPreference_t preference,
                                                         int requestedAlgoCount,
                                                         cublasLtMatmulHeuristicResult_t heuristicResultsArray[],
                                                         int *returnAlgoCount)
{
    crm_lt_op op;
    if (!crm__known(lightHandle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (requestedAlgoCount <= 0 || heuristicResultsArray == NULL || returnAlgoCount == NULL ||
        (preference != NULL && ((crm_lt_pref *)(void *)preference)->magic != CRM_LT_MAGIC_PREF))
        return CUBLAS_STATUS_INVALID_VALUE;
    *returnAlgoCount = 0;
    cublasStatus_t rc = crm_lt_problem(operationDesc, Adesc, Bdesc, Cdesc, Ddesc, &op);
    if (rc == CUBLAS_STATUS_SUCCESS)
        rc = crm__server_computes(&op);
    if (rc != CUBLAS_STATUS_SUCCESS)
        return rc;
    cublasLtMatmulHeuristicResult_t *r = &heuristicResultsArray[0];
    memset(r, 0, sizeof *r);
    r->algo.data[0] = CRM__LT_ALGO_ID;
    r->workspaceSize = 0;
    r->state = CUBLAS_STATUS_SUCCESS;
    r->wavesCount = 1.0f;
    *returnAlgoCount = 1;
    return CUBLAS_STATUS_SUCCESS;
}

/* Not remoted: NVIDIA's cuBLAS calls it with layouts of its own (they go to
 * NVIDIA's cuBLASLt); layouts of the shim's answer NOT_SUPPORTED. */
CRM_EXPORT cublasStatus_t cublasLtMatrixTransform(cublasLtHandle_t lightHandle,
                                                  cublasLtMatrixTransformDesc_t transformDesc, const void *alpha,
                                                  const void *A, cublasLtMatrixLayout_t Adesc, const void *beta,
                                                  const void *B, cublasLtMatrixLayout_t Bdesc, void *C,
                                                  cublasLtMatrixLayout_t Cdesc, cudaStream_t stream)
{
    const cublasLtMatrixLayout_t l[3] = {Adesc, Bdesc, Cdesc};
    for (int i = 0; i < 3; i++)
        if (l[i] != NULL && ((crm_lt_layout *)(void *)l[i])->magic == CRM_LT_MAGIC_LAYOUT)
            return CUBLAS_STATUS_NOT_SUPPORTED;
    void *real_handle = crm_lt_real_handle(lightHandle);
    crm__real_fn real = real_handle != NULL ? crm__real("cublasLtMatrixTransform") : NULL;
    if (real == NULL)
        return lightHandle == NULL ? CUBLAS_STATUS_NOT_INITIALIZED : CUBLAS_STATUS_NOT_SUPPORTED;
    __atomic_fetch_add(&crm_fallback_calls, 1, __ATOMIC_RELAXED);
    return real(real_handle, transformDesc, alpha, A, Adesc, beta, B, Bdesc, C, Cdesc, stream);
}

/* --- versions and status names (local) ---------------------------------------------------- */

/* NVIDIA's answer when its cuBLAS or cuBLASLt is loaded already (NVIDIA's cuBLAS
 * asks its cuBLASLt for these, and its calls reach the shim's exports), else the
 * headers' the shim was built with. Never loads a library. */
static void *crm__loaded_real(const char *name)
{
    if (!crm_fallback_loaded(CRM_FALLBACK_CUBLAS) && !crm_fallback_loaded(CRM_FALLBACK_CUBLASLT))
        return NULL;
    return crm_fallback_symbol(CRM_FALLBACK_CUBLASLT, name);
}

CRM_EXPORT size_t cublasLtGetVersion(void)
{
    size_t (*real)(void) = (size_t(*)(void))crm__loaded_real("cublasLtGetVersion");
    return real != NULL ? real() : CUBLAS_VERSION;
}

CRM_EXPORT size_t cublasLtGetCudartVersion(void)
{
    size_t (*real)(void) = (size_t(*)(void))crm__loaded_real("cublasLtGetCudartVersion");
    return real != NULL ? real() : CUDART_VERSION;
}

CRM_EXPORT cublasStatus_t cublasLtGetProperty(libraryPropertyType type, int *value)
{
    crm__real_fn real = (crm__real_fn)crm__loaded_real("cublasLtGetProperty");
    return real != NULL ? real(type, value) : cublasGetProperty(type, value);
}

CRM_EXPORT const char *cublasLtGetStatusName(cublasStatus_t status)
{
    return cublasGetStatusName(status);
}

CRM_EXPORT const char *cublasLtGetStatusString(cublasStatus_t status)
{
    return cublasGetStatusString(status);
}
