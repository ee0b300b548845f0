/* crm_blas_grouped.c -- the shim's grouped batched GEMMs (cublasSgemmGroupedBatched,
 * cublasDgemmGroupedBatched, cublasGemmGroupedBatchedEx and their _64 forms).
 *
 * Group i holds group_size[i] problems sharing its transposes, sizes, leading
 * dimensions and scaling factors; the device arrays Aarray, Barray and Carray list
 * every problem's matrices, group after group. That is one pointer-array batch per
 * group, so each group travels as cublasGemmBatchedEx on its slice of the arrays
 * (queued: no round trip), after every group's arguments have been checked as
 * cuBLAS checks them. Hand-written: the per-group host arrays are beyond what a
 * generated row describes. The scaling factors are read by the handle's pointer
 * mode, factor i at alpha_array + i (host or device memory). The _64 forms take
 * sizes within int's range (NOT_SUPPORTED beyond it, the batched call's limit). */
#include <limits.h>
#include "interpose/crm_blas.h"
#include "interpose/crm_export.h"
#include "protocol/cublas_shape.h"

/* One grouped call, whichever form: its per-group arrays (int or int64_t). */
typedef struct crm__grouped {
    const cublasOperation_t *ta, *tb;
    const void *m, *n, *k, *lda, *ldb, *ldc, *size;
    int wide;                    /* the _64 forms: int64_t arrays */
    int64_t count;               /* groups */
    const char *alpha, *beta;    /* scaling factors, `scale` bytes each */
    size_t scale;
    const void *const *A, *const *B;
    void *const *C;
    cudaDataType type;           /* of A, B and C */
    cublasComputeType_t compute;
} crm__grouped;

static int64_t crm__at(const crm__grouped *g, const void *arr, int64_t i)
{
    return g->wide ? ((const int64_t *)arr)[i] : ((const int *)arr)[i];
}

