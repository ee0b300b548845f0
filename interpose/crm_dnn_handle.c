/* crm_dnn_handle.c -- the shim's cuDNN handles (client-chosen ids; the server makes
 * the real handle at cudnnCreate), their streams, the handle NVIDIA's cuDNN answers
 * the calls cudarem does not remote with (interpose/crm_fallback.h), the local
 * library queries (version, error strings, properties, algorithm counts) and the
 * sending of calls. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "client/crm_conn.h"
#include "client/crm_graph.h"
#include "client/crm_handles.h"
#include "common/crm_idmap.h"
#include "crm_client_gen.h"
#include "interpose/crm_dnn.h"
#include "interpose/crm_export.h"
#include "interpose/crm_fallback.h"
#include "common/crm_log.h"

/* What the client keeps of a handle. */
typedef struct crm__dnn_cell {
    cudaStream_t stream;      /* the stream last set */
    void *real;               /* NVIDIA's handle for calls it answers, or NULL */
    cudaStream_t applied;     /* the stream last given to it */
} crm__dnn_cell;

/* Live handles: id -> crm__dnn_cell, under one lock. */
static struct {
    pthread_mutex_t lock;
    crm_idmap ids;
} crm__dnn = {.lock = PTHREAD_MUTEX_INITIALIZER};

cudnnStatus_t crm_dnn_handle_id(cudnnHandle_t h, uint64_t *id)
{
    uint64_t v = (uint64_t)(uintptr_t)h;
    pthread_mutex_lock(&crm__dnn.lock);
    int known = v != 0 && crm_idmap_get(&crm__dnn.ids, v, NULL) == 0;
    pthread_mutex_unlock(&crm__dnn.lock);
    if (!known)
        return CUDNN_STATUS_BAD_PARAM;
    *id = v;
    return CUDNN_STATUS_SUCCESS;
}

/* A call's status from what the connection returned: 0, a cuDNN status (>= 1000)
 * of the call itself, or a transport failure (a small cudaError_t). */
static cudnnStatus_t crm__dnn_status(cudaError_t err)
{
    int v = (int)err;
    if (v == 0 || v >= 1000)
        return (cudnnStatus_t)v;
    return CUDNN_STATUS_INTERNAL_ERROR;
}

cudnnStatus_t crm_dnn_async(crm_call *call)
{
    return crm__dnn_status(crm_conn_async(call));
}

/* The wire id of the stream handle's work runs on. */
static uint64_t crm__dnn_stream(cudnnHandle_t handle)
{
    uint64_t stream = CRM_WIRE_LEGACY_STREAM;
    void *v;
    pthread_mutex_lock(&crm__dnn.lock);
    if (crm_idmap_get(&crm__dnn.ids, (uint64_t)(uintptr_t)handle, &v) == 0)
        stream = crm_stream_wire(((crm__dnn_cell *)v)->stream, CRM_PTDS_OFF);
    pthread_mutex_unlock(&crm__dnn.lock);
    return stream;
}

cudnnStatus_t crm_dnn_work(crm_call *call, cudnnHandle_t handle)
{
    return crm__dnn_status(crm_conn_async_on(call, crm__dnn_stream(handle)));
}

cudnnStatus_t crm_dnn_refuse_in_capture(cudnnHandle_t handle)
{
    static int logged;
    if (!crm_capture_any() || crm_capture_refuse_sync(crm__dnn_stream(handle), CRM_WIRE_BAD_HANDLE) == cudaSuccess)
        return CUDNN_STATUS_SUCCESS;
    if (!__atomic_exchange_n(&logged, 1, __ATOMIC_RELAXED))
        crm_warn("a cuDNN call that runs on the device and answers at once (cudnnFind*, a dropout state's seeding) "
                 "was made on a capturing stream: CUDNN_STATUS_NOT_SUPPORTED, and the capture is invalidated");
    return CUDNN_STATUS_NOT_SUPPORTED;
}

cudnnStatus_t crm_dnn_sync(crm_call *call, crm_reply *reply)
{
    memset(reply, 0, sizeof *reply);
    return crm__dnn_status(crm_conn_call(call, reply));
}

