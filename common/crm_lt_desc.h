/* crm_lt_desc.h -- the contents of cuBLASLt's matmul, matrix-layout and preference
 * descriptors, the rules cuBLASLt applies when their attributes are set, and the
 * rules and memory footprints of one cublasLtMatmul problem. Shared by the shim
 * (its descriptors are local objects), the server (it re-checks the problem that
 * arrives by value and sizes the device ranges the call touches) and the emulated
 * device (its descriptors are these structs). Header-only: static inline and pure.
 *
 * A descriptor lives inside NVIDIA's semi-opaque struct (cublasLtMatrixLayoutOpaque_t
 * is 64 bytes, cublasLtMatmulDescOpaque_t 256, cublasLtMatmulPreferenceOpaque_t 64),
 * so the *Init_internal forms work on memory the program owns, as with cuBLASLt.
 * Attributes are stored as the bytes the program set; Set and Get need the exact
 * size of the attribute (CUBLAS_STATUS_INVALID_VALUE otherwise, and for unknown
 * attribute ids).
 *
 * The problem rules answer CUBLAS_STATUS_INVALID_VALUE for what cuBLASLt rejects
 * (inconsistent shapes, leading dimensions too small, a missing bias or epilogue
 * buffer) and CUBLAS_STATUS_NOT_SUPPORTED for what cudarem does not carry: orders
 * other than column-major, planar complex, pointer-array batches, scaling-factor and
 * amax pointers, device-vector pointer modes, TRANSC or FILL_MODE other than their
 * defaults.
 */
#ifndef CRM_LT_DESC_H
#define CRM_LT_DESC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cublasLt.h>
#include "protocol/cublas_shape.h"

#define CRM_LT_MAGIC_LAYOUT 0x4c544d4cu /* "LMTL": set by Init, cleared by Destroy */
#define CRM_LT_MAGIC_MATMUL 0x4c544d4du
#define CRM_LT_MAGIC_PREF 0x4c545052u

typedef struct crm_lt_layout {
    uint32_t magic;
    int32_t type;         /* CUBLASLT_MATRIX_LAYOUT_TYPE (cudaDataType) */
    int32_t order;        /* ORDER, cublasLtOrder_t */
    int32_t batch;        /* BATCH_COUNT */
    uint32_t batch_mode;  /* BATCH_MODE, cublasLtBatchMode_t */
    uint32_t pad_;
    uint64_t rows, cols;  /* ROWS, COLS */
    int64_t ld;           /* LD */
    int64_t stride;       /* STRIDED_BATCH_OFFSET, elements */
    int64_t plane;        /* PLANE_OFFSET, bytes */
} crm_lt_layout;

typedef struct crm_lt_matmul {
    uint32_t magic;
    int32_t compute;          /* COMPUTE_TYPE, cublasComputeType_t */
    int32_t scale;            /* SCALE_TYPE, cudaDataType */
    int32_t pmode;            /* POINTER_MODE, cublasLtPointerMode_t */
    int32_t transa, transb, transc; /* TRANSA/B/C, cublasOperation_t */
    int32_t fill;             /* FILL_MODE */
    uint32_t epilogue;        /* EPILOGUE, cublasLtEpilogue_t */
    int32_t sm_count;         /* SM_COUNT_TARGET (a hint, ignored) */
    int32_t aux_type;         /* EPILOGUE_AUX_DATA_TYPE, -1: D's */
    int32_t bias_type;        /* BIAS_DATA_TYPE, -1: D's */
    int32_t scale_mode[5];    /* A/B/C/D/AUX_SCALE_MODE */
    int32_t dout_scale_mode;  /* D_OUT_SCALE_MODE */
    int8_t fast_accum;        /* FAST_ACCUM (a hint, ignored) */
    int8_t pad_[7];
    uint64_t bias;            /* BIAS_POINTER */
    int64_t bias_stride;      /* BIAS_BATCH_STRIDE */
    uint64_t aux;             /* EPILOGUE_AUX_POINTER */
    int64_t aux_ld;           /* EPILOGUE_AUX_LD */
    int64_t aux_stride;       /* EPILOGUE_AUX_BATCH_STRIDE */
    int64_t alpha_stride;     /* ALPHA_VECTOR_BATCH_STRIDE */
    uint64_t scale_ptr[4];    /* A/B/C/D_SCALE_POINTER */
    uint64_t amax_d;          /* AMAX_D_POINTER */
    uint64_t aux_scale;       /* EPILOGUE_AUX_SCALE_POINTER */
    uint64_t aux_amax;        /* EPILOGUE_AUX_AMAX_POINTER */
    uint64_t dout_scale;      /* D_OUT_SCALE_POINTER */
    uint64_t emulation;       /* EMULATION_DESCRIPTOR */
} crm_lt_matmul;

