/* cublas_shape.h -- the argument rules and exact memory footprints of the remoted
 * cuBLAS calls, shared by the client (synchronous argument errors), the server (it
 * checks every device range before the backend runs) and the emulated device.
 *
 * Pure header-only functions. Matrices are column-major: a rows x cols matrix with
 * leading dimension ld occupies ((cols - 1) * ld + rows) elements from its first
 * one. A vector of n elements inc apart occupies ((n - 1) * |inc| + 1) elements
 * from its lowest address (with a negative increment the first element is the
 * last in memory, as in the reference BLAS). Extents are computed in 64 bits with
 * overflow checks: a function returning int gives 0, or -1 on overflow.
 */
#ifndef CUBLAS_SHAPE_H
#define CUBLAS_SHAPE_H

#include <stddef.h>
#include <stdint.h>
#include <cublas_v2.h>

/* Bytes of one element of data type t; 0 for unknown and sub-byte types. */
static inline size_t crm_blas_type_size(int t)
{
    switch (t) {
    case CUDA_R_8I: case CUDA_R_8U: case CUDA_R_8F_E4M3: case CUDA_R_8F_E5M2: case CUDA_R_8F_UE8M0:
        return 1;
    case CUDA_R_16F: case CUDA_R_16BF: case CUDA_R_16I: case CUDA_R_16U: case CUDA_C_8I: case CUDA_C_8U:
        return 2;
    case CUDA_R_32F: case CUDA_R_32I: case CUDA_R_32U: case CUDA_C_16F: case CUDA_C_16BF: case CUDA_C_16I:
    case CUDA_C_16U:
        return 4;
    case CUDA_R_64F: case CUDA_R_64I: case CUDA_R_64U: case CUDA_C_32F: case CUDA_C_32I: case CUDA_C_32U:
        return 8;
    case CUDA_C_64F: case CUDA_C_64I: case CUDA_C_64U:
        return 16;
    default:
        return 0;
    }
}

static inline int crm_blas_type_complex(int t)
{
    switch (t) {
    case CUDA_C_8I: case CUDA_C_8U: case CUDA_C_16F: case CUDA_C_16BF: case CUDA_C_16I: case CUDA_C_16U:
    case CUDA_C_32F: case CUDA_C_32I: case CUDA_C_32U: case CUDA_C_64F: case CUDA_C_64I: case CUDA_C_64U:
        return 1;
    default:
        return 0;
    }
}

/* Bytes of alpha/beta of a GemmEx-family call: the scale type follows the compute
 * type (half, float, double, int32/float), complex when C is; 0 when unknown. */
static inline size_t crm_blas_scale_size(int compute, int ctype)
{
    size_t base;
    switch (compute) {
    case CUBLAS_COMPUTE_16F: case CUBLAS_COMPUTE_16F_PEDANTIC:
        base = 2;
        break;
    case CUBLAS_COMPUTE_32F: case CUBLAS_COMPUTE_32F_PEDANTIC: case CUBLAS_COMPUTE_32F_FAST_16F:
    case CUBLAS_COMPUTE_32F_FAST_16BF: case CUBLAS_COMPUTE_32F_FAST_TF32: case CUBLAS_COMPUTE_32F_EMULATED_16BFX9:
    case CUBLAS_COMPUTE_32I: case CUBLAS_COMPUTE_32I_PEDANTIC:
        base = 4;
        break;
    case CUBLAS_COMPUTE_64F: case CUBLAS_COMPUTE_64F_PEDANTIC: case CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT:
        base = 8;
        break;
    default:
        return 0;
    }
    return crm_blas_type_complex(ctype) ? 2 * base : base;
}

