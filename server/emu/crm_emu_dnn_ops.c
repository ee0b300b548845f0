/* crm_emu_dnn_ops.c -- element-wise operations of the emulated device's cuDNN:
 * add/op/set/scale/transform tensor, activation forward and backward, softmax
 * forward and backward. Reference code over arbitrary strides, in double. */
#include "server/emu/crm_emu_dnn.h"

#include <math.h>
#include <stdlib.h>

/* 1 when every dimension of b equals c's or is 1 (cuDNN's broadcast rule). */
static int crm__dnn_broadcasts(const crm_dnn_tdesc *b, const crm_dnn_tdesc *c)
{
    if (b->nbdims != c->nbdims)
        return 0;
    for (int i = 0; i < c->nbdims; i++)
        if (b->dims[i] != c->dims[i] && b->dims[i] != 1)
            return 0;
    return 1;
}

/* Offset in b (broadcast over c) of c's index idx. */
static int64_t crm__dnn_bcast_off(const crm_dnn_tdesc *b, const int *idx)
{
    int64_t o = 0;
    for (int i = 0; i < b->nbdims; i++)
        o += (int64_t)(b->dims[i] == 1 ? 0 : idx[i]) * b->strides[i];
    return o;
}

/* Element-wise kernels share one driver: out = alpha * f(a, b) + beta * out over out's
 * index space; a and b (either may be NULL) are broadcast onto out. */
typedef double (*crm__dnn_fn)(double a, double b, const void *arg);

static void crm__dnn_map(const crm__dview *out, const crm__dview *a, const crm__dview *b, crm__dnn_fn fn,
                         const void *arg, double alpha, double beta)
{
    int idx[CRM_DNN_MAXDIM] = {0};
    do {
        double va = a ? crm__dnn_load(a, crm__dnn_bcast_off(a->d, idx)) : 0;
        double vb = b ? crm__dnn_load(b, crm__dnn_bcast_off(b->d, idx)) : 0;
        crm__dnn_blend(out, crm__dnn_off(out->d, idx), fn(va, vb, arg), alpha, beta);
    } while (crm__dnn_next(out->d->nbdims, out->d->dims, idx));
}

static double crm__fn_first(double a, double b, const void *arg)
{
    (void)b, (void)arg;
    return a;
}

/* Binds up to three tensors (NULL descriptors skipped) under the lock already held. */
static cudnnStatus_t crm__dnn_bind3(crm__dview *v, const cudnnTensorDescriptor_t d0, const void *p0,
                                    const cudnnTensorDescriptor_t d1, const void *p1,
                                    const cudnnTensorDescriptor_t d2, const void *p2)
{
    const cudnnTensorDescriptor_t ds[3] = {d0, d1, d2};
    const void *ps[3] = {p0, p1, p2};
    for (int i = 0; i < 3; i++) {
        if (ds[i] == NULL)
            continue;
        cudnnStatus_t st = crm__dnn_bind(&v[i], &ds[i]->d, ps[i]);
        if (st != CUDNN_STATUS_SUCCESS)
            return st;
    }
    return CUDNN_STATUS_SUCCESS;
}

CRM_EXPORT cudnnStatus_t cudnnAddTensor(cudnnHandle_t handle, const void *alpha, const cudnnTensorDescriptor_t aDesc,
                                        const void *A, const void *beta, const cudnnTensorDescriptor_t cDesc, void *C)
{
    crm__dview v[3];
    if (!crm__dnn_handle_ok(handle) || !alpha || !beta || !aDesc || !cDesc || !crm__dnn_broadcasts(&aDesc->d, &cDesc->d))
        return CUDNN_STATUS_BAD_PARAM;
    crm__emu_rdlock();
    cudnnStatus_t st = crm__dnn_bind3(v, cDesc, C, aDesc, A, NULL, NULL);
    if (st == CUDNN_STATUS_SUCCESS)
        crm__dnn_map(&v[0], &v[1], NULL, crm__fn_first, NULL, crm__dnn_scalar(alpha, cDesc->d.dtype),
                     crm__dnn_scalar(beta, cDesc->d.dtype));
    crm__emu_unlock();
    return st;
}

/* op(alpha1 * a, alpha2 * b); SQRT and NOT use a alone (NOT is 1 - a, logical
 * negation of 0/1 data). */
typedef struct crm__op_arg {
    int op;
    double alpha1, alpha2;
} crm__op_arg;

