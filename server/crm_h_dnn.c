/* crm_h_dnn.c -- cuDNN handles of a session (create, destroy, release at session
 * end) and the helpers every cuDNN handler uses to turn the descriptor contents a
 * call carries into backend descriptors, after checking them and every device range
 * they describe (server/crm_h_dnn.h). */
#include <assert.h>
#include <string.h>
#include "common/crm_dnn_desc.h"
#include "common/crm_dnn_lrn_desc.h"
#include "common/crm_dnn_reduce_desc.h"
#include "common/crm_log.h"
#include "server/crm_backend.h"
#include "server/crm_h_dnn.h"

/* Backend descriptors reused by every call of this session process. */
static struct {
    cudnnTensorDescriptor_t tensors[CRM_H_DNN_TENSORS];
    cudnnFilterDescriptor_t filter;
    cudnnConvolutionDescriptor_t conv;
    cudnnPoolingDescriptor_t pool;
    cudnnActivationDescriptor_t act;
    cudnnOpTensorDescriptor_t op;
    cudnnLRNDescriptor_t lrn;
    cudnnReduceTensorDescriptor_t reduce;
} crm__dnn;

/* 1 when the backend provides every function the handlers call. */
static int crm__dnn_loaded(void)
{
#define CRM_RT_FN(lib, name) \
    if (crm_rt.name == NULL) \
        return 0;
#include "server/crm_rt_dnn.def"
#undef CRM_RT_FN
    return 1;
}

static void crm__dnn_release(void *h)
{
    crm_rt.cudnnDestroy((cudnnHandle_t)h);
}

