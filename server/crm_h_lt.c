/* crm_h_lt.c -- handlers of the cuBLASLt calls: the session's cuBLASLt handles
 * (created under the client's ids, destroyed with it) and cublasLtMatmul.
 *
 * A matmul arrives as its problem by value (protocol/cublaslt_types.x). The handler
 * applies cuBLASLt's rules again (common/crm_lt_desc.h), decodes alpha and beta by
 * pointer mode, checks every device range the call touches (A, B, C, D with every
 * batch item, the bias or bias gradient, the epilogue's aux buffer, the workspace)
 * against the session's allocations, then rebuilds backend descriptors from the
 * values and calls the backend's cublasLtMatmul with no algorithm (the backend
 * picks its own). On a GPU that is the real cuBLASLt; the emulated device exports
 * the same functions. */
#include "common/crm_lt_desc.h"
#include "server/crm_h_blas.h"

#define CRM__P(a) ((void *)(uintptr_t)(a))

static void crm__destroy(void *handle)
{
    if (crm_rt.cublasLtDestroy != NULL)
        crm_rt.cublasLtDestroy(handle);
}

/* The client chose the id; a taken id (or 0) is refused, never replaced. */
cublasStatus_t crm_srv_cublasLtCreate(crm_session *s, uint64_t id)
{
    cublasLtHandle_t h;
    void *old;
    if (crm_rt.cublasLtCreate == NULL || crm_rt.cublasLtDestroy == NULL)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    if (id == 0 || crm_idmap_get(&s->handles, id, &old) == 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (crm_session_room(s, CRM_LIMIT_HANDLES, 1) != 0)
        return CUBLAS_STATUS_ALLOC_FAILED;
    cublasStatus_t st = crm_rt.cublasLtCreate(&h);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    if (crm_session_handle_add(s, CRM_HANDLE_cublasLtHandle_t, id, h, crm__destroy) != 0) {
        crm_rt.cublasLtDestroy(h);
        return CUBLAS_STATUS_ALLOC_FAILED;
    }
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t crm_srv_cublasLtDestroy(crm_session *s, uint64_t handle)
{
    void *h;
    if (crm_rt.cublasLtDestroy == NULL)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    if (crm_session_handle_del(s, CRM_HANDLE_cublasLtHandle_t, handle, &h) != 0)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    return crm_rt.cublasLtDestroy(h);
}

/* --- matmul ----------------------------------------------------------------------------- */

static void crm__mat(const crm_lt_wire_mat *w, crm_lt_mat *m)
{
    *m = (crm_lt_mat){w->type, w->rows, w->cols, w->ld, w->batch, w->stride};
}

static void crm__op(const crm_lt_wire_op *w, crm_lt_op *op)
{
    memset(op, 0, sizeof *op);
    op->compute = w->compute;
    op->scale = w->scale;
    op->pmode = w->pmode;
    op->transa = w->transa;
    op->transb = w->transb;
    op->epilogue = w->epilogue;
    op->bias = w->bias;
    op->bias_type = w->bias_type;
    op->bias_stride = w->bias_stride;
    op->aux = w->aux;
    op->aux_type = w->aux_type;
    op->aux_ld = w->aux_ld;
    op->aux_stride = w->aux_stride;
    crm__mat(&w->a, &op->a);
    crm__mat(&w->b, &op->b);
    crm__mat(&w->c, &op->c);
    crm__mat(&w->d, &op->d);
}

/* The range of `bytes` starting `first` (<= 0) bytes from base lies in one
 * allocation of the session. */
static cublasStatus_t crm__span(crm_session *s, uint64_t base, int64_t first, uint64_t bytes)
{
    uint64_t back = (uint64_t)0 - (uint64_t)first;
    if (bytes == 0)
        return CUBLAS_STATUS_SUCCESS;
    if (back > base)
        return CUBLAS_STATUS_INVALID_VALUE;
    return crm_hblas_region(s, base - back, bytes);
}

static cublasStatus_t crm__layout(const crm_lt_mat *m, cublasLtMatrixLayout_t *out)
{
    int32_t batch = m->batch;
    int64_t stride = m->stride;
    cublasStatus_t st = crm_rt.cublasLtMatrixLayoutCreate(out, (cudaDataType)m->type, (uint64_t)m->rows,
                                                          (uint64_t)m->cols, m->ld);
    if (st != CUBLAS_STATUS_SUCCESS) {
        *out = NULL;
        return st;
    }
    if (batch != 1)
        st = crm_rt.cublasLtMatrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch);
    if (st == CUBLAS_STATUS_SUCCESS && stride != 0)
        st = crm_rt.cublasLtMatrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                                     sizeof stride);
    return st;
}

/* Sets one attribute of a backend matmul descriptor when st is still SUCCESS. */
static cublasStatus_t crm__set(cublasStatus_t st, cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr,
                               const void *v, size_t size)
{
    return st == CUBLAS_STATUS_SUCCESS ? crm_rt.cublasLtMatmulDescSetAttribute(d, attr, v, size) : st;
}

/* A backend matmul descriptor with the problem's attributes (the data types of
 * bias and aux only when they differ from D's, cuBLASLt's default). */
