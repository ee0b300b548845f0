/* crm_emu_dnn_bn.c -- batch normalisation of the emulated device's cuDNN: forward
 * training (batch statistics, running averages with the unbiased variance, saved
 * mean and inverse deviation), forward inference and backward, per activation or
 * spatial (per channel), any strides; training and backward take the Ex forms'
 * residual and ReLU too (crm_emu_dnn_bn_ex.c). */
#include "server/emu/crm_emu_dnn.h"

#include <math.h>
#include <stdlib.h>

/* One batch-norm call: x, the parameter tensor's shape, and the statistics per
 * parameter slot (dense index over the parameter dims). */
typedef struct crm__bn {
    crm__dview x;
    const crm_dnn_tdesc *pd;     /* 1xCx1x1 or 1xCxHxW.. */
    int64_t slots;               /* elements of pd */
    int64_t m;                   /* x elements per slot */
    double *mean, *invstd;       /* per slot, malloc'd */
} crm__bn;

/* Index in the parameter tensor of x's index: N dropped, space dropped when spatial. */
static void crm__bn_pidx(const crm__bn *b, const int *xi, int *pi)
{
    for (int i = 0; i < b->pd->nbdims; i++)
        pi[i] = b->pd->dims[i] == 1 ? 0 : xi[i];
}

static int64_t crm__bn_slot(const crm__bn *b, const int *xi)
{
    int pi[CRM_DNN_MAXDIM];
    int64_t o = 0;
    crm__bn_pidx(b, xi, pi);
    for (int i = 0; i < b->pd->nbdims; i++)
        o = o * b->pd->dims[i] + pi[i];
    return o;
}

/* Checks the mode and that pd is what cudnnDeriveBNTensorDescriptor gives for x. */
cudnnStatus_t crm__bn_shape(int mode, const crm_dnn_tdesc *x, const crm_dnn_tdesc *pd)
{
    crm_dnn_tdesc want = {0};
    cudnnStatus_t st = crm_dnn_derive_bn(&want, x, mode);
    if (st != CUDNN_STATUS_SUCCESS || !crm__dnn_same_dims(&want, pd))
        return CUDNN_STATUS_BAD_PARAM;
    return CUDNN_STATUS_SUCCESS;
}

static void crm__bn_free(crm__bn *b)
{
    free(b->mean);
    free(b->invstd);
}

/* Binds x (lock held) and allocates the statistics. */
static cudnnStatus_t crm__bn_init(crm__bn *b, int mode, const crm_dnn_tdesc *xd, const void *x,
                                  const crm_dnn_tdesc *pd)
{
    memset(b, 0, sizeof *b);
    cudnnStatus_t st = crm__bn_shape(mode, xd, pd);
    if (st == CUDNN_STATUS_SUCCESS)
        st = crm__dnn_bind(&b->x, xd, x);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    b->pd = pd;
    b->slots = crm_dnn_tensor_elems(pd);
    b->m = crm_dnn_tensor_elems(xd) / b->slots;
    b->mean = calloc((size_t)b->slots, sizeof *b->mean);
    b->invstd = calloc((size_t)b->slots, sizeof *b->invstd);
    if (b->mean == NULL || b->invstd == NULL) {
        crm__bn_free(b);
        return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    }
    return CUDNN_STATUS_SUCCESS;
}

/* Batch mean and biased variance per slot; variance left in invstd. */
static void crm__bn_stats(crm__bn *b)
{
    int xi[CRM_DNN_MAXDIM] = {0};
    do
        b->mean[crm__bn_slot(b, xi)] += crm__dnn_load(&b->x, crm__dnn_off(b->x.d, xi));
    while (crm__dnn_next(b->x.d->nbdims, b->x.d->dims, xi));
    for (int64_t s = 0; s < b->slots; s++)
        b->mean[s] /= (double)b->m;
    do {
        int64_t s = crm__bn_slot(b, xi);
        double d = crm__dnn_load(&b->x, crm__dnn_off(b->x.d, xi)) - b->mean[s];
        b->invstd[s] += d * d;
    } while (crm__dnn_next(b->x.d->nbdims, b->x.d->dims, xi));
    for (int64_t s = 0; s < b->slots; s++)
        b->invstd[s] /= (double)b->m;
}

