/* crm_h_dnn_ops.c -- the handler of cudnnOpTensor, whose B may travel as 0 for
 * unary operations (the other cuDNN compute calls are generated: crm_h_dnn_gen.c). */
#include "common/crm_dnn_desc.h"
#include "server/crm_backend.h"
#include "server/crm_h_dnn.h"

/* SQRT and NOT read A alone: B may then travel as 0 with any descriptor. */
cudnnStatus_t crm_srv_cudnnOpTensor(crm_session *s, uint64_t handle, const crm_dnn_optensor *opDesc, double alpha1,
                                    const crm_dnn_tensor *aDesc, uint64_t A, double alpha2,
                                    const crm_dnn_tensor *bDesc, uint64_t B, double beta, const crm_dnn_tensor *cDesc,
                                    uint64_t C)
{
    crm_h_dnn_call c;
    cudnnOpTensorDescriptor_t od;
    cudnnTensorDescriptor_t ad, bd, cd;
    void *pa, *pb, *pc;
    cudnnStatus_t st;
    int unary = opDesc->op == CUDNN_OP_TENSOR_SQRT || opDesc->op == CUDNN_OP_TENSOR_NOT;
    if ((st = crm_h_dnn_begin(&c, s, handle)) || (st = crm_h_dnn_op(&c, opDesc, &od)) ||
        (st = crm_h_dnn_tensor(&c, aDesc, A, 0, &ad, &pa)) || (st = crm_h_dnn_tensor(&c, bDesc, B, unary, &bd, &pb)) ||
        (st = crm_h_dnn_tensor(&c, cDesc, C, 0, &cd, &pc)))
        return st;
    int dt = cDesc->dtype;
    return crm_rt.cudnnOpTensor(c.h, od, crm_h_dnn_scalar(&c, alpha1, dt), ad, pa, crm_h_dnn_scalar(&c, alpha2, dt),
                                bd, pb, crm_h_dnn_scalar(&c, beta, dt), cd, pc);
}
