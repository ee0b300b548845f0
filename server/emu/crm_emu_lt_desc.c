/* crm_emu_lt_desc.c -- cuBLASLt descriptors of the emulated device: the structs of
 * common/crm_lt_desc.h with the functions shared with the shim. */
#include "server/emu/crm_emu_lt.h"

#include "common/crm_lt_desc_api.c.inc"

cublasStatus_t crm__lt_problem(cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t A, cublasLtMatrixLayout_t B,
                               cublasLtMatrixLayout_t C, cublasLtMatrixLayout_t D, crm_lt_op *op)
{
    return crm__lt_op_of(desc, A, B, C, D, op);
}
