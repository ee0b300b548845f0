/* crm_emu_blas_dot.c -- the emulated device's complex dot products (cdotu, cdotc,
 * zdotu, zdotc) and absolute sums (scasum, dzasum), with CBLAS's signatures, for
 * the generated cuBLAS calls (protocol/cublas.api). OpenBLAS 0.3.21's kernels fall
 * short there: its complex dots read outside the vectors whenever an increment is
 * not 1, which faults on device memory's guard pages, and its scasum is wrong for
 * unit increments (19.16 for 18.53 on 37 elements; tests/blas/blas_l1.cu found
 * both). Increments follow the reference BLAS (a negative one walks the vector
 * from its highest element); sums are taken in double precision. */
#include <math.h>
#include "server/emu/crm_emu_blas.h"

/* Re and im of sum(conj?(x_i) * y_i); x and y are pairs of T. */
#define CRM__DOT(T, x, incx, y, incy, n, conj, re, im)                                              \
    do {                                                                                            \
        const T *cx_ = (const T *)(x), *cy_ = (const T *)(y);                                       \
        for (int i_ = 0; i_ < (n); i_++) {                                                          \
            const T *a_ = cx_ + 2 * crm__blas_at(i_, (n), (incx));                                 \
            const T *b_ = cy_ + 2 * crm__blas_at(i_, (n), (incy));                                 \
            double ar_ = a_[0], ai_ = (conj) ? -(double)a_[1] : (double)a_[1];                      \
            (re) += ar_ * b_[0] - ai_ * b_[1];                                                      \
            (im) += ar_ * b_[1] + ai_ * b_[0];                                                      \
        }                                                                                           \
    } while (0)

static void crm__cdot(int n, const void *x, int incx, const void *y, int incy, void *ret, int conj)
{
    double re = 0, im = 0;
    float *out = ret;
    CRM__DOT(float, x, incx, y, incy, n, conj, re, im);
    out[0] = (float)re;
    out[1] = (float)im;
}

static void crm__zdot(int n, const void *x, int incx, const void *y, int incy, void *ret, int conj)
{
    double re = 0, im = 0;
    double *out = ret;
    CRM__DOT(double, x, incx, y, incy, n, conj, re, im);
    out[0] = re;
    out[1] = im;
}

void crm_emu_cdotu_sub(int n, const void *x, int incx, const void *y, int incy, void *ret)
{
    crm__cdot(n, x, incx, y, incy, ret, 0);
}

void crm_emu_cdotc_sub(int n, const void *x, int incx, const void *y, int incy, void *ret)
{
    crm__cdot(n, x, incx, y, incy, ret, 1);
}

void crm_emu_zdotu_sub(int n, const void *x, int incx, const void *y, int incy, void *ret)
{
    crm__zdot(n, x, incx, y, incy, ret, 0);
}

void crm_emu_zdotc_sub(int n, const void *x, int incx, const void *y, int incy, void *ret)
{
    crm__zdot(n, x, incx, y, incy, ret, 1);
}

/* sum(|re| + |im|) of n complex elements inc apart (inc > 0). */
#define CRM__ASUM(T, x, n, inc, sum)                                    \
    do {                                                                \
        const T *cx_ = (const T *)(x);                                  \
        for (int i_ = 0; i_ < (n); i_++)                                \
            (sum) += fabs((double)cx_[2 * (size_t)i_ * (size_t)(inc)]) + \
                     fabs((double)cx_[2 * (size_t)i_ * (size_t)(inc) + 1]); \
    } while (0)

float crm_emu_scasum(int n, const void *x, int incx)
{
    double sum = 0;
    CRM__ASUM(float, x, n, incx, sum);
    return (float)sum;
}

double crm_emu_dzasum(int n, const void *x, int incx)
{
    double sum = 0;
    CRM__ASUM(double, x, n, incx, sum);
    return sum;
}