static cublasStatus_t crm__desc(const crm_lt_op *op, cublasLtMatmulDesc_t *out)
{
    int32_t pmode = op->pmode, ta = op->transa, tb = op->transb;
    int32_t bias_type = op->bias_type, aux_type = op->aux_type;
    uint32_t epi = op->epilogue;
    void *bias = CRM__P(op->bias), *aux = CRM__P(op->aux);
    int64_t bias_stride = op->bias_stride, aux_ld = op->aux_ld, aux_stride = op->aux_stride;
    cublasStatus_t st =
        crm_rt.cublasLtMatmulDescCreate(out, (cublasComputeType_t)op->compute, (cudaDataType_t)op->scale);
    if (st != CUBLAS_STATUS_SUCCESS) {
        *out = NULL;
        return st;
    }
    st = crm__set(st, *out, CUBLASLT_MATMUL_DESC_POINTER_MODE, &pmode, sizeof pmode);
    st = crm__set(st, *out, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
    st = crm__set(st, *out, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
    st = crm__set(st, *out, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi);
    if (crm_lt_epi_bias(epi) || crm_lt_epi_bgrad(epi)) {
        st = crm__set(st, *out, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias);
        if (bias_stride != 0)
            st = crm__set(st, *out, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, &bias_stride, sizeof bias_stride);
        if (bias_type != op->d.type)
            st = crm__set(st, *out, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof bias_type);
    }
    if (crm_lt_epi_aux(epi)) {
        st = crm__set(st, *out, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof aux);
        st = crm__set(st, *out, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &aux_ld, sizeof aux_ld);
        if (aux_stride != 0)
            st = crm__set(st, *out, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, &aux_stride, sizeof aux_stride);
        if (!crm_lt_epi_aux_bits(epi) && aux_type != op->d.type)
            st = crm__set(st, *out, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, &aux_type, sizeof aux_type);
    }
    return st;
}

/* Checks everything the call touches; SUCCESS with the scalars decoded. */
static cublasStatus_t crm__check(crm_session *s, crm_lt_op *op, uint64_t alpha, uint64_t beta,
                                 const uint64_t base[CRM_LT_NOPS], uint64_t workspace, uint64_t wsize,
                                 crm_hblas_scalar *a, crm_hblas_scalar *b)
{
    int64_t first[CRM_LT_NOPS];
    uint64_t bytes[CRM_LT_NOPS];
    size_t size = crm_lt_scale_size(op->scale);
    if (op->pmode != CUBLASLT_POINTER_MODE_HOST && op->pmode != CUBLASLT_POINTER_MODE_DEVICE)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    cublasStatus_t st = crm_lt_op_check(op);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = crm_hblas_scalar_in(s, op->pmode, alpha, size, a);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = crm_hblas_scalar_in(s, op->pmode, beta, size, b);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    if (crm_lt_op_spans(op, first, bytes) != 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    for (int i = 0; i < CRM_LT_NOPS; i++)
        if (crm__span(s, base[i], first[i], bytes[i]) != CUBLAS_STATUS_SUCCESS)
            return CUBLAS_STATUS_INVALID_VALUE;
    return crm_hblas_region(s, workspace, wsize);
}

cublasStatus_t crm_srv_cublasLtMatmul(crm_session *s, uint64_t handle, const crm_lt_wire_op *op_w, uint64_t alpha,
                                      uint64_t A, uint64_t B, uint64_t beta, uint64_t C, uint64_t D,
                                      uint64_t workspace, uint64_t workspaceSizeInBytes, uint64_t stream)
{
    void *h;
    cudaStream_t hs;
    crm_lt_op op;
    crm_hblas_scalar a, b;
    cublasLtMatmulDesc_t desc = NULL;
    cublasLtMatrixLayout_t lay[4] = {NULL, NULL, NULL, NULL};
    if (crm_rt.cublasLtMatmul == NULL || crm_rt.cublasLtMatmulDescCreate == NULL ||
        crm_rt.cublasLtMatmulDescDestroy == NULL || crm_rt.cublasLtMatmulDescSetAttribute == NULL ||
        crm_rt.cublasLtMatrixLayoutCreate == NULL || crm_rt.cublasLtMatrixLayoutDestroy == NULL ||
        crm_rt.cublasLtMatrixLayoutSetAttribute == NULL)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    /* a cuBLAS handle serves as a cuBLASLt handle (NVIDIA documents the cast) */
    if (crm_session_handle(s, CRM_HANDLE_cublasLtHandle_t, handle, &h) != 0 &&
        crm_session_handle(s, CRM_HANDLE_cublasHandle_t, handle, &h) != 0)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (crm_session_stream(s, stream, &hs) != cudaSuccess)
        return CUBLAS_STATUS_INVALID_VALUE;
    crm__op(op_w, &op);
    const uint64_t base[CRM_LT_NOPS] = {A, B, C, D, op.bias, op.aux};
    cublasStatus_t st = crm__check(s, &op, alpha, beta, base, workspace, workspaceSizeInBytes, &a, &b);
    if (st != CUBLAS_STATUS_SUCCESS || op.m == 0 || op.n == 0)
        return st;
    const crm_lt_mat *mats[4] = {&op.a, &op.b, &op.c, &op.d};
    st = crm__desc(&op, &desc);
    for (int i = 0; i < 4 && st == CUBLAS_STATUS_SUCCESS; i++)
        st = crm__layout(mats[i], &lay[i]);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = crm_rt.cublasLtMatmul(h, desc, crm_hblas_ptr(&a), CRM__P(A), lay[0], CRM__P(B), lay[1],
                                   crm_hblas_ptr(&b), CRM__P(C), lay[2], CRM__P(D), lay[3], NULL, CRM__P(workspace),
                                   (size_t)workspaceSizeInBytes, hs);
    for (int i = 0; i < 4; i++)
        if (lay[i] != NULL)
            crm_rt.cublasLtMatrixLayoutDestroy(lay[i]);
    if (desc != NULL)
        crm_rt.cublasLtMatmulDescDestroy(desc);
    return st;
}
