/* crm_emu_dnn.h -- internal interface of the emulated device's cuDNN: the plain
 * structs behind its handles and descriptors, and the element access, blending and
 * argument checks every compute routine shares.
 *
 * Compute routines work in double whatever the data type (float, double, half and
 * bfloat16 are carried, 16-bit values rounded on store; others answer
 * CUDNN_STATUS_NOT_SUPPORTED), read and write tensors through
 * their strides, and run under the device lock (shared) after checking that every
 * tensor they touch lies inside live device memory.
 */
#ifndef CRM_EMU_DNN_H
#define CRM_EMU_DNN_H

#include <stdint.h>
#include <cudnn.h>
#include "common/crm_dnn_ctc_desc.h"
#include "common/crm_dnn_desc.h"
#include "common/crm_dnn_dropout_desc.h"
#include "common/crm_dnn_lrn_desc.h"
#include "common/crm_dnn_reduce_desc.h"
#include "common/crm_dnn_st_desc.h"
#include "server/emu/crm_emu.h"

struct cudnnContext {
    cudaStream_t stream;         /* cudnnSetStream; work runs at once anyway */
};

struct cudnnTensorStruct { crm_dnn_tdesc d; };
struct cudnnFilterStruct { crm_dnn_fdesc d; };
struct cudnnConvolutionStruct { crm_dnn_cdesc d; };
struct cudnnPoolingStruct { crm_dnn_pdesc d; };
struct cudnnActivationStruct { crm_dnn_adesc d; };
struct cudnnOpTensorStruct { crm_dnn_odesc d; };
struct cudnnLRNStruct { crm_dnn_ldesc d; };
struct cudnnReduceTensorStruct { crm_dnn_rdesc d; };
struct cudnnDropoutStruct { crm_dnn_ddesc d; };
struct cudnnSpatialTransformerStruct { crm_dnn_sdesc d; };
struct cudnnCTCLossStruct { crm_dnn_ctcdesc d; };

/* A tensor bound to its memory for one call. */
typedef struct crm__dview {
    const crm_dnn_tdesc *d;      /* shape, strides, data type */
    void *p;                     /* first element */
} crm__dview;

/* 1 when h is a live handle (crm_emu_dnn_handle.c). */
int crm__dnn_handle_ok(cudnnHandle_t h);

/* The three passes of a convolution. */
enum crm__conv_pass { CRM__FWD, CRM__BWD_DATA, CRM__BWD_FILTER };

/* Number of algorithms of the pass, and 1 when algorithm `algo` applies to the
 * convolution of image x by w under c (crm_emu_dnn_algo.c). */
int crm__conv_algo_count(enum crm__conv_pass pass);
int crm__conv_algo_ok(enum crm__conv_pass pass, int algo, const crm_dnn_tdesc *x, const crm_dnn_fdesc *w,
                      const crm_dnn_cdesc *c);

/* f(x) of activation a (crm_emu_dnn_ops.c). */
double crm__dnn_act(const crm_dnn_adesc *a, double x);

/* Batch-norm training and backward (crm_emu_dnn_bn.c), with what the Ex forms add:
 * a residual zd/z added before the ReLU (relu), and backward's ReLU output yd/y
 * (NULL: none) and residual gradient dzd/dz (NULL: none). */
cudnnStatus_t crm__bn_train(cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void *alpha, const void *beta,
                            const cudnnTensorDescriptor_t xDesc, const void *x, const cudnnTensorDescriptor_t zd,
                            const void *z, int relu, const cudnnTensorDescriptor_t yDesc, void *y,
                            const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void *bnScale,
                            const void *bnBias, double exponentialAverageFactor, void *resultRunningMean,
                            void *resultRunningVariance, double epsilon, void *resultSaveMean,
                            void *resultSaveInvVariance);
cudnnStatus_t crm__bn_back_call(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void *alphaDataDiff, const void *betaDataDiff,
    const void *alphaParamDiff, const void *betaParamDiff, const cudnnTensorDescriptor_t xDesc, const void *x,
    const cudnnTensorDescriptor_t yd, const void *y, const cudnnTensorDescriptor_t dyDesc, const void *dy,
    const cudnnTensorDescriptor_t dzd, void *dz, const cudnnTensorDescriptor_t dxDesc, void *dx,
    const cudnnTensorDescriptor_t pd, const void *bnScale, void *dBnScaleResult, void *dBnBiasResult,
    double epsilon, const void *savedMean, const void *savedInvVariance);