/* cuBLAS's argument rules for every group, before any runs. */
static cublasStatus_t crm__grouped_check(const crm__grouped *g)
{
    if (g->count < 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (g->count > 0 && (!g->ta || !g->tb || !g->m || !g->n || !g->k || !g->lda || !g->ldb || !g->ldc ||
                         !g->size || !g->alpha || !g->beta))
        return CUBLAS_STATUS_INVALID_VALUE;
    int wide = 0;
    for (int64_t i = 0; i < g->count; i++) {
        int64_t v[7] = {crm__at(g, g->m, i),   crm__at(g, g->n, i),   crm__at(g, g->k, i),   crm__at(g, g->lda, i),
                        crm__at(g, g->ldb, i), crm__at(g, g->ldc, i), crm__at(g, g->size, i)};
        if (crm_blas_gemm_check(g->ta[i], g->tb[i], v[0], v[1], v[2], v[3], v[4], v[5]) != CUBLAS_STATUS_SUCCESS ||
            v[6] < 0)
            return CUBLAS_STATUS_INVALID_VALUE;
        wide |= !crm_blas_fit_int(7, v);
    }
    return wide ? CUBLAS_STATUS_NOT_SUPPORTED : CUBLAS_STATUS_SUCCESS;
}

/* Each group as one pointer-array batch on its slice of the arrays. */
static cublasStatus_t crm__grouped_run(cublasHandle_t h, const crm__grouped *g)
{
    cublasStatus_t rc = crm__grouped_check(g);
    int64_t first = 0;
    for (int64_t i = 0; rc == CUBLAS_STATUS_SUCCESS && i < g->count; i++) {
        int size = (int)crm__at(g, g->size, i);
        if (size > 0)
            rc = cublasGemmBatchedEx(h, g->ta[i], g->tb[i], (int)crm__at(g, g->m, i), (int)crm__at(g, g->n, i),
                                     (int)crm__at(g, g->k, i), g->alpha + i * g->scale, g->A + first, g->type,
                                     (int)crm__at(g, g->lda, i), g->B + first, g->type, (int)crm__at(g, g->ldb, i),
                                     g->beta + i * g->scale, g->C + first, g->type, (int)crm__at(g, g->ldc, i), size,
                                     g->compute, CUBLAS_GEMM_DEFAULT);
        first += size;
    }
    return rc;
}

/* The data types GemmGroupedBatchedEx computes: A, B and C alike, float, half or
 * bfloat16 in a float compute type, double in a double one; bytes of its scaling
 * factors, or 0 for a combination it does not. */
static size_t crm__grouped_scale(cudaDataType a, cudaDataType b, cudaDataType c, cublasComputeType_t compute)
{
    if (a != b || a != c)
        return 0;
    switch (compute) {
    case CUBLAS_COMPUTE_32F: case CUBLAS_COMPUTE_32F_PEDANTIC: case CUBLAS_COMPUTE_32F_FAST_16F:
    case CUBLAS_COMPUTE_32F_FAST_16BF: case CUBLAS_COMPUTE_32F_FAST_TF32:
        return a == CUDA_R_32F || a == CUDA_R_16F || a == CUDA_R_16BF ? 4 : 0;
    case CUBLAS_COMPUTE_64F: case CUBLAS_COMPUTE_64F_PEDANTIC:
        return a == CUDA_R_64F ? 8 : 0;
    default:
        return 0;
    }
}

/* The arguments every form shares, in cuBLAS's order. */
#define CRM__GROUPED_ARGS(INT)                                                                                  \
    cublasHandle_t handle, const cublasOperation_t transa_array[], const cublasOperation_t transb_array[],     \
        const INT m_array[], const INT n_array[], const INT k_array[]
#define CRM__GROUPED(WIDE, ALPHA, A, TYPE, COMPUTE)                                                            \
    crm__grouped g = {transa_array, transb_array, m_array, n_array, k_array, lda_array, ldb_array, ldc_array,  \
                      group_size, WIDE, group_count, (const char *)(ALPHA), (const char *)beta_array,          \
                      sizeof *(ALPHA), (const void *const *)(A), (const void *const *)Barray,                  \
                      (void *const *)Carray, TYPE, COMPUTE}

CRM_EXPORT cublasStatus_t cublasSgemmGroupedBatched(CRM__GROUPED_ARGS(int), const float alpha_array[],
                                                    const float *const Aarray[], const int lda_array[],
                                                    const float *const Barray[], const int ldb_array[],
                                                    const float beta_array[], float *const Carray[],
                                                    const int ldc_array[], int group_count, const int group_size[])
{
    CRM__GROUPED(0, alpha_array, Aarray, CUDA_R_32F, CUBLAS_COMPUTE_32F);
    return crm__grouped_run(handle, &g);
}

CRM_EXPORT cublasStatus_t cublasSgemmGroupedBatched_64(CRM__GROUPED_ARGS(int64_t), const float alpha_array[],
                                                       const float *const Aarray[], const int64_t lda_array[],
                                                       const float *const Barray[], const int64_t ldb_array[],
                                                       const float beta_array[], float *const Carray[],
                                                       const int64_t ldc_array[], int64_t group_count,
                                                       const int64_t group_size[])
{
    CRM__GROUPED(1, alpha_array, Aarray, CUDA_R_32F, CUBLAS_COMPUTE_32F);
    return crm__grouped_run(handle, &g);
}

CRM_EXPORT cublasStatus_t cublasDgemmGroupedBatched(CRM__GROUPED_ARGS(int), const double alpha_array[],
                                                    const double *const Aarray[], const int lda_array[],
                                                    const double *const Barray[], const int ldb_array[],
                                                    const double beta_array[], double *const Carray[],
                                                    const int ldc_array[], int group_count, const int group_size[])
{
    CRM__GROUPED(0, alpha_array, Aarray, CUDA_R_64F, CUBLAS_COMPUTE_64F);
    return crm__grouped_run(handle, &g);
}

CRM_EXPORT cublasStatus_t cublasDgemmGroupedBatched_64(CRM__GROUPED_ARGS(int64_t), const double alpha_array[],
                                                       const double *const Aarray[], const int64_t lda_array[],
                                                       const double *const Barray[], const int64_t ldb_array[],
                                                       const double beta_array[], double *const Carray[],
                                                       const int64_t ldc_array[], int64_t group_count,
                                                       const int64_t group_size[])
{
    CRM__GROUPED(1, alpha_array, Aarray, CUDA_R_64F, CUBLAS_COMPUTE_64F);
    return crm__grouped_run(handle, &g);
}

/* Ex: the scaling factors' size follows the compute type. */
#define CRM__GROUPED_EX(WIDE)                                                                                    \
    size_t scale = crm__grouped_scale(Atype, Btype, Ctype, computeType);                                        \
    if (scale == 0)                                                                                              \
        return CUBLAS_STATUS_NOT_SUPPORTED;                                                                      \
    CRM__GROUPED(WIDE, (const char *)alpha_array, Aarray, Atype, computeType);                                  \
    g.scale = scale;                                                                                             \
    return crm__grouped_run(handle, &g)

CRM_EXPORT cublasStatus_t cublasGemmGroupedBatchedEx(CRM__GROUPED_ARGS(int), const void *alpha_array,
                                                     const void *const Aarray[], cudaDataType_t Atype,
                                                     const int lda_array[], const void *const Barray[],
                                                     cudaDataType_t Btype, const int ldb_array[],
                                                     const void *beta_array, void *const Carray[],
                                                     cudaDataType_t Ctype, const int ldc_array[], int group_count,
                                                     const int group_size[], cublasComputeType_t computeType)
{
    CRM__GROUPED_EX(0);
}

CRM_EXPORT cublasStatus_t cublasGemmGroupedBatchedEx_64(CRM__GROUPED_ARGS(int64_t), const void *alpha_array,
                                                        const void *const Aarray[], cudaDataType_t Atype,
                                                        const int64_t lda_array[], const void *const Barray[],
                                                        cudaDataType_t Btype, const int64_t ldb_array[],
                                                        const void *beta_array, void *const Carray[],
                                                        cudaDataType_t Ctype, const int64_t ldc_array[],
                                                        int64_t group_count, const int64_t group_size[],
                                                        cublasComputeType_t computeType)
{
    CRM__GROUPED_EX(1);
}