cudnnStatus_t crm_srv_crm_dnn_create(crm_session *s, uint64_t id)
{
    cudnnHandle_t h;
    void *old;
    if (!crm__dnn_loaded())
        return CUDNN_STATUS_NOT_SUPPORTED;
    if (id == 0 || crm_session_handle(s, CRM_HANDLE_cudnnHandle_t, id, &old) == 0)
        return CUDNN_STATUS_BAD_PARAM;
    if (crm_session_room(s, CRM_LIMIT_HANDLES, 1) != 0)
        return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED; /* cudnnCreate out of host memory */
    cudnnStatus_t st = crm_rt.cudnnCreate(&h);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    if (crm_session_handle_add(s, CRM_HANDLE_cudnnHandle_t, id, h, crm__dnn_release) != 0) {
        crm_rt.cudnnDestroy(h);
        return CUDNN_STATUS_BAD_PARAM; /* id taken by another kind of handle */
    }
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t crm_srv_cudnnDestroy(crm_session *s, uint64_t handle)
{
    void *h;
    if (crm_rt.cudnnDestroy == NULL)
        return CUDNN_STATUS_NOT_SUPPORTED;
    if (crm_session_handle_del(s, CRM_HANDLE_cudnnHandle_t, handle, &h) != 0)
        return CUDNN_STATUS_BAD_PARAM;
    return crm_rt.cudnnDestroy((cudnnHandle_t)h);
}

cudnnStatus_t crm_h_dnn_start(crm_h_dnn_call *c, crm_session *s)
{
    memset(c, 0, sizeof *c);
    c->s = s;
    return crm__dnn_loaded() ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_NOT_SUPPORTED;
}

cudnnStatus_t crm_h_dnn_begin(crm_h_dnn_call *c, crm_session *s, uint64_t handle)
{
    void *h;
    cudnnStatus_t st = crm_h_dnn_start(c, s);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    if (crm_session_handle(s, CRM_HANDLE_cudnnHandle_t, handle, &h) != 0)
        return CUDNN_STATUS_BAD_PARAM;
    c->h = (cudnnHandle_t)h;
    return CUDNN_STATUS_SUCCESS;
}

/* Checks that [ptr, ptr + bytes) lies in one allocation; optional ptr 0 passes as NULL. */
static cudnnStatus_t crm__dnn_range(crm_h_dnn_call *c, uint64_t ptr, uint64_t bytes, int optional, void **dev)
{
    if (ptr == 0 && optional) {
        if (dev != NULL)
            *dev = NULL;
        return CUDNN_STATUS_SUCCESS;
    }
    if (ptr == 0 || crm_session_check_region(c->s, ptr, bytes, bytes, 1) != cudaSuccess)
        return CUDNN_STATUS_BAD_PARAM;
    if (dev != NULL)
        *dev = (void *)(uintptr_t)ptr;
    return CUDNN_STATUS_SUCCESS;
}

/* The wire tensor as checked contents, and its footprint in bytes. */
static cudnnStatus_t crm__dnn_tdesc(const crm_dnn_tensor *w, crm_dnn_tdesc *t, uint64_t *bytes)
{
    *t = (crm_dnn_tdesc){.dtype = w->dtype, .nbdims = w->nbdims};
    memcpy(t->dims, w->dims, sizeof t->dims);
    memcpy(t->strides, w->strides, sizeof t->strides);
    cudnnStatus_t st = crm_dnn_tensor_check(t);
    if (st == CUDNN_STATUS_SUCCESS && crm_dnn_tensor_bytes(t, bytes) != 0)
        st = CUDNN_STATUS_BAD_PARAM;
    return st;
}

cudnnStatus_t crm_h_dnn_tensor_ptr(crm_h_dnn_call *c, const crm_dnn_tensor *w, uint64_t ptr, int optional,
                                   void **dev)
{
    crm_dnn_tdesc t;
    uint64_t bytes;
    cudnnStatus_t st = crm__dnn_tdesc(w, &t, &bytes);
    return st != CUDNN_STATUS_SUCCESS ? st : crm__dnn_range(c, ptr, bytes, optional, dev);
}

cudnnStatus_t crm_h_dnn_tensor(crm_h_dnn_call *c, const crm_dnn_tensor *w, uint64_t ptr, int optional,
                               cudnnTensorDescriptor_t *out, void **dev)
{
    crm_dnn_tdesc t;
    uint64_t bytes;
    cudnnStatus_t st = crm__dnn_tdesc(w, &t, &bytes);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    if (c->ntensors == CRM_H_DNN_TENSORS)
        return CUDNN_STATUS_BAD_PARAM;
    if ((st = crm__dnn_range(c, ptr, bytes, optional, dev)) != CUDNN_STATUS_SUCCESS)
        return st;
    cudnnTensorDescriptor_t *slot = &crm__dnn.tensors[c->ntensors];
    if (*slot == NULL && (st = crm_rt.cudnnCreateTensorDescriptor(slot)) != CUDNN_STATUS_SUCCESS)
        return st;
    c->ntensors++;
    *out = *slot;
    return crm_rt.cudnnSetTensorNdDescriptor(*slot, (cudnnDataType_t)t.dtype, t.nbdims, t.dims, t.strides);
}

cudnnStatus_t crm_h_dnn_filter(crm_h_dnn_call *c, const crm_dnn_filter *w, uint64_t ptr, int optional,
                               cudnnFilterDescriptor_t *out, void **dev)
{
    crm_dnn_fdesc f = {.dtype = w->dtype, .format = w->format, .nbdims = w->nbdims};
    memcpy(f.dims, w->dims, sizeof f.dims);
    cudnnStatus_t st = crm_dnn_filter_check(&f);
    if (st == CUDNN_STATUS_SUCCESS)
        st = crm__dnn_range(c, ptr, crm_dnn_filter_bytes(&f), optional, dev);
    if (st == CUDNN_STATUS_SUCCESS && crm__dnn.filter == NULL)
        st = crm_rt.cudnnCreateFilterDescriptor(&crm__dnn.filter);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    *out = crm__dnn.filter;
    return crm_rt.cudnnSetFilterNdDescriptor(*out, (cudnnDataType_t)f.dtype, (cudnnTensorFormat_t)f.format,
                                             f.nbdims, f.dims);
}

cudnnStatus_t crm_h_dnn_conv(crm_h_dnn_call *c, const crm_dnn_conv *w, cudnnConvolutionDescriptor_t *out)
{
    crm_dnn_cdesc d = {.mode = w->mode, .dtype = w->dtype, .math = w->math, .groups = w->groups,
                       .reorder = w->reorder, .nbdims = w->nbdims};
    (void)c;
    memcpy(d.pad, w->pad, sizeof d.pad);
    memcpy(d.stride, w->stride, sizeof d.stride);
    memcpy(d.dilation, w->dilation, sizeof d.dilation);
    cudnnStatus_t st = crm_dnn_conv_check(&d);
    if (st == CUDNN_STATUS_SUCCESS && crm__dnn.conv == NULL)
        st = crm_rt.cudnnCreateConvolutionDescriptor(&crm__dnn.conv);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    *out = crm__dnn.conv;
    if ((st = crm_rt.cudnnSetConvolutionNdDescriptor(*out, d.nbdims, d.pad, d.stride, d.dilation,
                                                     (cudnnConvolutionMode_t)d.mode, (cudnnDataType_t)d.dtype)) ||
        (st = crm_rt.cudnnSetConvolutionGroupCount(*out, d.groups)))
        return st;
    return crm_rt.cudnnSetConvolutionMathType(*out, (cudnnMathType_t)d.math);
}

cudnnStatus_t crm_h_dnn_pool(crm_h_dnn_call *c, const crm_dnn_pool *w, cudnnPoolingDescriptor_t *out)
{
    crm_dnn_pdesc p = {.mode = w->mode, .nan = w->nan, .nbdims = w->nbdims};
    (void)c;
    memcpy(p.window, w->window, sizeof p.window);
    memcpy(p.pad, w->pad, sizeof p.pad);
    memcpy(p.stride, w->stride, sizeof p.stride);
    cudnnStatus_t st = crm_dnn_pool_check(&p);
    if (st == CUDNN_STATUS_SUCCESS && crm__dnn.pool == NULL)
        st = crm_rt.cudnnCreatePoolingDescriptor(&crm__dnn.pool);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    *out = crm__dnn.pool;
    return crm_rt.cudnnSetPoolingNdDescriptor(*out, (cudnnPoolingMode_t)p.mode, (cudnnNanPropagation_t)p.nan,
                                              p.nbdims, p.window, p.pad, p.stride);
}

cudnnStatus_t crm_h_dnn_act(crm_h_dnn_call *c, const crm_dnn_act *w, cudnnActivationDescriptor_t *out)
{
    crm_dnn_adesc a = {.mode = w->mode, .nan = w->nan, .coef = w->coef, .swish_beta = w->swish_beta};
    (void)c;
    cudnnStatus_t st = crm_dnn_act_check(&a);
    if (st == CUDNN_STATUS_SUCCESS && crm__dnn.act == NULL)
        st = crm_rt.cudnnCreateActivationDescriptor(&crm__dnn.act);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    *out = crm__dnn.act;
    st = crm_rt.cudnnSetActivationDescriptor(*out, (cudnnActivationMode_t)a.mode, (cudnnNanPropagation_t)a.nan,
                                             a.coef);
    if (st == CUDNN_STATUS_SUCCESS && a.mode == CUDNN_ACTIVATION_SWISH)
        st = crm_rt.cudnnSetActivationDescriptorSwishBeta(*out, a.swish_beta);
    return st;
}

cudnnStatus_t crm_h_dnn_op(crm_h_dnn_call *c, const crm_dnn_optensor *w, cudnnOpTensorDescriptor_t *out)
{
    crm_dnn_odesc o = {.op = w->op, .dtype = w->dtype, .nan = w->nan};
    (void)c;
    cudnnStatus_t st = crm_dnn_op_check(&o);
    if (st == CUDNN_STATUS_SUCCESS && crm__dnn.op == NULL)
        st = crm_rt.cudnnCreateOpTensorDescriptor(&crm__dnn.op);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    *out = crm__dnn.op;
    return crm_rt.cudnnSetOpTensorDescriptor(*out, (cudnnOpTensorOp_t)o.op, (cudnnDataType_t)o.dtype,
                                             (cudnnNanPropagation_t)o.nan);
}

cudnnStatus_t crm_h_dnn_lrn(crm_h_dnn_call *c, const crm_dnn_lrn *w, cudnnLRNDescriptor_t *out)
{
    crm_dnn_ldesc l = {.n = w->n, .alpha = w->alpha, .beta = w->beta, .k = w->k};
    (void)c;
    cudnnStatus_t st = crm_dnn_lrn_check(&l);
    if (st == CUDNN_STATUS_SUCCESS && crm__dnn.lrn == NULL)
        st = crm_rt.cudnnCreateLRNDescriptor(&crm__dnn.lrn);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    *out = crm__dnn.lrn;
    return crm_rt.cudnnSetLRNDescriptor(*out, l.n, l.alpha, l.beta, l.k);
}

cudnnStatus_t crm_h_dnn_reduce(crm_h_dnn_call *c, const crm_dnn_reduce *w, cudnnReduceTensorDescriptor_t *out)
{
    crm_dnn_rdesc r = {.op = w->op, .dtype = w->dtype, .nan = w->nan, .indices = w->indices, .itype = w->itype};
    (void)c;
    cudnnStatus_t st = crm_dnn_reduce_check(&r);
    if (st == CUDNN_STATUS_SUCCESS && crm__dnn.reduce == NULL)
        st = crm_rt.cudnnCreateReduceTensorDescriptor(&crm__dnn.reduce);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    *out = crm__dnn.reduce;
    return crm_rt.cudnnSetReduceTensorDescriptor(*out, (cudnnReduceTensorOp_t)r.op, (cudnnDataType_t)r.dtype,
                                                 (cudnnNanPropagation_t)r.nan, (cudnnReduceTensorIndices_t)r.indices,
                                                 (cudnnIndicesType_t)r.itype);
}

cudnnStatus_t crm_h_dnn_workspace(crm_h_dnn_call *c, uint64_t ptr, uint64_t size, void **dev)
{
    if (size == 0) {
        *dev = NULL;
        return CUDNN_STATUS_SUCCESS;
    }
    return crm__dnn_range(c, ptr, size, 0, dev);
}

const void *crm_h_dnn_scalar(crm_h_dnn_call *c, double v, int dtype)
{
    assert(c->nscalars < CRM_H_DNN_SCALARS);
    if (crm_dnn_scalar_is_double(dtype)) {
        c->scalars[c->nscalars].d = v;
    } else {
        c->scalars[c->nscalars].f = (float)v;
    }
    return &c->scalars[c->nscalars++];
}
