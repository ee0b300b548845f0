/* crm_emu_dnn_conv.c -- convolutions of the emulated device's cuDNN: forward,
 * backward data, backward filter and bias gradient by direct loops (reference code:
 * every output element is one dot product in double), grouped, padded, strided and
 * dilated, 1 to 3 spatial dimensions, any strides; and the algorithm queries.
 *
 * Every algorithm runs the same loops and needs no workspace; the FFT and Winograd
 * ones only where cuDNN documents that they apply (crm_emu_dnn_algo.c).
 */
#include "server/emu/crm_emu_dnn.h"

#define CRM__CONV_MAXSP 3 /* spatial dimensions the loops handle */

/* One convolution bound to its memory; x is the image, y the output, w the filter. */
typedef struct crm__conv {
    crm__dview x, w, y;         /* y stands for dy in the backward passes, x for dx */
    crm_dnn_tdesc wt;           /* the filter as a strided tensor */
    const crm_dnn_cdesc *c;
    int sp;                     /* spatial dimensions */
    int cg, kg;                 /* channels and filters per group */
} crm__conv;

/* Input coordinate of output o and filter tap r in spatial dimension i, or -1 if
 * it falls in the padding. */
static inline int crm__conv_in(const crm__conv *p, int i, int o, int r)
{
    int at = o * p->c->stride[i] - p->c->pad[i] + r * p->c->dilation[i];
    return at >= 0 && at < p->x.d->dims[i + 2] ? at : -1;
}

/* Filter tap stored for tap r: mirrored for true convolution, as is for cross-correlation. */
static inline int crm__conv_tap(const crm__conv *p, int i, int r)
{
    return p->c->mode == CUDNN_CONVOLUTION ? p->wt.dims[i + 2] - 1 - r : r;
}

/* Checks shapes and binds memory (lock held): every descriptor set, float or double
 * throughout, y's sizes what the convolution of x by w gives. */
static cudnnStatus_t crm__conv_setup(crm__conv *p, cudnnHandle_t h, const cudnnTensorDescriptor_t xd, const void *x,
                                     const cudnnFilterDescriptor_t wd, const void *w,
                                     const cudnnConvolutionDescriptor_t cd, const cudnnTensorDescriptor_t yd,
                                     const void *y)
{
    int out[CRM_DNN_MAXDIM];
    if (h == NULL || xd == NULL || wd == NULL || cd == NULL || yd == NULL)
        return CUDNN_STATUS_BAD_PARAM;
    cudnnStatus_t st = crm_dnn_conv_check(&cd->d);
    if (st == CUDNN_STATUS_SUCCESS)
        st = crm_dnn_conv_out_dims(&cd->d, &xd->d, &wd->d, out);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    for (int i = 0; i < yd->d.nbdims; i++)
        if (yd->d.nbdims != xd->d.nbdims || yd->d.dims[i] != out[i])
            return CUDNN_STATUS_BAD_PARAM;
    if (xd->d.dtype != yd->d.dtype || wd->d.dtype != xd->d.dtype)
        return CUDNN_STATUS_BAD_PARAM;
    if (cd->d.nbdims > CRM__CONV_MAXSP)
        return CUDNN_STATUS_NOT_SUPPORTED;
    p->c = &cd->d;
    p->sp = cd->d.nbdims;
    p->cg = wd->d.dims[1];
    p->kg = wd->d.dims[0] / cd->d.groups;
    crm_dnn_filter_as_tensor(&wd->d, &p->wt);
    if ((st = crm__dnn_bind(&p->x, &xd->d, x)) != CUDNN_STATUS_SUCCESS ||
        (st = crm__dnn_bind(&p->w, &p->wt, w)) != CUDNN_STATUS_SUCCESS ||
        (st = crm__dnn_bind(&p->y, &yd->d, y)) != CUDNN_STATUS_SUCCESS)
        return st;
    return CUDNN_STATUS_SUCCESS;
}

/* The convolution at output element yi: the sum over c of the group and taps r of
 * x[n,c,o*s-p+r*d] * w[k,c,tap(r)]. */
