/* crm_dnn_desc.h -- the contents of cuDNN's legacy descriptors and the rules cuDNN
 * applies when they are set, shared by the shim (descriptors are local objects
 * there), the server (it re-checks what arrives by value on the wire and sizes the
 * device ranges a call touches) and the emulated device (its descriptors are these
 * structs). Header-only: every function is static inline and pure.
 *
 * A set-worker fills a candidate, checks it with the matching crm_dnn_*_check and
 * stores it only when valid, so a failed Set leaves the descriptor as it was.
 * Statuses: CUDNN_STATUS_BAD_PARAM for invalid values (non-positive sizes, unknown
 * enumerants, negative padding), CUDNN_STATUS_NOT_SUPPORTED for valid cuDNN values
 * cudarem does not carry (vectorised NCHW_VECT_C layouts, vector or sub-byte data
 * types, more than CUDNN_DIM_MAX dimensions, over 2^31 elements).
 */
#ifndef CRM_DNN_DESC_H
#define CRM_DNN_DESC_H

#include <stdint.h>
#include <string.h>
#include <cudnn.h>

#define CRM_DNN_MAXDIM CUDNN_DIM_MAX          /* tensor and filter dimensions */
#define CRM_DNN_MAXSPATIAL (CUDNN_DIM_MAX - 2) /* convolution and pooling dimensions */

typedef struct crm_dnn_tdesc {
    int dtype;                   /* cudnnDataType_t */
    int nbdims;                  /* 0 while never set */
    int dims[CRM_DNN_MAXDIM];    /* sizes, dims[0] = N, dims[1] = C */
    int strides[CRM_DNN_MAXDIM]; /* in elements */
} crm_dnn_tdesc;

typedef struct crm_dnn_fdesc {
    int dtype;                   /* cudnnDataType_t */
    int format;                  /* cudnnTensorFormat_t: memory order of the packed filter */
    int nbdims;                  /* 0 while never set */
    int dims[CRM_DNN_MAXDIM];    /* logical K, C, spatial... whatever the format */
} crm_dnn_fdesc;

typedef struct crm_dnn_cdesc {
    int mode;                        /* cudnnConvolutionMode_t */
    int dtype;                       /* compute type */
    int math;                        /* cudnnMathType_t */
    int groups;                      /* group count, >= 1 */
    int reorder;                     /* cudnnReorderType_t, kept for Get */
    int nbdims;                      /* spatial dimensions; 0 while never set */
    int pad[CRM_DNN_MAXSPATIAL];
    int stride[CRM_DNN_MAXSPATIAL];
    int dilation[CRM_DNN_MAXSPATIAL];
} crm_dnn_cdesc;

typedef struct crm_dnn_pdesc {
    int mode;                        /* cudnnPoolingMode_t */
    int nan;                         /* cudnnNanPropagation_t */
    int nbdims;                      /* spatial dimensions; 0 while never set */
    int window[CRM_DNN_MAXSPATIAL];
    int pad[CRM_DNN_MAXSPATIAL];
    int stride[CRM_DNN_MAXSPATIAL];
} crm_dnn_pdesc;

typedef struct crm_dnn_adesc {
    int mode;                    /* cudnnActivationMode_t; -1 while never set */
    int nan;                     /* cudnnNanPropagation_t */
    double coef;                 /* clipped-relu ceiling, elu alpha */
    double swish_beta;           /* swish: x * sigmoid(beta * x) */
} crm_dnn_adesc;

typedef struct crm_dnn_odesc {
    int op;                      /* cudnnOpTensorOp_t; -1 while never set */
    int dtype;                   /* compute type */
    int nan;                     /* cudnnNanPropagation_t */
} crm_dnn_odesc;

/* Bytes per element of the data types cudarem carries; 0 for the others. */
static inline size_t crm_dnn_dtype_size(int dtype)
{
    switch (dtype) {
    case CUDNN_DATA_FLOAT: case CUDNN_DATA_INT32: return 4;
    case CUDNN_DATA_DOUBLE: case CUDNN_DATA_INT64: return 8;
    case CUDNN_DATA_HALF: case CUDNN_DATA_BFLOAT16: return 2;
    case CUDNN_DATA_INT8: case CUDNN_DATA_UINT8: return 1;
    default: return 0;
    }
}