/* Parameter value of slot s in tensor v (dense slot -> strided offset). */
static double crm__bn_param(const crm__bn *b, const crm__dview *v, int64_t s)
{
    int pi[CRM_DNN_MAXDIM];
    for (int i = b->pd->nbdims - 1; i >= 0; i--) {
        pi[i] = (int)(s % b->pd->dims[i]);
        s /= b->pd->dims[i];
    }
    return crm__dnn_load(v, crm__dnn_off(v->d, pi));
}

static int64_t crm__bn_param_off(const crm__bn *b, const crm__dview *v, int64_t s)
{
    int pi[CRM_DNN_MAXDIM];
    for (int i = b->pd->nbdims - 1; i >= 0; i--) {
        pi[i] = (int)(s % b->pd->dims[i]);
        s /= b->pd->dims[i];
    }
    return crm__dnn_off(v->d, pi);
}

/* What the Ex forms add to the plain ones: a residual (z, or dz backward) and a ReLU. */
typedef struct crm__bn_ex {
    const crm__dview *z;         /* NULL: none */
    int relu;
} crm__bn_ex;

/* y = alpha * act(scale * (x - mean) * invstd + bias (+ z)) + beta * y. */
static void crm__bn_apply(const crm__bn *b, const crm__dview *y, const crm__dview *scale, const crm__dview *bias,
                          double alpha, double beta, const crm__bn_ex *ex)
{
    int xi[CRM_DNN_MAXDIM] = {0};
    do {
        int64_t s = crm__bn_slot(b, xi);
        double xh = (crm__dnn_load(&b->x, crm__dnn_off(b->x.d, xi)) - b->mean[s]) * b->invstd[s];
        double r = crm__bn_param(b, scale, s) * xh + crm__bn_param(b, bias, s);
        if (ex->z != NULL)
            r += crm__dnn_load(ex->z, crm__dnn_off(ex->z->d, xi));
        if (ex->relu && !(r > 0))
            r = 0;
        crm__dnn_blend(y, crm__dnn_off(y->d, xi), r, alpha, beta);
    } while (crm__dnn_next(b->x.d->nbdims, b->x.d->dims, xi));
}

/* Common argument checks; optional pointers come in pairs (both NULL or neither). */
static int crm__bn_args_ok(cudnnHandle_t h, const void *alpha, const void *beta, const cudnnTensorDescriptor_t xd,
                           const cudnnTensorDescriptor_t yd, const cudnnTensorDescriptor_t pd, double eps)
{
    return crm__dnn_handle_ok(h) && alpha && beta && xd && yd && pd && crm__dnn_same_dims(&xd->d, &yd->d) &&
           eps >= CUDNN_BN_MIN_EPSILON;
}

/* Forward training, with the Ex residual (zd, z: bound here) and ReLU. */
cudnnStatus_t crm__bn_train(cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void *alpha,
                                   const void *beta, const cudnnTensorDescriptor_t xDesc, const void *x,
                                   const cudnnTensorDescriptor_t zd, const void *z, int relu,
                                   const cudnnTensorDescriptor_t yDesc, void *y,
                                   const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void *bnScale,
                                   const void *bnBias, double exponentialAverageFactor, void *resultRunningMean,
                                   void *resultRunningVariance, double epsilon, void *resultSaveMean,
                                   void *resultSaveInvVariance)
{
    crm__bn b;
    crm__dview vy, vs, vb, vrm, vrv, vsm, vsi, vz;
    crm__bn_ex ex = {zd != NULL ? &vz : NULL, relu};
    const cudnnTensorDescriptor_t pd = bnScaleBiasMeanVarDesc;
    if (!crm__bn_args_ok(handle, alpha, beta, xDesc, yDesc, pd, epsilon) ||
        (resultRunningMean == NULL) != (resultRunningVariance == NULL) ||
        (resultSaveMean == NULL) != (resultSaveInvVariance == NULL) ||
        (zd != NULL && !crm__dnn_same_dims(&xDesc->d, &zd->d)))
        return CUDNN_STATUS_BAD_PARAM;
    crm__emu_rdlock();
    cudnnStatus_t st = crm__bn_init(&b, mode, &xDesc->d, x, &pd->d);
    if (st != CUDNN_STATUS_SUCCESS)
        goto out;
    if ((zd != NULL && (st = crm__dnn_bind(&vz, &zd->d, z))) || (st = crm__dnn_bind(&vy, &yDesc->d, y)) ||
        (st = crm__dnn_bind(&vs, &pd->d, bnScale)) ||
        (st = crm__dnn_bind(&vb, &pd->d, bnBias)) ||
        (resultRunningMean && ((st = crm__dnn_bind(&vrm, &pd->d, resultRunningMean)) ||
                               (st = crm__dnn_bind(&vrv, &pd->d, resultRunningVariance)))) ||
        (resultSaveMean && ((st = crm__dnn_bind(&vsm, &pd->d, resultSaveMean)) ||
                            (st = crm__dnn_bind(&vsi, &pd->d, resultSaveInvVariance)))))
        goto free;
    crm__bn_stats(&b);
    double f = exponentialAverageFactor, unbias = b.m > 1 ? (double)b.m / (double)(b.m - 1) : 1.0;
    for (int64_t s = 0; s < b.slots; s++) {
        double var = b.invstd[s];
        if (resultRunningMean) {
            int64_t om = crm__bn_param_off(&b, &vrm, s), ov = crm__bn_param_off(&b, &vrv, s);
            crm__dnn_store(&vrm, om, (1.0 - f) * crm__dnn_load(&vrm, om) + f * b.mean[s]);
            crm__dnn_store(&vrv, ov, (1.0 - f) * crm__dnn_load(&vrv, ov) + f * var * unbias);
        }
        b.invstd[s] = 1.0 / sqrt(var + epsilon);
        if (resultSaveMean) {
            crm__dnn_store(&vsm, crm__bn_param_off(&b, &vsm, s), b.mean[s]);
            crm__dnn_store(&vsi, crm__bn_param_off(&b, &vsi, s), b.invstd[s]);
        }
    }
    crm__bn_apply(&b, &vy, &vs, &vb, crm__dnn_scalar(alpha, xDesc->d.dtype), crm__dnn_scalar(beta, xDesc->d.dtype),
                  &ex);
free:
    crm__bn_free(&b);
out:
    crm__emu_unlock();
    return st;
}

