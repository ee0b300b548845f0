/* crm_dnn_dropout_desc.h -- the contents of cuDNN's dropout descriptor and the rules
 * cudnnSetDropoutDescriptor applies, shared by the shim, the server (it re-checks
 * what arrives on the wire) and the emulated device. Header-only and pure, like
 * common/crm_dnn_desc.h.
 *
 * The descriptor names the random generator's state in device memory; the state
 * itself (seeded by Set, advanced by each forward pass) stays on the device, so the
 * descriptor's contents never change after Set and can travel by value. */
#ifndef CRM_DNN_DROPOUT_DESC_H
#define CRM_DNN_DROPOUT_DESC_H

#include <stdint.h>
#include <cudnn.h>

typedef struct crm_dnn_ddesc {
    float rate;                  /* probability that an element is dropped, 0..1 */
    uint64_t states;             /* device address of the generator's state, 0: none */
    uint64_t state_bytes;        /* its size */
    uint64_t seed;
} crm_dnn_ddesc;

/* CUDNN_STATUS_BAD_PARAM for a rate outside [0, 1] (NaN included), or a state of
 * no bytes at a non-NULL address. */
static inline cudnnStatus_t crm_dnn_dropout_check(const crm_dnn_ddesc *d)
{
    if (!(d->rate >= 0.0f && d->rate <= 1.0f) || (d->states != 0 && d->state_bytes == 0))
        return CUDNN_STATUS_BAD_PARAM;
    return CUDNN_STATUS_SUCCESS;
}

#endif