static double crm__fn_op(double a, double b, const void *arg)
{
    const crm__op_arg *o = arg;
    a *= o->alpha1;
    b *= o->alpha2;
    switch (o->op) {
    case CUDNN_OP_TENSOR_ADD: return a + b;
    case CUDNN_OP_TENSOR_MUL: return a * b;
    case CUDNN_OP_TENSOR_MIN: return a < b ? a : b;
    case CUDNN_OP_TENSOR_MAX: return a > b ? a : b;
    case CUDNN_OP_TENSOR_SQRT: return sqrt(a);
    default: return 1.0 - a;
    }
}

CRM_EXPORT cudnnStatus_t cudnnOpTensor(cudnnHandle_t handle, const cudnnOpTensorDescriptor_t opTensorDesc,
                                       const void *alpha1, const cudnnTensorDescriptor_t aDesc, const void *A,
                                       const void *alpha2, const cudnnTensorDescriptor_t bDesc, const void *B,
                                       const void *beta, const cudnnTensorDescriptor_t cDesc, void *C)
{
    crm__dview v[3];
    if (!crm__dnn_handle_ok(handle) || !opTensorDesc || !alpha1 || !alpha2 || !beta || !aDesc || !cDesc)
        return CUDNN_STATUS_BAD_PARAM;
    int unary = opTensorDesc->d.op == CUDNN_OP_TENSOR_SQRT || opTensorDesc->d.op == CUDNN_OP_TENSOR_NOT;
    if (crm_dnn_op_check(&opTensorDesc->d) != CUDNN_STATUS_SUCCESS || !crm__dnn_same_dims(&aDesc->d, &cDesc->d) ||
        (!unary && (bDesc == NULL || !crm__dnn_broadcasts(&bDesc->d, &cDesc->d))))
        return CUDNN_STATUS_BAD_PARAM;
    int dt = cDesc->d.dtype;
    crm__op_arg arg = {opTensorDesc->d.op, crm__dnn_scalar(alpha1, dt), crm__dnn_scalar(alpha2, dt)};
    crm__emu_rdlock();
    cudnnStatus_t st = crm__dnn_bind3(v, cDesc, C, aDesc, A, unary ? NULL : bDesc, B);
    if (st == CUDNN_STATUS_SUCCESS)
        crm__dnn_map(&v[0], &v[1], unary ? NULL : &v[2], crm__fn_op, &arg, 1.0, crm__dnn_scalar(beta, dt));
    crm__emu_unlock();
    return st;
}

/* Writes alpha * (scale ? y : 1) into every element of y; the worker of Set and Scale. */
static cudnnStatus_t crm__dnn_fill(cudnnHandle_t handle, const cudnnTensorDescriptor_t yDesc, void *y,
                                   const void *value, int scale)
{
    crm__dview v;
    if (!crm__dnn_handle_ok(handle) || yDesc == NULL || value == NULL)
        return CUDNN_STATUS_BAD_PARAM;
    crm__emu_rdlock();
    cudnnStatus_t st = crm__dnn_bind(&v, &yDesc->d, y);
    if (st == CUDNN_STATUS_SUCCESS) {
        double a = crm__dnn_scalar(value, yDesc->d.dtype);
        int idx[CRM_DNN_MAXDIM] = {0};
        do {
            int64_t off = crm__dnn_off(v.d, idx);
            crm__dnn_store(&v, off, scale ? a * crm__dnn_load(&v, off) : a);
        } while (crm__dnn_next(v.d->nbdims, v.d->dims, idx));
    }
    crm__emu_unlock();
    return st;
}

CRM_EXPORT cudnnStatus_t cudnnSetTensor(cudnnHandle_t handle, const cudnnTensorDescriptor_t yDesc, void *y,
                                        const void *valuePtr)
{
    return crm__dnn_fill(handle, yDesc, y, valuePtr, 0);
}

CRM_EXPORT cudnnStatus_t cudnnScaleTensor(cudnnHandle_t handle, const cudnnTensorDescriptor_t yDesc, void *y,
                                          const void *alpha)
{
    return crm__dnn_fill(handle, yDesc, y, alpha, 1);
}

