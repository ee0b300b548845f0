/* crm_emu_dnn_st.c -- spatial transformers on the emulated device: the affine grid
 * generator and the bilinear sampler, forward and backward, by direct loops in
 * double (cudnnSpatialTf*).
 *
 * The grid generator maps output pixel (h, w) of image n to
 *
 *   (gx, gy) = theta_n (xs_w, ys_h, 1),   xs_w = -1 + 2 w / (W - 1), ys_h likewise,
 *
 * the corners of the image at -1 and 1 (a size of 1 sits at 0). The sampler reads
 * input x at ix = (gx + 1) (Win - 1) / 2, iy = (gy + 1) (Hin - 1) / 2, interpolating
 * its four neighbours bilinearly, a neighbour outside the image counting 0; its
 * backward pass scatters dy into dx with the same weights and gives the grid's
 * gradient, both blended with their own scaling factors.
 */
#include <math.h>
#include <stdlib.h>
#include "server/emu/crm_emu_dnn.h"

/* The normalised coordinate of pixel i of n. */
static double crm__st_coord(int i, int n)
{
    return n > 1 ? -1.0 + 2.0 * i / (n - 1) : 0.0;
}

/* A set descriptor and a live handle, or BAD_PARAM. */
static cudnnStatus_t crm__st_args(cudnnHandle_t h, const cudnnSpatialTransformerDescriptor_t s)
{
    if (!crm__dnn_handle_ok(h) || s == NULL || s->d.sampler < 0)
        return CUDNN_STATUS_BAD_PARAM;
    return crm_dnn_st_check(&s->d);
}

/* Binds theta or the grid (which) of s at p to v; caller holds the lock. */
static cudnnStatus_t crm__st_view(const crm_dnn_sdesc *s, enum crm_dnn_st_array which, crm_dnn_tdesc *t,
                                  crm__dview *v, const void *p)
{
    crm_dnn_st_array(s, which, t);
    return crm__dnn_bind(v, t, p);
}

/* Checks the arguments and binds theta and the grid of a grid generator call;
 * takes the lock, which the caller releases when this succeeds. */
static cudnnStatus_t crm__st_begin(cudnnHandle_t h, const cudnnSpatialTransformerDescriptor_t s, crm_dnn_tdesc t[2],
                                   crm__dview *theta, const void *pt, crm__dview *grid, const void *pg)
{
    cudnnStatus_t st = crm__st_args(h, s);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    crm__emu_rdlock();
    if ((st = crm__st_view(&s->d, CRM_DNN_ST_THETA, &t[0], theta, pt)) != CUDNN_STATUS_SUCCESS ||
        (st = crm__st_view(&s->d, CRM_DNN_ST_GRID, &t[1], grid, pg)) != CUDNN_STATUS_SUCCESS)
        crm__emu_unlock();
    return st;
}

CRM_EXPORT cudnnStatus_t cudnnSpatialTfGridGeneratorForward(cudnnHandle_t handle,
                                                            const cudnnSpatialTransformerDescriptor_t stDesc,
                                                            const void *theta, void *grid)
{
    crm_dnn_tdesc t[2];
    crm__dview vt, vg;
    cudnnStatus_t st = crm__st_begin(handle, stDesc, t, &vt, theta, &vg, grid);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    const int *d = stDesc->d.dims;
    for (int64_t n = 0, o = 0; n < d[0]; n++) {
        double th[6];
        for (int k = 0; k < 6; k++)
            th[k] = crm__dnn_load(&vt, n * 6 + k);
        for (int h = 0; h < d[2]; h++)
            for (int w = 0; w < d[3]; w++, o += 2) {
                double xs = crm__st_coord(w, d[3]), ys = crm__st_coord(h, d[2]);
                crm__dnn_store(&vg, o, th[0] * xs + th[1] * ys + th[2]);
                crm__dnn_store(&vg, o + 1, th[3] * xs + th[4] * ys + th[5]);
            }
    }
    crm__emu_unlock();
    return st;
}

CRM_EXPORT cudnnStatus_t cudnnSpatialTfGridGeneratorBackward(cudnnHandle_t handle,
                                                             const cudnnSpatialTransformerDescriptor_t stDesc,
                                                             const void *dgrid, void *dtheta)
{
    crm_dnn_tdesc t[2];
    crm__dview vt, vg;
    cudnnStatus_t st = crm__st_begin(handle, stDesc, t, &vt, dtheta, &vg, dgrid);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    const int *d = stDesc->d.dims;
    for (int64_t n = 0, o = 0; n < d[0]; n++) {
        double dth[6] = {0};
        for (int h = 0; h < d[2]; h++)
            for (int w = 0; w < d[3]; w++, o += 2) {
                double in[3] = {crm__st_coord(w, d[3]), crm__st_coord(h, d[2]), 1.0};
                double gx = crm__dnn_load(&vg, o), gy = crm__dnn_load(&vg, o + 1);
                for (int k = 0; k < 3; k++) {
                    dth[k] += gx * in[k];
                    dth[3 + k] += gy * in[k];
                }
            }
        for (int k = 0; k < 6; k++)
            crm__dnn_store(&vt, n * 6 + k, dth[k]);
    }
    crm__emu_unlock();
    return st;
}

