/* crm_dnn_conv.c -- what the shim's generated convolution algorithm queries share
 * (the `perfs` rows of protocol/cudnn.api): the server's list of results copied
 * into the caller's perf structs. */
#include <string.h>
#include "interpose/crm_dnn.h"

_Static_assert(sizeof(cudnnConvolutionFwdAlgoPerf_t) == sizeof(cudnnConvolutionBwdDataAlgoPerf_t) &&
                   sizeof(cudnnConvolutionFwdAlgoPerf_t) == sizeof(cudnnConvolutionBwdFilterAlgoPerf_t),
               "cuDNN algorithm perf structs differ");

void crm_dnn_perf_out(const crm_dnn_perfs *p, int requested, int *returned, cudnnConvolutionFwdAlgoPerf_t *out)
{
    int n = p->count < requested ? p->count : requested;
    n = n < 0 ? 0 : n > CRM_DNN_ALGO_MAX ? CRM_DNN_ALGO_MAX : n;
    for (int i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof out[i]);
        out[i].algo = (cudnnConvolutionFwdAlgo_t)p->perf[i].algo;
        out[i].status = (cudnnStatus_t)p->perf[i].status;
        out[i].time = p->perf[i].time;
        out[i].memory = (size_t)p->perf[i].memory;
        out[i].determinism = (cudnnDeterminism_t)p->perf[i].determinism;
        out[i].mathType = (cudnnMathType_t)p->perf[i].math;
    }
    *returned = n;
}