static double crm__conv_fwd_at(const crm__conv *p, const int *yi)
{
    int g = yi[1] / p->kg, xi[CRM_DNN_MAXDIM] = {yi[0]}, wi[CRM_DNN_MAXDIM] = {yi[1]};
    double acc = 0;
    for (int c = 0; c < p->cg; c++) {
        int r[CRM__CONV_MAXSP] = {0};
        xi[1] = g * p->cg + c;
        wi[1] = c;
        do {
            int ok = 1;
            for (int i = 0; i < p->sp && ok; i++) {
                xi[i + 2] = crm__conv_in(p, i, yi[i + 2], r[i]);
                wi[i + 2] = crm__conv_tap(p, i, r[i]);
                ok = xi[i + 2] >= 0;
            }
            if (ok)
                acc += crm__dnn_load(&p->x, crm__dnn_off(p->x.d, xi)) *
                       crm__dnn_load(&p->w, crm__dnn_off(&p->wt, wi));
        } while (crm__dnn_next(p->sp, p->wt.dims + 2, r));
    }
    return acc;
}

/* y = alpha * conv(x, w) + beta * y. */
static void crm__conv_fwd(const crm__conv *p, double alpha, double beta)
{
    int yi[CRM_DNN_MAXDIM] = {0};
    do {
        crm__dnn_blend(&p->y, crm__dnn_off(p->y.d, yi), crm__conv_fwd_at(p, yi), alpha, beta);
    } while (crm__dnn_next(p->y.d->nbdims, p->y.d->dims, yi));
}

/* dx[n,c,i] = alpha * sum over k of c's group and taps r with i = o*s-p+r*d of
 * dy[n,k,o] * w[k,c',tap(r)] + beta * dx (a gather: every dx element once). */
static void crm__conv_bwd_data(const crm__conv *p, double alpha, double beta)
{
    int xi[CRM_DNN_MAXDIM] = {0};
    do {
        int g = xi[1] / p->cg, yi[CRM_DNN_MAXDIM] = {xi[0]}, wi[CRM_DNN_MAXDIM] = {0, xi[1] % p->cg};
        double acc = 0;
        for (int k = g * p->kg; k < (g + 1) * p->kg; k++) {
            int r[CRM__CONV_MAXSP] = {0};
            yi[1] = wi[0] = k;
            do {
                int ok = 1;
                for (int i = 0; i < p->sp && ok; i++) {
                    int num = xi[i + 2] + p->c->pad[i] - r[i] * p->c->dilation[i];
                    yi[i + 2] = num / p->c->stride[i];
                    wi[i + 2] = crm__conv_tap(p, i, r[i]);
                    ok = num >= 0 && num % p->c->stride[i] == 0 && yi[i + 2] < p->y.d->dims[i + 2];
                }
                if (ok)
                    acc += crm__dnn_load(&p->y, crm__dnn_off(p->y.d, yi)) *
                           crm__dnn_load(&p->w, crm__dnn_off(&p->wt, wi));
            } while (crm__dnn_next(p->sp, p->wt.dims + 2, r));
        }
        crm__dnn_blend(&p->x, crm__dnn_off(p->x.d, xi), acc, alpha, beta);
    } while (crm__dnn_next(p->x.d->nbdims, p->x.d->dims, xi));
}

/* dw[k,c,q] = alpha * sum over n and outputs o of dy[n,k,o] * x[n,c',o*s-p+tap(q)*d] + beta * dw. */
static void crm__conv_bwd_filter(const crm__conv *p, double alpha, double beta)
{
    int wi[CRM_DNN_MAXDIM] = {0};
    do {
        int g = wi[0] / p->kg, xi[CRM_DNN_MAXDIM] = {0, g * p->cg + wi[1]}, yi[CRM_DNN_MAXDIM] = {0, wi[0]};
        double acc = 0;
        for (int n = 0; n < p->x.d->dims[0]; n++) {
            int o[CRM__CONV_MAXSP] = {0};
            xi[0] = yi[0] = n;
            do {
                int ok = 1;
                for (int i = 0; i < p->sp && ok; i++) {
                    yi[i + 2] = o[i];
                    xi[i + 2] = crm__conv_in(p, i, o[i], crm__conv_tap(p, i, wi[i + 2]));
                    ok = xi[i + 2] >= 0;
                }
                if (ok)
                    acc += crm__dnn_load(&p->y, crm__dnn_off(p->y.d, yi)) *
                           crm__dnn_load(&p->x, crm__dnn_off(p->x.d, xi));
            } while (crm__dnn_next(p->sp, p->y.d->dims + 2, o));
        }
        crm__dnn_blend(&p->w, crm__dnn_off(&p->wt, wi), acc, alpha, beta);
    } while (crm__dnn_next(p->wt.nbdims, p->wt.dims, wi));
}

