/* crm_emu_dnn_ctc.c -- the CTC loss on the emulated device: the descriptor
 * functions (common/crm_dnn_ctc_api.c.inc), the workspace queries (it needs none)
 * and cudnnCTCLoss, by the forward-backward recursions of Graves et al. (2006) in
 * log space, in double.
 *
 * For sequence n with T_n steps and labels l (extended with blanks to l', of length
 * S = 2L + 1), y_t(k) is the probability of symbol k at step t: the softmax of the
 * input over the alphabet (CUDNN_LOSS_NORMALIZATION_SOFTMAX), or the input itself
 * (NONE). alpha and beta are the summed probabilities of the paths' prefixes and
 * suffixes through l'_s at t; the cost is -ln p(l), and the gradient with respect
 * to the unnormalised input is y_t(k) - sum over s with l'_s = k of
 * alpha_t(s) beta_t(s) / (y_t(k) p(l)), 0 for the steps past T_n. A sequence that
 * no path can spell (L plus its repeats beyond T_n: out of bound) costs infinity
 * and its gradient is zeroed or left as it is, as the descriptor's grad mode says.
 */
#include <math.h>
#include <stdlib.h>
#include "server/emu/crm_emu_dnn.h"

#include "common/crm_dnn_ctc_api.c.inc"

CRM_EXPORT cudnnStatus_t cudnnGetCTCLossWorkspaceSize(cudnnHandle_t handle, const cudnnTensorDescriptor_t probsDesc,
                                                      const cudnnTensorDescriptor_t gradientsDesc, const int *labels,
                                                      const int *labelLengths, const int *inputLengths,
                                                      cudnnCTCLossAlgo_t algo, cudnnCTCLossDescriptor_t ctcLossDesc,
                                                      size_t *sizeInBytes)
{
    size_t nlabels;
    (void)gradientsDesc, (void)algo;
    if (!crm__dnn_handle_ok(handle) || probsDesc == NULL || ctcLossDesc == NULL || sizeInBytes == NULL ||
        labels == NULL || labelLengths == NULL || inputLengths == NULL ||
        !crm_dnn_ctc_shape_ok(probsDesc->d.dims, probsDesc->d.nbdims))
        return CUDNN_STATUS_BAD_PARAM;
    const int *d = probsDesc->d.dims;
    cudnnStatus_t st = crm_dnn_ctc_arrays_check(labels, labelLengths, inputLengths, d[0], d[1], d[2], &nlabels);
    if (st == CUDNN_STATUS_SUCCESS)
        *sizeInBytes = 0;
    return st;
}

CRM_EXPORT cudnnStatus_t cudnnGetCTCLossWorkspaceSize_v8(cudnnHandle_t handle, cudnnCTCLossAlgo_t algo,
                                                         cudnnCTCLossDescriptor_t ctcLossDesc,
                                                         const cudnnTensorDescriptor_t probsDesc,
                                                         const cudnnTensorDescriptor_t gradientsDesc,
                                                         size_t *sizeInBytes)
{
    (void)algo, (void)gradientsDesc;
    if (!crm__dnn_handle_ok(handle) || probsDesc == NULL || ctcLossDesc == NULL || sizeInBytes == NULL ||
        !crm_dnn_ctc_shape_ok(probsDesc->d.dims, probsDesc->d.nbdims))
        return CUDNN_STATUS_BAD_PARAM;
    *sizeInBytes = 0;
    return CUDNN_STATUS_SUCCESS;
}

static double crm__lse(double a, double b)
{
    if (a == -INFINITY)
        return b;
    if (b == -INFINITY)
        return a;
    double m = a > b ? a : b;
    return m + log(exp(a - m) + exp(b - m));
}

/* One sequence's problem and scratch. */
typedef struct crm__ctc_seq {
    int T, A, L, S;              /* its steps, the alphabet, labels, extended labels */
    const int *label;
    double *logy, *alpha, *beta; /* T x A, T x S, T x S */
    double *occ;                 /* A: one step's summed occupancies */
} crm__ctc_seq;

static int crm__ext(const crm__ctc_seq *q, int s)
{
    return (s & 1) ? q->label[s >> 1] : 0;
}

/* 1 when the path may skip from s - 2 to s (s a label differing from l'_{s-2}). */
static int crm__skip(const crm__ctc_seq *q, int s)
{
    return s >= 2 && crm__ext(q, s) != 0 && crm__ext(q, s) != crm__ext(q, s - 2);
}