/* Math modes cuBLAS accepts: a base mode, optionally with the reduced-precision flag. */
static inline int crm_blas_math_ok(int mode)
{
    switch (mode & ~(int)CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION) {
    case CUBLAS_DEFAULT_MATH: case CUBLAS_TENSOR_OP_MATH: case CUBLAS_PEDANTIC_MATH:
    case CUBLAS_TF32_TENSOR_OP_MATH: case CUBLAS_FP32_EMULATED_BF16X9_MATH:
    case CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH:
        return 1;
    default:
        return 0;
    }
}

static inline int crm_blas_op_ok(int op)
{
    return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
}

static inline int crm_blas_fill_ok(int fill)
{
    return fill == CUBLAS_FILL_MODE_LOWER || fill == CUBLAS_FILL_MODE_UPPER;
}

static inline int crm_blas_diag_ok(int diag)
{
    return diag == CUBLAS_DIAG_NON_UNIT || diag == CUBLAS_DIAG_UNIT;
}

static inline int crm_blas_side_ok(int side)
{
    return side == CUBLAS_SIDE_LEFT || side == CUBLAS_SIDE_RIGHT;
}

/* a when op is CUBLAS_OP_N, else b: a dimension of op(A). */
static inline int64_t crm_blas_opdim(int op, int64_t a, int64_t b)
{
    return op == CUBLAS_OP_N ? a : b;
}

/* a when side is CUBLAS_SIDE_LEFT, else b: the order of a side's square matrix. */
static inline int64_t crm_blas_sidedim(int side, int64_t a, int64_t b)
{
    return side == CUBLAS_SIDE_LEFT ? a : b;
}

static inline int64_t crm_blas_max1(int64_t v)
{
    return v > 1 ? v : 1;
}