/* One sampling point: its four neighbours (k: bit 0 the column, bit 1 the row) in
 * an hin x win plane, whether each lies inside, their bilinear weights and those
 * weights' derivatives along gx and gy. */
typedef struct crm__st_point {
    int col[4], row[4], inside[4];
    double wt[4], dgx[4], dgy[4];
} crm__st_point;

static void crm__st_point_at(double gx, double gy, int hin, int win, crm__st_point *p)
{
    double ix = (gx + 1.0) * (win - 1) / 2.0, iy = (gy + 1.0) * (hin - 1) / 2.0;
    double x0 = floor(ix), y0 = floor(iy), fx = ix - x0, fy = iy - y0;
    for (int k = 0; k < 4; k++) {
        double cx = x0 + (k & 1), cy = y0 + (k >> 1);
        double wx = (k & 1) ? fx : 1 - fx, wy = (k >> 1) ? fy : 1 - fy;
        p->inside[k] = cx >= 0 && cx < win && cy >= 0 && cy < hin;
        p->col[k] = p->inside[k] ? (int)cx : 0;
        p->row[k] = p->inside[k] ? (int)cy : 0;
        p->wt[k] = wx * wy;
        p->dgx[k] = ((k & 1) ? 1.0 : -1.0) * wy * (win - 1) / 2.0;
        p->dgy[k] = ((k >> 1) ? 1.0 : -1.0) * wx * (hin - 1) / 2.0;
    }
}

/* Offset of neighbour k of p in plane (n, c) of tensor d. */
static int64_t crm__st_at(const crm_dnn_tdesc *d, int64_t n, int64_t c, const crm__st_point *p, int k)
{
    return n * d->strides[0] + c * d->strides[1] + (int64_t)p->row[k] * d->strides[2] +
           (int64_t)p->col[k] * d->strides[3];
}

/* The sampler's shapes: x (and dx) of the descriptor's N and C, the output (y, or dy
 * for backward) of its N, C, H and W. */
static cudnnStatus_t crm__st_shapes(const crm_dnn_sdesc *s, const crm_dnn_tdesc *x, const crm_dnn_tdesc *y)
{
    if (x->nbdims != 4 || y->nbdims != 4 || x->dims[0] != s->dims[0] || x->dims[1] != s->dims[1])
        return CUDNN_STATUS_BAD_PARAM;
    for (int i = 0; i < 4; i++)
        if (y->dims[i] != s->dims[i])
            return CUDNN_STATUS_BAD_PARAM;
    return CUDNN_STATUS_SUCCESS;
}

CRM_EXPORT cudnnStatus_t cudnnSpatialTfSamplerForward(cudnnHandle_t handle, cudnnSpatialTransformerDescriptor_t stDesc,
                                                      const void *alpha, const cudnnTensorDescriptor_t xDesc,
                                                      const void *x, const void *grid, const void *beta,
                                                      cudnnTensorDescriptor_t yDesc, void *y)
{
    crm_dnn_tdesc tg;
    crm__dview vx, vy, vg;
    cudnnStatus_t st = crm__st_args(handle, stDesc);
    if (st == CUDNN_STATUS_SUCCESS && (alpha == NULL || beta == NULL || xDesc == NULL || yDesc == NULL))
        st = CUDNN_STATUS_BAD_PARAM;
    if (st != CUDNN_STATUS_SUCCESS || (st = crm__st_shapes(&stDesc->d, &xDesc->d, &yDesc->d)))
        return st;
    double a = crm__dnn_scalar(alpha, yDesc->d.dtype), b = crm__dnn_scalar(beta, yDesc->d.dtype);
    const int *d = stDesc->d.dims;
    crm__emu_rdlock();
    if ((st = crm__st_view(&stDesc->d, CRM_DNN_ST_GRID, &tg, &vg, grid)) == CUDNN_STATUS_SUCCESS &&
        (st = crm__dnn_bind(&vx, &xDesc->d, x)) == CUDNN_STATUS_SUCCESS &&
        (st = crm__dnn_bind(&vy, &yDesc->d, y)) == CUDNN_STATUS_SUCCESS) {
        for (int64_t o = 0, n = 0; n < d[0]; n++)
            for (int h = 0; h < d[2]; h++)
                for (int w = 0; w < d[3]; w++, o += 2) {
                    crm__st_point p;
                    crm__st_point_at(crm__dnn_load(&vg, o), crm__dnn_load(&vg, o + 1), xDesc->d.dims[2],
                                     xDesc->d.dims[3], &p);
                    for (int c = 0; c < d[1]; c++) {
                        double v = 0;
                        for (int k = 0; k < 4; k++)
                            if (p.inside[k])
                                v += p.wt[k] * crm__dnn_load(&vx, crm__st_at(vx.d, n, c, &p, k));
                        int idx[4] = {(int)n, c, h, w};
                        crm__dnn_blend(&vy, crm__dnn_off(vy.d, idx), v, a, b);
                    }
                }
    }
    crm__emu_unlock();
    return st;
}