/* Status of a data type value: supported, valid but not carried, or invalid. */
static inline cudnnStatus_t crm_dnn_dtype_check(int dtype)
{
    if (crm_dnn_dtype_size(dtype) != 0)
        return CUDNN_STATUS_SUCCESS;
    return dtype >= 0 && dtype <= CUDNN_DATA_COMPLEX_FP64 ? CUDNN_STATUS_NOT_SUPPORTED : CUDNN_STATUS_BAD_PARAM;
}

/* Status of a layout value: NCHW and NHWC are carried, NCHW_VECT_C is not. */
static inline cudnnStatus_t crm_dnn_format_check(int format)
{
    if (format == CUDNN_TENSOR_NCHW || format == CUDNN_TENSOR_NHWC)
        return CUDNN_STATUS_SUCCESS;
    return format == CUDNN_TENSOR_NCHW_VECT_C ? CUDNN_STATUS_NOT_SUPPORTED : CUDNN_STATUS_BAD_PARAM;
}

/* Scaling factors (alpha, beta) are double for double data, float otherwise. */
static inline int crm_dnn_scalar_is_double(int dtype)
{
    return dtype == CUDNN_DATA_DOUBLE;
}

/* Dimension count and sizes shared by tensors and filters: BAD_PARAM for fewer than
 * 3 dimensions or a size < 1, NOT_SUPPORTED above CUDNN_DIM_MAX or 2^31 elements. */
static inline cudnnStatus_t crm_dnn_dims_check(int nbdims, const int *dims)
{
    int64_t elems = 1;
    if (nbdims > CRM_DNN_MAXDIM)
        return CUDNN_STATUS_NOT_SUPPORTED;
    if (nbdims < 3)
        return CUDNN_STATUS_BAD_PARAM;
    for (int i = 0; i < nbdims; i++) {
        if (dims[i] < 1)
            return CUDNN_STATUS_BAD_PARAM;
        elems *= dims[i];
        if (elems > INT32_MAX)
            return CUDNN_STATUS_NOT_SUPPORTED;
    }
    return CUDNN_STATUS_SUCCESS;
}

/* Whole-tensor check, for Set and for descriptors arriving off the wire. */
static inline cudnnStatus_t crm_dnn_tensor_check(const crm_dnn_tdesc *t)
{
    cudnnStatus_t st = crm_dnn_dims_check(t->nbdims, t->dims);
    if (st == CUDNN_STATUS_SUCCESS)
        st = crm_dnn_dtype_check(t->dtype);
    for (int i = 0; st == CUDNN_STATUS_SUCCESS && i < t->nbdims; i++)
        if (t->strides[i] < 1)
            st = CUDNN_STATUS_BAD_PARAM;
    return st;
}

/* Bytes from the first to one past the last element a valid tensor addresses
 * (cudnnGetTensorSizeInBytes); 0, or -1 when that overflows 64 bits. */
static inline int crm_dnn_tensor_bytes(const crm_dnn_tdesc *t, uint64_t *out)
{
    uint64_t last = 0, term;
    for (int i = 0; i < t->nbdims; i++) {
        if (__builtin_mul_overflow((uint64_t)(t->dims[i] - 1), (uint64_t)t->strides[i], &term) ||
            __builtin_add_overflow(last, term, &last))
            return -1;
    }
    if (__builtin_add_overflow(last, 1, &last) ||
        __builtin_mul_overflow(last, (uint64_t)crm_dnn_dtype_size(t->dtype), out))
        return -1;
    return 0;
}

/* Number of elements of a valid tensor (dims product, < 2^31). */
static inline int64_t crm_dnn_tensor_elems(const crm_dnn_tdesc *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->nbdims; i++)
        n *= t->dims[i];
    return n;
}