static inline int64_t crm_blas_min(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* Elements spanned by a vector (see the header comment); *bytes = 0 when n <= 0. */
static inline int crm_blas_vec_bytes(int64_t n, int64_t inc, size_t elem, uint64_t *bytes)
{
    uint64_t step = inc < 0 ? (uint64_t)0 - (uint64_t)inc : (uint64_t)inc, span;
    *bytes = 0;
    if (n <= 0)
        return 0;
    if (__builtin_mul_overflow((uint64_t)(n - 1), step, &span) || __builtin_add_overflow(span, 1, &span) ||
        __builtin_mul_overflow(span, (uint64_t)elem, bytes))
        return -1;
    return 0;
}

/* The level-1 Ex calls' data types, as cuBLAS's tables list them: real or complex
 * floating types of 16 (real only), 32 or 64 bits; 16-bit data computes in 32F. */
static inline int crm_blas_ex_data(int t)
{
    return t == CUDA_R_16F || t == CUDA_R_16BF || t == CUDA_R_32F || t == CUDA_R_64F || t == CUDA_C_32F ||
           t == CUDA_C_64F;
}

static inline int crm_blas_ex_exec(int t)
{
    return t == CUDA_R_16F || t == CUDA_R_16BF ? CUDA_R_32F : t;
}

/* The real type of t's precision (t itself when real). */
static inline int crm_blas_ex_real(int t)
{
    return t == CUDA_C_32F ? CUDA_R_32F : t == CUDA_C_64F ? CUDA_R_64F : t;
}

/* 1 for a combination of types cuBLAS does not compute (CUBLAS_STATUS_NOT_SUPPORTED):
 * x and y of one type, computed in its execution type, alpha of that type (scal:
 * or its real type), a dot's result of the data's type, a norm's of its real type. */
static inline int crm_blas_axpy_ex_unsupported(int alpha, int x, int y, int exec)
{
    return !crm_blas_ex_data(x) || y != x || exec != crm_blas_ex_exec(x) || alpha != exec;
}

static inline int crm_blas_scal_ex_unsupported(int alpha, int x, int exec)
{
    return !crm_blas_ex_data(x) || exec != crm_blas_ex_exec(x) || (alpha != exec && alpha != crm_blas_ex_real(exec));
}

static inline int crm_blas_dot_ex_unsupported(int x, int y, int result, int exec)
{
    return !crm_blas_ex_data(x) || y != x || result != x || exec != crm_blas_ex_exec(x);
}

static inline int crm_blas_norm_ex_unsupported(int x, int result, int exec)
{
    return !crm_blas_ex_data(x) || result != crm_blas_ex_real(x) || exec != crm_blas_ex_real(crm_blas_ex_exec(x));
}

static inline int crm_blas_rot_ex_unsupported(int x, int y, int cs, int exec)
{
    return !crm_blas_ex_data(x) || y != x || exec != crm_blas_ex_exec(x) || (cs != x && cs != crm_blas_ex_real(x));
}

/* RotgEx: a and b (and s) of a level-1 Ex type, c of its real type. */
static inline int crm_blas_rotg_ex_unsupported(int ab, int cs, int exec)
{
    return !crm_blas_ex_data(ab) || exec != crm_blas_ex_exec(ab) || cs != crm_blas_ex_real(ab);
}

/* RotmEx and RotmgEx: real data of one type, the parameters of it or of the
 * execution type (rotm and rotmg are real calls). */
static inline int crm_blas_rotm_ex_unsupported(int x, int y, int param, int exec)
{
    return !crm_blas_ex_data(x) || crm_blas_ex_real(x) != x || y != x || exec != crm_blas_ex_exec(x) ||
           (param != x && param != exec);
}

static inline int crm_blas_rotmg_ex_unsupported(int d1, int d2, int x1, int y1, int param, int exec)
{
    return d2 != d1 || x1 != d1 || y1 != d1 || crm_blas_rotm_ex_unsupported(d1, d1, param, exec);
}

static inline int crm_blas_pair_ex_unsupported(int x, int y)
{
    return !crm_blas_ex_data(x) || y != x;
}

/* Cherk/Csyrk Ex and 3mEx: A complex 8-bit integers or complex float, C complex float. */
static inline int crm_blas_rankk_ex_unsupported(int a, int c)
{
    return c != CUDA_C_32F || (a != CUDA_C_8I && a != CUDA_C_32F);
}

/* CgemmEx and Cgemm3mEx: A and B of one type, complex 8-bit integers or complex
 * float, C complex float. */
static inline int crm_blas_cgemm_ex_unsupported(int a, int b, int c)
{
    return b != a || crm_blas_rankk_ex_unsupported(a, c);
}

/* getrsBatched's host info: 0 when the arguments are valid, else minus the position
 * of the first bad one in LAPACK's numbering (the handle not counted). */
static inline int crm_blas_getrs_info(int trans, int64_t n, int64_t nrhs, int64_t lda, int64_t ldb, int64_t batch)
{
    if (!crm_blas_op_ok(trans))
        return -1;
    if (n < 0)
        return -2;
    if (nrhs < 0)
        return -3;
    if (lda < crm_blas_max1(n))
        return -5;
    if (ldb < crm_blas_max1(n))
        return -8;
    return batch < 0 ? -10 : 0;
}

/* geqrfBatched's host info: 0, or minus the position of its first bad parameter
 * (LAPACK's numbering, the handle not counted: m 1, n 2, lda 4, batchSize 7). */
static inline int crm_blas_geqrf_info(int64_t m, int64_t n, int64_t lda, int64_t batch)
{
    if (m < 0)
        return -1;
    if (n < 0)
        return -2;
    if (lda < crm_blas_max1(m))
        return -4;
    return batch < 0 ? -7 : 0;
}

/* gelsBatched's host info, numbered likewise (trans 1, m 2, n 3, nrhs 4, lda 6,
 * ldc 8, batchSize 11); a transpose cuBLAS does not solve is NOT_SUPPORTED instead. */
static inline int crm_blas_gels_info(int trans, int64_t m, int64_t n, int64_t nrhs, int64_t lda, int64_t ldc,
                                     int64_t batch)
{
    if (!crm_blas_op_ok(trans))
        return -1;
    if (m < 0)
        return -2;
    if (n < 0)
        return -3;
    if (nrhs < 0)
        return -4;
    if (lda < crm_blas_max1(m))
        return -6;
    if (ldc < crm_blas_max1(m))
        return -8;
    return batch < 0 ? -11 : 0;
}

/* Bytes spanned by a rows x cols matrix with leading dimension ld; 0 when empty. */
static inline int crm_blas_mat_bytes(int64_t rows, int64_t cols, int64_t ld, size_t elem, uint64_t *bytes)
{
    uint64_t span;
    *bytes = 0;
    if (rows <= 0 || cols <= 0)
        return 0;
    if (ld < rows)
        return -1;
    if (__builtin_mul_overflow((uint64_t)(cols - 1), (uint64_t)ld, &span) ||
        __builtin_add_overflow(span, (uint64_t)rows, &span) || __builtin_mul_overflow(span, (uint64_t)elem, bytes))
        return -1;
    return 0;
}

/* Bytes of a packed triangle of order n (n(n+1)/2 elements); 0 when n <= 0. */
static inline int crm_blas_packed_bytes(int64_t n, size_t elem, uint64_t *bytes)
{
    uint64_t count;
    *bytes = 0;
    if (n <= 0)
        return 0;
    if (__builtin_mul_overflow((uint64_t)n, (uint64_t)n + 1, &count) ||
        __builtin_mul_overflow(count / 2, (uint64_t)elem, bytes))
        return -1;
    return 0;
}

/* The range a strided batch spans: batch items of `one` bytes, the i-th starting
 * i * stride elements after the first (stride may be 0 or negative). Sets *first
 * (byte offset of the lowest item from the first, <= 0) and *bytes (0 when nothing
 * is touched). */
static inline int crm_blas_strided_span(uint64_t one, int64_t stride, int64_t batch, size_t elem, int64_t *first,
                                        uint64_t *bytes)
{
    int64_t step, reach;
    *first = 0;
    *bytes = 0;
    if (one == 0 || batch <= 0)
        return 0;
    if (__builtin_mul_overflow(stride, (int64_t)elem, &step) || __builtin_mul_overflow(step, batch - 1, &reach))
        return -1;
    uint64_t dist = reach < 0 ? (uint64_t)0 - (uint64_t)reach : (uint64_t)reach;
    if (reach < 0)
        *first = reach;
    return __builtin_add_overflow(dist, one, bytes) ? -1 : 0;
}

/* --- argument rules: CUBLAS_STATUS_SUCCESS or CUBLAS_STATUS_INVALID_VALUE, as cuBLAS --- */

/* Rows and columns of the stored form of op(X) when op(X) is r x c. */
static inline void crm_blas_stored(int op, int64_t r, int64_t c, int64_t *rows, int64_t *cols)
{
    *rows = op == CUBLAS_OP_N ? r : c;
    *cols = op == CUBLAS_OP_N ? c : r;
}

static inline cublasStatus_t crm_blas_gemm_check(int transa, int transb, int64_t m, int64_t n, int64_t k, int64_t lda,
                                                 int64_t ldb, int64_t ldc)
{
    if (!crm_blas_op_ok(transa) || !crm_blas_op_ok(transb) || m < 0 || n < 0 || k < 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (lda < crm_blas_max1(transa == CUBLAS_OP_N ? m : k) || ldb < crm_blas_max1(transb == CUBLAS_OP_N ? k : n) ||
        ldc < crm_blas_max1(m))
        return CUBLAS_STATUS_INVALID_VALUE;
    return CUBLAS_STATUS_SUCCESS;
}

/* Footprints (bytes) of A, B and C of a gemm with valid arguments: nothing is
 * touched when m or n is 0, A and B are not read when k is 0. */
static inline int crm_blas_gemm_bytes(int transa, int transb, int64_t m, int64_t n, int64_t k, int64_t lda,
                                      int64_t ldb, int64_t ldc, size_t ea, size_t eb, size_t ec, uint64_t out[3])
{
    int64_t r, c;
    out[0] = out[1] = out[2] = 0;
    if (m == 0 || n == 0)
        return 0;
    crm_blas_stored(transa, m, k, &r, &c);
    if (crm_blas_mat_bytes(r, c, lda, ea, &out[0]) != 0)
        return -1;
    crm_blas_stored(transb, k, n, &r, &c);
    if (crm_blas_mat_bytes(r, c, ldb, eb, &out[1]) != 0)
        return -1;
    return crm_blas_mat_bytes(m, n, ldc, ec, &out[2]);
}

static inline cublasStatus_t crm_blas_gemv_check(int trans, int64_t m, int64_t n, int64_t lda, int64_t incx,
                                                 int64_t incy)
{
    if (!crm_blas_op_ok(trans) || m < 0 || n < 0 || lda < crm_blas_max1(m) || incx == 0 || incy == 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    return CUBLAS_STATUS_SUCCESS;
}

/* Footprints of A, x and y of a gemv with valid arguments; none when m or n is 0. */
static inline int crm_blas_gemv_bytes(int trans, int64_t m, int64_t n, int64_t lda, int64_t incx, int64_t incy,
                                      size_t elem, uint64_t out[3])
{
    out[0] = out[1] = out[2] = 0;
    if (m == 0 || n == 0)
        return 0;
    int64_t lx = trans == CUBLAS_OP_N ? n : m, ly = trans == CUBLAS_OP_N ? m : n;
    if (crm_blas_mat_bytes(m, n, lda, elem, &out[0]) != 0 || crm_blas_vec_bytes(lx, incx, elem, &out[1]) != 0)
        return -1;
    return crm_blas_vec_bytes(ly, incy, elem, &out[2]);
}

static inline cublasStatus_t crm_blas_ger_check(int64_t m, int64_t n, int64_t incx, int64_t incy, int64_t lda)
{
    if (m < 0 || n < 0 || incx == 0 || incy == 0 || lda < crm_blas_max1(m))
        return CUBLAS_STATUS_INVALID_VALUE;
    return CUBLAS_STATUS_SUCCESS;
}

/* Footprints of x, y and A of a ger with valid arguments; none when m or n is 0. */
static inline int crm_blas_ger_bytes(int64_t m, int64_t n, int64_t incx, int64_t incy, int64_t lda, size_t elem,
                                     uint64_t out[3])
{
    out[0] = out[1] = out[2] = 0;
    if (m == 0 || n == 0)
        return 0;
    if (crm_blas_vec_bytes(m, incx, elem, &out[0]) != 0 || crm_blas_vec_bytes(n, incy, elem, &out[1]) != 0)
        return -1;
    return crm_blas_mat_bytes(m, n, lda, elem, &out[2]);
}

/* geam: C = alpha op(A) + beta op(B), C m x n. In place is allowed only as cuBLAS
 * allows it: C == A needs lda == ldc and transa == N, C == B likewise. */
static inline cublasStatus_t crm_blas_geam_check(int transa, int transb, int64_t m, int64_t n, uint64_t A, int64_t lda,
                                                 uint64_t B, int64_t ldb, uint64_t C, int64_t ldc)
{
    if (!crm_blas_op_ok(transa) || !crm_blas_op_ok(transb) || m < 0 || n < 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (lda < crm_blas_max1(transa == CUBLAS_OP_N ? m : n) || ldb < crm_blas_max1(transb == CUBLAS_OP_N ? m : n) ||
        ldc < crm_blas_max1(m))
        return CUBLAS_STATUS_INVALID_VALUE;
    if (m > 0 && n > 0 && ((C == A && (lda != ldc || transa != CUBLAS_OP_N)) ||
                           (C == B && (ldb != ldc || transb != CUBLAS_OP_N))))
        return CUBLAS_STATUS_INVALID_VALUE;
    return CUBLAS_STATUS_SUCCESS;
}

#endif