/* ln y_t(k) of sequence n, from the input's view. */
static void crm__ctc_logy(crm__ctc_seq *q, const crm__dview *p, int n, int softmax)
{
    const int *st = p->d->strides;
    for (int t = 0; t < q->T; t++) {
        double *row = q->logy + (size_t)t * q->A, norm = -INFINITY;
        for (int k = 0; k < q->A; k++) {
            double x = crm__dnn_load(p, (int64_t)t * st[0] + (int64_t)n * st[1] + (int64_t)k * st[2]);
            row[k] = softmax ? x : (x > 0 ? log(x) : -INFINITY);
            norm = crm__lse(norm, row[k]);
        }
        for (int k = 0; softmax && k < q->A; k++)
            row[k] -= norm;
    }
}

/* alpha and beta; returns ln p(l). */
static double crm__ctc_recurse(crm__ctc_seq *q)
{
    int T = q->T, S = q->S;
    for (size_t i = 0; i < (size_t)T * S; i++)
        q->alpha[i] = q->beta[i] = -INFINITY;
    for (int s = 0; s < S && s < 2; s++)
        q->alpha[s] = q->logy[crm__ext(q, s)];
    for (int t = 1; t < T; t++)
        for (int s = 0; s < S; s++) {
            const double *prev = q->alpha + (size_t)(t - 1) * S;
            double a = prev[s];
            if (s >= 1)
                a = crm__lse(a, prev[s - 1]);
            if (crm__skip(q, s))
                a = crm__lse(a, prev[s - 2]);
            q->alpha[(size_t)t * S + s] = a + q->logy[(size_t)t * q->A + crm__ext(q, s)];
        }
    for (int s = S - 1; s >= 0 && s >= S - 2; s--)
        q->beta[(size_t)(T - 1) * S + s] = q->logy[(size_t)(T - 1) * q->A + crm__ext(q, s)];
    for (int t = T - 2; t >= 0; t--)
        for (int s = 0; s < S; s++) {
            const double *next = q->beta + (size_t)(t + 1) * S;
            double b = next[s];
            if (s + 1 < S)
                b = crm__lse(b, next[s + 1]);
            if (s + 2 < S && crm__skip(q, s + 2))
                b = crm__lse(b, next[s + 2]);
            q->beta[(size_t)t * S + s] = b + q->logy[(size_t)t * q->A + crm__ext(q, s)];
        }
    const double *last = q->alpha + (size_t)(T - 1) * S;
    return crm__lse(last[S - 1], S > 1 ? last[S - 2] : -INFINITY);
}

/* 1 when no path of T steps spells the labels (L plus its repeats beyond T). */
static int crm__ctc_oob(const crm__ctc_seq *q)
{
    int need = q->L;
    for (int i = 1; i < q->L; i++)
        need += q->label[i] == q->label[i - 1];
    return need > q->T;
}

/* The gradient of sequence n at every step of the tensor (Tmax of them). */
static void crm__ctc_grad(const crm__ctc_seq *q, double lnp, int oob, const crm__dview *g, int n, int tmax)
{
    const int *st = g->d->strides;
    double *occ = q->occ;
    for (int t = 0; t < tmax; t++) {
        for (int k = 0; k < q->A; k++)
            occ[k] = -INFINITY;
        for (int s = 0; t < q->T && !oob && s < q->S; s++)
            occ[crm__ext(q, s)] =
                crm__lse(occ[crm__ext(q, s)], q->alpha[(size_t)t * q->S + s] + q->beta[(size_t)t * q->S + s]);
        for (int k = 0; k < q->A; k++) {
            double v = 0.0;
            if (t < q->T && !oob) {
                double ly = q->logy[(size_t)t * q->A + k];
                v = exp(ly) - (occ[k] == -INFINITY ? 0.0 : exp(occ[k] - ly - lnp));
            }
            crm__dnn_store(g, (int64_t)t * st[0] + (int64_t)n * st[1] + (int64_t)k * st[2], v);
        }
    }
}

/* Scratch for the longest sequence of a T x A problem (one block, freed with logy). */
static int crm__ctc_scratch(crm__ctc_seq *q, int T, int A)
{
    size_t ts = (size_t)T * (2 * CRM_DNN_CTC_MAX_LABEL + 1), ta = (size_t)T * A;
    if ((q->logy = malloc((ta + 2 * ts + (size_t)A) * sizeof(double))) == NULL)
        return -1;
    q->alpha = q->logy + ta;
    q->beta = q->alpha + ts;
    q->occ = q->beta + ts;
    q->A = A;
    return 0;
}

