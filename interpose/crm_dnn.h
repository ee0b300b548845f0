/* crm_dnn.h -- the shim's cuDNN: descriptors are local objects (the contents of
 * common/crm_dnn_desc.h) that cost no message; handles are client-chosen ids known
 * to a local table; compute calls carry descriptor contents by value and travel
 * through crm_conn_async. Internal to interpose/crm_dnn*.c. */
#ifndef CRM_DNN_H
#define CRM_DNN_H

#include <stdint.h>
#include <cudnn.h>
#include "crm_api.h"
#include "common/crm_dnn_ctc_desc.h"
#include "common/crm_dnn_desc.h"
#include "common/crm_dnn_dropout_desc.h"
#include "common/crm_dnn_lrn_desc.h"
#include "common/crm_dnn_reduce_desc.h"
#include "common/crm_dnn_st_desc.h"

struct cudnnTensorStruct { crm_dnn_tdesc d; };
struct cudnnFilterStruct { crm_dnn_fdesc d; };
struct cudnnConvolutionStruct { crm_dnn_cdesc d; };
struct cudnnPoolingStruct { crm_dnn_pdesc d; };
struct cudnnActivationStruct { crm_dnn_adesc d; };
struct cudnnOpTensorStruct { crm_dnn_odesc d; };
struct cudnnLRNStruct { crm_dnn_ldesc d; };
struct cudnnReduceTensorStruct { crm_dnn_rdesc d; };
struct cudnnDropoutStruct { crm_dnn_ddesc d; };
struct cudnnSpatialTransformerStruct { crm_dnn_sdesc d; };
struct cudnnCTCLossStruct { crm_dnn_ctcdesc d; };

/* Wire id of a live handle: 0 and *id, or CUDNN_STATUS_BAD_PARAM (NULL, unknown or
 * destroyed handle). */
cudnnStatus_t crm_dnn_handle_id(cudnnHandle_t h, uint64_t *id);

/* Sends a compute call (its errors may be reported late, as on a GPU); returns the
 * status to report now. A lost server becomes CUDNN_STATUS_INTERNAL_ERROR. */
cudnnStatus_t crm_dnn_async(crm_call *call);
/* crm_dnn_async of a compute call on handle's stream: while that stream is
 * capturing, it becomes a node of the capture's graph. */
cudnnStatus_t crm_dnn_work(crm_call *call, cudnnHandle_t handle);
/* CUDNN_STATUS_NOT_SUPPORTED (logged once, the capture invalidated) when handle's
 * stream is capturing, for calls that run on the device and answer at once; else
 * CUDNN_STATUS_SUCCESS. */
cudnnStatus_t crm_dnn_refuse_in_capture(cudnnHandle_t handle);
/* Sends a call that needs an answer; reply must be freed with crm_conn_reply_free. */
cudnnStatus_t crm_dnn_sync(crm_call *call, crm_reply *reply);
/* Copies the server's list of algorithm results (at most `requested`) into out (the
 * three perf structs share one layout), their number into *returned (crm_dnn_conv.c). */
void crm_dnn_perf_out(const crm_dnn_perfs *p, int requested, int *returned, cudnnConvolutionFwdAlgoPerf_t *out);

/* Descriptor contents for the wire; CUDNN_STATUS_BAD_PARAM for NULL or never-set. */
cudnnStatus_t crm_dnn_wire_tensor(const cudnnTensorDescriptor_t d, crm_dnn_tensor *w);
cudnnStatus_t crm_dnn_wire_filter(const cudnnFilterDescriptor_t d, crm_dnn_filter *w);
cudnnStatus_t crm_dnn_wire_conv(const cudnnConvolutionDescriptor_t d, crm_dnn_conv *w);
cudnnStatus_t crm_dnn_wire_pool(const cudnnPoolingDescriptor_t d, crm_dnn_pool *w);
cudnnStatus_t crm_dnn_wire_act(const cudnnActivationDescriptor_t d, crm_dnn_act *w);
cudnnStatus_t crm_dnn_wire_op(const cudnnOpTensorDescriptor_t d, crm_dnn_optensor *w);
cudnnStatus_t crm_dnn_wire_lrn(const cudnnLRNDescriptor_t d, crm_dnn_lrn *w);
cudnnStatus_t crm_dnn_wire_reduce(const cudnnReduceTensorDescriptor_t d, crm_dnn_reduce *w);
cudnnStatus_t crm_dnn_wire_st(const cudnnSpatialTransformerDescriptor_t d, crm_dnn_st *w);
cudnnStatus_t crm_dnn_wire_ctc(const cudnnCTCLossDescriptor_t d, crm_dnn_ctc *w);         /* crm_dnn_ctc.c */
cudnnStatus_t crm_dnn_wire_dropout(const cudnnDropoutDescriptor_t d, crm_dnn_dropout *w); /* crm_dnn_dropout.c */

/* Reads a host scaling factor (double for double data, else float) into *out;
 * CUDNN_STATUS_BAD_PARAM for NULL. */
cudnnStatus_t crm_dnn_scalar(const void *p, int dtype, double *out);

/* A device pointer as the wire carries it. */
static inline uint64_t crm_dnn_ptr(const void *p)
{
    return (uint64_t)(uintptr_t)p;
}

#endif