/* Runs one pass: the shared checks, then the loops under the device lock. */
static cudnnStatus_t crm__conv_run(enum crm__conv_pass pass, cudnnHandle_t h, const void *alpha,
                                   const cudnnTensorDescriptor_t xd, const void *x, const cudnnFilterDescriptor_t wd,
                                   const void *w, const cudnnConvolutionDescriptor_t cd, int algo,
                                   const cudnnTensorDescriptor_t yd, const void *y, const void *beta)
{
    crm__conv p;
    if (!crm__dnn_handle_ok(h) || alpha == NULL || beta == NULL)
        return CUDNN_STATUS_BAD_PARAM;
    if (algo < 0 || algo >= crm__conv_algo_count(pass))
        return CUDNN_STATUS_BAD_PARAM;
    crm__emu_rdlock();
    cudnnStatus_t st = crm__conv_setup(&p, h, xd, x, wd, w, cd, yd, y);
    if (st == CUDNN_STATUS_SUCCESS && !crm__conv_algo_ok(pass, algo, &xd->d, &wd->d, &cd->d))
        st = CUDNN_STATUS_NOT_SUPPORTED;
    if (st == CUDNN_STATUS_SUCCESS) {
        int dt = pass == CRM__BWD_FILTER ? wd->d.dtype : pass == CRM__FWD ? yd->d.dtype : xd->d.dtype;
        double a = crm__dnn_scalar(alpha, dt), b = crm__dnn_scalar(beta, dt);
        if (pass == CRM__FWD)
            crm__conv_fwd(&p, a, b);
        else if (pass == CRM__BWD_DATA)
            crm__conv_bwd_data(&p, a, b);
        else
            crm__conv_bwd_filter(&p, a, b);
    }
    crm__emu_unlock();
    return st;
}

CRM_EXPORT cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t handle, const void *alpha,
                                                 const cudnnTensorDescriptor_t xDesc, const void *x,
                                                 const cudnnFilterDescriptor_t wDesc, const void *w,
                                                 const cudnnConvolutionDescriptor_t convDesc,
                                                 cudnnConvolutionFwdAlgo_t algo, void *workSpace,
                                                 size_t workSpaceSizeInBytes, const void *beta,
                                                 const cudnnTensorDescriptor_t yDesc, void *y)
{
    (void)workSpace, (void)workSpaceSizeInBytes; /* no algorithm needs one */
    return crm__conv_run(CRM__FWD, handle, alpha, xDesc, x, wDesc, w, convDesc, algo, yDesc, y, beta);
}

/* The rules cudnnConvolutionBiasActivationForward adds to the forward pass: z of
 * y's shape, bias 1xKx1.. (K: y's channels), RELU or (with the implicit precomputed
 * GEMM only) IDENTITY activation. */
static cudnnStatus_t crm__cba_args(const cudnnTensorDescriptor_t zd, const cudnnTensorDescriptor_t bd,
                                   const cudnnActivationDescriptor_t ad, const cudnnTensorDescriptor_t yd, int algo)
{
    if (zd == NULL || bd == NULL || ad == NULL || yd == NULL || crm_dnn_act_check(&ad->d) != CUDNN_STATUS_SUCCESS ||
        !crm__dnn_same_dims(&zd->d, &yd->d) || bd->d.nbdims != yd->d.nbdims)
        return CUDNN_STATUS_BAD_PARAM;
    for (int i = 0; i < bd->d.nbdims; i++)
        if (bd->d.dims[i] != (i == 1 ? yd->d.dims[1] : 1))
            return CUDNN_STATUS_BAD_PARAM;
    if (ad->d.mode != CUDNN_ACTIVATION_RELU &&
        (ad->d.mode != CUDNN_ACTIVATION_IDENTITY || algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM))
        return CUDNN_STATUS_NOT_SUPPORTED;
    return CUDNN_STATUS_SUCCESS;
}