typedef struct crm_lt_pref {
    uint32_t magic;
    uint32_t search;          /* SEARCH_MODE */
    uint64_t max_workspace;   /* MAX_WORKSPACE_BYTES */
    uint32_t reduction_mask;  /* REDUCTION_SCHEME_MASK */
    uint32_t align[4];        /* MIN_ALIGNMENT_A/B/C/D_BYTES */
    float max_waves;          /* MAX_WAVES_COUNT */
    uint64_t impl_mask;       /* IMPL_MASK */
} crm_lt_pref;

_Static_assert(sizeof(crm_lt_layout) <= sizeof(cublasLtMatrixLayoutOpaque_t), "layout fits");
_Static_assert(sizeof(crm_lt_matmul) <= sizeof(cublasLtMatmulDescOpaque_t), "matmul desc fits");
_Static_assert(sizeof(crm_lt_pref) <= sizeof(cublasLtMatmulPreferenceOpaque_t), "preference fits");

/* One attribute: where its bytes live in the descriptor and how many there are. */
typedef struct crm_lt_attr {
    int id;
    size_t off, size;
} crm_lt_attr;

#define CRM__LT_A(id, type, member) {id, offsetof(type, member), sizeof(((type *)0)->member)}

static const crm_lt_attr crm_lt_layout_attrs[] = {
    CRM__LT_A(CUBLASLT_MATRIX_LAYOUT_TYPE, crm_lt_layout, type),
    CRM__LT_A(CUBLASLT_MATRIX_LAYOUT_ORDER, crm_lt_layout, order),
    CRM__LT_A(CUBLASLT_MATRIX_LAYOUT_ROWS, crm_lt_layout, rows),
    CRM__LT_A(CUBLASLT_MATRIX_LAYOUT_COLS, crm_lt_layout, cols),
    CRM__LT_A(CUBLASLT_MATRIX_LAYOUT_LD, crm_lt_layout, ld),
    CRM__LT_A(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, crm_lt_layout, batch),
    CRM__LT_A(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, crm_lt_layout, stride),
    CRM__LT_A(CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET, crm_lt_layout, plane),
    CRM__LT_A(CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, crm_lt_layout, batch_mode),
};

