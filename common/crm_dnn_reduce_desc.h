/* crm_dnn_reduce_desc.h -- the contents of cuDNN's reduce-tensor descriptor and the
 * rules cudnnSetReduceTensorDescriptor applies, shared by the shim, the server (it
 * re-checks what arrives on the wire) and the emulated device. Header-only and pure,
 * like common/crm_dnn_desc.h. */
#ifndef CRM_DNN_REDUCE_DESC_H
#define CRM_DNN_REDUCE_DESC_H

#include <cudnn.h>
#include "common/crm_dnn_desc.h"

typedef struct crm_dnn_rdesc {
    int op;                      /* cudnnReduceTensorOp_t; -1 while never set */
    int dtype;                   /* compute type */
    int nan;                     /* cudnnNanPropagation_t (MIN, MAX and AMAX) */
    int indices;                 /* cudnnReduceTensorIndices_t */
    int itype;                   /* cudnnIndicesType_t */
} crm_dnn_rdesc;

/* BAD_PARAM for values outside cuDNN's enumerations. */
static inline cudnnStatus_t crm_dnn_reduce_check(const crm_dnn_rdesc *r)
{
    if (r->op < CUDNN_REDUCE_TENSOR_ADD || r->op > CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS ||
        (r->nan != CUDNN_NOT_PROPAGATE_NAN && r->nan != CUDNN_PROPAGATE_NAN) ||
        (r->indices != CUDNN_REDUCE_TENSOR_NO_INDICES && r->indices != CUDNN_REDUCE_TENSOR_FLATTENED_INDICES) ||
        r->itype < CUDNN_32BIT_INDICES || r->itype > CUDNN_8BIT_INDICES)
        return CUDNN_STATUS_BAD_PARAM;
    return crm_dnn_dtype_check(r->dtype);
}

/* 1 when the reduction writes indices: FLATTENED_INDICES with MIN, MAX or AMAX
 * (cuDNN ignores the indices of the other operations). */
static inline int crm_dnn_reduce_has_indices(const crm_dnn_rdesc *r)
{
    return r->indices == CUDNN_REDUCE_TENSOR_FLATTENED_INDICES &&
           (r->op == CUDNN_REDUCE_TENSOR_MIN || r->op == CUDNN_REDUCE_TENSOR_MAX ||
            r->op == CUDNN_REDUCE_TENSOR_AMAX);
}

/* BAD_PARAM unless c has a's dimension count and each of its sizes is a's or 1. */
static inline cudnnStatus_t crm_dnn_reduce_shapes(const crm_dnn_tdesc *a, const crm_dnn_tdesc *c)
{
    if (a->nbdims == 0 || a->nbdims != c->nbdims)
        return CUDNN_STATUS_BAD_PARAM;
    for (int i = 0; i < a->nbdims; i++)
        if (c->dims[i] != a->dims[i] && c->dims[i] != 1)
            return CUDNN_STATUS_BAD_PARAM;
    return CUDNN_STATUS_SUCCESS;
}

#endif