/* Packed strides of `format` for dims: NCHW row-major; NHWC with C innermost. */
static inline void crm_dnn_packed_strides(int format, int nbdims, const int *dims, int *strides)
{
    int64_t s = 1;
    if (format == CUDNN_TENSOR_NHWC && nbdims >= 3) {
        strides[1] = 1;
        s = dims[1];
        for (int i = nbdims - 1; i >= 2; i--) {
            strides[i] = (int)s;
            s *= dims[i];
        }
        strides[0] = (int)s;
        return;
    }
    for (int i = nbdims - 1; i >= 0; i--) {
        strides[i] = (int)s;
        s *= dims[i];
    }
}

/* cudnnSetTensorNdDescriptor. */
static inline cudnnStatus_t crm_dnn_tensor_set_nd(crm_dnn_tdesc *t, int dtype, int nbdims, const int *dims,
                                                  const int *strides)
{
    crm_dnn_tdesc c = {.dtype = dtype, .nbdims = nbdims};
    if (nbdims > CRM_DNN_MAXDIM)
        return CUDNN_STATUS_NOT_SUPPORTED;
    if (nbdims > 0 && (dims == NULL || strides == NULL))
        return CUDNN_STATUS_BAD_PARAM;
    for (int i = 0; i < nbdims && i < CRM_DNN_MAXDIM; i++) {
        c.dims[i] = dims[i];
        c.strides[i] = strides[i];
    }
    cudnnStatus_t st = crm_dnn_tensor_check(&c);
    if (st == CUDNN_STATUS_SUCCESS)
        *t = c;
    return st;
}

/* cudnnSetTensorNdDescriptorEx: packed strides from the format. */
static inline cudnnStatus_t crm_dnn_tensor_set_nd_ex(crm_dnn_tdesc *t, int format, int dtype, int nbdims,
                                                     const int *dims)
{
    int strides[CRM_DNN_MAXDIM];
    cudnnStatus_t st = crm_dnn_format_check(format);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    if (dims == NULL)
        return CUDNN_STATUS_BAD_PARAM;
    st = crm_dnn_dims_check(nbdims, dims); /* also bounds the stride computation */
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    crm_dnn_packed_strides(format, nbdims, dims, strides);
    return crm_dnn_tensor_set_nd(t, dtype, nbdims, dims, strides);
}

static inline cudnnStatus_t crm_dnn_tensor_set4d(crm_dnn_tdesc *t, int format, int dtype, int n, int c, int h,
                                                 int w)
{
    const int dims[4] = {n, c, h, w};
    return crm_dnn_tensor_set_nd_ex(t, format, dtype, 4, dims);
}

static inline cudnnStatus_t crm_dnn_tensor_set4d_ex(crm_dnn_tdesc *t, int dtype, int n, int c, int h, int w,
                                                    int ns, int cs, int hs, int ws)
{
    const int dims[4] = {n, c, h, w}, strides[4] = {ns, cs, hs, ws};
    return crm_dnn_tensor_set_nd(t, dtype, 4, dims, strides);
}

/* cudnnGetTensorNdDescriptor: up to `requested` sizes and strides. */
static inline cudnnStatus_t crm_dnn_tensor_get_nd(const crm_dnn_tdesc *t, int requested, int *dtype, int *nbdims,
                                                  int *dims, int *strides)
{
    if (t->nbdims == 0 || requested < 0 || (requested > 0 && (dims == NULL || strides == NULL)))
        return CUDNN_STATUS_BAD_PARAM;
    if (dtype != NULL)
        *dtype = t->dtype;
    if (nbdims != NULL)
        *nbdims = t->nbdims;
    for (int i = 0; i < requested && i < t->nbdims; i++) {
        dims[i] = t->dims[i];
        strides[i] = t->strides[i];
    }
    return CUDNN_STATUS_SUCCESS;
}

/* Whole-filter check: sizes as for tensors, a carried layout and data type. */
static inline cudnnStatus_t crm_dnn_filter_check(const crm_dnn_fdesc *f)
{
    cudnnStatus_t st = crm_dnn_dims_check(f->nbdims, f->dims);
    if (st == CUDNN_STATUS_SUCCESS)
        st = crm_dnn_format_check(f->format);
    if (st == CUDNN_STATUS_SUCCESS)
        st = crm_dnn_dtype_check(f->dtype);
    return st;
}

