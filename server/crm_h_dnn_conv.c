/* crm_h_dnn_conv.c -- what the server's generated convolution algorithm queries
 * share (crm_h_dnn_gen.c): the backend's list of results copied into the wire's. */
#include "server/crm_h_dnn.h"

_Static_assert(sizeof(cudnnConvolutionFwdAlgoPerf_t) == sizeof(cudnnConvolutionBwdDataAlgoPerf_t) &&
                   sizeof(cudnnConvolutionFwdAlgoPerf_t) == sizeof(cudnnConvolutionBwdFilterAlgoPerf_t),
               "cuDNN algorithm perf structs differ");

void crm_h_dnn_perfs(crm_dnn_perfs *out, const cudnnConvolutionFwdAlgoPerf_t *p, int n)
{
    out->count = n < 0 ? 0 : n > CRM_DNN_ALGO_MAX ? CRM_DNN_ALGO_MAX : n;
    for (int i = 0; i < out->count; i++)
        out->perf[i] = (crm_dnn_perf){.algo = p[i].algo, .status = p[i].status, .time = p[i].time,
                                      .memory = p[i].memory, .determinism = p[i].determinism,
                                      .math = p[i].mathType};
}
