/* crm_emu_lt.c -- the emulated cuBLASLt: handles and cublasLtMatmul with its
 * epilogues, computed on the CPU.
 *
 * One batch item runs as: T = alpha * op(A) op(B) with OpenBLAS (cblas_dgemm for
 * double data, cblas_sgemm otherwise: half and bfloat16 operands are converted to
 * float first, which is cuBLASLt's CUBLAS_COMPUTE_32F for them), then per element
 * v = T + beta * C (C unread when beta is 0) + bias[row], the epilogue, and the
 * store into D in its type. Epilogues, as cuBLASLt defines them:
 *   RELU, GELU      v = max(v, 0), v = gelu(v) (tanh form); their _AUX forms store
 *                   the ReLU bit mask (bit row + col * ld) or the GELU input;
 *   DRELU, DGELU    v = v * relu'(aux), v = v * gelu'(aux) (aux read);
 *   *_BGRAD         the bias gradient: bias[row] = sum over columns of the final D;
 *   BGRADA, BGRADB  bias[row] = sum over k of op(A)[row, :], bias[col] = sum over
 *                   k of op(B)[:, col] (D is the plain product then).
 * Every range the call touches is checked against device memory first, so a bad
 * pointer changes nothing. Streams run synchronously: the call is done on return.
 */
#include "server/emu/crm_emu_lt.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct cublasLtContext {
    int unused;
};

static crm__registry crm__lt_handles; /* live struct cublasLtContext * */

CRM_EXPORT cublasStatus_t cublasLtCreate(cublasLtHandle_t *lightHandle)
{
    if (lightHandle == NULL)
        return CUBLAS_STATUS_INVALID_VALUE;
    struct cublasLtContext *h = calloc(1, sizeof *h);
    if (h == NULL)
        return CUBLAS_STATUS_ALLOC_FAILED;
    openblas_set_num_threads(1);
    crm__emu_wrlock();
    int rc = crm__registry_add(&crm__lt_handles, h);
    crm__emu_unlock();
    if (rc != 0) {
        free(h);
        return CUBLAS_STATUS_ALLOC_FAILED;
    }
    *lightHandle = h;
    return CUBLAS_STATUS_SUCCESS;
}

CRM_EXPORT cublasStatus_t cublasLtDestroy(cublasLtHandle_t lightHandle)
{
    crm__emu_wrlock();
    int rc = lightHandle == NULL ? -1 : crm__registry_remove(&crm__lt_handles, lightHandle);
    crm__emu_unlock();
    if (rc != 0)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    free(lightHandle);
    return CUBLAS_STATUS_SUCCESS;
}

/* --- elements ------------------------------------------------------------------------- */


#define CRM__GELU_K 0.7978845608028654 /* sqrt(2 / pi) */
#define CRM__GELU_C 0.044715

static double crm__gelu(double x)
{
    return 0.5 * x * (1.0 + tanh(CRM__GELU_K * (x + CRM__GELU_C * x * x * x)));
}

static double crm__dgelu(double x)
{
    double t = tanh(CRM__GELU_K * (x + CRM__GELU_C * x * x * x));
    return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * CRM__GELU_K * (1.0 + 3.0 * CRM__GELU_C * x * x);
}

/* --- the problem ---------------------------------------------------------------------- */

static cublasStatus_t crm__scalar(const crm_lt_op *op, const void *p, double *out)
{
    unsigned char raw[8];
    size_t size = crm_lt_scale_size(op->scale);
    if (p == NULL)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (op->pmode == CUBLASLT_POINTER_MODE_DEVICE && crm__blas_dev(p, size) != CUBLAS_STATUS_SUCCESS)
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(raw, p, size);
    *out = crm__elem_real(op->scale, raw, 0);
    return CUBLAS_STATUS_SUCCESS;
}

/* Checks a span `first` (<= 0) bytes from p. */
static cublasStatus_t crm__span(const void *p, int64_t first, uint64_t bytes)
{
    if (bytes == 0)
        return CUBLAS_STATUS_SUCCESS;
    if ((uint64_t)0 - (uint64_t)first > (uint64_t)(uintptr_t)p)
        return CUBLAS_STATUS_INVALID_VALUE;
    return crm__blas_dev((const char *)p + first, bytes);
}

/* A float (or, for double data, double) dense copy of the stored matrix x at p:
 * rows x cols with leading dimension rows. NULL when memory runs out. */
static void *crm__dense(const crm_lt_mat *x, const void *p, int as_double)
{
    size_t count = (size_t)x->rows * (size_t)x->cols;
    void *out = malloc((count ? count : 1) * (as_double ? sizeof(double) : sizeof(float)));
    for (int64_t j = 0; out != NULL && j < x->cols; j++)
        for (int64_t i = 0; i < x->rows; i++) {
            double v = crm__elem_real(x->type, p, (size_t)(i + j * x->ld));
            if (as_double)
                ((double *)out)[i + j * x->rows] = v;
            else
                ((float *)out)[i + j * x->rows] = (float)v;
        }
    return out;
}