static const crm_lt_attr crm_lt_matmul_attrs[] = {
    CRM__LT_A(CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, crm_lt_matmul, compute),
    CRM__LT_A(CUBLASLT_MATMUL_DESC_SCALE_TYPE, crm_lt_matmul, scale),
    CRM__LT_A(CUBLASLT_MATMUL_DESC_POINTER_MODE, crm_lt_matmul, pmode),
    CRM__LT_A(CUBLASLT_MATMUL_DESC_TRANSA, crm_lt_matmul, transa),
    CRM__LT_A(CUBLASLT_MATMUL_DESC_TRANSB, crm_lt_matmul, transb),
    CRM__LT_A(CUBLASLT_MATMUL_DESC_TRANSC, crm_lt_matmul, transc),
    CRM__LT_A(CUBLASLT_MATMUL_DESC_FILL_MODE, crm_lt_matmul, fill),
    CRM__LT_A(CUBLASLT_MATMUL_DESC_EPILOGUE, crm_lt_matmul, epilogue),
    CRM__LT_A(CUBLASLT_MATMUL_DESC_BIAS_POINTER, crm_lt_matmul, bias),
    CRM__LT_A(CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, crm_lt_matmul, bias_stride),
    CRM__LT_A(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, crm_lt_matmul, aux),
    CRM__LT_A(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, crm_lt_matmul, aux_ld),
    CRM__LT_A(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, crm_lt_matmul, aux_stride),
    CRM__LT_A(CUBLASLT_MATMUL_DESC_ALPHA_VECTOR_BATCH_STRIDE, crm_lt_matmul, alpha_stride),
    CRM__LT_A(CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, crm_lt_matmul, sm_count),
    CRM__LT_A(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, crm_lt_matmul, scale_ptr[0]),
    CRM__LT_A(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, crm_lt_matmul, scale_ptr[1]),
    CRM__LT_A(CUBLASLT_MATMUL_DESC_C_SCALE_POINTER, crm_lt_matmul, scale_ptr[2]),
    CRM__LT_A(CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, crm_lt_matmul, scale_ptr[3]),
    CRM__LT_A(CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, crm_lt_matmul, amax_d),
    CRM__LT_A(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, crm_lt_matmul, aux_type),
    CRM__LT_A(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_POINTER, crm_lt_matmul, aux_scale),
    CRM__LT_A(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_AMAX_POINTER, crm_lt_matmul, aux_amax),
    CRM__LT_A(CUBLASLT_MATMUL_DESC_FAST_ACCUM, crm_lt_matmul, fast_accum),
    CRM__LT_A(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, crm_lt_matmul, bias_type),
    CRM__LT_A(CUBLASLT_MATMUL_DESC_A_SCALE_MODE, crm_lt_matmul, scale_mode[0]),
    CRM__LT_A(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, crm_lt_matmul, scale_mode[1]),
    CRM__LT_A(CUBLASLT_MATMUL_DESC_C_SCALE_MODE, crm_lt_matmul, scale_mode[2]),
    CRM__LT_A(CUBLASLT_MATMUL_DESC_D_SCALE_MODE, crm_lt_matmul, scale_mode[3]),
    CRM__LT_A(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_MODE, crm_lt_matmul, scale_mode[4]),
    CRM__LT_A(CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER, crm_lt_matmul, dout_scale),
    CRM__LT_A(CUBLASLT_MATMUL_DESC_D_OUT_SCALE_MODE, crm_lt_matmul, dout_scale_mode),
    CRM__LT_A(CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR, crm_lt_matmul, emulation),
};

static const crm_lt_attr crm_lt_pref_attrs[] = {
    CRM__LT_A(CUBLASLT_MATMUL_PREF_SEARCH_MODE, crm_lt_pref, search),
    CRM__LT_A(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, crm_lt_pref, max_workspace),
    CRM__LT_A(CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, crm_lt_pref, reduction_mask),
    CRM__LT_A(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, crm_lt_pref, align[0]),
    CRM__LT_A(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, crm_lt_pref, align[1]),
    CRM__LT_A(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, crm_lt_pref, align[2]),
    CRM__LT_A(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, crm_lt_pref, align[3]),
    CRM__LT_A(CUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT, crm_lt_pref, max_waves),
    CRM__LT_A(CUBLASLT_MATMUL_PREF_IMPL_MASK, crm_lt_pref, impl_mask),
};
#undef CRM__LT_A

#define CRM_LT_NATTRS(t) (sizeof(t) / sizeof((t)[0]))

/* The entry of attribute id in table t of n entries, or NULL. */
static inline const crm_lt_attr *crm_lt_attr_find(const crm_lt_attr *t, size_t n, int id)
{
    for (size_t i = 0; i < n; i++)
        if (t[i].id == id)
            return &t[i];
    return NULL;
}

