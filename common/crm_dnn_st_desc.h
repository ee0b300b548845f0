/* crm_dnn_st_desc.h -- the contents of cuDNN's spatial transformer descriptor and
 * the rules cudnnSetSpatialTransformerNdDescriptor applies, shared by the shim, the
 * server (it re-checks what arrives on the wire) and the emulated device.
 * Header-only and pure, like common/crm_dnn_desc.h.
 *
 * The descriptor gives the output's N, C, H, W; the affine parameters theta are
 * N x 2 x 3 values and the sampling grid N x H x W x 2 (x, y pairs in [-1, 1]), both
 * of the descriptor's data type, packed. */
#ifndef CRM_DNN_ST_DESC_H
#define CRM_DNN_ST_DESC_H

#include "common/crm_dnn_desc.h"

typedef struct crm_dnn_sdesc {
    int sampler;                 /* cudnnSamplerType_t; -1 while never set */
    int dtype;                   /* of theta and the grid */
    int nbdims;                  /* 4: N, C, H, W */
    int dims[CRM_DNN_MAXDIM];
} crm_dnn_sdesc;

/* What an array of the descriptor lays out. */
enum crm_dnn_st_array { CRM_DNN_ST_THETA, CRM_DNN_ST_GRID };

/* BAD_PARAM for an unknown sampler or data type, another dimension count than 4 or
 * a size < 1; NOT_SUPPORTED for data types cudarem does not carry. */
static inline cudnnStatus_t crm_dnn_st_check(const crm_dnn_sdesc *s)
{
    if (s->sampler != CUDNN_SAMPLER_BILINEAR || s->nbdims != 4)
        return CUDNN_STATUS_BAD_PARAM;
    cudnnStatus_t st = crm_dnn_dims_check(s->nbdims, s->dims);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    if ((int64_t)s->dims[0] * s->dims[2] * s->dims[3] * 2 > INT32_MAX) /* the grid's elements */
        return CUDNN_STATUS_NOT_SUPPORTED;
    if (s->dtype != CUDNN_DATA_FLOAT && s->dtype != CUDNN_DATA_DOUBLE && s->dtype != CUDNN_DATA_HALF)
        return crm_dnn_dtype_check(s->dtype) == CUDNN_STATUS_BAD_PARAM ? CUDNN_STATUS_BAD_PARAM
                                                                        : CUDNN_STATUS_NOT_SUPPORTED;
    return CUDNN_STATUS_SUCCESS;
}

/* The packed tensor an array of a checked descriptor is: theta N x 2 x 3 (as
 * N, 2, 3), the grid N x H x W x 2. */
static inline void crm_dnn_st_array(const crm_dnn_sdesc *s, enum crm_dnn_st_array which, crm_dnn_tdesc *t)
{
    int theta[3] = {s->dims[0], 2, 3}, grid[4] = {s->dims[0], s->dims[2], s->dims[3], 2};
    *t = (crm_dnn_tdesc){.dtype = s->dtype, .nbdims = which == CRM_DNN_ST_THETA ? 3 : 4};
    for (int i = 0; i < t->nbdims; i++)
        t->dims[i] = which == CRM_DNN_ST_THETA ? theta[i] : grid[i];
    crm_dnn_packed_strides(CUDNN_TENSOR_NCHW, t->nbdims, t->dims, t->strides);
}

#endif
