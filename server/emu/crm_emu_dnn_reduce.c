/* crm_emu_dnn_reduce.c -- tensor reductions of the emulated device's cuDNN
 * (cudnnReduceTensor) and their size queries, by direct loops in double.
 *
 * C has A's dimension count; each dimension of C is A's (kept) or 1 (reduced).
 * Each element of C is alpha * (the reduction of the A elements it covers) +
 * beta * C. With FLATTENED_INDICES, MIN, MAX and AMAX also write, per element of C
 * and as a 32-bit int, the position of the chosen element among those it covers
 * (row-major over the reduced dimensions). No operation needs a workspace.
 */
#include <math.h>
#include "server/emu/crm_emu_dnn.h"

/* One reduction in progress. */
typedef struct crm__red {
    double acc;                  /* sum, product, or extreme so far */
    int at;                      /* position of the extreme */
    int nan;                     /* MIN, MAX, AMAX with PROPAGATE_NAN met a NaN */
} crm__red;

static crm__red crm__red_start(int op)
{
    crm__red r = {0, 0, 0};
    if (op == CUDNN_REDUCE_TENSOR_MUL || op == CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS)
        r.acc = 1;
    else if (op == CUDNN_REDUCE_TENSOR_MIN)
        r.acc = INFINITY;
    else if (op == CUDNN_REDUCE_TENSOR_MAX)
        r.acc = -INFINITY;
    return r;
}

/* Adds element v, the at-th the reduction covers. MIN, MAX and AMAX skip a NaN, or
 * with PROPAGATE_NAN settle on the first one. */
static void crm__red_add(crm__red *r, const crm_dnn_rdesc *d, double v, int at)
{
    switch (d->op) {
    case CUDNN_REDUCE_TENSOR_ADD: case CUDNN_REDUCE_TENSOR_AVG: r->acc += v; break;
    case CUDNN_REDUCE_TENSOR_MUL: r->acc *= v; break;
    case CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS: r->acc *= v != 0 ? v : 1; break;
    case CUDNN_REDUCE_TENSOR_NORM1: r->acc += fabs(v); break;
    case CUDNN_REDUCE_TENSOR_NORM2: r->acc += v * v; break;
    default: { /* MIN, MAX, AMAX */
        double w = d->op == CUDNN_REDUCE_TENSOR_AMAX ? fabs(v) : v;
        if (r->nan)
            break;
        if (isnan(w)) {
            if (d->nan == CUDNN_PROPAGATE_NAN)
                r->nan = 1, r->at = at;
        } else if (d->op == CUDNN_REDUCE_TENSOR_MIN ? w < r->acc : w > r->acc) {
            r->acc = w;
            r->at = at;
        }
    }
    }
}

static double crm__red_value(const crm__red *r, const crm_dnn_rdesc *d, int64_t count)
{
    if (r->nan)
        return NAN;
    if (d->op == CUDNN_REDUCE_TENSOR_AVG)
        return r->acc / (double)count;
    return d->op == CUDNN_REDUCE_TENSOR_NORM2 ? sqrt(r->acc) : r->acc;
}

/* The rules both queries and the reduction apply. */
static cudnnStatus_t crm__red_args(cudnnHandle_t h, const cudnnReduceTensorDescriptor_t r,
                                   const cudnnTensorDescriptor_t a, const cudnnTensorDescriptor_t c)
{
    if (!crm__dnn_handle_ok(h) || r == NULL || a == NULL || c == NULL || r->d.op < 0 ||
        crm_dnn_reduce_check(&r->d) != CUDNN_STATUS_SUCCESS)
        return CUDNN_STATUS_BAD_PARAM;
    return crm_dnn_reduce_shapes(&a->d, &c->d);
}

static size_t crm__red_indices_bytes(const crm_dnn_rdesc *r, const crm_dnn_tdesc *c)
{
    return crm_dnn_reduce_has_indices(r) ? (size_t)crm_dnn_tensor_elems(c) * sizeof(int) : 0;
}

/* Both size queries check the same arguments; the emulated reduction needs no workspace. */
static cudnnStatus_t crm__red_size(cudnnHandle_t handle, const cudnnReduceTensorDescriptor_t r,
                                   const cudnnTensorDescriptor_t a, const cudnnTensorDescriptor_t c,
                                   size_t *size, int indices)
{
    cudnnStatus_t st = size ? crm__red_args(handle, r, a, c) : CUDNN_STATUS_BAD_PARAM;
    if (st == CUDNN_STATUS_SUCCESS)
        *size = indices ? crm__red_indices_bytes(&r->d, &c->d) : 0;
    return st;
}