/* The epilogues cuBLASLt defines. */
static inline int crm_lt_epilogue_ok(uint32_t e)
{
    switch (e) {
    case CUBLASLT_EPILOGUE_DEFAULT: case CUBLASLT_EPILOGUE_RELU: case CUBLASLT_EPILOGUE_RELU_AUX:
    case CUBLASLT_EPILOGUE_BIAS: case CUBLASLT_EPILOGUE_RELU_BIAS: case CUBLASLT_EPILOGUE_RELU_AUX_BIAS:
    case CUBLASLT_EPILOGUE_DRELU: case CUBLASLT_EPILOGUE_DRELU_BGRAD: case CUBLASLT_EPILOGUE_GELU:
    case CUBLASLT_EPILOGUE_GELU_AUX: case CUBLASLT_EPILOGUE_GELU_BIAS: case CUBLASLT_EPILOGUE_GELU_AUX_BIAS:
    case CUBLASLT_EPILOGUE_DGELU: case CUBLASLT_EPILOGUE_DGELU_BGRAD: case CUBLASLT_EPILOGUE_BGRADA:
    case CUBLASLT_EPILOGUE_BGRADB:
        return 1;
    default:
        return 0;
    }
}

/* Value rules of the attributes that take enumerants: SUCCESS or INVALID_VALUE. */
static inline cublasStatus_t crm_lt_matmul_value_ok(int id, const void *buf)
{
    int32_t v;
    uint32_t e;
    switch (id) {
    case CUBLASLT_MATMUL_DESC_TRANSA: case CUBLASLT_MATMUL_DESC_TRANSB: case CUBLASLT_MATMUL_DESC_TRANSC:
        memcpy(&v, buf, sizeof v);
        return crm_blas_op_ok(v) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
    case CUBLASLT_MATMUL_DESC_POINTER_MODE:
        memcpy(&v, buf, sizeof v);
        return v >= CUBLASLT_POINTER_MODE_HOST && v <= CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST
                   ? CUBLAS_STATUS_SUCCESS
                   : CUBLAS_STATUS_INVALID_VALUE;
    case CUBLASLT_MATMUL_DESC_EPILOGUE:
        memcpy(&e, buf, sizeof e);
        return crm_lt_epilogue_ok(e) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
    default:
        return CUBLAS_STATUS_SUCCESS;
    }
}

static inline cublasStatus_t crm_lt_layout_value_ok(int id, const void *buf)
{
    int32_t v;
    if (id != CUBLASLT_MATRIX_LAYOUT_ORDER)
        return CUBLAS_STATUS_SUCCESS;
    memcpy(&v, buf, sizeof v);
    return v >= CUBLASLT_ORDER_COL && v <= CUBLASLT_ORDER_COL32_2R_4R4 ? CUBLAS_STATUS_SUCCESS
                                                                        : CUBLAS_STATUS_INVALID_VALUE;
}

/* Sets or reads attribute id of descriptor d (table t): the Set/Get contract of
 * cuBLASLt. Get with size 0 reports the size needed in *written. */
static inline cublasStatus_t crm_lt_attr_set(void *d, const crm_lt_attr *t, size_t n, int id, const void *buf,
                                             size_t size)
{
    const crm_lt_attr *a = crm_lt_attr_find(t, n, id);
    if (a == NULL || buf == NULL || size != a->size)
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy((char *)d + a->off, buf, size);
    return CUBLAS_STATUS_SUCCESS;
}

static inline cublasStatus_t crm_lt_attr_get(const void *d, const crm_lt_attr *t, size_t n, int id, void *buf,
                                             size_t size, size_t *written)
{
    const crm_lt_attr *a = crm_lt_attr_find(t, n, id);
    if (a == NULL)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (size == 0) {
        if (written == NULL)
            return CUBLAS_STATUS_INVALID_VALUE;
        *written = a->size;
        return CUBLAS_STATUS_SUCCESS;
    }
    if (buf == NULL || size != a->size)
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(buf, (const char *)d + a->off, size);
    if (written != NULL)
        *written = size;
    return CUBLAS_STATUS_SUCCESS;
}