/* y = act(alpha1 * conv(x, w) + alpha2 * z + bias), element by element, so z may be y. */
CRM_EXPORT cudnnStatus_t cudnnConvolutionBiasActivationForward(
    cudnnHandle_t handle, const void *alpha1, const cudnnTensorDescriptor_t xDesc, const void *x,
    const cudnnFilterDescriptor_t wDesc, const void *w, const cudnnConvolutionDescriptor_t convDesc,
    cudnnConvolutionFwdAlgo_t algo, void *workSpace, size_t workSpaceSizeInBytes, const void *alpha2,
    const cudnnTensorDescriptor_t zDesc, const void *z, const cudnnTensorDescriptor_t biasDesc, const void *bias,
    const cudnnActivationDescriptor_t activationDesc, const cudnnTensorDescriptor_t yDesc, void *y)
{
    crm__conv p;
    crm__dview vz, vb;
    (void)workSpace, (void)workSpaceSizeInBytes; /* no algorithm needs one */
    if (!crm__dnn_handle_ok(handle) || alpha1 == NULL || alpha2 == NULL || algo < 0 ||
        (int)algo >= crm__conv_algo_count(CRM__FWD))
        return CUDNN_STATUS_BAD_PARAM;
    cudnnStatus_t st = crm__cba_args(zDesc, biasDesc, activationDesc, yDesc, algo);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    double a1 = crm__dnn_scalar(alpha1, yDesc->d.dtype), a2 = crm__dnn_scalar(alpha2, yDesc->d.dtype);
    crm__emu_rdlock();
    if ((st = crm__conv_setup(&p, handle, xDesc, x, wDesc, w, convDesc, yDesc, y)) == CUDNN_STATUS_SUCCESS &&
        !crm__conv_algo_ok(CRM__FWD, algo, &xDesc->d, &wDesc->d, &convDesc->d))
        st = CUDNN_STATUS_NOT_SUPPORTED;
    if (st == CUDNN_STATUS_SUCCESS && (st = crm__dnn_bind(&vz, &zDesc->d, z)) == CUDNN_STATUS_SUCCESS &&
        (st = crm__dnn_bind(&vb, &biasDesc->d, bias)) == CUDNN_STATUS_SUCCESS) {
        int yi[CRM_DNN_MAXDIM] = {0}, bi[CRM_DNN_MAXDIM] = {0};
        do {
            bi[1] = yi[1];
            double v = a1 * crm__conv_fwd_at(&p, yi) + crm__dnn_load(&vb, crm__dnn_off(vb.d, bi));
            if (a2 != 0.0) /* z unread when alpha2 is 0, as cuDNN promises */
                v += a2 * crm__dnn_load(&vz, crm__dnn_off(vz.d, yi));
            crm__dnn_store(&p.y, crm__dnn_off(p.y.d, yi), crm__dnn_act(&activationDesc->d, v));
        } while (crm__dnn_next(p.y.d->nbdims, p.y.d->dims, yi));
    }
    crm__emu_unlock();
    return st;
}

CRM_EXPORT cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t handle, const void *alpha,
                                                      const cudnnFilterDescriptor_t wDesc, const void *w,
                                                      const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                                      const cudnnConvolutionDescriptor_t convDesc,
                                                      cudnnConvolutionBwdDataAlgo_t algo, void *workSpace,
                                                      size_t workSpaceSizeInBytes, const void *beta,
                                                      const cudnnTensorDescriptor_t dxDesc, void *dx)
{
    (void)workSpace, (void)workSpaceSizeInBytes;
    return crm__conv_run(CRM__BWD_DATA, handle, alpha, dxDesc, dx, wDesc, w, convDesc, algo, dyDesc, dy, beta);
}

