/* crm_emu_blas_rot.c -- the emulated device's complex plane rotations with a complex
 * sine (crot, zrot), for the generated cuBLAS calls cublasCrot and cublasZrot
 * (protocol/cublas.api). CBLAS has no such call (its csrot and zdrot take a real
 * sine): as LAPACK's CROT and cuBLAS define it,
 *
 *     x_i = c x_i + s y_i,    y_i = c y_i - conj(s) x_i,
 *
 * with c real; increments follow the reference BLAS (a negative one walks the vector
 * from its highest element). */
#include <stdint.h>
#include "server/emu/crm_emu_blas.h"

/* x and y are pairs of T; s points to the sine's two T. */
#define CRM__ROT(T, n, x, incx, y, incy, c, s)                                                      \
    do {                                                                                            \
        T *cx_ = (T *)(x), *cy_ = (T *)(y);                                                         \
        const T sr_ = ((const T *)(s))[0], si_ = ((const T *)(s))[1];                               \
        for (int i_ = 0; i_ < (n); i_++) {                                                          \
            T *a_ = cx_ + 2 * crm__blas_at(i_, (n), (incx)), *b_ = cy_ + 2 * crm__blas_at(i_, (n), (incy));   \
            T xr_ = a_[0], xi_ = a_[1], yr_ = b_[0], yi_ = b_[1];                                   \
            a_[0] = (c) * xr_ + sr_ * yr_ - si_ * yi_;                                              \
            a_[1] = (c) * xi_ + sr_ * yi_ + si_ * yr_;                                              \
            b_[0] = (c) * yr_ - sr_ * xr_ - si_ * xi_;                                              \
            b_[1] = (c) * yi_ - sr_ * xi_ + si_ * xr_;                                              \
        }                                                                                           \
    } while (0)

void crm_emu_crot(int n, void *x, int incx, void *y, int incy, float c, const void *s)
{
    CRM__ROT(float, n, x, incx, y, incy, c, s);
}

void crm_emu_zrot(int n, void *x, int incx, void *y, int incy, double c, const void *s)
{
    CRM__ROT(double, n, x, incx, y, incy, c, s);
}