CRM_EXPORT cudnnStatus_t cudnnBatchNormalizationForwardTraining(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void *alpha, const void *beta,
    const cudnnTensorDescriptor_t xDesc, const void *x, const cudnnTensorDescriptor_t yDesc, void *y,
    const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void *bnScale, const void *bnBias,
    double exponentialAverageFactor, void *resultRunningMean, void *resultRunningVariance, double epsilon,
    void *resultSaveMean, void *resultSaveInvVariance)
{
    return crm__bn_train(handle, mode, alpha, beta, xDesc, x, NULL, NULL, 0, yDesc, y, bnScaleBiasMeanVarDesc, bnScale,
                         bnBias, exponentialAverageFactor, resultRunningMean, resultRunningVariance, epsilon,
                         resultSaveMean, resultSaveInvVariance);
}

cudnnStatus_t crm__bn_infer(cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void *alpha, const void *beta,
                            const cudnnTensorDescriptor_t xDesc, const void *x, const cudnnTensorDescriptor_t zd,
                            const void *z, int relu, const cudnnTensorDescriptor_t yDesc, void *y,
                            const cudnnTensorDescriptor_t pd, const void *bnScale, const void *bnBias,
                            const void *estimatedMean, const void *estimatedVariance, double epsilon)
{
    crm__bn b;
    crm__dview vy, vs, vb, vm, vv, vz;
    const crm__bn_ex ex = {zd != NULL ? &vz : NULL, relu};
    if (!crm__bn_args_ok(handle, alpha, beta, xDesc, yDesc, pd, epsilon) ||
        (zd != NULL && !crm__dnn_same_dims(&xDesc->d, &zd->d)))
        return CUDNN_STATUS_BAD_PARAM;
    crm__emu_rdlock();
    cudnnStatus_t st = crm__bn_init(&b, mode, &xDesc->d, x, &pd->d);
    if (st != CUDNN_STATUS_SUCCESS)
        goto out;
    if ((zd != NULL && (st = crm__dnn_bind(&vz, &zd->d, z))) || (st = crm__dnn_bind(&vy, &yDesc->d, y)) ||
        (st = crm__dnn_bind(&vs, &pd->d, bnScale)) || (st = crm__dnn_bind(&vb, &pd->d, bnBias)) ||
        (st = crm__dnn_bind(&vm, &pd->d, estimatedMean)) || (st = crm__dnn_bind(&vv, &pd->d, estimatedVariance)))
        goto free;
    for (int64_t s = 0; s < b.slots; s++) {
        b.mean[s] = crm__bn_param(&b, &vm, s);
        b.invstd[s] = 1.0 / sqrt(crm__bn_param(&b, &vv, s) + epsilon);
    }
    crm__bn_apply(&b, &vy, &vs, &vb, crm__dnn_scalar(alpha, xDesc->d.dtype), crm__dnn_scalar(beta, xDesc->d.dtype),
                  &ex);
free:
    crm__bn_free(&b);
out:
    crm__emu_unlock();
    return st;
}

