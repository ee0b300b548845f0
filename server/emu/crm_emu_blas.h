/* crm_emu_blas.h -- internal interface of the emulated cuBLAS (crm_emu_blas*.c):
 * handles, the per-call frame that holds the device lock and checks device ranges,
 * scalar access by pointer mode, and half / bfloat16 conversions.
 *
 * Every exported cuBLAS function runs as: crm__blas_begin (checks the handle, takes
 * the emulator lock shared, so no allocation can vanish while the call runs),
 * argument rules from protocol/cublas_shape.h, range checks of every device operand
 * with its exact footprint, the computation (OpenBLAS or plain loops), and
 * crm__blas_end (drops the lock, returns the status).
 */
#ifndef CRM_EMU_BLAS_H
#define CRM_EMU_BLAS_H

#include <stdint.h>
#include <cublas_v2.h>
#include "protocol/cublas_shape.h"
#include "server/emu/crm_emu.h"

/* The handle behind cublasHandle_t. */
struct cublasContext {
    cublasPointerMode_t pmode;  /* where alpha/beta/results live */
    cublasMath_t math;          /* recorded; the CPU computes in full precision */
    cudaStream_t stream;        /* recorded; emulated streams run synchronously */
    void *workspace;            /* recorded user workspace (device memory) or NULL */
    size_t workspace_size;      /* its size in bytes */
    cublasAtomicsMode_t atomics; /* recorded; the CPU's sums are deterministic */
    int sm_target;              /* recorded; the CPU has no SMs to leave idle */
};

/* 1 when h is a live handle (lock held). */
int crm__blas_live(cublasHandle_t h);

/* Starts a call on h: NOT_INITIALIZED for a NULL or unknown handle (lock not
 * taken then); else SUCCESS with the lock held shared. */
cublasStatus_t crm__blas_begin(cublasHandle_t h);
/* Ends a call started with SUCCESS: drops the lock, returns st. */
cublasStatus_t crm__blas_end(cublasStatus_t st);

/* SUCCESS when [p, p + bytes) is device memory (bytes 0: nothing to check), else
 * INVALID_VALUE. Lock held. */
cublasStatus_t crm__blas_dev(const void *p, uint64_t bytes);
/* The same for a strided batch: `batch` items of `one` bytes, the first at X and
 * each `stride` elements of `elem` bytes after the one before (stride may be 0 or
 * negative). */
cublasStatus_t crm__blas_strided(const void *X, uint64_t one, int64_t stride, int64_t batch, size_t elem);

/* The watchdog of a batch's items, the PTX engine's over a kernel
 * (crm_emu_watchdog.h): the time (monotonic seconds) after which the batch is
 * stopped;
 * and 1 once it has passed (the call then answers CUBLAS_STATUS_EXECUTION_FAILED,
 * as a GPU's watchdog fails a kernel). A stride of 0 lets a batch of any count fit
 * in one small allocation, so only time bounds it. */
double crm__blas_deadline(void);
int crm__blas_overdue(double deadline);

/* Reads a scalar of `size` bytes (2, 4, 8 or 16) at p according to h's pointer
 * mode into out: host memory, or checked device memory. INVALID_VALUE when p is
 * NULL or not device memory in device mode. Lock held. */
cublasStatus_t crm__blas_get_scalar(cublasHandle_t h, const void *p, size_t size, void *out);
/* Writes a result of `size` bytes to p according to h's pointer mode. */
cublasStatus_t crm__blas_put_result(cublasHandle_t h, void *p, const void *value, size_t size);

/* Element i of an array of data type t (half, bfloat16, float, double, complex
 * float or double), as a double complex or its real part; and stores, rounded to
 * the type (crm_emu_elem.c). */
double _Complex crm__elem_get(int t, const void *p, size_t i);
void crm__elem_put(int t, void *p, size_t i, double _Complex v);
double crm__elem_real(int t, const void *p, size_t i);
void crm__elem_put_real(int t, void *p, size_t i, double v);

/* A scalar of a cuBLAS scale type (half, float, double, int32) as a double. */
double crm__scale_value(const void *p, size_t size, int is_half);

/* 1 when every part (size / part bytes of them, of a real or complex scalar) of
 * the scalar at v is zero. */
int crm__blas_is_zero(const void *v, size_t size, size_t part);
/* Sets the n elements of vector v (inc apart, either sign) to zero. Lock held. */
void crm__blas_clear_vec(void *v, int64_t n, int64_t inc, size_t elem);
/* Sets a rows x cols column-major matrix (leading dimension ld) to zero. */
void crm__blas_clear_mat(void *a, int64_t rows, int64_t cols, int64_t ld, size_t elem);

/* Offset, in elements, of the i-th of n elements inc apart from the lowest one: a
 * negative increment walks the vector from its highest element, as in the
 * reference BLAS. */
static inline size_t crm__blas_at(int i, int n, int inc)
{
    return inc > 0 ? (size_t)i * (size_t)inc : (size_t)(n - 1 - i) * (size_t)(-(int64_t)inc);
}

