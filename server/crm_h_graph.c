/* crm_h_graph.c -- handlers of CUDA graph programs (protocol/cudart.api, 900): the
 * device work of a client's executable graph, kept as the XDR encodings of the
 * calls it is made of and run, in order, on one stream at each launch.
 *
 * What a program may hold is checked when it arrives: device work only (kernels,
 * memsets, device-to-device copies, event records and waits, cuBLAS, cuBLASLt and
 * cuDNN compute calls, conditional nodes: server/crm_h_graph_cond.c), each of which
 * decodes. No call moving host data, no creation or destruction, no other graph
 * call: a replay touches nothing but the device,
 * and every call in it is checked again, as it would be sent alone, when it runs.
 * While a program runs, every stream its calls name is the launch's stream, as a
 * graph's work runs in the stream it is launched into; so is the stream of the
 * cuBLAS or cuDNN handle a library call names, for that call. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <rpc/rpc.h>
#include "server/crm_backend.h"
#include "server/crm_h_graph.h"
#include "server/crm_h_nvml.h"
#include "server/crm_session.h"
#include "crm_server_gen.h"

/* What one session's programs may hold in all. */
#define CRM_GRAPH_BYTES_MAX (256u << 20)

typedef crm_gprogram crm__program;

static int crm__replayable(int api)
{
    switch (api) {
    case CRM_API_crm_launch: case CRM_API_crm_memset: case CRM_API_crm_memcpy_d2d: case CRM_API_cudaEventRecord:
    case CRM_API_cudaEventRecordWithFlags: case CRM_API_cudaStreamWaitEvent: case CRM_API_cublasLtMatmul:
    case CRM_API_crm_graph_cond_set: case CRM_API_crm_graph_cond_run:
        return 1;
    default:
        break;
    }
    int base = api >= 10000 ? api - 10000 : api; /* a cuBLAS call's _64 twin */
    return (base >= 1100 && base < 1500) || (api >= 2100 && api < 3000);
}

/* cudaSuccess when buf[0..len) is calls a program may hold, each decoding whole;
 * cudaErrorNotSupported for a conditional node where kernels cannot set one (a
 * GPU's kernels know only the handles of its own graphs). */
static cudaError_t crm__valid(char *buf, size_t len)
{
    XDR x;
    cudaError_t err = cudaSuccess;
    xdrmem_create(&x, buf, (u_int)len, XDR_DECODE);
    while (err == cudaSuccess && xdr_getpos(&x) < len) {
        u_int at = xdr_getpos(&x);
        int api;
        if (!xdr_int(&x, &api) || !crm__replayable(api) || !xdr_setpos(&x, at))
            err = cudaErrorInvalidValue;
        else if (api == CRM_API_crm_graph_cond_run && !crm_graph_cond_supported())
            err = cudaErrorNotSupported;
        if (err == cudaSuccess) {
            crm_call call;
            memset(&call, 0, sizeof call);
            err = xdr_crm_call(&x, &call) ? cudaSuccess : cudaErrorInvalidValue;
            xdr_free((xdrproc_t)xdr_crm_call, (char *)&call);
        }
    }
    xdr_destroy(&x);
    return err;
}

cudaError_t crm_srv_crm_graph_upload(crm_session *s, uint64_t program, uint64_t offset, const crm_bytes *records)
{
    void *v = NULL;
    size_t len = records->crm_bytes_len;
    int known = crm_idmap_get(&s->graphs, program, &v) == 0;
    if (program == 0 || len == 0 || offset != (known ? ((crm__program *)v)->len : 0))
        return cudaErrorInvalidValue; /* a piece out of place: one before it was refused */
    cudaError_t err = crm__valid(records->crm_bytes_val, len);
    if (err != cudaSuccess)
        return err;
    if (s->graph_bytes + len > CRM_GRAPH_BYTES_MAX)
        return cudaErrorMemoryAllocation; /* as a GPU out of room for the graph */
    crm__program *p = known ? v : calloc(1, sizeof *p);
    char *buf = p != NULL ? realloc(p->buf, p->len + len) : NULL;
    if (buf == NULL || (!known && crm_idmap_put(&s->graphs, program, p) != 0)) {
        if (!known) {
            free(buf);
            free(p);
        } else if (buf != NULL)
            p->buf = buf;
        return cudaErrorMemoryAllocation;
    }
    memcpy(buf + p->len, records->crm_bytes_val, len);
    p->buf = buf;
    p->len += len;
    crm_graph_gpu_forget(p);
    s->graph_bytes += len;
    return cudaSuccess;
}

/* A failed call's status as the runtime error a launch reports: the runtime's
 * own calls keep theirs; a library call's failure is the kernel's launch failure. */
static cudaError_t crm__as_cuda(int api, int status)
{
    return api < 1000 ? (cudaError_t)status : cudaErrorLaunchFailure;
}

/* A library call's arguments start with its handle's id. */
_Static_assert(offsetof(crm_args_cublasSgemm_v2, handle) == 0, "cuBLAS calls name their handle first");
_Static_assert(offsetof(crm_args_cublasSaxpy_v2, handle) == 0, "cuBLAS calls name their handle first");
_Static_assert(offsetof(crm_args_cudnnConvolutionForward, handle) == 0, "cuDNN calls name their handle first");

/* The handle a cuBLAS or cuDNN call names, moved to stream `on` for the call;
 * *was gets the stream it had. The kind of handle (0: none, the call is no
 * library call or names no handle the session has). */
