/* crm_h_dnn.h -- what the cuDNN handlers share: the session's cuDNN handles, the
 * backend descriptors built from the contents a call carries, and the checks of
 * every device range against the session's allocations.
 *
 * One call at a time runs in a session process, so each call borrows scratch
 * backend descriptors (created once, re-set per call) through a crm_h_dnn_call.
 * Every check answers CUDNN_STATUS_BAD_PARAM (NOT_SUPPORTED for valid values
 * cudarem does not carry) before the backend sees anything.
 */
#ifndef CRM_H_DNN_H
#define CRM_H_DNN_H

#include <stdint.h>
#include "crm_server_gen.h"
#include "common/crm_dnn_st_desc.h"
#include "server/crm_session.h"

#define CRM_H_DNN_TENSORS 8 /* most tensor descriptors one call uses */
#define CRM_H_DNN_SCALARS 4 /* most scaling factors one call uses */

/* One call's backend handle, borrowed descriptors and scaling factors. */
typedef struct crm_h_dnn_call {
    crm_session *s;
    cudnnHandle_t h;
    int ntensors;                 /* scratch tensor descriptors handed out */
    int nscalars;
    union {
        float f;
        double d;
    } scalars[CRM_H_DNN_SCALARS];
} crm_h_dnn_call;

/* Starts a call on client handle `handle`: NOT_SUPPORTED when the backend lacks
 * cuDNN, BAD_PARAM for an unknown handle. */
cudnnStatus_t crm_h_dnn_begin(crm_h_dnn_call *c, crm_session *s, uint64_t handle);
/* Starts a call that takes no handle (c->h stays NULL): NOT_SUPPORTED without cuDNN. */
cudnnStatus_t crm_h_dnn_start(crm_h_dnn_call *c, crm_session *s);

/* Backend tensor descriptor for w; when ptr is not 0 (or not `optional`), also
 * checks that its footprint lies in one allocation and sets *dev (may be NULL). */
cudnnStatus_t crm_h_dnn_tensor(crm_h_dnn_call *c, const crm_dnn_tensor *w, uint64_t ptr, int optional,
                               cudnnTensorDescriptor_t *out, void **dev);
/* Checks one more pointer described by w (a descriptor shared by several pointers)
 * without building a descriptor; optional ptr 0 passes as NULL. */
cudnnStatus_t crm_h_dnn_tensor_ptr(crm_h_dnn_call *c, const crm_dnn_tensor *w, uint64_t ptr, int optional,
                                   void **dev);
/* Same for a filter; ptr 0 with optional: descriptor only (algorithm queries). */
cudnnStatus_t crm_h_dnn_filter(crm_h_dnn_call *c, const crm_dnn_filter *w, uint64_t ptr, int optional,
                               cudnnFilterDescriptor_t *out, void **dev);
cudnnStatus_t crm_h_dnn_conv(crm_h_dnn_call *c, const crm_dnn_conv *w, cudnnConvolutionDescriptor_t *out);
cudnnStatus_t crm_h_dnn_pool(crm_h_dnn_call *c, const crm_dnn_pool *w, cudnnPoolingDescriptor_t *out);
cudnnStatus_t crm_h_dnn_act(crm_h_dnn_call *c, const crm_dnn_act *w, cudnnActivationDescriptor_t *out);
cudnnStatus_t crm_h_dnn_op(crm_h_dnn_call *c, const crm_dnn_optensor *w, cudnnOpTensorDescriptor_t *out);
cudnnStatus_t crm_h_dnn_lrn(crm_h_dnn_call *c, const crm_dnn_lrn *w, cudnnLRNDescriptor_t *out);
cudnnStatus_t crm_h_dnn_reduce(crm_h_dnn_call *c, const crm_dnn_reduce *w, cudnnReduceTensorDescriptor_t *out);
/* A dropout descriptor over the seeded state w names, which must lie in one
 * allocation; a descriptor without a state is refused (crm_h_dnn_dropout.c). */
cudnnStatus_t crm_h_dnn_dropout(crm_h_dnn_call *c, const crm_dnn_dropout *w, cudnnDropoutDescriptor_t *out);
/* A spatial transformer descriptor, and the check of one of its arrays (`which`, an
 * enum crm_dnn_st_array: theta or the grid) at ptr (crm_h_dnn_st.c). */
/* A CTC loss descriptor (crm_h_dnn_ctc.c). */
cudnnStatus_t crm_h_dnn_ctc(crm_h_dnn_call *c, const crm_dnn_ctc *w, cudnnCTCLossDescriptor_t *out);
cudnnStatus_t crm_h_dnn_st(crm_h_dnn_call *c, const crm_dnn_st *w, cudnnSpatialTransformerDescriptor_t *out);
cudnnStatus_t crm_h_dnn_st_ptr(crm_h_dnn_call *c, const crm_dnn_st *w, uint64_t ptr, int which, void **dev);

/* Copies n backend algorithm results into the wire's list (crm_h_dnn_conv.c). */
void crm_h_dnn_perfs(crm_dnn_perfs *out, const cudnnConvolutionFwdAlgoPerf_t *p, int n);

/* Checks a workspace: size 0 passes NULL, else [ptr, ptr + size) must be allocated. */
cudnnStatus_t crm_h_dnn_workspace(crm_h_dnn_call *c, uint64_t ptr, uint64_t size, void **dev);

/* A scaling factor in the type cuDNN reads for data type dtype (double or float);
 * valid until the call ends. */
const void *crm_h_dnn_scalar(crm_h_dnn_call *c, double v, int dtype);

#endif
