/* crm_dnn_desc.c -- the shim's cuDNN descriptors: local objects, so creating,
 * setting, reading and destroying them never sends a message; compute calls carry
 * their contents (crm_dnn_wire_*). The functions are shared with the emulated device. */
#include <string.h>
#include "interpose/crm_dnn.h"
#include "interpose/crm_export.h"

#include "common/crm_dnn_desc_api.c.inc"
#include "common/crm_dnn_lrn_api.c.inc"
#include "common/crm_dnn_reduce_api.c.inc"
#include "common/crm_dnn_st_api.c.inc"

cudnnStatus_t crm_dnn_wire_tensor(const cudnnTensorDescriptor_t d, crm_dnn_tensor *w)
{
    if (d == NULL || d->d.nbdims == 0)
        return CUDNN_STATUS_BAD_PARAM;
    w->dtype = d->d.dtype;
    w->nbdims = d->d.nbdims;
    memcpy(w->dims, d->d.dims, sizeof w->dims);
    memcpy(w->strides, d->d.strides, sizeof w->strides);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t crm_dnn_wire_filter(const cudnnFilterDescriptor_t d, crm_dnn_filter *w)
{
    if (d == NULL || d->d.nbdims == 0)
        return CUDNN_STATUS_BAD_PARAM;
    w->dtype = d->d.dtype;
    w->format = d->d.format;
    w->nbdims = d->d.nbdims;
    memcpy(w->dims, d->d.dims, sizeof w->dims);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t crm_dnn_wire_conv(const cudnnConvolutionDescriptor_t d, crm_dnn_conv *w)
{
    if (d == NULL || d->d.nbdims == 0)
        return CUDNN_STATUS_BAD_PARAM;
    *w = (crm_dnn_conv){.mode = d->d.mode, .dtype = d->d.dtype, .math = d->d.math, .groups = d->d.groups,
                        .reorder = d->d.reorder, .nbdims = d->d.nbdims};
    memcpy(w->pad, d->d.pad, sizeof w->pad);
    memcpy(w->stride, d->d.stride, sizeof w->stride);
    memcpy(w->dilation, d->d.dilation, sizeof w->dilation);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t crm_dnn_wire_pool(const cudnnPoolingDescriptor_t d, crm_dnn_pool *w)
{
    if (d == NULL || d->d.nbdims == 0)
        return CUDNN_STATUS_BAD_PARAM;
    *w = (crm_dnn_pool){.mode = d->d.mode, .nan = d->d.nan, .nbdims = d->d.nbdims};
    memcpy(w->window, d->d.window, sizeof w->window);
    memcpy(w->pad, d->d.pad, sizeof w->pad);
    memcpy(w->stride, d->d.stride, sizeof w->stride);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t crm_dnn_wire_act(const cudnnActivationDescriptor_t d, crm_dnn_act *w)
{
    if (d == NULL || crm_dnn_act_check(&d->d) != CUDNN_STATUS_SUCCESS)
        return CUDNN_STATUS_BAD_PARAM;
    *w = (crm_dnn_act){.mode = d->d.mode, .nan = d->d.nan, .coef = d->d.coef, .swish_beta = d->d.swish_beta};
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t crm_dnn_wire_op(const cudnnOpTensorDescriptor_t d, crm_dnn_optensor *w)
{
    if (d == NULL || d->d.op < 0)
        return CUDNN_STATUS_BAD_PARAM;
    *w = (crm_dnn_optensor){.op = d->d.op, .dtype = d->d.dtype, .nan = d->d.nan};
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t crm_dnn_wire_lrn(const cudnnLRNDescriptor_t d, crm_dnn_lrn *w)
{
    if (d == NULL)
        return CUDNN_STATUS_BAD_PARAM;
    *w = (crm_dnn_lrn){.n = d->d.n, .alpha = d->d.alpha, .beta = d->d.beta, .k = d->d.k};
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t crm_dnn_wire_reduce(const cudnnReduceTensorDescriptor_t d, crm_dnn_reduce *w)
{
    if (d == NULL || d->d.op < 0)
        return CUDNN_STATUS_BAD_PARAM;
    *w = (crm_dnn_reduce){.op = d->d.op, .dtype = d->d.dtype, .nan = d->d.nan, .indices = d->d.indices,
                          .itype = d->d.itype};
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t crm_dnn_wire_st(const cudnnSpatialTransformerDescriptor_t d, crm_dnn_st *w)
{
    if (d == NULL || d->d.sampler < 0)
        return CUDNN_STATUS_BAD_PARAM;
    *w = (crm_dnn_st){.sampler = d->d.sampler, .dtype = d->d.dtype, .nbdims = d->d.nbdims};
    memcpy(w->dims, d->d.dims, sizeof w->dims);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t crm_dnn_scalar(const void *p, int dtype, double *out)
{
    if (p == NULL)
        return CUDNN_STATUS_BAD_PARAM;
    *out = crm_dnn_scalar_is_double(dtype) ? *(const double *)p : (double)*(const float *)p;
    return CUDNN_STATUS_SUCCESS;
}