/* Every sequence's cost and (g not NULL) gradient; caller holds the lock. */
static void crm__ctc_run(crm__ctc_seq *q, const crm__dview *p, const crm__dview *cost, const crm__dview *g,
                         const int *labels, const int *lengths, const int *inputs, const crm_dnn_ctcdesc *c)
{
    const int *d = p->d->dims;
    for (int n = 0, off = 0; n < d[1]; off += lengths[n++]) {
        q->T = inputs[n];
        q->L = lengths[n];
        q->S = 2 * q->L + 1;
        q->label = labels + off;
        crm__ctc_logy(q, p, n, c->norm == CUDNN_LOSS_NORMALIZATION_SOFTMAX);
        double lnp = crm__ctc_recurse(q);
        int oob = crm__ctc_oob(q);
        crm__dnn_store(cost, n, oob ? INFINITY : -lnp);
        if (g != NULL && (!oob || c->grad == CUDNN_CTC_ZERO_OOB_GRADIENTS))
            crm__ctc_grad(q, lnp, oob, g, n, d[0]);
    }
}

/* The argument rules: a T x N x A float problem, its gradients (when asked for) of
 * the same shape, a valid descriptor and host arrays. */
static cudnnStatus_t crm__ctc_args(cudnnHandle_t h, const cudnnTensorDescriptor_t pd, const int *labels,
                                   const int *lengths, const int *inputs, const void *costs,
                                   const cudnnTensorDescriptor_t gd, const void *grads, cudnnCTCLossDescriptor_t cd)
{
    size_t nlabels;
    if (!crm__dnn_handle_ok(h) || pd == NULL || cd == NULL || costs == NULL || labels == NULL || lengths == NULL ||
        inputs == NULL || !crm_dnn_ctc_shape_ok(pd->d.dims, pd->d.nbdims) ||
        (grads != NULL && (gd == NULL || !crm__dnn_same_dims(&pd->d, &gd->d))))
        return CUDNN_STATUS_BAD_PARAM;
    cudnnStatus_t st = crm_dnn_ctc_check(&cd->d);
    if (st == CUDNN_STATUS_SUCCESS && (pd->d.dtype != CUDNN_DATA_FLOAT || (grads && gd->d.dtype != CUDNN_DATA_FLOAT)))
        st = CUDNN_STATUS_NOT_SUPPORTED;
    const int *d = pd->d.dims;
    return st != CUDNN_STATUS_SUCCESS ? st : crm_dnn_ctc_arrays_check(labels, lengths, inputs, d[0], d[1], d[2], &nlabels);
}

CRM_EXPORT cudnnStatus_t cudnnCTCLoss(cudnnHandle_t handle, const cudnnTensorDescriptor_t probsDesc, const void *probs,
                                      const int hostLabels[], const int hostLabelLengths[],
                                      const int hostInputLengths[], void *costs,
                                      const cudnnTensorDescriptor_t gradientsDesc, void *gradients,
                                      cudnnCTCLossAlgo_t algo, cudnnCTCLossDescriptor_t ctcLossDesc, void *workspace,
                                      size_t workSpaceSizeInBytes)
{
    crm__ctc_seq q;
    crm__dview vp, vc, vg;
    (void)algo, (void)workspace, (void)workSpaceSizeInBytes; /* no workspace needed */
    cudnnStatus_t st = crm__ctc_args(handle, probsDesc, hostLabels, hostLabelLengths, hostInputLengths, costs,
                                     gradientsDesc, gradients, ctcLossDesc);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    const int *d = probsDesc->d.dims;
    const crm_dnn_tdesc cd = {.dtype = CUDNN_DATA_FLOAT, .nbdims = 3, .dims = {d[1], 1, 1}, .strides = {1, 1, 1}};
    if (crm__ctc_scratch(&q, d[0], d[2]) != 0)
        return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    crm__emu_rdlock();
    if ((st = crm__dnn_bind(&vp, &probsDesc->d, probs)) == CUDNN_STATUS_SUCCESS &&
        (st = crm__dnn_bind(&vc, &cd, costs)) == CUDNN_STATUS_SUCCESS &&
        (gradients == NULL || (st = crm__dnn_bind(&vg, &gradientsDesc->d, gradients)) == CUDNN_STATUS_SUCCESS))
        crm__ctc_run(&q, &vp, &vc, gradients ? &vg : NULL, hostLabels, hostLabelLengths, hostInputLengths,
                     &ctcLossDesc->d);
    crm__emu_unlock();
    free(q.logy);
    return st;
}
