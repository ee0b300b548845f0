/* crm_emu_blas_ex.c -- the emulated device's level-1 Ex calls (AxpyEx, ScalEx,
 * DotEx, DotcEx, Nrm2Ex, AsumEx, IamaxEx, IaminEx, CopyEx, SwapEx, RotEx), for the
 * generated rows of protocol/cublas.api: the generated code has checked the
 * arguments, the combination of types (protocol/cublas_shape.h) and both extents.
 *
 * Each element is read into a double complex (crm_emu_elem.c), the arithmetic runs
 * in double precision (at least the execution type's), and results are rounded to
 * their type once: half and bfloat16 round to nearest even. Increments follow the
 * reference BLAS (a negative one walks the vector from its highest element). */
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
