/* crm_emu_dnn_lrn.c -- local response normalisation across channels on the emulated
 * device (cudnnLRNCrossChannelForward/Backward), by direct loops in double:
 *
 *   s_c = k + alpha / n * sum over c' in c's window of x_c'^2,   y_c = x_c * s_c^-beta
 *
 * where c's window runs from c - floor((n-1)/2) to c + n-1-floor((n-1)/2), clipped to
 * the tensor. The gradient follows from that definition:
 *
 *   dx_j = dy_j * s_j^-beta - 2 * alpha * beta / n * x_j * sum over i whose window
 *          holds j of dy_i * x_i * s_i^(-beta-1)
 */
#include <math.h>
#include "server/emu/crm_emu_dnn.h"

/* s at the element idx (idx[1] is the channel) of x. */
static double crm__lrn_s(const crm_dnn_ldesc *l, const crm__dview *x, const int *at)
{
    int idx[CRM_DNN_MAXDIM], c = at[1], nc = x->d->dims[1];
    double sum = 0;
    for (int i = 0; i < x->d->nbdims; i++)
        idx[i] = at[i];
    for (int j = c - crm_dnn_lrn_behind(l); j <= c + crm_dnn_lrn_ahead(l); j++) {
        if (j < 0 || j >= nc)
            continue;
        idx[1] = j;
        double v = crm__dnn_load(x, crm__dnn_off(x->d, idx));
        sum += v * v;
    }
    return l->k + l->alpha / l->n * sum;
}

/* The argument rules both passes share: a live handle, a set descriptor, the one
 * mode cuDNN has, scaling factors, and tensors of one shape. */
static cudnnStatus_t crm__lrn_args(cudnnHandle_t h, cudnnLRNDescriptor_t l, cudnnLRNMode_t mode, const void *alpha,
                                   const void *beta, const cudnnTensorDescriptor_t a, const cudnnTensorDescriptor_t b)
{
    if (!crm__dnn_handle_ok(h) || l == NULL || alpha == NULL || beta == NULL || a == NULL || b == NULL ||
        mode != CUDNN_LRN_CROSS_CHANNEL_DIM1 || crm_dnn_lrn_check(&l->d) != CUDNN_STATUS_SUCCESS ||
        !crm__dnn_same_dims(&a->d, &b->d))
        return CUDNN_STATUS_BAD_PARAM;
    return CUDNN_STATUS_SUCCESS;
}

CRM_EXPORT cudnnStatus_t cudnnLRNCrossChannelForward(cudnnHandle_t handle, cudnnLRNDescriptor_t normDesc,
                                                     cudnnLRNMode_t lrnMode, const void *alpha,
                                                     const cudnnTensorDescriptor_t xDesc, const void *x,
                                                     const void *beta, const cudnnTensorDescriptor_t yDesc, void *y)
{
    crm__dview vx, vy;
    cudnnStatus_t st = crm__lrn_args(handle, normDesc, lrnMode, alpha, beta, xDesc, yDesc);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    const crm_dnn_ldesc *l = &normDesc->d;
    double a = crm__dnn_scalar(alpha, yDesc->d.dtype), b = crm__dnn_scalar(beta, yDesc->d.dtype);
    crm__emu_rdlock();
    if ((st = crm__dnn_bind(&vx, &xDesc->d, x)) == CUDNN_STATUS_SUCCESS &&
        (st = crm__dnn_bind(&vy, &yDesc->d, y)) == CUDNN_STATUS_SUCCESS) {
        int idx[CRM_DNN_MAXDIM] = {0};
        do {
            double xv = crm__dnn_load(&vx, crm__dnn_off(vx.d, idx));
            crm__dnn_blend(&vy, crm__dnn_off(vy.d, idx), xv * pow(crm__lrn_s(l, &vx, idx), -l->beta), a, b);
        } while (crm__dnn_next(vy.d->nbdims, vy.d->dims, idx));
    }
    crm__emu_unlock();
    return st;
}

/* dx at idx: the formula above, its sum over the channels i whose window holds j. */
static double crm__lrn_grad(const crm_dnn_ldesc *l, const crm__dview *x, const crm__dview *dy, const int *at)
{
    int idx[CRM_DNN_MAXDIM], j = at[1], nc = x->d->dims[1];
    double sum = 0;
    for (int i = 0; i < x->d->nbdims; i++)
        idx[i] = at[i];
    for (int i = j - crm_dnn_lrn_ahead(l); i <= j + crm_dnn_lrn_behind(l); i++) {
        if (i < 0 || i >= nc)
            continue;
        idx[1] = i;
        double s = crm__lrn_s(l, x, idx);
        sum += crm__dnn_load(dy, crm__dnn_off(dy->d, idx)) * crm__dnn_load(x, crm__dnn_off(x->d, idx)) *
               pow(s, -l->beta - 1.0);
    }
    double xj = crm__dnn_load(x, crm__dnn_off(x->d, at)), dyj = crm__dnn_load(dy, crm__dnn_off(dy->d, at));
    return dyj * pow(crm__lrn_s(l, x, at), -l->beta) - 2.0 * l->alpha * l->beta / l->n * xj * sum;
}

CRM_EXPORT cudnnStatus_t cudnnLRNCrossChannelBackward(cudnnHandle_t handle, cudnnLRNDescriptor_t normDesc,
                                                      cudnnLRNMode_t lrnMode, const void *alpha,
                                                      const cudnnTensorDescriptor_t yDesc, const void *y,
                                                      const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                                      const cudnnTensorDescriptor_t xDesc, const void *x,
                                                      const void *beta, const cudnnTensorDescriptor_t dxDesc,
                                                      void *dx)
{
    crm__dview vy, vdy, vx, vdx;
    cudnnStatus_t st = crm__lrn_args(handle, normDesc, lrnMode, alpha, beta, xDesc, dxDesc);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    if (yDesc == NULL || dyDesc == NULL || !crm__dnn_same_dims(&yDesc->d, &xDesc->d) ||
        !crm__dnn_same_dims(&dyDesc->d, &xDesc->d))
        return CUDNN_STATUS_BAD_PARAM;
    double a = crm__dnn_scalar(alpha, dxDesc->d.dtype), b = crm__dnn_scalar(beta, dxDesc->d.dtype);
    crm__emu_rdlock();
    if ((st = crm__dnn_bind(&vy, &yDesc->d, y)) == CUDNN_STATUS_SUCCESS && /* y: checked, s comes from x */
        (st = crm__dnn_bind(&vdy, &dyDesc->d, dy)) == CUDNN_STATUS_SUCCESS &&
        (st = crm__dnn_bind(&vx, &xDesc->d, x)) == CUDNN_STATUS_SUCCESS &&
        (st = crm__dnn_bind(&vdx, &dxDesc->d, dx)) == CUDNN_STATUS_SUCCESS) {
        int idx[CRM_DNN_MAXDIM] = {0};
        do {
            crm__dnn_blend(&vdx, crm__dnn_off(vdx.d, idx), crm__lrn_grad(&normDesc->d, &vx, &vdy, idx), a, b);
        } while (crm__dnn_next(vdx.d->nbdims, vdx.d->dims, idx));
    }
    crm__emu_unlock();
    return st;
}