/* Bytes of a valid (packed) filter. */
static inline uint64_t crm_dnn_filter_bytes(const crm_dnn_fdesc *f)
{
    uint64_t n = crm_dnn_dtype_size(f->dtype);
    for (int i = 0; i < f->nbdims; i++)
        n *= (uint64_t)f->dims[i];
    return n;
}

/* The filter seen as a tensor: its dims with the format's packed strides. */
static inline void crm_dnn_filter_as_tensor(const crm_dnn_fdesc *f, crm_dnn_tdesc *t)
{
    memset(t, 0, sizeof *t);
    t->dtype = f->dtype;
    t->nbdims = f->nbdims;
    memcpy(t->dims, f->dims, sizeof t->dims);
    crm_dnn_packed_strides(f->format, f->nbdims, f->dims, t->strides);
}

static inline cudnnStatus_t crm_dnn_filter_set_nd(crm_dnn_fdesc *f, int dtype, int format, int nbdims,
                                                  const int *dims)
{
    crm_dnn_fdesc c = {.dtype = dtype, .format = format, .nbdims = nbdims};
    if (nbdims > CRM_DNN_MAXDIM)
        return CUDNN_STATUS_NOT_SUPPORTED;
    if (nbdims > 0 && dims == NULL)
        return CUDNN_STATUS_BAD_PARAM;
    for (int i = 0; i < nbdims; i++)
        c.dims[i] = dims[i];
    cudnnStatus_t st = crm_dnn_filter_check(&c);
    if (st == CUDNN_STATUS_SUCCESS)
        *f = c;
    return st;
}

static inline cudnnStatus_t crm_dnn_filter_set4d(crm_dnn_fdesc *f, int dtype, int format, int k, int c, int h,
                                                 int w)
{
    const int dims[4] = {k, c, h, w};
    return crm_dnn_filter_set_nd(f, dtype, format, 4, dims);
}

/* Fresh convolution descriptor as cuDNN creates it: one group, default math, float. */
static inline void crm_dnn_conv_init(crm_dnn_cdesc *c)
{
    memset(c, 0, sizeof *c);
    c->groups = 1;
    c->dtype = CUDNN_DATA_FLOAT;
}

/* Whole-convolution check: 1..6 spatial dimensions, padding >= 0, strides and
 * dilations >= 1, known mode, compute and math types, groups >= 1. */
static inline cudnnStatus_t crm_dnn_conv_check(const crm_dnn_cdesc *c)
{
    if (c->nbdims < 1 || c->nbdims > CRM_DNN_MAXSPATIAL)
        return c->nbdims < 1 ? CUDNN_STATUS_BAD_PARAM : CUDNN_STATUS_NOT_SUPPORTED;
    if (c->mode != CUDNN_CONVOLUTION && c->mode != CUDNN_CROSS_CORRELATION)
        return CUDNN_STATUS_BAD_PARAM;
    if (c->math < CUDNN_DEFAULT_MATH || c->math > CUDNN_FMA_MATH || c->groups < 1)
        return CUDNN_STATUS_BAD_PARAM;
    for (int i = 0; i < c->nbdims; i++)
        if (c->pad[i] < 0 || c->stride[i] < 1 || c->dilation[i] < 1)
            return CUDNN_STATUS_BAD_PARAM;
    return crm_dnn_dtype_check(c->dtype);
}

static inline cudnnStatus_t crm_dnn_conv_set_nd(crm_dnn_cdesc *c, int n, const int *pad, const int *stride,
                                                const int *dilation, int mode, int dtype)
{
    crm_dnn_cdesc t = *c;
    if (n > CRM_DNN_MAXSPATIAL)
        return CUDNN_STATUS_NOT_SUPPORTED;
    if (n > 0 && (pad == NULL || stride == NULL || dilation == NULL))
        return CUDNN_STATUS_BAD_PARAM;
    t.nbdims = n;
    t.mode = mode;
    t.dtype = dtype;
    for (int i = 0; i < n; i++) {
        t.pad[i] = pad[i];
        t.stride[i] = stride[i];
        t.dilation[i] = dilation[i];
    }
    cudnnStatus_t st = crm_dnn_conv_check(&t);
    if (st == CUDNN_STATUS_SUCCESS)
        *c = t;
    return st;
}

