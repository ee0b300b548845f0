/* crm_h_dnn_ctc.c -- the server's cuDNN CTC loss: the backend descriptor each call
 * builds from the contents it carries, and the handlers of cudnnCTCLoss and its
 * workspace query, whose label block (host arrays on the client) is checked against
 * the probabilities' shape before the backend sees it (common/crm_dnn_ctc_desc.h). */
#include <stdlib.h>
#include <string.h>
#include "common/crm_dnn_ctc_desc.h"
#include "server/crm_backend.h"
#include "server/crm_h_dnn.h"

static cudnnCTCLossDescriptor_t crm__ctc; /* scratch, reused by every call */

cudnnStatus_t crm_h_dnn_ctc(crm_h_dnn_call *c, const crm_dnn_ctc *w, cudnnCTCLossDescriptor_t *out)
{
    crm_dnn_ctcdesc d = {.dtype = w->dtype, .norm = w->norm, .grad = w->grad, .max_label = w->max_label};
    (void)c;
    cudnnStatus_t st = crm_dnn_ctc_check(&d);
    if (st == CUDNN_STATUS_SUCCESS && crm__ctc == NULL)
        st = crm_rt.cudnnCreateCTCLossDescriptor(&crm__ctc);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    *out = crm__ctc;
    return crm_rt.cudnnSetCTCLossDescriptor_v9(crm__ctc, (cudnnDataType_t)d.dtype, (cudnnLossNormalizationMode_t)d.norm,
                                               (cudnnCTCGradMode_t)d.grad, d.max_label);
}

/* One call's checked operands. */
typedef struct crm__ctc_call {
    crm_h_dnn_call c;
    cudnnTensorDescriptor_t probs, grads;
    cudnnCTCLossDescriptor_t ctc;
    int *block;                  /* label lengths, input lengths, labels (malloc'd) */
    int n;                       /* sequences */
} crm__ctc_call;

/* Descriptors, label block, and with probs_dev the probabilities' memory (which
 * must be given) and the gradients' (which may be 0); the workspace query passes
 * NULL for both. k->block is always set, NULL on failure before it exists. */
static cudnnStatus_t crm__ctc_begin(crm__ctc_call *k, crm_session *s, uint64_t handle, const crm_dnn_tensor *probs,
                                    uint64_t probs_ptr, void **probs_dev, int grads_set, const crm_dnn_tensor *grads,
                                    uint64_t grads_ptr, void **grads_dev, const crm_bytes *labels,
                                    const crm_dnn_ctc *ctc)
{
    size_t nlabels;
    cudnnStatus_t st;
    memset(k, 0, sizeof *k);
    if ((st = crm_h_dnn_begin(&k->c, s, handle)) || (st = crm_h_dnn_ctc(&k->c, ctc, &k->ctc)) ||
        (st = crm_h_dnn_tensor(&k->c, probs, probs_ptr, probs_dev == NULL, &k->probs, probs_dev)))
        return st;
    if (grads_set && (st = crm_h_dnn_tensor(&k->c, grads, grads_ptr, 1, &k->grads, grads_dev)))
        return st;
    if ((!grads_set && grads_ptr != 0) || !crm_dnn_ctc_shape_ok(probs->dims, probs->nbdims) ||
        labels->crm_bytes_len % sizeof(int) != 0)
        return CUDNN_STATUS_BAD_PARAM;
    if (probs->dtype != CUDNN_DATA_FLOAT) /* cuDNN's CTC loss takes float alone */
        return CUDNN_STATUS_NOT_SUPPORTED;
    if (labels->crm_bytes_len == 0 || (k->block = malloc(labels->crm_bytes_len)) == NULL)
        return labels->crm_bytes_len == 0 ? CUDNN_STATUS_BAD_PARAM : CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    memcpy(k->block, labels->crm_bytes_val, labels->crm_bytes_len);
    k->n = probs->dims[1];
    return crm_dnn_ctc_labels_check(k->block, labels->crm_bytes_len / sizeof(int), probs->dims[0], k->n,
                                    probs->dims[2], &nlabels);
}

cudnnStatus_t crm_srv_cudnnCTCLoss(crm_session *s, uint64_t handle, const crm_dnn_tensor *probsDesc, uint64_t probs,
                                   const crm_bytes *labels, uint64_t costs, int grads_set,
                                   const crm_dnn_tensor *gradientsDesc, uint64_t gradients, int algo,
                                   const crm_dnn_ctc *ctcLossDesc, uint64_t workspace, uint64_t workSpaceSizeInBytes)
{
    crm__ctc_call k;
    void *p_probs = NULL, *p_grads = NULL, *p_costs, *p_ws;
    cudnnStatus_t st = crm__ctc_begin(&k, s, handle, probsDesc, probs, &p_probs, grads_set, gradientsDesc, gradients,
                                      &p_grads, labels, ctcLossDesc);
    if (st == CUDNN_STATUS_SUCCESS)
        st = crm_h_dnn_workspace(&k.c, costs, (uint64_t)k.n * sizeof(float), &p_costs);
    if (st == CUDNN_STATUS_SUCCESS && costs == 0)
        st = CUDNN_STATUS_BAD_PARAM;
    if (st == CUDNN_STATUS_SUCCESS)
        st = crm_h_dnn_workspace(&k.c, workspace, workSpaceSizeInBytes, &p_ws);
    if (st == CUDNN_STATUS_SUCCESS)
        st = crm_rt.cudnnCTCLoss(k.c.h, k.probs, p_probs, k.block + 2 * k.n, k.block, k.block + k.n, p_costs,
                                 grads_set ? k.grads : NULL, p_grads, (cudnnCTCLossAlgo_t)algo, k.ctc, p_ws,
                                 workSpaceSizeInBytes);
    free(k.block);
    return st;
}

cudnnStatus_t crm_srv_cudnnGetCTCLossWorkspaceSize(crm_session *s, uint64_t handle, const crm_dnn_tensor *probsDesc,
                                                   int grads_set, const crm_dnn_tensor *gradientsDesc,
                                                   const crm_bytes *labels, int algo, const crm_dnn_ctc *ctcLossDesc,
                                                   uint64_t *sizeInBytes)
{
    crm__ctc_call k;
    size_t size = 0;
    cudnnStatus_t st = crm__ctc_begin(&k, s, handle, probsDesc, 0, NULL, grads_set, gradientsDesc, 0, NULL, labels,
                                      ctcLossDesc);
    if (st == CUDNN_STATUS_SUCCESS)
        st = crm_rt.cudnnGetCTCLossWorkspaceSize(k.c.h, k.probs, grads_set ? k.grads : NULL, k.block + 2 * k.n,
                                                 k.block, k.block + k.n, (cudnnCTCLossAlgo_t)algo, k.ctc, &size);
    free(k.block);
    *sizeInBytes = size;
    return st;
}
