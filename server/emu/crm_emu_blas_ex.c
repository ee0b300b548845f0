/* crm_emu_blas_ex.c -- the emulated device's level-1 Ex calls (AxpyEx, ScalEx,
 * DotEx, DotcEx, Nrm2Ex, AsumEx, IamaxEx, IaminEx, CopyEx, SwapEx, RotEx, RotgEx,
 * RotmEx, RotmgEx), for the
 * generated rows of protocol/cublas.api: the generated code has checked the
 * arguments, the combination of types (protocol/cublas_shape.h) and both extents.
 *
 * Each element is read into a double complex (crm_emu_elem.c), the arithmetic runs
 * in double precision (at least the execution type's), and results are rounded to
 * their type once: half and bfloat16 round to nearest even. Increments follow the
 * reference BLAS (a negative one walks the vector from its highest element). */
#include <cblas.h>
#include <complex.h>
#include <math.h>
#include "server/emu/crm_emu_blas.h"

/* Element i (of n, inc apart) of a vector of type t, and its store. */
static double complex crm__ex_get(int t, const void *v, int i, int n, int inc)
{
    return crm__elem_get(t, v, crm__blas_at(i, n, inc));
}

static void crm__ex_put(int t, void *v, int i, int n, int inc, double complex value)
{
    crm__elem_put(t, v, crm__blas_at(i, n, inc), value);
}

void crm_emu_axpy_ex(int n, const void *alpha, int alphaType, const void *x, int xType, int incx, void *y, int yType,
                     int incy, int exec)
{
    double complex a = crm__elem_get(alphaType, alpha, 0);
    (void)exec;
    for (int i = 0; i < n; i++)
        crm__ex_put(yType, y, i, n, incy, crm__ex_get(yType, y, i, n, incy) + a * crm__ex_get(xType, x, i, n, incx));
}

void crm_emu_scal_ex(int n, const void *alpha, int alphaType, void *x, int xType, int incx, int exec)
{
    double complex a = crm__elem_get(alphaType, alpha, 0);
    (void)exec;
    for (int i = 0; i < n; i++)
        crm__ex_put(xType, x, i, n, incx, a * crm__ex_get(xType, x, i, n, incx));
}

static void crm__dot_ex(int n, const void *x, int xType, int incx, const void *y, int yType, int incy,
                        int resultType, int conjugate, void *ret)
{
    double complex sum = 0;
    for (int i = 0; i < n; i++) {
        double complex a = crm__ex_get(xType, x, i, n, incx);
        sum += (conjugate ? conj(a) : a) * crm__ex_get(yType, y, i, n, incy);
    }
    crm__elem_put(resultType, ret, 0, sum);
}

void crm_emu_dot_ex(int n, const void *x, int xType, int incx, const void *y, int yType, int incy, int resultType,
                    int exec, void *ret)
{
    (void)exec;
    crm__dot_ex(n, x, xType, incx, y, yType, incy, resultType, 0, ret);
}

void crm_emu_dotc_ex(int n, const void *x, int xType, int incx, const void *y, int yType, int incy, int resultType,
                     int exec, void *ret)
{
    (void)exec;
    crm__dot_ex(n, x, xType, incx, y, yType, incy, resultType, 1, ret);
}

/* The Euclidean norm, scaled as the reference BLAS's so that no square overflows. */
void crm_emu_nrm2_ex(int n, const void *x, int xType, int incx, int resultType, int exec, void *ret)
{
    double scale = 0, ssq = 1;
    (void)exec;
    for (int i = 0; i < n; i++) {
        double complex v = crm__ex_get(xType, x, i, n, incx);
        double parts[2] = {fabs(creal(v)), fabs(cimag(v))};
        for (int k = 0; k < 2; k++) {
            if (parts[k] == 0)
                continue;
            if (scale < parts[k]) {
                ssq = 1 + ssq * (scale / parts[k]) * (scale / parts[k]);
                scale = parts[k];
            } else {
                ssq += (parts[k] / scale) * (parts[k] / scale);
            }
        }
    }
    crm__elem_put(resultType, ret, 0, scale * sqrt(ssq));
}

/* |re| + |im|: what asum sums and amax/amin compare, as in the reference BLAS. */
static double crm__ex_mag1(int t, const void *x, int i, int n, int inc)
{
    double complex v = crm__ex_get(t, x, i, n, inc);
    return fabs(creal(v)) + fabs(cimag(v));
}

void crm_emu_asum_ex(int n, const void *x, int xType, int incx, int resultType, int exec, void *ret)
{
    double sum = 0;
    (void)exec;
    for (int i = 0; i < n; i++)
        sum += crm__ex_mag1(xType, x, i, n, incx);
    crm__elem_put(resultType, ret, 0, sum);
}

/* 0-based index of the first largest (most: 1) or smallest (-1) magnitude. */
static int crm__ex_extreme(int n, const void *x, int xType, int incx, int most)
{
    int best = 0;
    double best_mag = crm__ex_mag1(xType, x, 0, n, incx);
    for (int i = 1; i < n; i++) {
        double m = crm__ex_mag1(xType, x, i, n, incx);
        if (most ? m > best_mag : m < best_mag)
            best = i, best_mag = m;
    }
    return best;
}