static inline void crm_lt_layout_init(crm_lt_layout *l, int type, uint64_t rows, uint64_t cols, int64_t ld)
{
    memset(l, 0, sizeof *l);
    *l = (crm_lt_layout){.magic = CRM_LT_MAGIC_LAYOUT, .type = type, .order = CUBLASLT_ORDER_COL, .batch = 1,
                         .rows = rows, .cols = cols, .ld = ld};
}

static inline void crm_lt_matmul_init(crm_lt_matmul *m, int compute, int scale)
{
    memset(m, 0, sizeof *m);
    m->magic = CRM_LT_MAGIC_MATMUL;
    m->compute = compute;
    m->scale = scale;
    m->pmode = CUBLASLT_POINTER_MODE_HOST;
    m->transa = m->transb = m->transc = CUBLAS_OP_N;
    m->fill = CUBLAS_FILL_MODE_FULL;
    m->epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    m->aux_type = m->bias_type = -1;
}

static inline void crm_lt_pref_init(crm_lt_pref *p)
{
    memset(p, 0, sizeof *p);
    p->magic = CRM_LT_MAGIC_PREF;
    p->reduction_mask = CUBLASLT_REDUCTION_SCHEME_MASK;
    p->align[0] = p->align[1] = p->align[2] = p->align[3] = 256;
    p->impl_mask = UINT64_MAX;
}

/* --- one matmul problem --------------------------------------------------------------- */

/* What the wire carries of a layout, and of a matmul descriptor (the attributes
 * the computation uses; the client refuses the others when set). */
typedef struct crm_lt_mat {
    int type;
    int64_t rows, cols, ld;
    int batch;
    int64_t stride;         /* elements */
} crm_lt_mat;

typedef struct crm_lt_op {
    int compute, scale, pmode, transa, transb;
    uint32_t epilogue;
    uint64_t bias;          /* device address of the bias or bias gradient */
    int bias_type;          /* resolved: never -1 */
    int64_t bias_stride;
    uint64_t aux;           /* device address of the epilogue's aux matrix */
    int aux_type;           /* resolved: never -1 */
    int64_t aux_ld, aux_stride;
    crm_lt_mat a, b, c, d;
    int64_t m, n, k;        /* set by crm_lt_op_check */
} crm_lt_op;

static inline int crm_lt_epi_bias(uint32_t e)     /* reads a bias vector */
{
    return (e & CUBLASLT_EPILOGUE_BIAS) != 0;
}
static inline int crm_lt_epi_bgrad(uint32_t e)    /* writes a bias gradient */
{
    return e == CUBLASLT_EPILOGUE_DRELU_BGRAD || e == CUBLASLT_EPILOGUE_DGELU_BGRAD ||
           e == CUBLASLT_EPILOGUE_BGRADA || e == CUBLASLT_EPILOGUE_BGRADB;
}
static inline int crm_lt_epi_relu(uint32_t e) { return (e & CUBLASLT_EPILOGUE_RELU) != 0; }
static inline int crm_lt_epi_gelu(uint32_t e) { return (e & CUBLASLT_EPILOGUE_GELU) != 0; }
static inline int crm_lt_epi_drelu(uint32_t e) { return e == CUBLASLT_EPILOGUE_DRELU || e == CUBLASLT_EPILOGUE_DRELU_BGRAD; }
static inline int crm_lt_epi_dgelu(uint32_t e) { return e == CUBLASLT_EPILOGUE_DGELU || e == CUBLASLT_EPILOGUE_DGELU_BGRAD; }
/* Uses the aux buffer (written forward, read backward); a ReLU aux is a bit mask. */
static inline int crm_lt_epi_aux(uint32_t e) { return (e & 128) != 0; }
static inline int crm_lt_epi_aux_bits(uint32_t e) { return crm_lt_epi_aux(e) && (e & (CUBLASLT_EPILOGUE_RELU | 8)); }