/* y = alpha * x + beta * y between layouts (and float/double) of the same sizes. */
CRM_EXPORT cudnnStatus_t cudnnTransformTensor(cudnnHandle_t handle, const void *alpha,
                                              const cudnnTensorDescriptor_t xDesc, const void *x, const void *beta,
                                              const cudnnTensorDescriptor_t yDesc, void *y)
{
    crm__dview v[3];
    if (!crm__dnn_handle_ok(handle) || !alpha || !beta || !xDesc || !yDesc || !crm__dnn_same_dims(&xDesc->d, &yDesc->d))
        return CUDNN_STATUS_BAD_PARAM;
    crm__emu_rdlock();
    cudnnStatus_t st = crm__dnn_bind3(v, yDesc, y, xDesc, x, NULL, NULL);
    if (st == CUDNN_STATUS_SUCCESS)
        crm__dnn_map(&v[0], &v[1], NULL, crm__fn_first, NULL, crm__dnn_scalar(alpha, yDesc->d.dtype),
                     crm__dnn_scalar(beta, yDesc->d.dtype));
    crm__emu_unlock();
    return st;
}

/* --- activations --- */

static double crm__sigmoid(double x)
{
    return 1.0 / (1.0 + exp(-x));
}

double crm__dnn_act(const crm_dnn_adesc *a, double x)
{
    switch (a->mode) {
    case CUDNN_ACTIVATION_SIGMOID: return crm__sigmoid(x);
    case CUDNN_ACTIVATION_RELU: return x > 0 ? x : 0;
    case CUDNN_ACTIVATION_TANH: return tanh(x);
    case CUDNN_ACTIVATION_CLIPPED_RELU: return x > 0 ? (x < a->coef ? x : a->coef) : 0;
    case CUDNN_ACTIVATION_ELU: return x > 0 ? x : a->coef * (exp(x) - 1.0);
    case CUDNN_ACTIVATION_SWISH: return x * crm__sigmoid(a->swish_beta * x);
    default: return x; /* identity */
    }
}

static double crm__fn_act(double x, double unused, const void *arg)
{
    (void)unused;
    return crm__dnn_act(arg, x);
}

/* f'(x) * dy, from x (and y = f(x) where that is how cuDNN defines it). */
static double crm__act_grad(const crm_dnn_adesc *a, double x, double y, double dy)
{
    switch (a->mode) {
    case CUDNN_ACTIVATION_SIGMOID: return dy * y * (1.0 - y);
    case CUDNN_ACTIVATION_RELU: return x > 0 ? dy : 0;
    case CUDNN_ACTIVATION_TANH: return dy * (1.0 - y * y);
    case CUDNN_ACTIVATION_CLIPPED_RELU: return x > 0 && x < a->coef ? dy : 0;
    case CUDNN_ACTIVATION_ELU: return x > 0 ? dy : dy * a->coef * exp(x);
    case CUDNN_ACTIVATION_SWISH: {
        double s = crm__sigmoid(a->swish_beta * x);
        return dy * (s + a->swish_beta * x * s * (1.0 - s));
    }
    default: return dy;
    }
}

CRM_EXPORT cudnnStatus_t cudnnActivationForward(cudnnHandle_t handle, cudnnActivationDescriptor_t activationDesc,
                                                const void *alpha, const cudnnTensorDescriptor_t xDesc, const void *x,
                                                const void *beta, const cudnnTensorDescriptor_t yDesc, void *y)
{
    crm__dview v[3];
    if (!crm__dnn_handle_ok(handle) || !activationDesc || !alpha || !beta || !xDesc || !yDesc ||
        crm_dnn_act_check(&activationDesc->d) != CUDNN_STATUS_SUCCESS || !crm__dnn_same_dims(&xDesc->d, &yDesc->d))
        return CUDNN_STATUS_BAD_PARAM;
    crm__emu_rdlock();
    cudnnStatus_t st = crm__dnn_bind3(v, yDesc, y, xDesc, x, NULL, NULL);
    if (st == CUDNN_STATUS_SUCCESS)
        crm__dnn_map(&v[0], &v[1], NULL, crm__fn_act, &activationDesc->d, crm__dnn_scalar(alpha, yDesc->d.dtype),
                     crm__dnn_scalar(beta, yDesc->d.dtype));
    crm__emu_unlock();
    return st;
}