CRM_EXPORT cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t handle, const void *alpha,
                                                        const cudnnTensorDescriptor_t xDesc, const void *x,
                                                        const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                                        const cudnnConvolutionDescriptor_t convDesc,
                                                        cudnnConvolutionBwdFilterAlgo_t algo, void *workSpace,
                                                        size_t workSpaceSizeInBytes, const void *beta,
                                                        const cudnnFilterDescriptor_t dwDesc, void *dw)
{
    (void)workSpace, (void)workSpaceSizeInBytes;
    return crm__conv_run(CRM__BWD_FILTER, handle, alpha, xDesc, x, dwDesc, dw, convDesc, algo, dyDesc, dy, beta);
}

/* db[1,k,1..] = alpha * sum of dy[n,k,...] over n and space + beta * db. */
CRM_EXPORT cudnnStatus_t cudnnConvolutionBackwardBias(cudnnHandle_t handle, const void *alpha,
                                                      const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                                      const void *beta, const cudnnTensorDescriptor_t dbDesc,
                                                      void *db)
{
    crm__dview vy, vb;
    if (!crm__dnn_handle_ok(handle) || alpha == NULL || beta == NULL || dyDesc == NULL || dbDesc == NULL)
        return CUDNN_STATUS_BAD_PARAM;
    const crm_dnn_tdesc *t = &dyDesc->d, *b = &dbDesc->d;
    if (t->nbdims == 0 || b->nbdims != t->nbdims || b->dtype != t->dtype)
        return CUDNN_STATUS_BAD_PARAM;
    for (int i = 0; i < b->nbdims; i++)
        if (b->dims[i] != (i == 1 ? t->dims[1] : 1))
            return CUDNN_STATUS_BAD_PARAM;
    crm__emu_rdlock();
    cudnnStatus_t st = crm__dnn_bind(&vy, t, dy);
    if (st == CUDNN_STATUS_SUCCESS)
        st = crm__dnn_bind(&vb, b, db);
    if (st == CUDNN_STATUS_SUCCESS) {
        double a = crm__dnn_scalar(alpha, b->dtype), be = crm__dnn_scalar(beta, b->dtype);
        for (int k = 0; k < t->dims[1]; k++) {
            int yi[CRM_DNN_MAXDIM] = {0}, sub[CRM_DNN_MAXDIM], bi[CRM_DNN_MAXDIM] = {0, k};
            double acc = 0;
            memcpy(sub, t->dims, sizeof sub);
            sub[1] = 1; /* every index but the channel */
            do {
                yi[1] = k;
                acc += crm__dnn_load(&vy, crm__dnn_off(t, yi));
                yi[1] = 0;
            } while (crm__dnn_next(t->nbdims, sub, yi));
            crm__dnn_blend(&vb, crm__dnn_off(b, bi), acc, a, be);
        }
    }
    crm__emu_unlock();
    return st;
}

/* --- algorithm queries --- */

/* Fills perf with every algorithm of the pass: the ones the loops run first
 * (status SUCCESS, no workspace, deterministic), then the others (NOT_SUPPORTED).
 * Shapes are checked as the compute call would. */
static cudnnStatus_t crm__conv_query(enum crm__conv_pass pass, cudnnHandle_t h, const cudnnTensorDescriptor_t xd,
                                     const cudnnFilterDescriptor_t wd, const cudnnConvolutionDescriptor_t cd,
                                     const cudnnTensorDescriptor_t yd, int requested, int *returned,
                                     cudnnConvolutionFwdAlgoPerf_t *perf)
{
    int out[CRM_DNN_MAXDIM], n = 0;
    if (!crm__dnn_handle_ok(h) || xd == NULL || wd == NULL || cd == NULL || yd == NULL || returned == NULL ||
        perf == NULL || requested < 1)
        return CUDNN_STATUS_BAD_PARAM;
    cudnnStatus_t st = crm_dnn_conv_out_dims(&cd->d, &xd->d, &wd->d, out);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    for (int i = 0; i < yd->d.nbdims; i++)
        if (yd->d.nbdims != xd->d.nbdims || yd->d.dims[i] != out[i])
            return CUDNN_STATUS_BAD_PARAM;
    for (int pass2 = 0; pass2 < 2; pass2++) {
        for (int a = 0; a < crm__conv_algo_count(pass) && n < requested; a++) {
            int ok = crm__conv_algo_ok(pass, a, &xd->d, &wd->d, &cd->d) && cd->d.nbdims <= CRM__CONV_MAXSP;
            if (ok != (pass2 == 0))
                continue;
            perf[n] = (cudnnConvolutionFwdAlgoPerf_t){
                .algo = (cudnnConvolutionFwdAlgo_t)a,
                .status = ok ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_NOT_SUPPORTED,
                .time = ok ? 1.0f + (float)n : -1.0f,
                .memory = 0,
                .determinism = CUDNN_DETERMINISTIC,
                .mathType = (cudnnMathType_t)cd->d.math,
            };
            n++;
        }
    }
    *returned = n;
    return CUDNN_STATUS_SUCCESS;
}

