/* crm_dnn_ctc.c -- the shim's cuDNN CTC loss: the descriptor is a local object
 * (common/crm_dnn_ctc_api.c.inc); cudnnCTCLoss (queued like any compute call) and
 * its workspace query (one round trip) carry the three host arrays as one block of
 * ints, checked here before anything is sent (row comment in protocol/cudnn.api).
 * cudnnGetCTCLossWorkspaceSize_v8 is generated (crm_dnn_gen.c). */
#include <stdlib.h>
#include <string.h>
#include "client/crm_conn.h"
#include "common/crm_log.h"
#include "interpose/crm_dnn.h"
#include "interpose/crm_export.h"

#include "common/crm_dnn_ctc_api.c.inc"

cudnnStatus_t crm_dnn_wire_ctc(const cudnnCTCLossDescriptor_t d, crm_dnn_ctc *w)
{
    if (d == NULL || crm_dnn_ctc_check(&d->d) == CUDNN_STATUS_BAD_PARAM)
        return CUDNN_STATUS_BAD_PARAM;
    *w = (crm_dnn_ctc){.dtype = d->d.dtype, .norm = d->d.norm, .grad = d->d.grad, .max_label = d->d.max_label};
    return CUDNN_STATUS_SUCCESS;
}

/* The label block for the T x N x A problem of probs (crm_dnn_ctc_desc.h), after
 * the host arrays pass cuDNN's rules: a malloc'd block in *out, to be freed.
 * NOT_SUPPORTED beyond what one message carries. */
static cudnnStatus_t crm__ctc_block(const crm_dnn_tensor *probs, const int *labels, const int *label_lengths,
                                    const int *input_lengths, crm_bytes *out)
{
    int N = probs->dims[1];
    size_t total;
    if (!crm_dnn_ctc_shape_ok(probs->dims, probs->nbdims) || labels == NULL || label_lengths == NULL ||
        input_lengths == NULL)
        return CUDNN_STATUS_BAD_PARAM;
    cudnnStatus_t st = crm_dnn_ctc_arrays_check(labels, label_lengths, input_lengths, probs->dims[0], N,
                                                probs->dims[2], &total);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    size_t n = 2 * (size_t)N + total;
    if (n > CRM_BYTES_MAX / sizeof(int)) {
        crm_warn("cudnnCTCLoss: %zu labels and lengths exceed one message (%d bytes): not supported", n,
                 CRM_BYTES_MAX);
        return CUDNN_STATUS_NOT_SUPPORTED;
    }
    int *block = malloc(n * sizeof(int));
    if (block == NULL)
        return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    memcpy(block, label_lengths, (size_t)N * sizeof(int));
    memcpy(block + N, input_lengths, (size_t)N * sizeof(int));
    memcpy(block + 2 * N, labels, total * sizeof(int));
    *out = (crm_bytes){.crm_bytes_len = (u_int)(n * sizeof(int)), .crm_bytes_val = (char *)block};
    return CUDNN_STATUS_SUCCESS;
}

/* The handle, descriptors and label block every CTC call carries. */
static cudnnStatus_t crm__ctc_common(cudnnHandle_t handle, const cudnnTensorDescriptor_t probsDesc,
                                     const cudnnTensorDescriptor_t gradientsDesc, const int *labels,
                                     const int *label_lengths, const int *input_lengths,
                                     const cudnnCTCLossDescriptor_t ctcLossDesc, uint64_t *id, crm_dnn_tensor *probs,
                                     int *grads_set, crm_dnn_tensor *grads, crm_dnn_ctc *ctc, crm_bytes *block)
{
    cudnnStatus_t st;
    *grads_set = gradientsDesc != NULL;
    if ((st = crm_dnn_handle_id(handle, id)) || (st = crm_dnn_wire_tensor(probsDesc, probs)) ||
        (*grads_set && (st = crm_dnn_wire_tensor(gradientsDesc, grads))) || (st = crm_dnn_wire_ctc(ctcLossDesc, ctc)))
        return st;
    return crm__ctc_block(probs, labels, label_lengths, input_lengths, block);
}

CRM_EXPORT cudnnStatus_t cudnnCTCLoss(cudnnHandle_t handle, const cudnnTensorDescriptor_t probsDesc, const void *probs,
                                      const int hostLabels[], const int hostLabelLengths[],
                                      const int hostInputLengths[], void *costs,
                                      const cudnnTensorDescriptor_t gradientsDesc, void *gradients,
                                      cudnnCTCLossAlgo_t algo, cudnnCTCLossDescriptor_t ctcLossDesc, void *workspace,
                                      size_t workSpaceSizeInBytes)
{
    crm_call call = {.api = CRM_API_cudnnCTCLoss};
    crm_args_cudnnCTCLoss *a = &call.crm_call_u.cudnnCTCLoss;
    if (gradientsDesc == NULL && gradients != NULL)
        return CUDNN_STATUS_BAD_PARAM;
    cudnnStatus_t st = crm__ctc_common(handle, probsDesc, gradientsDesc, hostLabels, hostLabelLengths,
                                       hostInputLengths, ctcLossDesc, &a->handle, &a->probsDesc, &a->grads_set,
                                       &a->gradientsDesc, &a->ctcLossDesc, &a->labels);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    a->probs = crm_dnn_ptr(probs);
    a->costs = crm_dnn_ptr(costs);
    a->gradients = crm_dnn_ptr(gradients);
    a->algo = (int)algo;
    a->workspace = crm_dnn_ptr(workspace);
    a->workSpaceSizeInBytes = workSpaceSizeInBytes;
    st = crm_dnn_work(&call, handle);
    free(a->labels.crm_bytes_val);
    return st;
}

CRM_EXPORT cudnnStatus_t cudnnGetCTCLossWorkspaceSize(cudnnHandle_t handle, const cudnnTensorDescriptor_t probsDesc,
                                                      const cudnnTensorDescriptor_t gradientsDesc, const int *labels,
                                                      const int *labelLengths, const int *inputLengths,
                                                      cudnnCTCLossAlgo_t algo, cudnnCTCLossDescriptor_t ctcLossDesc,
                                                      size_t *sizeInBytes)
{
    crm_call call = {.api = CRM_API_cudnnGetCTCLossWorkspaceSize};
    crm_args_cudnnGetCTCLossWorkspaceSize *a = &call.crm_call_u.cudnnGetCTCLossWorkspaceSize;
    crm_reply reply;
    if (sizeInBytes == NULL)
        return CUDNN_STATUS_BAD_PARAM;
    cudnnStatus_t st = crm__ctc_common(handle, probsDesc, gradientsDesc, labels, labelLengths, inputLengths,
                                       ctcLossDesc, &a->handle, &a->probsDesc, &a->grads_set, &a->gradientsDesc,
                                       &a->ctcLossDesc, &a->labels);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    a->algo = (int)algo;
    if ((st = crm_dnn_sync(&call, &reply)) == CUDNN_STATUS_SUCCESS)
        *sizeInBytes = (size_t)reply.crm_reply_u.cudnnGetCTCLossWorkspaceSize.sizeInBytes;
    crm_conn_reply_free(&reply);
    free(a->labels.crm_bytes_val);
    return st;
}