/* Output sizes of a convolution (cudnnGetConvolutionNdForwardOutputDim): the
 * tensor and filter must have nbdims = spatial + 2, C = filter C * groups, K a
 * multiple of groups, and the dilated filter must fit the padded input. */
static inline cudnnStatus_t crm_dnn_conv_out_dims(const crm_dnn_cdesc *c, const crm_dnn_tdesc *x,
                                                  const crm_dnn_fdesc *w, int *out)
{
    if (c->nbdims == 0 || x->nbdims == 0 || w->nbdims == 0)
        return CUDNN_STATUS_BAD_PARAM;
    if (x->nbdims != c->nbdims + 2 || w->nbdims != x->nbdims)
        return CUDNN_STATUS_BAD_PARAM;
    if ((int64_t)w->dims[1] * c->groups != x->dims[1] || w->dims[0] % c->groups != 0)
        return CUDNN_STATUS_BAD_PARAM;
    out[0] = x->dims[0];
    out[1] = w->dims[0];
    for (int i = 0; i < c->nbdims; i++) {
        int64_t span = (int64_t)(w->dims[i + 2] - 1) * c->dilation[i] + 1;
        int64_t room = (int64_t)x->dims[i + 2] + 2 * (int64_t)c->pad[i];
        if (span > room)
            return CUDNN_STATUS_BAD_PARAM;
        out[i + 2] = (int)(1 + (room - span) / c->stride[i]);
    }
    return CUDNN_STATUS_SUCCESS;
}

/* Whole-pooling check: 1..6 spatial dimensions, windows and strides >= 1, padding >= 0. */
static inline cudnnStatus_t crm_dnn_pool_check(const crm_dnn_pdesc *p)
{
    if (p->nbdims < 1 || p->nbdims > CRM_DNN_MAXSPATIAL)
        return p->nbdims < 1 ? CUDNN_STATUS_BAD_PARAM : CUDNN_STATUS_NOT_SUPPORTED;
    if (p->mode < CUDNN_POOLING_MAX || p->mode > CUDNN_POOLING_MAX_DETERMINISTIC)
        return CUDNN_STATUS_BAD_PARAM;
    if (p->nan != CUDNN_NOT_PROPAGATE_NAN && p->nan != CUDNN_PROPAGATE_NAN)
        return CUDNN_STATUS_BAD_PARAM;
    for (int i = 0; i < p->nbdims; i++)
        if (p->window[i] < 1 || p->pad[i] < 0 || p->stride[i] < 1)
            return CUDNN_STATUS_BAD_PARAM;
    return CUDNN_STATUS_SUCCESS;
}

static inline cudnnStatus_t crm_dnn_pool_set_nd(crm_dnn_pdesc *p, int mode, int nan, int n, const int *window,
                                                const int *pad, const int *stride)
{
    crm_dnn_pdesc t = {.mode = mode, .nan = nan, .nbdims = n};
    if (n > CRM_DNN_MAXSPATIAL)
        return CUDNN_STATUS_NOT_SUPPORTED;
    if (n > 0 && (window == NULL || pad == NULL || stride == NULL))
        return CUDNN_STATUS_BAD_PARAM;
    for (int i = 0; i < n; i++) {
        t.window[i] = window[i];
        t.pad[i] = pad[i];
        t.stride[i] = stride[i];
    }
    cudnnStatus_t st = crm_dnn_pool_check(&t);
    if (st == CUDNN_STATUS_SUCCESS)
        *p = t;
    return st;
}

/* Output sizes of pooling: 1 + (in + 2 pad - window) / stride per spatial dimension;
 * the tensor needs nbdims = spatial + 2 and the window must fit the padded input. */