/* The three perf structs of cuDNN have one layout; the queries fill them as one. */
_Static_assert(sizeof(cudnnConvolutionFwdAlgoPerf_t) == sizeof(cudnnConvolutionBwdDataAlgoPerf_t) &&
                   sizeof(cudnnConvolutionFwdAlgoPerf_t) == sizeof(cudnnConvolutionBwdFilterAlgoPerf_t),
               "cuDNN algorithm perf structs differ");

CRM_EXPORT cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t srcDesc, const cudnnFilterDescriptor_t filterDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t destDesc, const int requestedAlgoCount,
    int *returnedAlgoCount, cudnnConvolutionFwdAlgoPerf_t *perfResults)
{
    return crm__conv_query(CRM__FWD, handle, srcDesc, filterDesc, convDesc, destDesc, requestedAlgoCount,
                           returnedAlgoCount, perfResults);
}

CRM_EXPORT cudnnStatus_t cudnnFindConvolutionForwardAlgorithm(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const cudnnFilterDescriptor_t wDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t yDesc, const int requestedAlgoCount,
    int *returnedAlgoCount, cudnnConvolutionFwdAlgoPerf_t *perfResults)
{
    return crm__conv_query(CRM__FWD, handle, xDesc, wDesc, convDesc, yDesc, requestedAlgoCount, returnedAlgoCount,
                           perfResults);
}

CRM_EXPORT cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t filterDesc, const cudnnTensorDescriptor_t diffDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t gradDesc, const int requestedAlgoCount,
    int *returnedAlgoCount, cudnnConvolutionBwdDataAlgoPerf_t *perfResults)
{
    return crm__conv_query(CRM__BWD_DATA, handle, gradDesc, filterDesc, convDesc, diffDesc, requestedAlgoCount,
                           returnedAlgoCount, (cudnnConvolutionFwdAlgoPerf_t *)perfResults);
}

CRM_EXPORT cudnnStatus_t cudnnFindConvolutionBackwardDataAlgorithm(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc, const cudnnTensorDescriptor_t dyDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t dxDesc, const int requestedAlgoCount,
    int *returnedAlgoCount, cudnnConvolutionBwdDataAlgoPerf_t *perfResults)
{
    return crm__conv_query(CRM__BWD_DATA, handle, dxDesc, wDesc, convDesc, dyDesc, requestedAlgoCount,
                           returnedAlgoCount, (cudnnConvolutionFwdAlgoPerf_t *)perfResults);
}

CRM_EXPORT cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithm_v7(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t srcDesc, const cudnnTensorDescriptor_t diffDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnFilterDescriptor_t gradDesc, const int requestedAlgoCount,
    int *returnedAlgoCount, cudnnConvolutionBwdFilterAlgoPerf_t *perfResults)
{
    return crm__conv_query(CRM__BWD_FILTER, handle, srcDesc, gradDesc, convDesc, diffDesc, requestedAlgoCount,
                           returnedAlgoCount, (cudnnConvolutionFwdAlgoPerf_t *)perfResults);
}

CRM_EXPORT cudnnStatus_t cudnnFindConvolutionBackwardFilterAlgorithm(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const cudnnTensorDescriptor_t dyDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnFilterDescriptor_t dwDesc, const int requestedAlgoCount,
    int *returnedAlgoCount, cudnnConvolutionBwdFilterAlgoPerf_t *perfResults)
{
    return crm__conv_query(CRM__BWD_FILTER, handle, xDesc, dwDesc, convDesc, dyDesc, requestedAlgoCount,
                           returnedAlgoCount, (cudnnConvolutionFwdAlgoPerf_t *)perfResults);
}