/* t (m x n, ld m) = alpha op(A) op(B); double when as_double, else float. */
static cublasStatus_t crm__product(const crm_lt_op *op, const void *A, const void *B, double alpha, int as_double,
                                   void *t)
{
    int m = (int)op->m, n = (int)op->n, k = (int)op->k;
    if (k == 0 || alpha == 0.0) {
        memset(t, 0, (size_t)m * (size_t)n * (as_double ? sizeof(double) : sizeof(float)));
        return CUBLAS_STATUS_SUCCESS;
    }
    void *a = crm__dense(&op->a, A, as_double), *b = crm__dense(&op->b, B, as_double);
    if (a == NULL || b == NULL) {
        free(a);
        free(b);
        return CUBLAS_STATUS_ALLOC_FAILED;
    }
    int lda = (int)crm_blas_max1(op->a.rows), ldb = (int)crm_blas_max1(op->b.rows);
    if (as_double)
        cblas_dgemm(CblasColMajor, crm__blas_trans(op->transa), crm__blas_trans(op->transb), m, n, k, alpha, a, lda,
                    b, ldb, 0.0, t, m);
    else
        cblas_sgemm(CblasColMajor, crm__blas_trans(op->transa), crm__blas_trans(op->transb), m, n, k, (float)alpha,
                    a, lda, b, ldb, 0.0f, t, m);
    free(a);
    free(b);
    return CUBLAS_STATUS_SUCCESS;
}

/* The element (i, l) of op(X) for X stored with layout x at p. */
static double crm__op_elem(const crm_lt_mat *x, int trans, const void *p, int64_t i, int64_t l)
{
    return trans == CUBLAS_OP_N ? crm__elem_real(x->type, p, (size_t)(i + l * x->ld))
                                : crm__elem_real(x->type, p, (size_t)(l + i * x->ld));
}

typedef struct crm__item {
    const void *A, *B, *C;
    void *D, *bias, *aux;
} crm__item;

/* One batch item of a checked problem. */
static cublasStatus_t crm__run_item(const crm_lt_op *op, const crm__item *it, double alpha, double beta)
{
    int dbl = op->a.type == CUDA_R_64F;
    size_t mn = (size_t)op->m * (size_t)op->n;
    void *t = malloc((mn ? mn : 1) * (dbl ? sizeof(double) : sizeof(float)));
    double *bgrad = crm_lt_epi_bgrad(op->epilogue) ? calloc((size_t)(op->m > op->n ? op->m : op->n), sizeof(double))
                                                   : NULL;
    cublasStatus_t st = t == NULL || (crm_lt_epi_bgrad(op->epilogue) && bgrad == NULL)
                            ? CUBLAS_STATUS_ALLOC_FAILED
                            : crm__product(op, it->A, it->B, alpha, dbl, t);
    uint32_t e = op->epilogue;
    for (int64_t j = 0; st == CUBLAS_STATUS_SUCCESS && j < op->n; j++) {
        for (int64_t i = 0; i < op->m; i++) {
            size_t ti = (size_t)(i + j * op->m);
            double v = dbl ? ((double *)t)[ti] : ((float *)t)[ti];
            if (beta != 0.0)
                v += beta * crm__elem_real(op->c.type, it->C, (size_t)(i + j * op->c.ld));
            if (crm_lt_epi_bias(e))
                v += crm__elem_real(op->bias_type, it->bias, (size_t)i);
            size_t ai = (size_t)(i + j * op->aux_ld);
            unsigned char *mask = it->aux;
            if (crm_lt_epi_relu(e)) {
                if (crm_lt_epi_aux(e)) {
                    if (v > 0)
                        mask[ai / 8] |= (unsigned char)(1u << (ai % 8));
                    else
                        mask[ai / 8] &= (unsigned char)~(1u << (ai % 8));
                }
                v = v > 0 ? v : 0;
            } else if (crm_lt_epi_gelu(e)) {
                if (crm_lt_epi_aux(e))
                    crm__elem_put_real(op->aux_type, it->aux, ai, v);
                v = crm__gelu(v);
            } else if (crm_lt_epi_drelu(e)) {
                v = (mask[ai / 8] >> (ai % 8)) & 1u ? v : 0.0;
            } else if (crm_lt_epi_dgelu(e)) {
                v *= crm__dgelu(crm__elem_real(op->aux_type, it->aux, ai));
            }
            crm__elem_put_real(op->d.type, it->D, (size_t)(i + j * op->d.ld), v);
            if (e == CUBLASLT_EPILOGUE_DRELU_BGRAD || e == CUBLASLT_EPILOGUE_DGELU_BGRAD)
                bgrad[i] += crm__elem_real(op->d.type, it->D, (size_t)(i + j * op->d.ld));
        }
    }
    if (st == CUBLAS_STATUS_SUCCESS && (e == CUBLASLT_EPILOGUE_BGRADA || e == CUBLASLT_EPILOGUE_BGRADB)) {
        int64_t len = e == CUBLASLT_EPILOGUE_BGRADA ? op->m : op->n;
        for (int64_t r = 0; r < len; r++)
            for (int64_t l = 0; l < op->k; l++)
                bgrad[r] += e == CUBLASLT_EPILOGUE_BGRADA ? crm__op_elem(&op->a, op->transa, it->A, r, l)
                                                          : crm__op_elem(&op->b, op->transb, it->B, l, r);
    }
    if (st == CUBLAS_STATUS_SUCCESS && bgrad != NULL)
        for (int64_t r = 0; r < (e == CUBLASLT_EPILOGUE_BGRADB ? op->n : op->m); r++)
            crm__elem_put_real(op->bias_type, it->bias, (size_t)r, bgrad[r]);
    free(t);
    free(bgrad);
    return st;
}