CRM_EXPORT cudnnStatus_t cudnnBatchNormalizationForwardInference(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void *alpha, const void *beta,
    const cudnnTensorDescriptor_t xDesc, const void *x, const cudnnTensorDescriptor_t yDesc, void *y,
    const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void *bnScale, const void *bnBias,
    const void *estimatedMean, const void *estimatedVariance, double epsilon)
{
    return crm__bn_infer(handle, mode, alpha, beta, xDesc, x, NULL, NULL, 0, yDesc, y, bnScaleBiasMeanVarDesc, bnScale,
                         bnBias, estimatedMean, estimatedVariance, epsilon);
}

/* The gradient reaching BN: dy, or through the ReLU (y: its output) dy where y > 0. */
static double crm__bn_grad(const crm__dview *dy, const crm__dview *y, const int *xi)
{
    double g = crm__dnn_load(dy, crm__dnn_off(dy->d, xi));
    return y != NULL && !(crm__dnn_load(y, crm__dnn_off(y->d, xi)) > 0) ? 0.0 : g;
}

/* What a backward call reads and writes besides x and the statistics. */
typedef struct crm__bn_back {
    crm__dview dy, dx, scale, dscale, dbias, y, dz;
    int relu, add;               /* y and dz bound */
} crm__bn_back;

/* dx = scale * invstd / M * (M * g - sum(g) - xhat * sum(g * xhat)), dScale =
 * sum(g * xhat), dBias = sum(g), each blended with its own factors, g the gradient
 * reaching BN (dz = g, blended as dx, when there is a residual). */
static cudnnStatus_t crm__bn_backward(crm__bn *b, const crm__bn_back *v, double ad, double bd, double ap, double bp)
{
    double *sdy = calloc((size_t)b->slots, sizeof *sdy), *sdyx = calloc((size_t)b->slots, sizeof *sdyx);
    const crm__dview *y = v->relu ? &v->y : NULL;
    if (sdy == NULL || sdyx == NULL) {
        free(sdy);
        free(sdyx);
        return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    }
    int xi[CRM_DNN_MAXDIM] = {0};
    do {
        int64_t s = crm__bn_slot(b, xi);
        double g = crm__bn_grad(&v->dy, y, xi);
        sdy[s] += g;
        sdyx[s] += g * (crm__dnn_load(&b->x, crm__dnn_off(b->x.d, xi)) - b->mean[s]) * b->invstd[s];
    } while (crm__dnn_next(b->x.d->nbdims, b->x.d->dims, xi));
    do {
        int64_t s = crm__bn_slot(b, xi);
        double xh = (crm__dnn_load(&b->x, crm__dnn_off(b->x.d, xi)) - b->mean[s]) * b->invstd[s];
        double g = crm__bn_grad(&v->dy, y, xi), m = (double)b->m;
        double r = crm__bn_param(b, &v->scale, s) * b->invstd[s] / m * (m * g - sdy[s] - xh * sdyx[s]);
        crm__dnn_blend(&v->dx, crm__dnn_off(v->dx.d, xi), r, ad, bd);
        if (v->add)
            crm__dnn_blend(&v->dz, crm__dnn_off(v->dz.d, xi), g, ad, bd);
    } while (crm__dnn_next(b->x.d->nbdims, b->x.d->dims, xi));
    for (int64_t s = 0; s < b->slots; s++) {
        crm__dnn_blend(&v->dscale, crm__bn_param_off(b, &v->dscale, s), sdyx[s], ap, bp);
        crm__dnn_blend(&v->dbias, crm__bn_param_off(b, &v->dbias, s), sdy[s], ap, bp);
    }
    free(sdy);
    free(sdyx);
    return CUDNN_STATUS_SUCCESS;
}

