/* crm_emu_dnn_pool.c -- pooling of the emulated device's cuDNN: max and average
 * (padding counted or not), forward and backward, 1 to 6 spatial dimensions, any
 * strides. Padding never wins a max; the backward max pass routes each gradient to
 * the first maximum of its window in scan order (deterministic). */
#include "server/emu/crm_emu_dnn.h"

#include <math.h>
#include <stdlib.h>

/* One pooling call bound to its memory; y is the pooled side. */
typedef struct crm__pool {
    const crm_dnn_pdesc *p;
    crm__dview x, y;
} crm__pool;

/* Walks the window of output yi: calls visit for each tap inside the input with its
 * x index, and returns the number of such taps. */
typedef void (*crm__pool_visit)(const crm__pool *q, const int *xi, void *arg);

static int crm__pool_window(const crm__pool *q, const int *yi, crm__pool_visit visit, void *arg)
{
    int r[CRM_DNN_MAXSPATIAL] = {0}, xi[CRM_DNN_MAXDIM] = {yi[0], yi[1]}, n = 0;
    do {
        int ok = 1;
        for (int i = 0; i < q->p->nbdims && ok; i++) {
            xi[i + 2] = yi[i + 2] * q->p->stride[i] - q->p->pad[i] + r[i];
            ok = xi[i + 2] >= 0 && xi[i + 2] < q->x.d->dims[i + 2];
        }
        if (ok) {
            visit(q, xi, arg);
            n++;
        }
    } while (crm__dnn_next(q->p->nbdims, q->p->window, r));
    return n;
}

/* Window reduction state: sum, max and where the (first) max is. */
typedef struct crm__pool_acc {
    double sum, max;
    int argmax[CRM_DNN_MAXDIM];
} crm__pool_acc;

static void crm__pool_take(const crm__pool *q, const int *xi, void *arg)
{
    crm__pool_acc *a = arg;
    double v = crm__dnn_load(&q->x, crm__dnn_off(q->x.d, xi));
    a->sum += v;
    if (v > a->max) {
        a->max = v;
        memcpy(a->argmax, xi, sizeof a->argmax);
    }
}

/* Reduces the window of yi; returns the pooled value and fills acc. */
static double crm__pool_reduce(const crm__pool *q, const int *yi, crm__pool_acc *acc, int *count)
{
    int full = 1;
    acc->sum = 0;
    acc->max = -INFINITY;
    memset(acc->argmax, 0, sizeof acc->argmax);
    *count = crm__pool_window(q, yi, crm__pool_take, acc);
    for (int i = 0; i < q->p->nbdims; i++)
        full *= q->p->window[i];
    if (q->p->mode == CUDNN_POOLING_MAX || q->p->mode == CUDNN_POOLING_MAX_DETERMINISTIC)
        return *count ? acc->max : 0;
    if (q->p->mode == CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING)
        return acc->sum / full;
    *count = *count ? *count : 1;
    return acc->sum / *count;
}

static cudnnStatus_t crm__pool_setup(crm__pool *q, cudnnHandle_t h, const cudnnPoolingDescriptor_t pd,
                                     const void *alpha, const void *beta, const cudnnTensorDescriptor_t xd,
                                     const void *x, const cudnnTensorDescriptor_t yd, const void *y)
{
    int out[CRM_DNN_MAXDIM];
    if (!crm__dnn_handle_ok(h) || !pd || !alpha || !beta || !xd || !yd)
        return CUDNN_STATUS_BAD_PARAM;
    cudnnStatus_t st = crm_dnn_pool_check(&pd->d);
    if (st == CUDNN_STATUS_SUCCESS)
        st = crm_dnn_pool_out_dims(&pd->d, &xd->d, out);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    if (yd->d.nbdims != xd->d.nbdims)
        return CUDNN_STATUS_BAD_PARAM;
    for (int i = 0; i < yd->d.nbdims; i++)
        if (yd->d.dims[i] != out[i])
            return CUDNN_STATUS_BAD_PARAM;
    q->p = &pd->d;
    if ((st = crm__dnn_bind(&q->x, &xd->d, x)) != CUDNN_STATUS_SUCCESS)
        return st;
    return crm__dnn_bind(&q->y, &yd->d, y);
}