static inline cudnnStatus_t crm_dnn_pool_out_dims(const crm_dnn_pdesc *p, const crm_dnn_tdesc *x, int *out)
{
    if (p->nbdims == 0 || x->nbdims != p->nbdims + 2)
        return CUDNN_STATUS_BAD_PARAM;
    out[0] = x->dims[0];
    out[1] = x->dims[1];
    for (int i = 0; i < p->nbdims; i++) {
        int64_t room = (int64_t)x->dims[i + 2] + 2 * (int64_t)p->pad[i];
        if (p->window[i] > room)
            return CUDNN_STATUS_BAD_PARAM;
        out[i + 2] = (int)(1 + (room - p->window[i]) / p->stride[i]);
    }
    return CUDNN_STATUS_SUCCESS;
}

static inline cudnnStatus_t crm_dnn_act_check(const crm_dnn_adesc *a)
{
    if (a->mode < CUDNN_ACTIVATION_SIGMOID || a->mode > CUDNN_ACTIVATION_SWISH)
        return CUDNN_STATUS_BAD_PARAM;
    if (a->nan != CUDNN_NOT_PROPAGATE_NAN && a->nan != CUDNN_PROPAGATE_NAN)
        return CUDNN_STATUS_BAD_PARAM;
    return CUDNN_STATUS_SUCCESS;
}

static inline cudnnStatus_t crm_dnn_act_set(crm_dnn_adesc *a, int mode, int nan, double coef)
{
    crm_dnn_adesc t = *a;
    t.mode = mode;
    t.nan = nan;
    t.coef = coef;
    cudnnStatus_t st = crm_dnn_act_check(&t);
    if (st == CUDNN_STATUS_SUCCESS)
        *a = t;
    return st;
}

static inline cudnnStatus_t crm_dnn_op_check(const crm_dnn_odesc *o)
{
    if (o->op < CUDNN_OP_TENSOR_ADD || o->op > CUDNN_OP_TENSOR_NOT)
        return CUDNN_STATUS_BAD_PARAM;
    if (o->nan != CUDNN_NOT_PROPAGATE_NAN && o->nan != CUDNN_PROPAGATE_NAN)
        return CUDNN_STATUS_BAD_PARAM;
    return crm_dnn_dtype_check(o->dtype);
}

static inline cudnnStatus_t crm_dnn_op_set(crm_dnn_odesc *o, int op, int dtype, int nan)
{
    crm_dnn_odesc t = {.op = op, .dtype = dtype, .nan = nan};
    cudnnStatus_t st = crm_dnn_op_check(&t);
    if (st == CUDNN_STATUS_SUCCESS)
        *o = t;
    return st;
}

/* cudnnDeriveBNTensorDescriptor: 1xCx1x1 (spatial) or 1xCxHxW.. (per activation),
 * packed, double for double input and float otherwise. */
static inline cudnnStatus_t crm_dnn_derive_bn(crm_dnn_tdesc *d, const crm_dnn_tdesc *x, int mode)
{
    int dims[CRM_DNN_MAXDIM];
    if (x->nbdims == 0 || (mode != CUDNN_BATCHNORM_PER_ACTIVATION && mode != CUDNN_BATCHNORM_SPATIAL &&
                           mode != CUDNN_BATCHNORM_SPATIAL_PERSISTENT))
        return CUDNN_STATUS_BAD_PARAM;
    for (int i = 0; i < x->nbdims; i++)
        dims[i] = i == 1 || (i > 1 && mode == CUDNN_BATCHNORM_PER_ACTIVATION) ? x->dims[i] : 1;
    return crm_dnn_tensor_set_nd_ex(d, CUDNN_TENSOR_NCHW,
                                    x->dtype == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT,
                                    x->nbdims, dims);
}

