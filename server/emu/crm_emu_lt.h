/* crm_emu_lt.h -- internal interface of the emulated cuBLASLt (crm_emu_lt*.c). */
#ifndef CRM_EMU_LT_H
#define CRM_EMU_LT_H

#include <cublasLt.h>
#include "common/crm_lt_desc.h"
#include "server/emu/crm_emu_blas.h"

/* The checked problem of a matmul's descriptors (crm_lt_op_check's statuses;
 * INVALID_VALUE for a NULL or uninitialised descriptor). */
cublasStatus_t crm__lt_problem(cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t A, cublasLtMatrixLayout_t B,
                               cublasLtMatrixLayout_t C, cublasLtMatrixLayout_t D, crm_lt_op *op);

#endif