/* Workspace of a pass: 0 for the algorithms the loops run, NOT_SUPPORTED otherwise. */
static cudnnStatus_t crm__conv_ws(enum crm__conv_pass pass, cudnnHandle_t h, const cudnnTensorDescriptor_t xd,
                                  const cudnnFilterDescriptor_t wd, const cudnnConvolutionDescriptor_t cd,
                                  const cudnnTensorDescriptor_t yd, int algo, size_t *size)
{
    int out[CRM_DNN_MAXDIM];
    if (!crm__dnn_handle_ok(h) || xd == NULL || wd == NULL || cd == NULL || yd == NULL || size == NULL ||
        algo < 0 || algo >= crm__conv_algo_count(pass))
        return CUDNN_STATUS_BAD_PARAM;
    cudnnStatus_t st = crm_dnn_conv_out_dims(&cd->d, &xd->d, &wd->d, out);
    for (int i = 0; st == CUDNN_STATUS_SUCCESS && i < yd->d.nbdims; i++)
        if (yd->d.nbdims != xd->d.nbdims || yd->d.dims[i] != out[i])
            st = CUDNN_STATUS_BAD_PARAM;
    if (st == CUDNN_STATUS_SUCCESS && !crm__conv_algo_ok(pass, algo, &xd->d, &wd->d, &cd->d))
        st = CUDNN_STATUS_NOT_SUPPORTED;
    if (st == CUDNN_STATUS_SUCCESS)
        *size = 0;
    return st;
}

CRM_EXPORT cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t handle,
                                                                 const cudnnTensorDescriptor_t xDesc,
                                                                 const cudnnFilterDescriptor_t wDesc,
                                                                 const cudnnConvolutionDescriptor_t convDesc,
                                                                 const cudnnTensorDescriptor_t yDesc,
                                                                 cudnnConvolutionFwdAlgo_t algo, size_t *sizeInBytes)
{
    return crm__conv_ws(CRM__FWD, handle, xDesc, wDesc, convDesc, yDesc, algo, sizeInBytes);
}

CRM_EXPORT cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(cudnnHandle_t handle,
                                                                      const cudnnFilterDescriptor_t wDesc,
                                                                      const cudnnTensorDescriptor_t dyDesc,
                                                                      const cudnnConvolutionDescriptor_t convDesc,
                                                                      const cudnnTensorDescriptor_t dxDesc,
                                                                      cudnnConvolutionBwdDataAlgo_t algo,
                                                                      size_t *sizeInBytes)
{
    return crm__conv_ws(CRM__BWD_DATA, handle, dxDesc, wDesc, convDesc, dyDesc, algo, sizeInBytes);
}

CRM_EXPORT cudnnStatus_t cudnnGetConvolutionBackwardFilterWorkspaceSize(cudnnHandle_t handle,
                                                                        const cudnnTensorDescriptor_t xDesc,
                                                                        const cudnnTensorDescriptor_t dyDesc,
                                                                        const cudnnConvolutionDescriptor_t convDesc,
                                                                        const cudnnFilterDescriptor_t gradDesc,
                                                                        cudnnConvolutionBwdFilterAlgo_t algo,
                                                                        size_t *sizeInBytes)
{
    return crm__conv_ws(CRM__BWD_FILTER, handle, xDesc, gradDesc, convDesc, dyDesc, algo, sizeInBytes);
}

static cudnnStatus_t crm__max_count(cudnnHandle_t h, int *count, int n)
{
    if (!crm__dnn_handle_ok(h) || count == NULL)
        return CUDNN_STATUS_BAD_PARAM;
    *count = n;
    return CUDNN_STATUS_SUCCESS;
}

CRM_EXPORT cudnnStatus_t cudnnGetConvolutionForwardAlgorithmMaxCount(cudnnHandle_t handle, int *count)
{
    return crm__max_count(handle, count, CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
}

CRM_EXPORT cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithmMaxCount(cudnnHandle_t handle, int *count)
{
    return crm__max_count(handle, count, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT);
}

CRM_EXPORT cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(cudnnHandle_t handle, int *count)
{
    return crm__max_count(handle, count, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT);
}