/* Name of a status, as cudnnGetErrorString reports it. */
static inline const char *crm_dnn_status_name(int status)
{
    switch (status) {
#define CRM__DNN_NAME(s) case s: return #s;
    CRM__DNN_NAME(CUDNN_STATUS_SUCCESS)
    CRM__DNN_NAME(CUDNN_STATUS_NOT_INITIALIZED)
    CRM__DNN_NAME(CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH)
    CRM__DNN_NAME(CUDNN_STATUS_SERIALIZATION_VERSION_MISMATCH)
    CRM__DNN_NAME(CUDNN_STATUS_DEPRECATED)
    CRM__DNN_NAME(CUDNN_STATUS_LICENSE_ERROR)
    CRM__DNN_NAME(CUDNN_STATUS_RUNTIME_IN_PROGRESS)
    CRM__DNN_NAME(CUDNN_STATUS_RUNTIME_FP_OVERFLOW)
    CRM__DNN_NAME(CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED)
    CRM__DNN_NAME(CUDNN_STATUS_BAD_PARAM)
    CRM__DNN_NAME(CUDNN_STATUS_BAD_PARAM_NULL_POINTER)
    CRM__DNN_NAME(CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER)
    CRM__DNN_NAME(CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED)
    CRM__DNN_NAME(CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND)
    CRM__DNN_NAME(CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT)
    CRM__DNN_NAME(CUDNN_STATUS_BAD_PARAM_STREAM_MISMATCH)
    CRM__DNN_NAME(CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH)
    CRM__DNN_NAME(CUDNN_STATUS_BAD_PARAM_DUPLICATED_ENTRIES)
    CRM__DNN_NAME(CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE)
    CRM__DNN_NAME(CUDNN_STATUS_BAD_PARAM_CUDA_GRAPH_MISMATCH)
    CRM__DNN_NAME(CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE)
    CRM__DNN_NAME(CUDNN_STATUS_NOT_SUPPORTED)
    CRM__DNN_NAME(CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN)
    CRM__DNN_NAME(CUDNN_STATUS_NOT_SUPPORTED_SHAPE)
    CRM__DNN_NAME(CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE)
    CRM__DNN_NAME(CUDNN_STATUS_NOT_SUPPORTED_LAYOUT)
    CRM__DNN_NAME(CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER)
    CRM__DNN_NAME(CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART)
    CRM__DNN_NAME(CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH)
    CRM__DNN_NAME(CUDNN_STATUS_NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING)
    CRM__DNN_NAME(CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE)
    CRM__DNN_NAME(CUDNN_STATUS_NOT_SUPPORTED_SHARED_MEMORY_INSUFFICIENT)
    CRM__DNN_NAME(CUDNN_STATUS_NOT_SUPPORTED_PADDING)
    CRM__DNN_NAME(CUDNN_STATUS_NOT_SUPPORTED_BAD_LAUNCH_PARAM)
    CRM__DNN_NAME(CUDNN_STATUS_NOT_SUPPORTED_CUDA_GRAPH_NATIVE_API)
    CRM__DNN_NAME(CUDNN_STATUS_NOT_SUPPORTED_INVALID_DYNAMIC_SHAPE)
    CRM__DNN_NAME(CUDNN_STATUS_INTERNAL_ERROR)
    CRM__DNN_NAME(CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED)
    CRM__DNN_NAME(CUDNN_STATUS_INTERNAL_ERROR_UNEXPECTED_VALUE)
    CRM__DNN_NAME(CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED)
    CRM__DNN_NAME(CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED)
    CRM__DNN_NAME(CUDNN_STATUS_INTERNAL_ERROR_BAD_LAUNCH_PARAM)
    CRM__DNN_NAME(CUDNN_STATUS_INTERNAL_ERROR_TEXTURE_CREATION_FAILED)
    CRM__DNN_NAME(CUDNN_STATUS_EXECUTION_FAILED)
    CRM__DNN_NAME(CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER)
    CRM__DNN_NAME(CUDNN_STATUS_EXECUTION_FAILED_CUBLAS)
    CRM__DNN_NAME(CUDNN_STATUS_EXECUTION_FAILED_CUDART)
    CRM__DNN_NAME(CUDNN_STATUS_EXECUTION_FAILED_CURAND)
    CRM__DNN_NAME(CUDNN_STATUS_INVALID_VALUE)
#undef CRM__DNN_NAME
    default: return "CUDNN_STATUS_UNKNOWN";
    }
}

#endif
