/* crm_lt.h -- internal interface of the shim's cuBLASLt (interpose/crm_lt*.c): the
 * problem a matmul's descriptors describe and its wire form, and the handle
 * NVIDIA's cuBLASLt answers the calls cudarem does not remote with.
 *
 * A cublasLtHandle_t given to the program is the wire id chosen by the client
 * (crm_handle_new_id), so it is never a valid host pointer. */
#ifndef CRM_LT_H
#define CRM_LT_H

#include <cublasLt.h>
#include "crm_api.h"
#include "common/crm_lt_desc.h"

/* The checked problem of a cublasLtMatmul call (crm_lt_op_check's statuses, and
 * INVALID_VALUE for a NULL or uninitialised descriptor). */
cublasStatus_t crm_lt_problem(cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t A, cublasLtMatrixLayout_t B,
                              cublasLtMatrixLayout_t C, cublasLtMatrixLayout_t D, crm_lt_op *op);
/* 1 when desc is one of the shim's initialised matmul descriptors. */
int crm_lt_is_desc(cublasLtMatmulDesc_t desc);
/* The wire form of a problem. */
void crm_lt_wire(const crm_lt_op *op, crm_lt_wire_op *w);

/* For a call handed to NVIDIA's cuBLASLt: the handle NVIDIA's library made for the
 * shim's handle (made at its first such call); NULL when it is the shim's but
 * NVIDIA's library cannot make one (the call must not reach NVIDIA's code); the
 * value itself when it is not the shim's (a handle of NVIDIA's own, such as the
 * one NVIDIA's cuBLAS makes for itself and passes back into cuBLASLt). */
void *crm_lt_real_handle(void *handle);

#endif
