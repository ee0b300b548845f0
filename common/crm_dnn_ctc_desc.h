/* crm_dnn_ctc_desc.h -- the contents of cuDNN's CTC loss descriptor, the rules its
 * Set calls apply, and the checks of the label arrays cudnnCTCLoss takes from host
 * memory, shared by the shim, the server (it re-checks what arrives on the wire) and
 * the emulated device. Header-only and pure, like common/crm_dnn_desc.h.
 *
 * The three host arrays travel as one block of ints: the N label lengths, the N
 * input lengths, then the labels of every sequence one after the other. */
#ifndef CRM_DNN_CTC_DESC_H
#define CRM_DNN_CTC_DESC_H

#include <stddef.h>
#include <cudnn.h>

#define CRM_DNN_CTC_MAX_LABEL 256 /* cuDNN's limit on one sequence's labels */

typedef struct crm_dnn_ctcdesc {
    int dtype;                   /* compute type: float */
    int norm;                    /* cudnnLossNormalizationMode_t */
    int grad;                    /* cudnnCTCGradMode_t (NOT_PROPAGATE_NAN reads as ZERO_OOB) */
    int max_label;               /* the _v8/_v9 maxLabelLength */
} crm_dnn_ctcdesc;

/* What cudnnCreateCTCLossDescriptor and the plain Set leave: float, probabilities
 * taken as given, out-of-bound gradients zeroed. */
static inline crm_dnn_ctcdesc crm_dnn_ctc_default(void)
{
    return (crm_dnn_ctcdesc){.dtype = CUDNN_DATA_FLOAT, .norm = CUDNN_LOSS_NORMALIZATION_NONE,
                             .grad = CUDNN_CTC_ZERO_OOB_GRADIENTS, .max_label = CRM_DNN_CTC_MAX_LABEL};
}

/* BAD_PARAM for unknown modes or a label limit < 1; NOT_SUPPORTED for a compute
 * type other than float (cuDNN's only one). */
static inline cudnnStatus_t crm_dnn_ctc_check(const crm_dnn_ctcdesc *c)
{
    if ((c->norm != CUDNN_LOSS_NORMALIZATION_NONE && c->norm != CUDNN_LOSS_NORMALIZATION_SOFTMAX) ||
        (c->grad != CUDNN_CTC_ZERO_OOB_GRADIENTS && c->grad != CUDNN_CTC_SKIP_OOB_GRADIENTS) || c->max_label < 1)
        return CUDNN_STATUS_BAD_PARAM;
    return c->dtype == CUDNN_DATA_FLOAT ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_NOT_SUPPORTED;
}

/* Checks the host arrays of N sequences of at most T steps over an alphabet of A
 * symbols (0 the blank): each label length in 0..256, each input length in 1..T,
 * each label in 1..A-1. Sets *nlabels to the number of labels. */
static inline cudnnStatus_t crm_dnn_ctc_arrays_check(const int *labels, const int *label_lengths,
                                                     const int *input_lengths, int T, int N, int A, size_t *nlabels)
{
    size_t total = 0;
    for (int i = 0; i < N; i++) {
        if (label_lengths[i] < 0 || label_lengths[i] > CRM_DNN_CTC_MAX_LABEL || input_lengths[i] < 1 ||
            input_lengths[i] > T)
            return CUDNN_STATUS_BAD_PARAM;
        total += (size_t)label_lengths[i];
    }
    for (size_t i = 0; i < total; i++)
        if (labels[i] < 1 || labels[i] >= A)
            return CUDNN_STATUS_BAD_PARAM;
    *nlabels = total;
    return CUDNN_STATUS_SUCCESS;
}

/* The same for the label block of n ints, which must hold exactly the labels its
 * lengths count. */
static inline cudnnStatus_t crm_dnn_ctc_labels_check(const int *block, size_t n, int T, int N, int A,
                                                     size_t *nlabels)
{
    size_t total = 0;
    if (n < 2 * (size_t)N)
        return CUDNN_STATUS_BAD_PARAM;
    for (int i = 0; i < N; i++) {
        if (block[i] < 0 || block[i] > CRM_DNN_CTC_MAX_LABEL)
            return CUDNN_STATUS_BAD_PARAM;
        total += (size_t)block[i];
    }
    if (n != 2 * (size_t)N + total)
        return CUDNN_STATUS_BAD_PARAM;
    return crm_dnn_ctc_arrays_check(block + 2 * N, block, block + N, T, N, A, nlabels);
}

/* 1 when probs (or gradients) is a T x N x A tensor as cudnnCTCLoss takes it. */
static inline int crm_dnn_ctc_shape_ok(const int *dims, int nbdims)
{
    return nbdims == 3 && dims[0] >= 1 && dims[1] >= 1 && dims[2] >= 2;
}

#endif
