/* crm_rt_graph_attr.c -- kernel nodes' launch attributes (cudaGraphKernelNodeSetAttribute,
 * GetAttribute, CopyAttributes and the driver's twins). A node keeps them in its
 * launch record, where cudaLaunchKernelEx's attributes travel, so the server gets
 * them at each launch as it gets an eager launch's; an attribute naming a client
 * object (an event) or making the node updatable from the device cannot travel,
 * as for an eager launch. A node's new parameters keep its attributes. */
#include <string.h>
#include <rpc/rpc.h>
#include <cuda_runtime_api.h>
#include "client/crm_graph.h"
#include "interpose/crm_drv.h"
#include "interpose/crm_export.h"
#include "interpose/crm_rt_graph.h"
#include "interpose/crm_unsupported.h"

_Static_assert(sizeof(cudaLaunchAttributeValue) == sizeof(((crm_launch_attr *)0)->val),
               "an attribute's value travels whole");

/* The attribute ids CUDA 13.0 knows: 1 .. this. */
#define CRM__ATTR_LAST cudaLaunchAttributeNvlinkUtilCentricScheduling

/* The launch record of kernel node n, decoded into *call (xdr_free it). */
static cudaError_t crm__decode(const crm_gnode *n, crm_call *call)
{
    if (n == NULL || !crm_graph_has(n->graph, n) || n->type != CU_GRAPH_NODE_TYPE_KERNEL ||
        crm_gnode_decode(n, CRM_API_crm_launch, call) != 0)
        return cudaErrorInvalidValue;
    return cudaSuccess;
}

cudaError_t crm_graph_kernel_attrs(const crm_gnode *n, crm_launch_attr *out, unsigned *count)
{
    crm_call call;
    cudaError_t err = crm__decode(n, &call);
    *count = 0;
    if (err != cudaSuccess)
        return err;
    const struct crm_launch *l = &call.crm_call_u.crm_launch.launch;
    *count = l->attrs.attrs_len <= CRM_KATTRS_MAX ? l->attrs.attrs_len : 0;
    if (*count > 0)
        memcpy(out, l->attrs.attrs_val, *count * sizeof *out);
    xdr_free((xdrproc_t)xdr_crm_call, (char *)&call);
    return cudaSuccess;
}

cudaError_t crm_graph_kernel_set_attrs(crm_gnode *n, const crm_launch_attr *attrs, unsigned count)
{
    crm_call call;
    cudaError_t err = crm__decode(n, &call);
    if (err != cudaSuccess)
        return err;
    struct crm_launch *l = &call.crm_call_u.crm_launch.launch;
    crm_launch_attr *had = l->attrs.attrs_val;
    u_int had_len = l->attrs.attrs_len;
    l->attrs.attrs_val = (crm_launch_attr *)attrs;
    l->attrs.attrs_len = count;
    err = crm_gnode_set_record(n, &call) == 0 ? cudaSuccess : cudaErrorMemoryAllocation;
    l->attrs.attrs_val = had, l->attrs.attrs_len = had_len;
    xdr_free((xdrproc_t)xdr_crm_call, (char *)&call);
    return err;
}

/* cudaSuccess when an attribute of this id may be set on a kernel node and travel. */
static cudaError_t crm__settable(cudaLaunchAttributeID id)
{
    static int logged;
    switch (id) {
    case cudaLaunchAttributeProgrammaticEvent:
    case cudaLaunchAttributeLaunchCompletionEvent:
    case cudaLaunchAttributeDeviceUpdatableKernelNode:
        return (cudaError_t)crm_unsupported("a kernel node attribute naming an event or making it device-updatable",
                                            &logged, cudaErrorNotSupported, 0);
    default:
        break;
    }
    return id > cudaLaunchAttributeIgnore && id <= CRM__ATTR_LAST ? cudaSuccess : cudaErrorInvalidValue;
}

