/* crm_emu_elem.c -- the emulated device's elements of a cudaDataType: read as a
 * double complex (or its real part) and written back rounded to the type, for the
 * calls whose data type is a parameter (GemmEx, cuBLASLt's matmul, the level-1 Ex
 * calls). Types: real half, bfloat16, float and double, complex float and double;
 * half and bfloat16 round to nearest even (crm_emu_blas.c's conversions). */
#include <complex.h>
#include "server/emu/crm_emu_blas.h"

double _Complex crm__elem_get(int t, const void *p, size_t i)
{
    switch (t) {
    case CUDA_R_16F:
        return crm__half_to_float(((const uint16_t *)p)[i]);
    case CUDA_R_16BF:
        return crm__bf16_to_float(((const uint16_t *)p)[i]);
    case CUDA_R_64F:
        return ((const double *)p)[i];
    case CUDA_C_32F:
        return ((const float complex *)p)[i];
    case CUDA_C_64F:
        return ((const double complex *)p)[i];
    default: /* CUDA_R_32F */
        return ((const float *)p)[i];
    }
}

void crm__elem_put(int t, void *p, size_t i, double _Complex v)
{
    switch (t) {
    case CUDA_R_16F:
        ((uint16_t *)p)[i] = crm__float_to_half((float)creal(v));
        break;
    case CUDA_R_16BF:
        ((uint16_t *)p)[i] = crm__float_to_bf16((float)creal(v));
        break;
    case CUDA_R_64F:
        ((double *)p)[i] = creal(v);
        break;
    case CUDA_C_32F:
        ((float complex *)p)[i] = (float complex)v;
        break;
    case CUDA_C_64F:
        ((double complex *)p)[i] = v;
        break;
    default:
        ((float *)p)[i] = (float)creal(v);
    }
}

double crm__elem_real(int t, const void *p, size_t i)
{
    return creal(crm__elem_get(t, p, i));
}

void crm__elem_put_real(int t, void *p, size_t i, double v)
{
    crm__elem_put(t, p, i, v);
}