/* Complex dot products with CBLAS's _sub signature, and complex absolute sums
 * (crm_emu_blas_dot.c). */
void crm_emu_cdotu_sub(int n, const void *x, int incx, const void *y, int incy, void *ret);
void crm_emu_cdotc_sub(int n, const void *x, int incx, const void *y, int incy, void *ret);
void crm_emu_zdotu_sub(int n, const void *x, int incx, const void *y, int incy, void *ret);
void crm_emu_zdotc_sub(int n, const void *x, int incx, const void *y, int incy, void *ret);
float crm_emu_scasum(int n, const void *x, int incx);
double crm_emu_dzasum(int n, const void *x, int incx);
/* Complex rotations with a complex sine (crm_emu_blas_rot.c). */
void crm_emu_crot(int n, void *x, int incx, void *y, int incy, float c, const void *s);
void crm_emu_zrot(int n, void *x, int incx, void *y, int incy, double c, const void *s);

/* A complex matrix product (crm_emu_blas_cgemm.c): cublasGemmEx's arguments, types
 * CUDA_C_32F or CUDA_C_64F throughout. */
cublasStatus_t crm__emu_gemm_complex(cublasHandle_t h, int ta, int tb, int m, int n, int k, const void *alpha,
                                     const void *A, int atype, int lda, const void *B, int btype, int ldb,
                                     const void *beta, void *C, int ctype, int ldc, int compute);

/* trmm out of place, dgmm, syrkx and herkx, in the order the generated rows call them
 * (crm_emu_blas_l3.c); CBLAS's enums are ints here, so that this header needs no
 * cblas.h. */
#define CRM__TRMM_DECL(NAME, ALPHA_T)                                                                  \
    void NAME(int order, int side, int uplo, int trans, int diag, int m, int n, ALPHA_T alpha, const void *A, \
              int lda, const void *B, int ldb, void *C, int ldc);
CRM__TRMM_DECL(crm_emu_strmm, float)
CRM__TRMM_DECL(crm_emu_dtrmm, double)
CRM__TRMM_DECL(crm_emu_ctrmm, const void *)
CRM__TRMM_DECL(crm_emu_ztrmm, const void *)
/* Complex symmetric symv, syr and syr2 (crm_emu_blas_csym.c). */
#define CRM__CSYM_DECL(P)                                                                              \
    void crm_emu_##P##symv(int order, int uplo, int n, const void *alpha, const void *A, int lda, const void *x, \
                           int incx, const void *beta, void *y, int incy);                             \
    void crm_emu_##P##syr(int order, int uplo, int n, const void *alpha, const void *x, int incx, void *A, \
                          int lda);                                                                    \
    void crm_emu_##P##syr2(int order, int uplo, int n, const void *alpha, const void *x, int incx, const void *y, \
                           int incy, void *A, int lda);
CRM__CSYM_DECL(c)
CRM__CSYM_DECL(z)
/* geam (crm_emu_blas_geam.c). */
#define CRM__GEAM_DECL(NAME, S)                                                                        \
    void NAME(int order, int ta, int tb, int m, int n, S alpha, const void *A, int lda, S beta, const void *B, \
              int ldb, void *C, int ldc);
CRM__GEAM_DECL(crm_emu_sgeam, float)
CRM__GEAM_DECL(crm_emu_dgeam, double)
CRM__GEAM_DECL(crm_emu_cgeam, const void *)
CRM__GEAM_DECL(crm_emu_zgeam, const void *)
#define CRM__DGMM_DECL(NAME)                                                                           \
    void NAME(int order, int side, int m, int n, const void *A, int lda, const void *x, int incx, void *C, int ldc);
CRM__DGMM_DECL(crm_emu_sdgmm)
CRM__DGMM_DECL(crm_emu_ddgmm)
CRM__DGMM_DECL(crm_emu_cdgmm)
CRM__DGMM_DECL(crm_emu_zdgmm)

#define CRM__KX_DECL(NAME, ALPHA_T, BETA_T)                                                            \
    cublasStatus_t NAME(int order, int uplo, int trans, int n, int k, ALPHA_T alpha, const void *A, int lda, \
                        const void *B, int ldb, BETA_T beta, void *C, int ldc);
CRM__KX_DECL(crm_emu_ssyrkx, float, float)
CRM__KX_DECL(crm_emu_dsyrkx, double, double)
CRM__KX_DECL(crm_emu_csyrkx, const void *, const void *)
CRM__KX_DECL(crm_emu_zsyrkx, const void *, const void *)
CRM__KX_DECL(crm_emu_cherkx, const void *, float)
CRM__KX_DECL(crm_emu_zherkx, const void *, double)

/* Batched LU factorisation, solve, inverse from LU, and inverse, for the generated
 * pointer-array rows (crm_emu_blas_lu.c): the arguments and every item are checked
 * already; trans is a CBLAS transpose code; a NULL pivot array means none. */
