/* crm_emu_blas_pack.c -- the emulated device's conversions between a packed
 * triangle and the triangle of a full column-major matrix (tpttr, trttp in S, D, C
 * and Z), for the generated cuBLAS rows of protocol/cublas.api: LAPACK's xTPTTR and
 * xTRTTP from libopenblas, which copy the triangle `uplo` names and leave the rest
 * of the full matrix as it was, as cuBLAS does. The generated code has checked the
 * arguments and both extents. */
#include <stddef.h>
#include <cblas.h>
#include "server/emu/crm_emu_blas.h"

/* LAPACK's Fortran entry points (arguments by reference; the character argument's
 * length last, as gfortran passes it). */
#define CRM__PACK_LAPACK(P)                                                                                    \
    void P##tpttr_(const char *uplo, const int *n, const void *ap, void *a, const int *lda, int *info, size_t len); \
    void P##trttp_(const char *uplo, const int *n, const void *a, const int *lda, void *ap, int *info, size_t len);
CRM__PACK_LAPACK(s)
CRM__PACK_LAPACK(d)
CRM__PACK_LAPACK(c)
CRM__PACK_LAPACK(z)

/* The CBLAS order argument is column-major always (the generated call passes it). */
#define CRM__PACK_ENTRIES(P)                                                                                   \
    void crm_emu_##P##tpttr(int order, int uplo, int n, const void *AP, void *A, int lda)                      \
    {                                                                                                          \
        const char u = uplo == CblasLower ? 'L' : 'U';                                                         \
        int info = 0;                                                                                          \
        (void)order;                                                                                           \
        P##tpttr_(&u, &n, AP, A, &lda, &info, 1);                                                              \
    }                                                                                                          \
    void crm_emu_##P##trttp(int order, int uplo, int n, const void *A, int lda, void *AP)                      \
    {                                                                                                          \
        const char u = uplo == CblasLower ? 'L' : 'U';                                                         \
        int info = 0;                                                                                          \
        (void)order;                                                                                           \
        P##trttp_(&u, &n, A, &lda, AP, &info, 1);                                                              \
    }
CRM__PACK_ENTRIES(s)
CRM__PACK_ENTRIES(d)
CRM__PACK_ENTRIES(c)
CRM__PACK_ENTRIES(z)