/* One round trip, so the handle exists (or the error is known) before it is used. */
CRM_EXPORT cudnnStatus_t cudnnCreate(cudnnHandle_t *handle)
{
    if (handle == NULL)
        return CUDNN_STATUS_BAD_PARAM;
    uint64_t id = crm_handle_new_id();
    crm__dnn_cell *cell = calloc(1, sizeof *cell);
    if (cell == NULL)
        return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    cudnnStatus_t st = crm_rpc_crm_dnn_create(id);
    if (st == CUDNN_STATUS_SUCCESS) {
        pthread_mutex_lock(&crm__dnn.lock);
        if (crm_idmap_put(&crm__dnn.ids, id, cell) != 0)
            st = CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
        pthread_mutex_unlock(&crm__dnn.lock);
    }
    if (st != CUDNN_STATUS_SUCCESS) {
        free(cell);
        return st;
    }
    *handle = (cudnnHandle_t)(uintptr_t)id;
    return CUDNN_STATUS_SUCCESS;
}

/* Forgets the handle locally at once; the server's destroy travels like a compute call. */
CRM_EXPORT cudnnStatus_t cudnnDestroy(cudnnHandle_t handle)
{
    void *cell = NULL;
    uint64_t id = (uint64_t)(uintptr_t)handle;
    pthread_mutex_lock(&crm__dnn.lock);
    int known = id != 0 && crm_idmap_del(&crm__dnn.ids, id, &cell) == 0;
    pthread_mutex_unlock(&crm__dnn.lock);
    if (!known)
        return CUDNN_STATUS_BAD_PARAM;
    cudnnStatus_t (*destroy)(void *) =
        ((crm__dnn_cell *)cell)->real ? crm_fallback_symbol(CRM_FALLBACK_CUDNN, "cudnnDestroy") : NULL;
    if (destroy != NULL)
        destroy(((crm__dnn_cell *)cell)->real);
    free(cell);
    crm_call call = {.api = CRM_API_cudnnDestroy};
    call.crm_call_u.cudnnDestroy.handle = id;
    return crm_dnn_async(&call);
}

CRM_EXPORT cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t streamId)
{
    uint64_t id;
    cudnnStatus_t st = crm_dnn_handle_id(handle, &id);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    crm_call call = {.api = CRM_API_cudnnSetStream};
    call.crm_call_u.cudnnSetStream.handle = id;
    call.crm_call_u.cudnnSetStream.streamId = crm_stream_wire(streamId, CRM_PTDS_OFF);
    if (call.crm_call_u.cudnnSetStream.streamId == CRM_WIRE_BAD_HANDLE)
        return CUDNN_STATUS_BAD_PARAM;
    st = crm_dnn_async(&call);
    if (st == CUDNN_STATUS_SUCCESS) {
        void *cell;
        pthread_mutex_lock(&crm__dnn.lock);
        if (crm_idmap_get(&crm__dnn.ids, id, &cell) == 0)
            ((crm__dnn_cell *)cell)->stream = streamId;
        pthread_mutex_unlock(&crm__dnn.lock);
    }
    return st;
}

/* Answered locally: the stream the program last set. */
CRM_EXPORT cudnnStatus_t cudnnGetStream(cudnnHandle_t handle, cudaStream_t *streamId)
{
    void *cell;
    uint64_t id = (uint64_t)(uintptr_t)handle;
    if (streamId == NULL)
        return CUDNN_STATUS_BAD_PARAM;
    pthread_mutex_lock(&crm__dnn.lock);
    int known = id != 0 && crm_idmap_get(&crm__dnn.ids, id, &cell) == 0;
    if (known)
        *streamId = ((crm__dnn_cell *)cell)->stream;
    pthread_mutex_unlock(&crm__dnn.lock);
    return known ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_BAD_PARAM;
}

/* The handle NVIDIA's cuDNN made for handle (at its first call there, on the stream
 * handle has, which follows it); handle itself when it is none of ours or NVIDIA's
 * cuDNN cannot make one (its call then fails as with a bad handle). */