/* The statistics backward uses: the saved ones, or the batch's again. */
static cudnnStatus_t crm__bn_saved(crm__bn *b, const crm_dnn_tdesc *pd, const void *savedMean,
                                   const void *savedInvVariance, double epsilon)
{
    crm__dview vm, vi;
    cudnnStatus_t st;
    if (savedMean == NULL) {
        crm__bn_stats(b);
        for (int64_t s = 0; s < b->slots; s++)
            b->invstd[s] = 1.0 / sqrt(b->invstd[s] + epsilon);
        return CUDNN_STATUS_SUCCESS;
    }
    if ((st = crm__dnn_bind(&vm, pd, savedMean)) || (st = crm__dnn_bind(&vi, pd, savedInvVariance)))
        return st;
    for (int64_t s = 0; s < b->slots; s++) {
        b->mean[s] = crm__bn_param(b, &vm, s);
        b->invstd[s] = crm__bn_param(b, &vi, s);
    }
    return CUDNN_STATUS_SUCCESS;
}

/* Backward, with the Ex ReLU (yd, y: its output) and residual gradient (dzd, dz). */
cudnnStatus_t crm__bn_back_call(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void *alphaDataDiff, const void *betaDataDiff,
    const void *alphaParamDiff, const void *betaParamDiff, const cudnnTensorDescriptor_t xDesc, const void *x,
    const cudnnTensorDescriptor_t yd, const void *y, const cudnnTensorDescriptor_t dyDesc, const void *dy,
    const cudnnTensorDescriptor_t dzd, void *dz, const cudnnTensorDescriptor_t dxDesc, void *dx,
    const cudnnTensorDescriptor_t pd, const void *bnScale, void *dBnScaleResult, void *dBnBiasResult,
    double epsilon, const void *savedMean, const void *savedInvVariance)
{
    crm__bn b;
    crm__bn_back v = {.relu = yd != NULL, .add = dzd != NULL};
    if (!crm__bn_args_ok(handle, alphaDataDiff, betaDataDiff, xDesc, dyDesc, pd, epsilon) || !alphaParamDiff ||
        !betaParamDiff || !dxDesc || !crm__dnn_same_dims(&xDesc->d, &dxDesc->d) ||
        (savedMean == NULL) != (savedInvVariance == NULL) ||
        (yd != NULL && !crm__dnn_same_dims(&xDesc->d, &yd->d)) ||
        (dzd != NULL && !crm__dnn_same_dims(&xDesc->d, &dzd->d)))
        return CUDNN_STATUS_BAD_PARAM;
    crm__emu_rdlock();
    cudnnStatus_t st = crm__bn_init(&b, mode, &xDesc->d, x, &pd->d);
    if (st != CUDNN_STATUS_SUCCESS)
        goto out;
    if ((st = crm__dnn_bind(&v.dy, &dyDesc->d, dy)) || (st = crm__dnn_bind(&v.dx, &dxDesc->d, dx)) ||
        (st = crm__dnn_bind(&v.scale, &pd->d, bnScale)) || (st = crm__dnn_bind(&v.dscale, &pd->d, dBnScaleResult)) ||
        (st = crm__dnn_bind(&v.dbias, &pd->d, dBnBiasResult)) || (v.relu && (st = crm__dnn_bind(&v.y, &yd->d, y))) ||
        (v.add && (st = crm__dnn_bind(&v.dz, &dzd->d, dz))) ||
        (st = crm__bn_saved(&b, &pd->d, savedMean, savedInvVariance, epsilon)))
        goto free;
    int dt = xDesc->d.dtype;
    st = crm__bn_backward(&b, &v, crm__dnn_scalar(alphaDataDiff, dt), crm__dnn_scalar(betaDataDiff, dt),
                          crm__dnn_scalar(alphaParamDiff, dt), crm__dnn_scalar(betaParamDiff, dt));
free:
    crm__bn_free(&b);
out:
    crm__emu_unlock();
    return st;
}

CRM_EXPORT cudnnStatus_t cudnnBatchNormalizationBackward(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void *alphaDataDiff, const void *betaDataDiff,
    const void *alphaParamDiff, const void *betaParamDiff, const cudnnTensorDescriptor_t xDesc, const void *x,
    const cudnnTensorDescriptor_t dyDesc, const void *dy, const cudnnTensorDescriptor_t dxDesc, void *dx,
    const cudnnTensorDescriptor_t dBnScaleBiasDesc, const void *bnScale, void *dBnScaleResult, void *dBnBiasResult,
    double epsilon, const void *savedMean, const void *savedInvVariance)
{
    return crm__bn_back_call(handle, mode, alphaDataDiff, betaDataDiff, alphaParamDiff, betaParamDiff, xDesc, x, NULL,
                             NULL, dyDesc, dy, NULL, NULL, dxDesc, dx, dBnScaleBiasDesc, bnScale, dBnScaleResult,
                             dBnBiasResult, epsilon, savedMean, savedInvVariance);
}