CRM_EXPORT cudnnStatus_t cudnnPoolingForward(cudnnHandle_t handle, const cudnnPoolingDescriptor_t poolingDesc,
                                             const void *alpha, const cudnnTensorDescriptor_t xDesc, const void *x,
                                             const void *beta, const cudnnTensorDescriptor_t yDesc, void *y)
{
    crm__pool q;
    crm__emu_rdlock();
    cudnnStatus_t st = crm__pool_setup(&q, handle, poolingDesc, alpha, beta, xDesc, x, yDesc, y);
    if (st == CUDNN_STATUS_SUCCESS) {
        int yi[CRM_DNN_MAXDIM] = {0}, count;
        double a = crm__dnn_scalar(alpha, yDesc->d.dtype), b = crm__dnn_scalar(beta, yDesc->d.dtype);
        crm__pool_acc acc;
        do
            crm__dnn_blend(&q.y, crm__dnn_off(q.y.d, yi), crm__pool_reduce(&q, yi, &acc, &count), a, b);
        while (crm__dnn_next(q.y.d->nbdims, q.y.d->dims, yi));
    }
    crm__emu_unlock();
    return st;
}

/* Dense row-major index of idx in dims (the scratch gradient buffer's layout). */
static int64_t crm__dense(int nb, const int *dims, const int *idx)
{
    int64_t o = 0;
    for (int i = 0; i < nb; i++)
        o = o * dims[i] + idx[i];
    return o;
}

/* Adds a share of one output gradient to a tap (average pooling). */
typedef struct crm__pool_share {
    double *grad;       /* dense dx scratch */
    double g;           /* share per tap */
} crm__pool_share;

static void crm__pool_give(const crm__pool *q, const int *xi, void *arg)
{
    crm__pool_share *s = arg;
    s->grad[crm__dense(q->x.d->nbdims, q->x.d->dims, xi)] += s->g;
}

/* Scatters every dy into a dense scratch copy of dx, then blends it into dx. */
CRM_EXPORT cudnnStatus_t cudnnPoolingBackward(cudnnHandle_t handle, const cudnnPoolingDescriptor_t poolingDesc,
                                              const void *alpha, const cudnnTensorDescriptor_t yDesc, const void *y,
                                              const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                              const cudnnTensorDescriptor_t xDesc, const void *x, const void *beta,
                                              const cudnnTensorDescriptor_t dxDesc, void *dx)
{
    crm__pool q;
    crm__dview vdy, vdx;
    if (!yDesc || !dyDesc || !dxDesc || !xDesc || !crm__dnn_same_dims(&yDesc->d, &dyDesc->d) ||
        !crm__dnn_same_dims(&xDesc->d, &dxDesc->d))
        return CUDNN_STATUS_BAD_PARAM;
    double *grad = calloc((size_t)crm_dnn_tensor_elems(&xDesc->d) + 1, sizeof *grad);
    if (grad == NULL)
        return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    crm__emu_rdlock();
    cudnnStatus_t st = crm__pool_setup(&q, handle, poolingDesc, alpha, beta, xDesc, x, yDesc, y);
    if (st == CUDNN_STATUS_SUCCESS && (st = crm__dnn_bind(&vdy, &dyDesc->d, dy)) == CUDNN_STATUS_SUCCESS)
        st = crm__dnn_bind(&vdx, &dxDesc->d, dx);
    if (st == CUDNN_STATUS_SUCCESS) {
        int yi[CRM_DNN_MAXDIM] = {0}, xi[CRM_DNN_MAXDIM] = {0}, count, full = 1;
        int is_max = poolingDesc->d.mode == CUDNN_POOLING_MAX || poolingDesc->d.mode == CUDNN_POOLING_MAX_DETERMINISTIC;
        crm__pool_acc acc;
        for (int i = 0; i < poolingDesc->d.nbdims; i++)
            full *= poolingDesc->d.window[i];
        do {
            double g = crm__dnn_load(&vdy, crm__dnn_off(vdy.d, yi));
            crm__pool_reduce(&q, yi, &acc, &count);
            if (is_max && acc.max > -INFINITY) {
                grad[crm__dense(xDesc->d.nbdims, xDesc->d.dims, acc.argmax)] += g;
            } else if (!is_max) {
                int div = poolingDesc->d.mode == CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING ? full : count;
                crm__pool_share s = {grad, g / div};
                crm__pool_window(&q, yi, crm__pool_give, &s);
            }
        } while (crm__dnn_next(q.y.d->nbdims, q.y.d->dims, yi));
        double a = crm__dnn_scalar(alpha, dxDesc->d.dtype), b = crm__dnn_scalar(beta, dxDesc->d.dtype);
        do
            crm__dnn_blend(&vdx, crm__dnn_off(vdx.d, xi), grad[crm__dense(xDesc->d.nbdims, xDesc->d.dims, xi)], a, b);
        while (crm__dnn_next(vdx.d->nbdims, vdx.d->dims, xi));
    }
    crm__emu_unlock();
    free(grad);
    return st;
}