int crm_emu_iamax_ex(int n, const void *x, int xType, int incx)
{
    return crm__ex_extreme(n, x, xType, incx, 1);
}

int crm_emu_iamin_ex(int n, const void *x, int xType, int incx)
{
    return crm__ex_extreme(n, x, xType, incx, 0);
}

void crm_emu_copy_ex(int n, const void *x, int xType, int incx, void *y, int yType, int incy)
{
    for (int i = 0; i < n; i++)
        crm__ex_put(yType, y, i, n, incy, crm__ex_get(xType, x, i, n, incx));
}

void crm_emu_swap_ex(int n, void *x, int xType, int incx, void *y, int yType, int incy)
{
    for (int i = 0; i < n; i++) {
        double complex a = crm__ex_get(xType, x, i, n, incx);
        crm__ex_put(xType, x, i, n, incx, crm__ex_get(yType, y, i, n, incy));
        crm__ex_put(yType, y, i, n, incy, a);
    }
}

void crm_emu_rot_ex(int n, void *x, int xType, int incx, void *y, int yType, int incy, const void *c, const void *s,
                    int csType, int exec)
{
    double cos = creal(crm__elem_get(csType, c, 0));
    double complex sin = crm__elem_get(csType, s, 0);
    (void)exec;
    for (int i = 0; i < n; i++) {
        double complex xv = crm__ex_get(xType, x, i, n, incx), yv = crm__ex_get(yType, y, i, n, incy);
        crm__ex_put(xType, x, i, n, incx, cos * xv + sin * yv);
        crm__ex_put(yType, y, i, n, incy, cos * yv - conj(sin) * xv);
    }
}

/* rotg in double (complex data: zrotg, which leaves b as it was). */
void crm_emu_rotg_ex(void *a, void *b, int abType, void *c, void *s, int csType, int exec)
{
    double complex av = crm__elem_get(abType, a, 0), bv = crm__elem_get(abType, b, 0), sv;
    double cv;
    (void)exec;
    if (crm_blas_ex_real(abType) == abType) {
        double ar = creal(av), br = creal(bv), sr;
        cblas_drotg(&ar, &br, &cv, &sr);
        av = ar, bv = br, sv = sr;
    } else {
        cblas_zrotg(&av, &bv, &cv, &sv);
    }
    crm__elem_put(abType, a, 0, av);
    crm__elem_put(abType, b, 0, bv);
    crm__elem_put(csType, c, 0, cv);
    crm__elem_put(abType, s, 0, sv);
}

/* The modified rotation H of rotm's parameters (flag, h11, h21, h12, h22), as
 * {h11, h12, h21, h22}. */
static void crm__rotm_matrix(const double p[5], double h[4])
{
    double flag = p[0];
    h[0] = flag == 0.0 || flag == -2.0 ? 1.0 : p[1];
    h[3] = flag == 0.0 || flag == -2.0 ? 1.0 : p[4];
    h[1] = flag == 1.0 ? 1.0 : flag == -2.0 ? 0.0 : p[3];
    h[2] = flag == 1.0 ? -1.0 : flag == -2.0 ? 0.0 : p[2];
}

void crm_emu_rotm_ex(int n, void *x, int xType, int incx, void *y, int yType, int incy, const void *param,
                     int paramType, int exec)
{
    double p[5], h[4];
    (void)exec;
    for (int i = 0; i < 5; i++)
        p[i] = creal(crm__elem_get(paramType, param, i));
    crm__rotm_matrix(p, h);
    for (int i = 0; i < n; i++) {
        double xv = creal(crm__ex_get(xType, x, i, n, incx)), yv = creal(crm__ex_get(yType, y, i, n, incy));
        crm__ex_put(xType, x, i, n, incx, h[0] * xv + h[1] * yv);
        crm__ex_put(yType, y, i, n, incy, h[2] * xv + h[3] * yv);
    }
}

void crm_emu_rotmg_ex(void *d1, int d1Type, void *d2, int d2Type, void *x1, int x1Type, const void *y1, int y1Type,
                      void *param, int paramType, int exec)
{
    double v1 = creal(crm__elem_get(d1Type, d1, 0)), v2 = creal(crm__elem_get(d2Type, d2, 0));
    double vx = creal(crm__elem_get(x1Type, x1, 0)), vy = creal(crm__elem_get(y1Type, y1, 0)), p[5];
    (void)exec;
    for (int i = 0; i < 5; i++) /* the entries the flag leaves unset keep their values */
        p[i] = creal(crm__elem_get(paramType, param, i));
    cblas_drotmg(&v1, &v2, &vx, vy, p);
    crm__elem_put(d1Type, d1, 0, v1);
    crm__elem_put(d2Type, d2, 0, v2);
    crm__elem_put(x1Type, x1, 0, vx);
    for (int i = 0; i < 5; i++)
        crm__elem_put(paramType, param, i, p[i]);
}
