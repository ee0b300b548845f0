/* crm_dnn_ops.c -- the shim's cudnnOpTensor, whose unary operations take no B (its
 * descriptor and alpha2 may be NULL), which a `dnn` row cannot say; the other
 * compute calls are generated (protocol/cudnn.api, protocol/gen_dnn.py). */
#include "interpose/crm_dnn.h"
#include "interpose/crm_export.h"

/* SQRT and NOT use A alone: B's descriptor may then be NULL (A's travels instead). */
CRM_EXPORT cudnnStatus_t cudnnOpTensor(cudnnHandle_t handle, const cudnnOpTensorDescriptor_t opTensorDesc,
                                       const void *alpha1, const cudnnTensorDescriptor_t aDesc, const void *A,
                                       const void *alpha2, const cudnnTensorDescriptor_t bDesc, const void *B,
                                       const void *beta, const cudnnTensorDescriptor_t cDesc, void *C)
{
    crm_call call = {.api = CRM_API_cudnnOpTensor};
    crm_args_cudnnOpTensor *a = &call.crm_call_u.cudnnOpTensor;
    cudnnStatus_t st;
    if ((st = crm_dnn_handle_id(handle, &a->handle)) || (st = crm_dnn_wire_op(opTensorDesc, &a->opDesc)) ||
        (st = crm_dnn_wire_tensor(aDesc, &a->aDesc)) || (st = crm_dnn_wire_tensor(cDesc, &a->cDesc)))
        return st;
    int unary = a->opDesc.op == CUDNN_OP_TENSOR_SQRT || a->opDesc.op == CUDNN_OP_TENSOR_NOT;
    if ((st = crm_dnn_wire_tensor(unary && bDesc == NULL ? aDesc : bDesc, &a->bDesc)) ||
        (st = crm_dnn_scalar(alpha1, a->cDesc.dtype, &a->alpha1)) ||
        (st = crm_dnn_scalar(beta, a->cDesc.dtype, &a->beta)))
        return st;
    if (alpha2 == NULL && !unary)
        return CUDNN_STATUS_BAD_PARAM;
    if (alpha2 != NULL)
        crm_dnn_scalar(alpha2, a->cDesc.dtype, &a->alpha2);
    a->A = crm_dnn_ptr(A);
    a->B = crm_dnn_ptr(B);
    a->C = crm_dnn_ptr(C);
    return crm_dnn_work(&call, handle);
}