/* Batch item b of a strided operand (integer arithmetic: p may be NULL when unused). */
static void *crm__at(const void *p, int64_t stride, size_t elem, int b)
{
    return (void *)((uintptr_t)p + (uintptr_t)(stride * (int64_t)b * (int64_t)elem));
}

/* The workspace and the algorithm are accepted as given: the CPU needs neither. */
CRM_EXPORT cublasStatus_t cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc,
                                         const void *alpha, const void *A, cublasLtMatrixLayout_t Adesc,
                                         const void *B, cublasLtMatrixLayout_t Bdesc, const void *beta,
                                         const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
                                         cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo,
                                         void *workspace, size_t workspaceSizeInBytes, cudaStream_t stream)
{
    crm_lt_op op;
    double a, b;
    int64_t first[CRM_LT_NOPS];
    uint64_t bytes[CRM_LT_NOPS];
    (void)algo;
    crm__emu_rdlock();
    /* a cuBLAS handle serves as a cuBLASLt handle, as NVIDIA's libraries allow */
    int live = crm__registry_has(&crm__lt_handles, lightHandle) || crm__blas_live((cublasHandle_t)(void *)lightHandle);
    cublasStatus_t st = live ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
    if (st == CUBLAS_STATUS_SUCCESS)
        st = crm__lt_problem(computeDesc, Adesc, Bdesc, Cdesc, Ddesc, &op);
    if (st == CUBLAS_STATUS_SUCCESS && op.pmode != CUBLASLT_POINTER_MODE_HOST &&
        op.pmode != CUBLASLT_POINTER_MODE_DEVICE)
        st = CUBLAS_STATUS_NOT_SUPPORTED;
    if (st == CUBLAS_STATUS_SUCCESS)
        st = crm_lt_emu_types(&op);
    if (st == CUBLAS_STATUS_SUCCESS && crm__stream_check(stream, NULL) != cudaSuccess)
        st = CUBLAS_STATUS_INVALID_VALUE;
    if (st != CUBLAS_STATUS_SUCCESS || op.m == 0 || op.n == 0)
        goto out;
    if ((st = crm__scalar(&op, alpha, &a)) != CUBLAS_STATUS_SUCCESS ||
        (st = crm__scalar(&op, beta, &b)) != CUBLAS_STATUS_SUCCESS)
        goto out;
    const void *base[CRM_LT_NOPS] = {A, B, C, D, (void *)(uintptr_t)op.bias, (void *)(uintptr_t)op.aux};
    if (crm_lt_op_spans(&op, first, bytes) != 0) {
        st = CUBLAS_STATUS_INVALID_VALUE;
        goto out;
    }
    if (b == 0.0)
        bytes[CRM_LT_C] = 0; /* C is not read */
    for (int i = 0; i < CRM_LT_NOPS && st == CUBLAS_STATUS_SUCCESS; i++)
        st = crm__span(base[i], first[i], bytes[i]);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = crm__blas_dev(workspace, workspaceSizeInBytes);
    for (int bi = 0; bi < op.d.batch && st == CUBLAS_STATUS_SUCCESS; bi++) {
        int bits = crm_lt_epi_aux_bits(op.epilogue);
        crm__item it = {
            crm__at(A, op.a.stride, crm_blas_type_size(op.a.type), bi),
            crm__at(B, op.b.stride, crm_blas_type_size(op.b.type), bi),
            crm__at(C, op.c.stride, crm_blas_type_size(op.c.type), bi),
            crm__at(D, op.d.stride, crm_blas_type_size(op.d.type), bi),
            crm__at(base[CRM_LT_BIAS], op.bias_stride, crm_blas_type_size(op.bias_type), bi),
            crm__at(base[CRM_LT_AUX], bits ? op.aux_stride / 8 : op.aux_stride,
                    bits ? 1 : crm_blas_type_size(op.aux_type), bi)};
        st = crm__run_item(&op, &it, a, b);
    }
out:
    crm__emu_unlock();
    return st;
}