/* Batch-norm inference, with the Ex forms' residual zd/z (NULL: none) and ReLU. */
cudnnStatus_t crm__bn_infer(cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void *alpha, const void *beta,
                            const cudnnTensorDescriptor_t xDesc, const void *x, const cudnnTensorDescriptor_t zd,
                            const void *z, int relu, const cudnnTensorDescriptor_t yDesc, void *y,
                            const cudnnTensorDescriptor_t pd, const void *bnScale, const void *bnBias,
                            const void *estimatedMean, const void *estimatedVariance, double epsilon);
/* What bnOps asks for (*relu, *add), checked against the activation and whether a
 * residual is given; and the Ex size queries' answer, 0 (crm_emu_dnn_bn_ex.c). */
cudnnStatus_t crm__bn_ops(cudnnBatchNormOps_t ops, const cudnnActivationDescriptor_t act, int has_z, int *relu,
                          int *add);
cudnnStatus_t crm__bn_size(cudnnHandle_t handle, cudnnBatchNormOps_t ops, const cudnnActivationDescriptor_t act,
                           int has_z, const cudnnTensorDescriptor_t xd, size_t *size);
/* 0 when pd is what cudnnDeriveBNTensorDescriptor gives for x in mode. */
cudnnStatus_t crm__bn_shape(int mode, const crm_dnn_tdesc *x, const crm_dnn_tdesc *pd);

/* Scaling factor at p as a double: *(double *)p for double data, else *(float *)p. */
double crm__dnn_scalar(const void *p, int dtype);

/* Checks that the tensor is set, of a computable type (float, double, half,
 * bfloat16), and lies
 * in device memory; caller holds the lock. CUDNN_STATUS_BAD_PARAM for an unset
 * descriptor or a NULL pointer, NOT_SUPPORTED for other types, EXECUTION_FAILED
 * for memory outside every allocation. */
cudnnStatus_t crm__dnn_bind(crm__dview *v, const crm_dnn_tdesc *d, const void *p);

/* Offset in elements of the element at multi-index idx. */
static inline int64_t crm__dnn_off(const crm_dnn_tdesc *d, const int *idx)
{
    int64_t o = 0;
    for (int i = 0; i < d->nbdims; i++)
        o += (int64_t)idx[i] * d->strides[i];
    return o;
}

static inline double crm__dnn_load(const crm__dview *v, int64_t off)
{
    switch (v->d->dtype) {
    case CUDNN_DATA_DOUBLE: return ((const double *)v->p)[off];
    case CUDNN_DATA_HALF: return crm__half_to_float(((const uint16_t *)v->p)[off]);
    case CUDNN_DATA_BFLOAT16: return crm__bf16_to_float(((const uint16_t *)v->p)[off]);
    default: return ((const float *)v->p)[off];
    }
}

/* Stores x rounded to the tensor's type (16-bit types through float). */
static inline void crm__dnn_store(const crm__dview *v, int64_t off, double x)
{
    switch (v->d->dtype) {
    case CUDNN_DATA_DOUBLE: ((double *)v->p)[off] = x; break;
    case CUDNN_DATA_HALF: ((uint16_t *)v->p)[off] = crm__float_to_half((float)x); break;
    case CUDNN_DATA_BFLOAT16: ((uint16_t *)v->p)[off] = crm__float_to_bf16((float)x); break;
    default: ((float *)v->p)[off] = (float)x;
    }
}

/* out = alpha * r + beta * out, and out is not read when beta == 0 (cuDNN's rule,
 * so an uninitialised output holding NaN does not leak into the result). */
static inline void crm__dnn_blend(const crm__dview *v, int64_t off, double r, double alpha, double beta)
{
    double x = alpha * r;
    if (beta != 0.0)
        x += beta * crm__dnn_load(v, off);
    crm__dnn_store(v, off, x);
}

/* Steps idx through every index of dims (row-major); 0 after the last. */
static inline int crm__dnn_next(int nbdims, const int *dims, int *idx)
{
    for (int i = nbdims - 1; i >= 0; i--) {
        if (++idx[i] < dims[i])
            return 1;
        idx[i] = 0;
    }
    return 0;
}

/* 1 when both tensors have the same number of dimensions and sizes. */
static inline int crm__dnn_same_dims(const crm_dnn_tdesc *a, const crm_dnn_tdesc *b)
{
    if (a->nbdims != b->nbdims)
        return 0;
    for (int i = 0; i < a->nbdims; i++)
        if (a->dims[i] != b->dims[i])
            return 0;
    return 1;
}

#endif