#define CRM__LU_DECL(P)                                                                                        \
    cublasStatus_t crm_emu_##P##getrf_batched(int n, void *const *A, int lda, int *P_, int *info, int batch);   \
    cublasStatus_t crm_emu_##P##getrs_batched(int trans, int n, int nrhs, const void *const *A, int lda,        \
                                              const int *ipiv, void *const *B, int ldb, int batch);            \
    cublasStatus_t crm_emu_##P##getri_batched(int n, const void *const *A, int lda, const int *P_,             \
                                              void *const *C, int ldc, int *info, int batch);                  \
    cublasStatus_t crm_emu_##P##matinv_batched(int n, const void *const *A, int lda, void *const *Ainv,        \
                                               int lda_inv, int *info, int batch);
CRM__LU_DECL(s)
CRM__LU_DECL(d)
CRM__LU_DECL(c)
CRM__LU_DECL(z)
/* Batched QR factorisation and least squares (crm_emu_blas_qr.c), likewise. */
#define CRM__QR_DECL(P)                                                                                        \
    cublasStatus_t crm_emu_##P##geqrf_batched(int m, int n, void *const *A, int lda, void *const *tau, int batch); \
    cublasStatus_t crm_emu_##P##gels_batched(int trans, int m, int n, int nrhs, void *const *A, int lda,       \
                                             void *const *C, int ldc, int *dev_info, int batch);
CRM__QR_DECL(s)
CRM__QR_DECL(d)
CRM__QR_DECL(c)
CRM__QR_DECL(z)

/* Packed triangle to full format and back (crm_emu_blas_pack.c), CBLAS's order and
 * fill codes first. */
#define CRM__PACK_DECL(P)                                                                                      \
    void crm_emu_##P##tpttr(int order, int uplo, int n, const void *AP, void *A, int lda);                     \
    void crm_emu_##P##trttp(int order, int uplo, int n, const void *A, int lda, void *AP);
CRM__PACK_DECL(s)
CRM__PACK_DECL(d)
CRM__PACK_DECL(c)
CRM__PACK_DECL(z)

/* The level-1 Ex calls (crm_emu_blas_ex.c): the cuBLAS arguments in order, types as
 * cudaDataType values, a result last (iamax, iamin: the 0-based index returned). */
void crm_emu_axpy_ex(int n, const void *alpha, int alphaType, const void *x, int xType, int incx, void *y, int yType,
                     int incy, int exec);
void crm_emu_scal_ex(int n, const void *alpha, int alphaType, void *x, int xType, int incx, int exec);
void crm_emu_dot_ex(int n, const void *x, int xType, int incx, const void *y, int yType, int incy, int resultType,
                    int exec, void *ret);
void crm_emu_dotc_ex(int n, const void *x, int xType, int incx, const void *y, int yType, int incy, int resultType,
                     int exec, void *ret);
void crm_emu_nrm2_ex(int n, const void *x, int xType, int incx, int resultType, int exec, void *ret);
void crm_emu_asum_ex(int n, const void *x, int xType, int incx, int resultType, int exec, void *ret);
int crm_emu_iamax_ex(int n, const void *x, int xType, int incx);
int crm_emu_iamin_ex(int n, const void *x, int xType, int incx);
void crm_emu_copy_ex(int n, const void *x, int xType, int incx, void *y, int yType, int incy);
void crm_emu_rot_ex(int n, void *x, int xType, int incx, void *y, int yType, int incy, const void *c, const void *s,
                    int csType, int exec);
void crm_emu_rotg_ex(void *a, void *b, int abType, void *c, void *s, int csType, int exec);
void crm_emu_rotm_ex(int n, void *x, int xType, int incx, void *y, int yType, int incy, const void *param,
                     int paramType, int exec);
void crm_emu_rotmg_ex(void *d1, int d1Type, void *d2, int d2Type, void *x1, int x1Type, const void *y1, int y1Type,
                      void *param, int paramType, int exec);

/* Cherk/Csyrk Ex and 3mEx (crm_emu_blas_rankk_ex.c): CBLAS's arguments (its enums
 * as ints), A's and C's data types after their matrices. Out of host memory, C is
 * left as it was. */
void crm_emu_cgemm_ex(int order, int transa, int transb, int m, int n, int k, const void *alpha, const void *A,
                      int Atype, int lda, const void *B, int Btype, int ldb, const void *beta, void *C, int Ctype,
                      int ldc);
void crm_emu_cherk_ex(int order, int uplo, int trans, int n, int k, float alpha, const void *A, int Atype, int lda,
                      float beta, void *C, int Ctype, int ldc);
void crm_emu_csyrk_ex(int order, int uplo, int trans, int n, int k, const void *alpha, const void *A, int Atype,
                      int lda, const void *beta, void *C, int Ctype, int ldc);
void crm_emu_swap_ex(int n, void *x, int xType, int incx, void *y, int yType, int incy);

/* CBLAS transpose code of a cuBLAS operation (real data: C is T). */
int crm__blas_trans(int op);

#endif