void *crm_dnn_real_handle(void *handle)
{
    cudnnStatus_t (*create)(void **) = crm_fallback_symbol(CRM_FALLBACK_CUDNN, "cudnnCreate");
    cudnnStatus_t (*set_stream)(void *, cudaStream_t) = crm_fallback_symbol(CRM_FALLBACK_CUDNN, "cudnnSetStream");
    void *v, *real = handle;
    pthread_mutex_lock(&crm__dnn.lock);
    if (handle != NULL && crm_idmap_get(&crm__dnn.ids, (uint64_t)(uintptr_t)handle, &v) == 0) {
        crm__dnn_cell *c = v;
        if (c->real == NULL && create != NULL && create(&c->real) != CUDNN_STATUS_SUCCESS) {
            crm_warn("NVIDIA's cudnnCreate failed: calls it would answer fail");
            c->real = NULL;
        }
        if (c->real != NULL && c->applied != c->stream && set_stream != NULL &&
            set_stream(c->real, c->stream) == CUDNN_STATUS_SUCCESS)
            c->applied = c->stream;
        if (c->real != NULL)
            real = c->real;
    }
    pthread_mutex_unlock(&crm__dnn.lock);
    return real;
}

/* --- local library queries (values, not statuses) --- */

CRM_EXPORT size_t cudnnGetVersion(void)
{
    return CUDNN_VERSION;
}

CRM_EXPORT size_t cudnnGetMaxDeviceVersion(void)
{
    return CUDNN_MAX_DEVICE_VERSION;
}

CRM_EXPORT size_t cudnnGetCudartVersion(void)
{
    return CUDART_VERSION;
}

CRM_EXPORT const char *cudnnGetErrorString(cudnnStatus_t status)
{
    return crm_dnn_status_name(status);
}

CRM_EXPORT void cudnnGetLastErrorString(char *message, size_t max_size)
{
    if (message != NULL && max_size > 0)
        message[0] = '\0';
}

CRM_EXPORT cudnnStatus_t cudnnGetProperty(libraryPropertyType type, int *value)
{
    if (value == NULL)
        return CUDNN_STATUS_BAD_PARAM;
    switch (type) {
    case MAJOR_VERSION: *value = CUDNN_MAJOR; return CUDNN_STATUS_SUCCESS;
    case MINOR_VERSION: *value = CUDNN_MINOR; return CUDNN_STATUS_SUCCESS;
    case PATCH_LEVEL: *value = CUDNN_PATCHLEVEL; return CUDNN_STATUS_SUCCESS;
    default: return CUDNN_STATUS_BAD_PARAM;
    }
}

/* The sub-library version checks frameworks call at start-up: we are one library. */
CRM_EXPORT cudnnStatus_t cudnnOpsVersionCheck(void)
{
    return CUDNN_STATUS_SUCCESS;
}

CRM_EXPORT cudnnStatus_t cudnnCnnVersionCheck(void)
{
    return CUDNN_STATUS_SUCCESS;
}

CRM_EXPORT cudnnStatus_t cudnnGraphVersionCheck(void)
{
    return CUDNN_STATUS_SUCCESS;
}

CRM_EXPORT cudnnStatus_t cudnnAdvVersionCheck(void)
{
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t crm__dnn_max_count(cudnnHandle_t handle, int *count, int n)
{
    uint64_t id;
    if (count == NULL || crm_dnn_handle_id(handle, &id) != CUDNN_STATUS_SUCCESS)
        return CUDNN_STATUS_BAD_PARAM;
    *count = n;
    return CUDNN_STATUS_SUCCESS;
}

CRM_EXPORT cudnnStatus_t cudnnGetConvolutionForwardAlgorithmMaxCount(cudnnHandle_t handle, int *count)
{
    return crm__dnn_max_count(handle, count, CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
}

CRM_EXPORT cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithmMaxCount(cudnnHandle_t handle, int *count)
{
    return crm__dnn_max_count(handle, count, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT);
}

CRM_EXPORT cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(cudnnHandle_t handle, int *count)
{
    return crm__dnn_max_count(handle, count, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT);
}
