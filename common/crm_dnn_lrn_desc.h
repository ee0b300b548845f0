/* crm_dnn_lrn_desc.h -- the contents of cuDNN's LRN descriptor (local response
 * normalisation) and the rules cudnnSetLRNDescriptor applies, shared by the shim,
 * the server (it re-checks what arrives on the wire) and the emulated device.
 * Header-only and pure, like common/crm_dnn_desc.h. */
#ifndef CRM_DNN_LRN_DESC_H
#define CRM_DNN_LRN_DESC_H

#include <cudnn.h>

typedef struct crm_dnn_ldesc {
    unsigned n;                  /* window width in channels */
    double alpha, beta, k;       /* y = x / (k + alpha / n * sum x^2) ^ beta */
} crm_dnn_ldesc;

/* cudnnCreateLRNDescriptor's values (Krizhevsky et al. 2012). */
static inline crm_dnn_ldesc crm_dnn_lrn_default(void)
{
    return (crm_dnn_ldesc){.n = 5, .alpha = 1e-4, .beta = 0.75, .k = 2.0};
}

/* CUDNN_STATUS_BAD_PARAM outside cuDNN's limits (n 1..16, k >= 1e-5, beta >= 0.01). */
static inline cudnnStatus_t crm_dnn_lrn_check(const crm_dnn_ldesc *l)
{
    if (l->n < CUDNN_LRN_MIN_N || l->n > CUDNN_LRN_MAX_N || !(l->k >= CUDNN_LRN_MIN_K) ||
        !(l->beta >= CUDNN_LRN_MIN_BETA) || l->alpha != l->alpha)
        return CUDNN_STATUS_BAD_PARAM;
    return CUDNN_STATUS_SUCCESS;
}

/* Channels before and after c in c's window: floor((n-1)/2) and the rest. */
static inline int crm_dnn_lrn_behind(const crm_dnn_ldesc *l)
{
    return (int)(l->n - 1) / 2;
}

static inline int crm_dnn_lrn_ahead(const crm_dnn_ldesc *l)
{
    return (int)l->n - 1 - crm_dnn_lrn_behind(l);
}

#endif