CRM_EXPORT cudnnStatus_t cudnnActivationBackward(cudnnHandle_t handle, cudnnActivationDescriptor_t activationDesc,
                                                 const void *alpha, const cudnnTensorDescriptor_t yDesc, const void *y,
                                                 const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                                 const cudnnTensorDescriptor_t xDesc, const void *x, const void *beta,
                                                 const cudnnTensorDescriptor_t dxDesc, void *dx)
{
    crm__dview v[3], vdx;
    if (!crm__dnn_handle_ok(handle) || !activationDesc || !alpha || !beta || !yDesc || !dyDesc || !xDesc || !dxDesc ||
        crm_dnn_act_check(&activationDesc->d) != CUDNN_STATUS_SUCCESS || !crm__dnn_same_dims(&xDesc->d, &yDesc->d) ||
        !crm__dnn_same_dims(&xDesc->d, &dyDesc->d) || !crm__dnn_same_dims(&xDesc->d, &dxDesc->d))
        return CUDNN_STATUS_BAD_PARAM;
    crm__emu_rdlock();
    cudnnStatus_t st = crm__dnn_bind3(v, xDesc, x, yDesc, y, dyDesc, dy);
    if (st == CUDNN_STATUS_SUCCESS)
        st = crm__dnn_bind(&vdx, &dxDesc->d, dx);
    if (st == CUDNN_STATUS_SUCCESS) {
        double a = crm__dnn_scalar(alpha, dxDesc->d.dtype), b = crm__dnn_scalar(beta, dxDesc->d.dtype);
        int idx[CRM_DNN_MAXDIM] = {0};
        do {
            double g = crm__act_grad(&activationDesc->d, crm__dnn_load(&v[0], crm__dnn_off(v[0].d, idx)),
                                     crm__dnn_load(&v[1], crm__dnn_off(v[1].d, idx)),
                                     crm__dnn_load(&v[2], crm__dnn_off(v[2].d, idx)));
            crm__dnn_blend(&vdx, crm__dnn_off(vdx.d, idx), g, a, b);
        } while (crm__dnn_next(vdx.d->nbdims, vdx.d->dims, idx));
    }
    crm__emu_unlock();
    return st;
}

/* --- softmax --- */

/* The index sets softmax normalises over: for each "outer" index (n, or n and the
 * spatial position in channel mode) the "inner" index set (C x spatial, or C). */
typedef struct crm__smax {
    int nb;
    int outer[CRM_DNN_MAXDIM]; /* dims iterated outside: 1 where inner */
    int inner[CRM_DNN_MAXDIM]; /* dims iterated inside: 1 where outer */
} crm__smax;

static void crm__smax_init(crm__smax *s, const crm_dnn_tdesc *t, int mode)
{
    s->nb = t->nbdims;
    for (int i = 0; i < t->nbdims; i++) {
        int in = mode == CUDNN_SOFTMAX_MODE_INSTANCE ? i >= 1 : i == 1;
        s->inner[i] = in ? t->dims[i] : 1;
        s->outer[i] = in ? 1 : t->dims[i];
    }
}

/* idx = outer + inner, element-wise (one of each pair is always 0). */
static void crm__smax_idx(int nb, const int *o, const int *in, int *idx)
{
    for (int i = 0; i < nb; i++)
        idx[i] = o[i] + in[i];
}

/* One outer slice of the forward pass: accurate subtracts the max, log gives log-softmax. */
static void crm__smax_fwd_slice(const crm__smax *s, const int *o, const crm__dview *x, const crm__dview *y, int algo,
                                double alpha, double beta)
{
    int in[CRM_DNN_MAXDIM] = {0}, idx[CRM_DNN_MAXDIM];
    double mx = -INFINITY, sum = 0;
    if (algo != CUDNN_SOFTMAX_FAST) {
        do {
            crm__smax_idx(s->nb, o, in, idx);
            double v = crm__dnn_load(x, crm__dnn_off(x->d, idx));
            mx = v > mx ? v : mx;
        } while (crm__dnn_next(s->nb, s->inner, in));
    } else {
        mx = 0;
    }
    do {
        crm__smax_idx(s->nb, o, in, idx);
        sum += exp(crm__dnn_load(x, crm__dnn_off(x->d, idx)) - mx);
    } while (crm__dnn_next(s->nb, s->inner, in));
    do {
        crm__smax_idx(s->nb, o, in, idx);
        double v = crm__dnn_load(x, crm__dnn_off(x->d, idx)) - mx;
        double r = algo == CUDNN_SOFTMAX_LOG ? v - log(sum) : exp(v) / sum;
        crm__dnn_blend(y, crm__dnn_off(y->d, idx), r, alpha, beta);
    } while (crm__dnn_next(s->nb, s->inner, in));
}

/* One outer slice of the backward pass: dx = y * (dy - sum(dy * y)) for softmax,
 * dx = dy - exp(y) * sum(dy) for log-softmax. */
