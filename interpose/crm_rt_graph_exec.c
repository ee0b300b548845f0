/* crm_rt_graph_exec.c -- executable graphs at the runtime's API: instantiate (all
 * its forms), upload, launch, update, destroy (client/crm_graph_exec.h). A launch
 * is queued work: one call per stored program, none of them a round trip. */
#include <cuda_runtime_api.h>
#include "client/crm_graph_exec.h"
#include "interpose/crm_drv.h"
#include "interpose/crm_export.h"
#include "interpose/crm_rt_graph.h"
#include "interpose/crm_unsupported.h"

#define CRM__KNOWN_FLAGS                                                                               \
    (cudaGraphInstantiateFlagAutoFreeOnLaunch | cudaGraphInstantiateFlagUpload |                       \
     cudaGraphInstantiateFlagDeviceLaunch | cudaGraphInstantiateFlagUseNodePriority)

cudaError_t crm_graph_instantiate_rt(cudaGraphExec_t *pExec, cudaGraph_t graph, unsigned long long flags)
{
    static int logged;
    crm_drv_runtime_bind();
    if (pExec == NULL || !crm_graph_live(graph) || (flags & ~(unsigned long long)CRM__KNOWN_FLAGS) != 0)
        return cudaErrorInvalidValue;
    if (flags & cudaGraphInstantiateFlagDeviceLaunch) /* launched by kernels: no device-side launch here */
        return (cudaError_t)crm_unsupported("cudaGraphInstantiate with cudaGraphInstantiateFlagDeviceLaunch", &logged,
                                            cudaErrorNotSupported, 0);
    cudaError_t err = crm_graph_instantiate(graph, pExec);
    if (err == cudaSuccess)
        (*pExec)->flags = flags;
    return err;
}

CRM_EXPORT cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags)
{
    return crm_set_error(crm_graph_instantiate_rt(pGraphExec, graph, flags));
}

CRM_EXPORT cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                                     unsigned long long flags)
{
    return crm_set_error(crm_graph_instantiate_rt(pGraphExec, graph, flags));
}

static cudaError_t crm__instantiate_params(cudaGraphExec_t *pExec, cudaGraph_t graph, cudaGraphInstantiateParams *p)
{
    if (p == NULL)
        return cudaErrorInvalidValue;
    cudaError_t err = crm_graph_instantiate_rt(pExec, graph, p->flags);
    p->errNode_out = NULL;
    p->result_out = err == cudaSuccess             ? cudaGraphInstantiateSuccess
                    : err == cudaErrorInvalidValue ? cudaGraphInstantiateInvalidStructure
                                                   : cudaGraphInstantiateError;
    return err;
}

CRM_EXPORT cudaError_t cudaGraphInstantiateWithParams(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                                      cudaGraphInstantiateParams *instantiateParams)
{
    return crm_set_error(crm__instantiate_params(pGraphExec, graph, instantiateParams));
}

CRM_EXPORT cudaError_t cudaGraphInstantiateWithParams_ptsz(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                                           cudaGraphInstantiateParams *instantiateParams)
{
    return crm_set_error(crm__instantiate_params(pGraphExec, graph, instantiateParams));
}

/* Launched into a capturing stream, an executable graph becomes a child-graph node
 * of the capture, as on a GPU. */
cudaError_t crm_graph_launch_rt(cudaGraphExec_t exec, cudaStream_t stream, int ptsz)
{
    cudaError_t err;
    crm_drv_runtime_bind();
    if (!crm_gexec_live(exec))
        return cudaErrorInvalidValue;
    uint64_t wire = crm_stream_wire(stream, ptsz);
    if (crm_capture_child(wire, exec->source, &err))
        return err;
    return crm_graph_launch(exec, wire);
}

CRM_EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    return crm_set_error(crm_graph_launch_rt(graphExec, stream, CRM_PTDS_OFF));
}

CRM_EXPORT cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    return crm_set_error(crm_graph_launch_rt(graphExec, stream, CRM_PTDS_ON));
}

/* The programs were handed to the server when the graph was instantiated. */
CRM_EXPORT cudaError_t cudaGraphUpload(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    (void)stream;
    crm_drv_runtime_bind();
    return crm_gexec_live(graphExec) ? cudaSuccess : crm_set_error(cudaErrorInvalidValue);
}

CRM_EXPORT cudaError_t cudaGraphUpload_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    return cudaGraphUpload(graphExec, stream);
}

CRM_EXPORT cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec)
{
    if (!crm_gexec_live(graphExec))
        return crm_set_error(cudaErrorInvalidValue);
    crm_graph_exec_free(graphExec);
    return cudaSuccess;
}

CRM_EXPORT cudaError_t cudaGraphExecGetFlags(cudaGraphExec_t graphExec, unsigned long long *flags)
{
    if (!crm_gexec_live(graphExec) || flags == NULL)
        return crm_set_error(cudaErrorInvalidValue);
    *flags = graphExec->flags;
    return cudaSuccess;
}

/* The graph must have the executable graph's shape (as many nodes); its
 * parameters then replace the old ones. */
cudaError_t crm_graph_update_rt(cudaGraphExec_t exec, cudaGraph_t graph, cudaGraphExecUpdateResultInfo *info)
{
    if (!crm_gexec_live(exec) || !crm_graph_live(graph) || info == NULL)
        return cudaErrorInvalidValue;
    cudaError_t err = crm_graph_exec_update(exec, graph);
    info->result = err == cudaSuccess ? cudaGraphExecUpdateSuccess : cudaGraphExecUpdateErrorTopologyChanged;
    info->errorNode = info->errorFromNode = NULL;
    return err;
}

CRM_EXPORT cudaError_t cudaGraphExecUpdate(cudaGraphExec_t hGraphExec, cudaGraph_t hGraph,
                                           cudaGraphExecUpdateResultInfo *resultInfo)
{
    return crm_set_error(crm_graph_update_rt(hGraphExec, hGraph, resultInfo));
}
