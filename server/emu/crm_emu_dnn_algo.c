/* crm_emu_dnn_algo.c -- which convolution algorithms the emulated device's cuDNN
 * accepts for a convolution. Every algorithm runs the same direct loops
 * (crm_emu_dnn_conv.c); what differs is where cuDNN documents that an algorithm
 * does not apply, which answers CUDNN_STATUS_NOT_SUPPORTED here as there:
 *
 *   FFT               2-D, unit strides and dilations, image plus padding at most
 *                     256 in each spatial dimension, filter larger than the padding
 *   FFT_TILING        2-D, unit strides and dilations, filter larger than the
 *                     padding and at most 32
 *   WINOGRAD          2-D, unit strides and dilations, 3x3 filter
 *   WINOGRAD_NONFUSED 2-D, unit strides and dilations, 3x3 or 5x5 filter
 *
 * The backward-filter WINOGRAD algorithm is not implemented by cuDNN; it answers
 * NOT_SUPPORTED always.
 */
#include "server/emu/crm_emu_dnn.h"

enum crm__family { CRM__PLAIN, CRM__FFT, CRM__FFT_TILING, CRM__WINOGRAD, CRM__WINOGRAD_NONFUSED, CRM__NEVER };

/* The family of each algorithm number, per pass. */
static enum crm__family crm__family(enum crm__conv_pass pass, int algo)
{
    switch (pass) {
    case CRM__FWD:
        switch (algo) {
        case CUDNN_CONVOLUTION_FWD_ALGO_FFT: return CRM__FFT;
        case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING: return CRM__FFT_TILING;
        case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD: return CRM__WINOGRAD;
        case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED: return CRM__WINOGRAD_NONFUSED;
        default: return CRM__PLAIN;
        }
    case CRM__BWD_DATA:
        switch (algo) {
        case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT: return CRM__FFT;
        case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING: return CRM__FFT_TILING;
        case CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD: return CRM__WINOGRAD;
        case CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED: return CRM__WINOGRAD_NONFUSED;
        default: return CRM__PLAIN;
        }
    default:
        switch (algo) {
        case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT: return CRM__FFT;
        case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING: return CRM__FFT_TILING;
        case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD: return CRM__NEVER;
        case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED: return CRM__WINOGRAD_NONFUSED;
        default: return CRM__PLAIN;
        }
    }
}

int crm__conv_algo_count(enum crm__conv_pass pass)
{
    return pass == CRM__FWD ? CUDNN_CONVOLUTION_FWD_ALGO_COUNT
           : pass == CRM__BWD_DATA ? CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT
                                   : CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT;
}

/* 1 when every spatial dimension has unit stride and dilation. */
static int crm__unit_steps(const crm_dnn_cdesc *c)
{
    for (int i = 0; i < c->nbdims; i++)
        if (c->stride[i] != 1 || c->dilation[i] != 1)
            return 0;
    return 1;
}

int crm__conv_algo_ok(enum crm__conv_pass pass, int algo, const crm_dnn_tdesc *x, const crm_dnn_fdesc *w,
                      const crm_dnn_cdesc *c)
{
    enum crm__family f = crm__family(pass, algo);
    if (f == CRM__PLAIN)
        return 1;
    if (f == CRM__NEVER || c->nbdims != 2 || !crm__unit_steps(c))
        return 0;
    const int *fs = w->dims + 2; /* filter sizes, spatial */
    for (int i = 0; i < 2; i++) {
        switch (f) {
        case CRM__FFT:
            if (x->dims[i + 2] + 2 * c->pad[i] > 256 || fs[i] <= c->pad[i])
                return 0;
            break;
        case CRM__FFT_TILING:
            if (fs[i] <= c->pad[i] || fs[i] > 32)
                return 0;
            break;
        case CRM__WINOGRAD:
            if (fs[i] != 3)
                return 0;
            break;
        default: /* WINOGRAD_NONFUSED */
            if ((fs[i] != 3 && fs[i] != 5) || fs[i] != fs[0])
                return 0;
        }
    }
    return 1;
}
