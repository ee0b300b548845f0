/* crm_lt_desc.c -- the shim's cuBLASLt descriptors (matmul, matrix layout,
 * preference): local objects, so creating, setting, reading and destroying them
 * never sends a message; a matmul carries their contents (crm_lt_wire). The
 * functions are shared with the emulated device. */
#include <string.h>
#include "crm_api.h"
#include "interpose/crm_export.h"
#include "interpose/crm_lt.h"

#include "common/crm_lt_desc_api.c.inc"

cublasStatus_t crm_lt_problem(cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t A, cublasLtMatrixLayout_t B,
                              cublasLtMatrixLayout_t C, cublasLtMatrixLayout_t D, crm_lt_op *op)
{
    return crm__lt_op_of(desc, A, B, C, D, op);
}

int crm_lt_is_desc(cublasLtMatmulDesc_t desc)
{
    return crm__lt_matmul_ok(desc);
}

static void crm__wire_mat(const crm_lt_mat *m, crm_lt_wire_mat *w)
{
    *w = (crm_lt_wire_mat){m->type, m->rows, m->cols, m->ld, m->batch, m->stride};
}

void crm_lt_wire(const crm_lt_op *op, crm_lt_wire_op *w)
{
    memset(w, 0, sizeof *w);
    w->compute = op->compute;
    w->scale = op->scale;
    w->pmode = op->pmode;
    w->transa = op->transa;
    w->transb = op->transb;
    w->epilogue = op->epilogue;
    w->bias = op->bias;
    w->bias_type = op->bias_type;
    w->bias_stride = op->bias_stride;
    w->aux = op->aux;
    w->aux_type = op->aux_type;
    w->aux_ld = op->aux_ld;
    w->aux_stride = op->aux_stride;
    crm__wire_mat(&op->a, &w->a);
    crm__wire_mat(&op->b, &w->b);
    crm__wire_mat(&op->c, &w->c);
    crm__wire_mat(&op->d, &w->d);
}