static int crm__library_stream(crm_session *s, const crm_call *call, cudaStream_t on, void **handle,
                               cudaStream_t *was)
{
    int api = (int)call->api, base = api >= 10000 ? api - 10000 : api;
    uint64_t id;
    memcpy(&id, &call->crm_call_u, sizeof id);
    if (base >= 1100 && base < 1500 && crm_rt.cublasGetStream_v2 != NULL &&
        crm_session_handle(s, CRM_HANDLE_cublasHandle_t, id, handle) == 0 &&
        crm_rt.cublasGetStream_v2((cublasHandle_t)*handle, was) == CUBLAS_STATUS_SUCCESS &&
        crm_rt.cublasSetStream_v2((cublasHandle_t)*handle, on) == CUBLAS_STATUS_SUCCESS)
        return CRM_HANDLE_cublasHandle_t;
    if (api >= 2100 && api < 3000 && crm_rt.cudnnGetStream != NULL &&
        crm_session_handle(s, CRM_HANDLE_cudnnHandle_t, id, handle) == 0 &&
        crm_rt.cudnnGetStream((cudnnHandle_t)*handle, was) == CUDNN_STATUS_SUCCESS &&
        crm_rt.cudnnSetStream((cudnnHandle_t)*handle, on) == CUDNN_STATUS_SUCCESS)
        return CRM_HANDLE_cudnnHandle_t;
    return 0;
}

static void crm__library_restore(int kind, void *handle, cudaStream_t was)
{
    if (kind == CRM_HANDLE_cublasHandle_t)
        crm_rt.cublasSetStream_v2((cublasHandle_t)handle, was);
    else if (kind == CRM_HANDLE_cudnnHandle_t)
        crm_rt.cudnnSetStream((cudnnHandle_t)handle, was);
}

cudaError_t crm_srv_crm_graph_patch(crm_session *s, uint64_t program, uint64_t offset, const crm_bytes *bytes)
{
    void *v;
    if (crm_idmap_get(&s->graphs, program, &v) != 0)
        return cudaErrorInvalidValue;
    crm__program *p = v;
    size_t len = bytes->crm_bytes_len;
    if (len == 0 || offset > p->len || len > p->len - offset)
        return cudaErrorInvalidValue;
    memcpy(p->buf + offset, bytes->crm_bytes_val, len);
    p->unchecked = 1; /* a patch may cut calls: the whole is checked before it runs */
    crm_graph_gpu_forget(p);
    return cudaSuccess;
}

cudaError_t crm_graph_replay(crm_session *s, crm__program *p)
{
    XDR x;
    cudaError_t first = cudaSuccess;
    if (p->unchecked && (first = crm__valid(p->buf, p->len)) != cudaSuccess)
        return first;
    p->unchecked = 0;
    xdrmem_create(&x, p->buf, (u_int)p->len, XDR_DECODE);
    while (xdr_getpos(&x) < p->len) {
        crm_call call;
        crm_reply reply;
        memset(&call, 0, sizeof call);
        memset(&reply, 0, sizeof reply);
        if (!xdr_crm_call(&x, &call)) { /* checked at upload: cannot happen */
            xdr_free((xdrproc_t)xdr_crm_call, (char *)&call);
            first = first != cudaSuccess ? first : cudaErrorInvalidValue;
            break;
        }
        void *handle = NULL;
        cudaStream_t was = NULL;
        int kind = crm__library_stream(s, &call, s->replay_stream, &handle, &was);
        crm_nvml_dispatch(s, &call, &reply);
        crm__library_restore(kind, handle, was);
        int status = *(const int *)&reply.crm_reply_u; /* every result starts with err */
        if (status != 0 && first == cudaSuccess)
            first = crm__as_cuda((int)call.api, status);
        xdr_free((xdrproc_t)xdr_crm_call, (char *)&call);
        xdr_free((xdrproc_t)xdr_crm_reply, (char *)&reply);
    }
    xdr_destroy(&x);
    return first;
}

cudaError_t crm_srv_crm_graph_run(crm_session *s, uint64_t program, uint64_t stream)
{
    void *v;
    cudaStream_t on;
    cudaError_t err = crm_session_stream(s, stream, &on); /* a bad stream first, as a GPU's launch checks it */
    if (err != cudaSuccess)
        return err;
    if (crm_idmap_get(&s->graphs, program, &v) != 0)
        return cudaErrorInvalidValue;
    s->replaying = 1;
    s->replay_stream = on;
    s->replay_depth = 0;
    if (!crm_graph_gpu_run(s, v, on, &err))
        err = crm_graph_replay(s, v);
    s->replaying = 0;
    return err;
}

cudaError_t crm_graph_program_run(crm_session *s, uint64_t program)
{
    void *v;
    if (program == 0)
        return cudaSuccess; /* an empty body */
    if (!s->replaying || crm_idmap_get(&s->graphs, program, &v) != 0)
        return cudaErrorInvalidValue;
    return crm_graph_replay(s, v);
}

cudaError_t crm_srv_crm_graph_drop(crm_session *s, uint64_t program)
{
    void *v;
    if (crm_idmap_del(&s->graphs, program, &v) != 0)
        return cudaErrorInvalidValue;
    crm__program *p = v;
    s->graph_bytes -= p->len;
    crm_graph_gpu_forget(p);
    free(p->buf);
    free(p);
    return cudaSuccess;
}

static void crm__free_one(uint64_t id, void *value, void *arg)
{
    (void)id, (void)arg;
    crm__program *p = value;
    crm_graph_gpu_forget(p);
    free(p->buf);
    free(p);
}

void crm_session_graphs_free(crm_session *s)
{
    crm_idmap_each(&s->graphs, crm__free_one, NULL);
    crm_idmap_free(&s->graphs);
    s->graph_bytes = 0;
    if (s->capture_stream != NULL)
        crm_rt.cudaStreamDestroy(s->capture_stream);
    s->capture_stream = NULL;
}