CRM_EXPORT cudaError_t cudaGraphKernelNodeSetAttribute(cudaGraphNode_t hNode, cudaKernelNodeAttrID attr,
                                                       const cudaKernelNodeAttrValue *value)
{
    crm_launch_attr attrs[CRM_KATTRS_MAX];
    unsigned count, at;
    crm_drv_runtime_bind();
    cudaError_t err = value == NULL ? cudaErrorInvalidValue : crm__settable(attr);
    if (err == cudaSuccess)
        err = crm_graph_kernel_attrs(hNode, attrs, &count);
    for (at = 0; err == cudaSuccess && at < count && attrs[at].id != (int)attr; at++)
        ;
    if (err == cudaSuccess && at == CRM_KATTRS_MAX)
        err = cudaErrorNotSupported; /* more distinct attributes than a launch carries */
    if (err != cudaSuccess)
        return crm_set_error(err);
    attrs[at].id = (int)attr;
    memcpy(attrs[at].val, value, sizeof attrs[at].val);
    return crm_set_error(crm_graph_kernel_set_attrs(hNode, attrs, at == count ? count + 1 : count));
}

/* An attribute never set reads as its default, all zeros (no window, priority 0,
 * no cluster, not cooperative), as CUDA gives it. */
CRM_EXPORT cudaError_t cudaGraphKernelNodeGetAttribute(cudaGraphNode_t hNode, cudaKernelNodeAttrID attr,
                                                       cudaKernelNodeAttrValue *value_out)
{
    crm_launch_attr attrs[CRM_KATTRS_MAX];
    unsigned count;
    crm_drv_runtime_bind();
    if (value_out == NULL || attr <= cudaLaunchAttributeIgnore || attr > CRM__ATTR_LAST)
        return crm_set_error(cudaErrorInvalidValue);
    cudaError_t err = crm_graph_kernel_attrs(hNode, attrs, &count);
    if (err != cudaSuccess)
        return crm_set_error(err);
    memset(value_out, 0, sizeof *value_out);
    for (unsigned i = 0; i < count; i++)
        if (attrs[i].id == (int)attr)
            memcpy(value_out, attrs[i].val, sizeof attrs[i].val);
    return cudaSuccess;
}

CRM_EXPORT cudaError_t cudaGraphKernelNodeCopyAttributes(cudaGraphNode_t hDst, cudaGraphNode_t hSrc)
{
    crm_launch_attr attrs[CRM_KATTRS_MAX];
    unsigned count;
    crm_drv_runtime_bind();
    cudaError_t err = crm_graph_kernel_attrs(hSrc, attrs, &count);
    if (err == cudaSuccess && (hDst == NULL || hDst->graph != hSrc->graph))
        err = cudaErrorInvalidValue; /* CUDA copies between nodes of one graph */
    return crm_set_error(err == cudaSuccess ? crm_graph_kernel_set_attrs(hDst, attrs, count) : err);
}

_Static_assert(sizeof(CUlaunchAttributeValue) == sizeof(cudaLaunchAttributeValue), "one layout");

CRM_EXPORT CUresult cuGraphKernelNodeSetAttribute(CUgraphNode hNode, CUkernelNodeAttrID attr,
                                                  const CUkernelNodeAttrValue *value)
{
    CRM_DRV_IN_CTX(cudaGraphKernelNodeSetAttribute(hNode, (cudaKernelNodeAttrID)attr,
                                                   (const cudaKernelNodeAttrValue *)value));
}

CRM_EXPORT CUresult cuGraphKernelNodeGetAttribute(CUgraphNode hNode, CUkernelNodeAttrID attr,
                                                  CUkernelNodeAttrValue *value_out)
{
    CRM_DRV_IN_CTX(cudaGraphKernelNodeGetAttribute(hNode, (cudaKernelNodeAttrID)attr,
                                                   (cudaKernelNodeAttrValue *)value_out));
}

CRM_EXPORT CUresult cuGraphKernelNodeCopyAttributes(CUgraphNode dst, CUgraphNode src)
{
    CRM_DRV_IN_CTX(cudaGraphKernelNodeCopyAttributes(dst, src));
}