/* The type combinations the emulated device computes: A and B of one type, C and
 * D of one type; double everywhere with 64F compute; float, half or bfloat16
 * operands with 32F compute and float scalars (C/D of the operands' type or
 * float); half everywhere with 16F compute. Bias and aux in D's type or float.
 * NOT_SUPPORTED for the others: the emulated device answers so, and a client of
 * an emulated server answers so at the call, as cuBLASLt does for a configuration
 * it has no kernel for (a GPU server computes them all). */
static inline int crm_lt_emu_type(int t)
{
    return t == CUDA_R_32F || t == CUDA_R_64F || t == CUDA_R_16F || t == CUDA_R_16BF;
}

static inline cublasStatus_t crm_lt_emu_types(const crm_lt_op *op)
{
    int a = op->a.type, c = op->c.type;
    if (op->b.type != a || op->d.type != c || !crm_lt_emu_type(a) || !crm_lt_emu_type(c))
        return CUBLAS_STATUS_NOT_SUPPORTED;
    if ((crm_lt_epi_bias(op->epilogue) || crm_lt_epi_bgrad(op->epilogue)) && op->bias_type != c &&
        op->bias_type != CUDA_R_32F)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    if (crm_lt_epi_aux(op->epilogue) && !crm_lt_epi_aux_bits(op->epilogue) && op->aux_type != c &&
        op->aux_type != CUDA_R_32F)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    switch (op->compute) {
    case CUBLAS_COMPUTE_64F: case CUBLAS_COMPUTE_64F_PEDANTIC:
        return a == CUDA_R_64F && c == CUDA_R_64F && op->scale == CUDA_R_64F ? CUBLAS_STATUS_SUCCESS
                                                                               : CUBLAS_STATUS_NOT_SUPPORTED;
    case CUBLAS_COMPUTE_16F: case CUBLAS_COMPUTE_16F_PEDANTIC:
        return a == CUDA_R_16F && c == CUDA_R_16F && op->scale == CUDA_R_16F ? CUBLAS_STATUS_SUCCESS
                                                                               : CUBLAS_STATUS_NOT_SUPPORTED;
    case CUBLAS_COMPUTE_32F: case CUBLAS_COMPUTE_32F_PEDANTIC: case CUBLAS_COMPUTE_32F_FAST_16F:
    case CUBLAS_COMPUTE_32F_FAST_16BF: case CUBLAS_COMPUTE_32F_FAST_TF32:
        if (op->scale != CUDA_R_32F || a == CUDA_R_64F || c == CUDA_R_64F)
            return CUBLAS_STATUS_NOT_SUPPORTED;
        return c == a || c == CUDA_R_32F ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
    default:
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
}

/* The problem of descriptors md, a..d as cuBLASLt reads it: NOT_SUPPORTED for the
 * features cudarem does not carry (see the header comment), else SUCCESS and *op
 * (unchecked: crm_lt_op_check applies the rules). */
static inline cublasStatus_t crm_lt_op_from(const crm_lt_matmul *md, const crm_lt_layout *const l[4], crm_lt_op *op)
{
    crm_lt_mat *mats[4] = {&op->a, &op->b, &op->c, &op->d};
    memset(op, 0, sizeof *op);
    if (md->transc != CUBLAS_OP_N || md->fill != CUBLAS_FILL_MODE_FULL || md->alpha_stride != 0 ||
        md->amax_d || md->aux_scale || md->aux_amax || md->dout_scale || md->emulation ||
        md->scale_ptr[0] || md->scale_ptr[1] || md->scale_ptr[2] || md->scale_ptr[3] ||
        (md->pmode != CUBLASLT_POINTER_MODE_HOST && md->pmode != CUBLASLT_POINTER_MODE_DEVICE))
        return CUBLAS_STATUS_NOT_SUPPORTED;
    for (int i = 0; i < 4; i++) {
        if (l[i]->order != CUBLASLT_ORDER_COL || l[i]->plane != 0 || l[i]->batch_mode != CUBLASLT_BATCH_MODE_STRIDED)
            return CUBLAS_STATUS_NOT_SUPPORTED;
        if (l[i]->rows > INT64_MAX || l[i]->cols > INT64_MAX)
            return CUBLAS_STATUS_INVALID_VALUE;
        *mats[i] = (crm_lt_mat){l[i]->type, (int64_t)l[i]->rows, (int64_t)l[i]->cols, l[i]->ld, l[i]->batch,
                                l[i]->stride};
    }
    op->compute = md->compute;
    op->scale = md->scale;
    op->pmode = md->pmode;
    op->transa = md->transa;
    op->transb = md->transb;
    op->epilogue = md->epilogue;
    op->bias = md->bias;
    op->bias_type = md->bias_type == -1 ? l[3]->type : md->bias_type;
    op->bias_stride = md->bias_stride;
    op->aux = md->aux;
    op->aux_type = md->aux_type == -1 ? l[3]->type : md->aux_type;
    op->aux_ld = md->aux_ld;
    op->aux_stride = md->aux_stride;
    return CUBLAS_STATUS_SUCCESS;
}

/* Bytes of a scale-type scalar (alpha, beta); 0 for types cudarem cannot carry. */
static inline size_t crm_lt_scale_size(int scale)
{
    switch (scale) {
    case CUDA_R_16F: case CUDA_R_16BF: return 2;
    case CUDA_R_32F: case CUDA_R_32I: return 4;
    case CUDA_R_64F: case CUDA_C_32F: return 8;
    default: return 0;
    }
}

/* Footprint of one matrix of layout x (all its batch items). */
static inline int crm_lt_mat_span(const crm_lt_mat *x, int64_t *first, uint64_t *bytes)
{
    uint64_t one;
    size_t e = crm_blas_type_size(x->type);
    if (crm_blas_mat_bytes(x->rows, x->cols, x->ld, e, &one) != 0)
        return -1;
    return crm_blas_strided_span(one, x->stride, x->batch, e, first, bytes);
}

/* cuBLASLt's rules on a problem: shapes agree (op(A) m x k, op(B) k x n, C and D
 * m x n), leading dimensions cover the rows, batch counts equal, known element
 * types, the bias and aux buffers an epilogue needs are set (aux ld a multiple of
 * 8, or of 128 bits for a ReLU mask). Sets op->m, n, k. */
static inline cublasStatus_t crm_lt_op_check(crm_lt_op *op)
{
    const crm_lt_mat *m4[4] = {&op->a, &op->b, &op->c, &op->d};
    if (!crm_blas_op_ok(op->transa) || !crm_blas_op_ok(op->transb) || !crm_lt_epilogue_ok(op->epilogue))
        return CUBLAS_STATUS_INVALID_VALUE;
    if (crm_lt_scale_size(op->scale) == 0)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    for (int i = 0; i < 4; i++) {
        if (crm_blas_type_size(m4[i]->type) == 0)
            return CUBLAS_STATUS_NOT_SUPPORTED;
        if (m4[i]->rows < 0 || m4[i]->cols < 0 || m4[i]->rows > INT32_MAX || m4[i]->cols > INT32_MAX ||
            m4[i]->ld < crm_blas_max1(m4[i]->rows) || m4[i]->batch < 1 || m4[i]->batch != op->d.batch)
            return CUBLAS_STATUS_INVALID_VALUE;
    }
    op->m = op->d.rows;
    op->n = op->d.cols;
    op->k = op->transa == CUBLAS_OP_N ? op->a.cols : op->a.rows;
    int64_t am = op->transa == CUBLAS_OP_N ? op->a.rows : op->a.cols;
    int64_t bk = op->transb == CUBLAS_OP_N ? op->b.rows : op->b.cols;
    int64_t bn = op->transb == CUBLAS_OP_N ? op->b.cols : op->b.rows;
    if (am != op->m || bk != op->k || bn != op->n || op->c.rows != op->m || op->c.cols != op->n)
        return CUBLAS_STATUS_INVALID_VALUE;
    if ((crm_lt_epi_bias(op->epilogue) || crm_lt_epi_bgrad(op->epilogue)) && op->bias == 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    if ((crm_lt_epi_bias(op->epilogue) || crm_lt_epi_bgrad(op->epilogue)) && crm_blas_type_size(op->bias_type) == 0)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    if (crm_lt_epi_aux(op->epilogue)) {
        int bits = crm_lt_epi_aux_bits(op->epilogue);
        if (op->aux == 0 || op->aux_ld < crm_blas_max1(op->m) || op->aux_ld % (bits ? 128 : 8) != 0 ||
            op->aux_stride < 0)
            return CUBLAS_STATUS_INVALID_VALUE;
        if (!bits && crm_blas_type_size(op->aux_type) == 0)
            return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    return CUBLAS_STATUS_SUCCESS;
}

/* Device ranges of a checked problem, as (first byte offset <= 0, bytes) from each
 * base: A, B, C, D, bias, aux. Nothing for A and B when k is 0, nothing at all when
 * m or n is 0; C is counted even when beta may be 0 (the server does not read
 * device-mode scalars to know). */
enum { CRM_LT_A, CRM_LT_B, CRM_LT_C, CRM_LT_D, CRM_LT_BIAS, CRM_LT_AUX, CRM_LT_NOPS };
static inline int crm_lt_op_spans(const crm_lt_op *op, int64_t first[CRM_LT_NOPS], uint64_t bytes[CRM_LT_NOPS])
{
    memset(first, 0, CRM_LT_NOPS * sizeof first[0]);
    memset(bytes, 0, CRM_LT_NOPS * sizeof bytes[0]);
    if (op->m == 0 || op->n == 0)
        return 0;
    if ((op->k > 0 && (crm_lt_mat_span(&op->a, &first[0], &bytes[0]) != 0 ||
                       crm_lt_mat_span(&op->b, &first[1], &bytes[1]) != 0)) ||
        crm_lt_mat_span(&op->c, &first[2], &bytes[2]) != 0 || crm_lt_mat_span(&op->d, &first[3], &bytes[3]) != 0)
        return -1;
    uint32_t e = op->epilogue;
    if (crm_lt_epi_bias(e) || crm_lt_epi_bgrad(e)) {
        int64_t len = e == CUBLASLT_EPILOGUE_BGRADB ? op->n : op->m;
        size_t el = crm_blas_type_size(op->bias_type);
        if (crm_blas_strided_span((uint64_t)len * el, op->bias_stride, op->d.batch, el, &first[4], &bytes[4]) != 0)
            return -1;
    }
    if (crm_lt_epi_aux(e)) {
        uint64_t one;
        if (crm_lt_epi_aux_bits(e)) { /* bits, whole bytes */
            if (crm_blas_mat_bytes(op->m, op->n, op->aux_ld, 1, &one) != 0)
                return -1;
            one = (one + 7) / 8;
            uint64_t stride_bytes = (uint64_t)op->aux_stride / 8, span;
            if (__builtin_mul_overflow(stride_bytes, (uint64_t)(op->d.batch - 1), &span) ||
                __builtin_add_overflow(span, one, &bytes[5]))
                return -1;
        } else {
            size_t el = crm_blas_type_size(op->aux_type);
            if (crm_blas_mat_bytes(op->m, op->n, op->aux_ld, el, &one) != 0 ||
                crm_blas_strided_span(one, op->aux_stride, op->d.batch, el, &first[5], &bytes[5]) != 0)
                return -1;
        }
    }
    return 0;
}

#endif
