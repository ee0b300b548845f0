/* crm_emu_blas_rot.c -- the emulated device's complex plane rotations with a complex
 * sine (crot, zrot), for the generated cuBLAS calls cublasCrot and cublasZrot
 * (protocol/cublas.api). CBLAS has no such call (its csrot and zdrot take a real
 * sine); LAPACK's CROT and ZROT, which OpenBLAS carries, compute what cuBLAS
 * defines,
 *
 *     x_i = c x_i + s y_i,    y_i = c y_i - conj(s) x_i,
 *
 * with c real and the reference BLAS's increments (a negative one walks the vector
 * from its highest element). */
#include "server/emu/crm_emu_blas.h"

/* LAPACK's Fortran entry points in libopenblas (every argument by reference). */
void crot_(const int *n, void *cx, const int *incx, void *cy, const int *incy, const float *c, const void *s);
void zrot_(const int *n, void *cx, const int *incx, void *cy, const int *incy, const double *c, const void *s);

void crm_emu_crot(int n, void *x, int incx, void *y, int incy, float c, const void *s)
{
    crot_(&n, x, &incx, y, &incy, &c, s);
}

void crm_emu_zrot(int n, void *x, int incx, void *y, int incy, double c, const void *s)
{
    zrot_(&n, x, &incx, y, &incy, &c, s);
}