CRM_EXPORT cudnnStatus_t cudnnGetReductionIndicesSize(cudnnHandle_t handle,
                                                      const cudnnReduceTensorDescriptor_t reduceTensorDesc,
                                                      const cudnnTensorDescriptor_t aDesc,
                                                      const cudnnTensorDescriptor_t cDesc, size_t *sizeInBytes)
{
    return crm__red_size(handle, reduceTensorDesc, aDesc, cDesc, sizeInBytes, 1);
}

CRM_EXPORT cudnnStatus_t cudnnGetReductionWorkspaceSize(cudnnHandle_t handle,
                                                        const cudnnReduceTensorDescriptor_t reduceTensorDesc,
                                                        const cudnnTensorDescriptor_t aDesc,
                                                        const cudnnTensorDescriptor_t cDesc, size_t *sizeInBytes)
{
    return crm__red_size(handle, reduceTensorDesc, aDesc, cDesc, sizeInBytes, 0);
}

/* Reduces the A elements that C's element ci covers; returns how many there were. */
static int64_t crm__red_one(const crm__dview *a, const crm_dnn_tdesc *c, const int *ci, const crm_dnn_rdesc *d,
                            crm__red *r)
{
    int span[CRM_DNN_MAXDIM], ri[CRM_DNN_MAXDIM] = {0}, ai[CRM_DNN_MAXDIM];
    int64_t n = 0;
    for (int i = 0; i < c->nbdims; i++)
        span[i] = c->dims[i] == a->d->dims[i] ? 1 : a->d->dims[i];
    do {
        for (int i = 0; i < c->nbdims; i++)
            ai[i] = ci[i] + ri[i];
        crm__red_add(r, d, crm__dnn_load(a, crm__dnn_off(a->d, ai)), (int)n++);
    } while (crm__dnn_next(c->nbdims, span, ri));
    return n;
}

CRM_EXPORT cudnnStatus_t cudnnReduceTensor(cudnnHandle_t handle, const cudnnReduceTensorDescriptor_t reduceTensorDesc,
                                           void *indices, size_t indicesSizeInBytes, void *workspace,
                                           size_t workspaceSizeInBytes, const void *alpha,
                                           const cudnnTensorDescriptor_t aDesc, const void *A, const void *beta,
                                           const cudnnTensorDescriptor_t cDesc, void *C)
{
    crm__dview va, vc;
    (void)workspace, (void)workspaceSizeInBytes; /* none needed */
    cudnnStatus_t st = crm__red_args(handle, reduceTensorDesc, aDesc, cDesc);
    if (st != CUDNN_STATUS_SUCCESS || alpha == NULL || beta == NULL)
        return st != CUDNN_STATUS_SUCCESS ? st : CUDNN_STATUS_BAD_PARAM;
    const crm_dnn_rdesc *d = &reduceTensorDesc->d;
    size_t want = crm__red_indices_bytes(d, &cDesc->d);
    if (want != 0 && d->itype != CUDNN_32BIT_INDICES)
        return CUDNN_STATUS_NOT_SUPPORTED;
    if (want != 0 && (indices == NULL || indicesSizeInBytes < want))
        return CUDNN_STATUS_BAD_PARAM;
    double a = crm__dnn_scalar(alpha, cDesc->d.dtype), b = crm__dnn_scalar(beta, cDesc->d.dtype);
    crm__emu_rdlock();
    if ((st = crm__dnn_bind(&va, &aDesc->d, A)) == CUDNN_STATUS_SUCCESS &&
        (st = crm__dnn_bind(&vc, &cDesc->d, C)) == CUDNN_STATUS_SUCCESS &&
        want != 0 && !crm__mem_range(indices, want, NULL))
        st = CUDNN_STATUS_EXECUTION_FAILED;
    if (st == CUDNN_STATUS_SUCCESS) {
        int ci[CRM_DNN_MAXDIM] = {0};
        int64_t k = 0;
        do {
            crm__red r = crm__red_start(d->op);
            int64_t n = crm__red_one(&va, &cDesc->d, ci, d, &r);
            crm__dnn_blend(&vc, crm__dnn_off(vc.d, ci), crm__red_value(&r, d, n), a, b);
            if (want != 0)
                ((int *)indices)[k] = r.at;
            k++;
        } while (crm__dnn_next(cDesc->d.nbdims, cDesc->d.dims, ci));
    }
    crm__emu_unlock();
    return st;
}