static void crm__smax_bwd_slice(const crm__smax *s, const int *o, const crm__dview *y, const crm__dview *dy,
                                const crm__dview *dx, int algo, double alpha, double beta)
{
    int in[CRM_DNN_MAXDIM] = {0}, idx[CRM_DNN_MAXDIM];
    double dot = 0;
    do {
        crm__smax_idx(s->nb, o, in, idx);
        double g = crm__dnn_load(dy, crm__dnn_off(dy->d, idx));
        dot += algo == CUDNN_SOFTMAX_LOG ? g : g * crm__dnn_load(y, crm__dnn_off(y->d, idx));
    } while (crm__dnn_next(s->nb, s->inner, in));
    do {
        crm__smax_idx(s->nb, o, in, idx);
        double g = crm__dnn_load(dy, crm__dnn_off(dy->d, idx)), v = crm__dnn_load(y, crm__dnn_off(y->d, idx));
        double r = algo == CUDNN_SOFTMAX_LOG ? g - exp(v) * dot : v * (g - dot);
        crm__dnn_blend(dx, crm__dnn_off(dx->d, idx), r, alpha, beta);
    } while (crm__dnn_next(s->nb, s->inner, in));
}

static int crm__smax_args_ok(int algo, int mode)
{
    return algo >= CUDNN_SOFTMAX_FAST && algo <= CUDNN_SOFTMAX_LOG &&
           (mode == CUDNN_SOFTMAX_MODE_INSTANCE || mode == CUDNN_SOFTMAX_MODE_CHANNEL);
}

CRM_EXPORT cudnnStatus_t cudnnSoftmaxForward(cudnnHandle_t handle, cudnnSoftmaxAlgorithm_t algo,
                                             cudnnSoftmaxMode_t mode, const void *alpha,
                                             const cudnnTensorDescriptor_t xDesc, const void *x, const void *beta,
                                             const cudnnTensorDescriptor_t yDesc, void *y)
{
    crm__dview v[3];
    crm__smax s;
    if (!crm__dnn_handle_ok(handle) || !crm__smax_args_ok(algo, mode) || !alpha || !beta || !xDesc || !yDesc ||
        !crm__dnn_same_dims(&xDesc->d, &yDesc->d))
        return CUDNN_STATUS_BAD_PARAM;
    crm__emu_rdlock();
    cudnnStatus_t st = crm__dnn_bind3(v, xDesc, x, yDesc, y, NULL, NULL);
    if (st == CUDNN_STATUS_SUCCESS) {
        int o[CRM_DNN_MAXDIM] = {0};
        double a = crm__dnn_scalar(alpha, yDesc->d.dtype), b = crm__dnn_scalar(beta, yDesc->d.dtype);
        crm__smax_init(&s, &xDesc->d, mode);
        do
            crm__smax_fwd_slice(&s, o, &v[0], &v[1], algo, a, b);
        while (crm__dnn_next(s.nb, s.outer, o));
    }
    crm__emu_unlock();
    return st;
}

CRM_EXPORT cudnnStatus_t cudnnSoftmaxBackward(cudnnHandle_t handle, cudnnSoftmaxAlgorithm_t algo,
                                              cudnnSoftmaxMode_t mode, const void *alpha,
                                              const cudnnTensorDescriptor_t yDesc, const void *y,
                                              const cudnnTensorDescriptor_t dyDesc, const void *dy, const void *beta,
                                              const cudnnTensorDescriptor_t dxDesc, void *dx)
{
    crm__dview v[3];
    crm__smax s;
    if (!crm__dnn_handle_ok(handle) || !crm__smax_args_ok(algo, mode) || !alpha || !beta || !yDesc || !dyDesc ||
        !dxDesc || !crm__dnn_same_dims(&yDesc->d, &dyDesc->d) || !crm__dnn_same_dims(&yDesc->d, &dxDesc->d))
        return CUDNN_STATUS_BAD_PARAM;
    crm__emu_rdlock();
    cudnnStatus_t st = crm__dnn_bind3(v, yDesc, y, dyDesc, dy, dxDesc, dx);
    if (st == CUDNN_STATUS_SUCCESS) {
        int o[CRM_DNN_MAXDIM] = {0};
        double a = crm__dnn_scalar(alpha, dxDesc->d.dtype), b = crm__dnn_scalar(beta, dxDesc->d.dtype);
        crm__smax_init(&s, &yDesc->d, mode);
        do
            crm__smax_bwd_slice(&s, o, &v[0], &v[1], &v[2], algo, a, b);
        while (crm__dnn_next(s.nb, s.outer, o));
    }
    crm__emu_unlock();
    return st;
}