/* The backward pass's bound tensors and scaling factors. */
typedef struct crm__st_back {
    crm__dview x, dx, dy, grid, dgrid;
    double alpha, beta, alpha_grid, beta_grid;
    double *acc;                 /* dx's sums, packed like dx's dimensions */
} crm__st_back;

/* Accumulates into b->acc and blends dgrid for every sampling point. */
static void crm__st_scatter(crm__st_back *b, const int *d)
{
    const crm_dnn_tdesc *xd = b->x.d;
    const int hin = xd->dims[2], win = xd->dims[3];
    const crm_dnn_tdesc packed = {.nbdims = 4, .dims = {d[0], d[1], hin, win},
                                  .strides = {d[1] * hin * win, hin * win, win, 1}};
    for (int64_t o = 0, n = 0; n < d[0]; n++)
        for (int h = 0; h < d[2]; h++)
            for (int w = 0; w < d[3]; w++, o += 2) {
                crm__st_point p;
                double ggx = 0, ggy = 0;
                crm__st_point_at(crm__dnn_load(&b->grid, o), crm__dnn_load(&b->grid, o + 1), hin, win, &p);
                for (int c = 0; c < d[1]; c++) {
                    int idx[4] = {(int)n, c, h, w};
                    double g = crm__dnn_load(&b->dy, crm__dnn_off(b->dy.d, idx));
                    for (int k = 0; k < 4; k++) {
                        if (!p.inside[k])
                            continue;
                        double xv = crm__dnn_load(&b->x, crm__st_at(xd, n, c, &p, k));
                        ggx += g * p.dgx[k] * xv;
                        ggy += g * p.dgy[k] * xv;
                        b->acc[crm__st_at(&packed, n, c, &p, k)] += g * p.wt[k];
                    }
                }
                crm__dnn_blend(&b->dgrid, o, ggx, b->alpha_grid, b->beta_grid);
                crm__dnn_blend(&b->dgrid, o + 1, ggy, b->alpha_grid, b->beta_grid);
            }
}

CRM_EXPORT cudnnStatus_t cudnnSpatialTfSamplerBackward(cudnnHandle_t handle, cudnnSpatialTransformerDescriptor_t stDesc,
                                                       const void *alpha, const cudnnTensorDescriptor_t xDesc,
                                                       const void *x, const void *beta,
                                                       const cudnnTensorDescriptor_t dxDesc, void *dx,
                                                       const void *alphaDgrid, const cudnnTensorDescriptor_t dyDesc,
                                                       const void *dy, const void *grid, const void *betaDgrid,
                                                       void *dgrid)
{
    crm_dnn_tdesc tg;
    crm__st_back b;
    cudnnStatus_t st = crm__st_args(handle, stDesc);
    if (st == CUDNN_STATUS_SUCCESS && (!alpha || !beta || !alphaDgrid || !betaDgrid || !xDesc || !dxDesc || !dyDesc ||
                                       !crm__dnn_same_dims(&xDesc->d, &dxDesc->d)))
        st = CUDNN_STATUS_BAD_PARAM;
    if (st != CUDNN_STATUS_SUCCESS || (st = crm__st_shapes(&stDesc->d, &xDesc->d, &dyDesc->d)))
        return st;
    b = (crm__st_back){.alpha = crm__dnn_scalar(alpha, dxDesc->d.dtype),
                       .beta = crm__dnn_scalar(beta, dxDesc->d.dtype),
                       .alpha_grid = crm__dnn_scalar(alphaDgrid, dyDesc->d.dtype),
                       .beta_grid = crm__dnn_scalar(betaDgrid, dyDesc->d.dtype),
                       .acc = calloc((size_t)crm_dnn_tensor_elems(&xDesc->d), sizeof(double))};
    if (b.acc == NULL)
        return CUDNN_STATUS_ALLOC_FAILED;
    crm__emu_rdlock();
    if ((st = crm__st_view(&stDesc->d, CRM_DNN_ST_GRID, &tg, &b.grid, grid)) == CUDNN_STATUS_SUCCESS &&
        (st = crm__st_view(&stDesc->d, CRM_DNN_ST_GRID, &tg, &b.dgrid, dgrid)) == CUDNN_STATUS_SUCCESS &&
        (st = crm__dnn_bind(&b.x, &xDesc->d, x)) == CUDNN_STATUS_SUCCESS &&
        (st = crm__dnn_bind(&b.dx, &dxDesc->d, dx)) == CUDNN_STATUS_SUCCESS &&
        (st = crm__dnn_bind(&b.dy, &dyDesc->d, dy)) == CUDNN_STATUS_SUCCESS) {
        crm__st_scatter(&b, stDesc->d.dims);
        int idx[CRM_DNN_MAXDIM] = {0};
        int64_t i = 0;
        do
            crm__dnn_blend(&b.dx, crm__dnn_off(b.dx.d, idx), b.acc[i++], b.alpha, b.beta);
        while (crm__dnn_next(4, b.dx.d->dims, idx));
    }
    crm__emu_unlock();
    free(b.acc);
    return st;
}
