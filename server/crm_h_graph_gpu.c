/* crm_h_graph_gpu.c -- a graph program as one real CUDA graph on a GPU
 * (--graph-capture). At its first run the program's calls are replayed on a stream
 * of the session's own under stream capture (thread-local mode: the calls of other
 * sessions' threads are no concern of it), and what the capture made is
 * instantiated; that run and each one after it is then one cuGraphLaunch on the
 * launch's stream. A program holding event records or waits (their events are
 * seen outside the graph, which a captured record is not) or conditional nodes is
 * replayed call by call, as is one whose capture fails (a library call that
 * allocates, a call a capture refuses): logged once, the replay then answers for
 * it, its errors included. A change of the program (a patch, more bytes) forgets
 * its graph; the next run makes it again. */
#include <string.h>
#include <rpc/rpc.h>
#include "common/crm_log.h"
#include "server/crm_backend.h"
#include "server/crm_h_graph.h"

int crm_graph_capture_on;

/* 1 when every call of p may become part of a CUDA graph. */
static int crm__capturable(const crm_gprogram *p)
{
    XDR x;
    int ok = 1;
    xdrmem_create(&x, p->buf, (u_int)p->len, XDR_DECODE);
    while (ok && xdr_getpos(&x) < p->len) {
        crm_call call;
        memset(&call, 0, sizeof call);
        ok = xdr_crm_call(&x, &call);
        switch (ok ? (int)call.api : -1) {
        case CRM_API_cudaEventRecord: case CRM_API_cudaEventRecordWithFlags: case CRM_API_cudaStreamWaitEvent:
        case CRM_API_crm_graph_cond_set: case CRM_API_crm_graph_cond_run: case -1:
            ok = 0;
            break;
        default:
            break;
        }
        xdr_free((xdrproc_t)xdr_crm_call, (char *)&call);
    }
    xdr_destroy(&x);
    return ok;
}

static int crm__available(void)
{
    return crm_graph_capture_on && crm_backend_kind() == CRM_BACKEND_CUDA && crm_rt.cuStreamBeginCapture_v2 != NULL &&
           crm_rt.cuStreamEndCapture != NULL && crm_rt.cuGraphInstantiateWithFlags != NULL &&
           crm_rt.cuGraphLaunch != NULL && crm_rt.cuGraphExecDestroy != NULL && crm_rt.cuGraphDestroy != NULL;
}

/* Captures p's calls into a CUDA graph and instantiates it in p->exec: 0, or -1
 * (the capture or the instantiation failed; nothing ran, the runtime's last error
 * is cleared). */
static int crm__capture(crm_session *s, crm_gprogram *p)
{
    if (s->capture_stream == NULL &&
        crm_rt.cudaStreamCreateWithPriority(&s->capture_stream, cudaStreamNonBlocking, 0) != cudaSuccess) {
        s->capture_stream = NULL;
        return -1;
    }
    CUstream cs = (CUstream)s->capture_stream;
    if (crm_rt.cuStreamBeginCapture_v2(cs, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) != CUDA_SUCCESS) {
        crm_rt.cudaGetLastError();
        return -1;
    }
    cudaStream_t was = s->replay_stream;
    s->replay_stream = s->capture_stream;
    cudaError_t err = crm_graph_replay(s, p);
    s->replay_stream = was;
    CUgraph g = NULL;
    CUgraphExec e = NULL;
    CUresult end = crm_rt.cuStreamEndCapture(cs, &g);
    int ok = err == cudaSuccess && end == CUDA_SUCCESS && g != NULL &&
             crm_rt.cuGraphInstantiateWithFlags(&e, g, 0) == CUDA_SUCCESS;
    if (g != NULL)
        crm_rt.cuGraphDestroy(g);
    if (!ok) {
        crm_rt.cudaGetLastError();
        return -1;
    }
    p->exec = e;
    return 0;
}

int crm_graph_gpu_run(crm_session *s, crm_gprogram *p, cudaStream_t on, cudaError_t *err)
{
    if (p->capture < 0 || !crm__available())
        return 0;
    if (p->capture == 0) {
        if (p->unchecked || !crm__capturable(p) || crm__capture(s, p) != 0) {
            p->capture = p->unchecked ? 0 : -1; /* a patched program is checked by its replay first */
            if (p->capture < 0)
                crm_info("session %llu: graph program of %zu bytes replayed call by call (not captured)",
                         (unsigned long long)s->id, p->len);
            return 0;
        }
        p->capture = 1;
        crm_info("session %llu: graph program of %zu bytes captured into a CUDA graph", (unsigned long long)s->id,
                 p->len);
    }
    CUresult rc = crm_rt.cuGraphLaunch((CUgraphExec)p->exec, (CUstream)on);
    *err = rc == CUDA_SUCCESS ? cudaSuccess : cudaErrorLaunchFailure;
    return 1;
}

void crm_graph_gpu_forget(crm_gprogram *p)
{
    if (p->exec != NULL && crm_rt.cuGraphExecDestroy != NULL)
        crm_rt.cuGraphExecDestroy((CUgraphExec)p->exec);
    p->exec = NULL;
    p->capture = 0;
}
