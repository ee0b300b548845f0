/* crm_dnn_dropout.c -- the shim's cuDNN dropout descriptors: local objects like the
 * others (common/crm_dnn_dropout_api.c.inc), except that Set seeds the generator's
 * state on the device, one round trip (row crm_dnn_dropout_seed), so that a state
 * too small or outside every allocation is refused there, as cuDNN refuses it. The
 * compute calls are generated (crm_dnn_gen.c). */
#include "client/crm_conn.h"
#include "interpose/crm_dnn.h"
#include "interpose/crm_export.h"

static int crm__dropout_handle(cudnnHandle_t h)
{
    uint64_t id;
    return crm_dnn_handle_id(h, &id) == CUDNN_STATUS_SUCCESS;
}

static void crm__dropout_wire(const crm_dnn_ddesc *d, crm_dnn_dropout *w)
{
    *w = (crm_dnn_dropout){.rate = d->rate, .states = d->states, .state_bytes = d->state_bytes, .seed = d->seed};
}

/* Nothing to seed without a state: Set then changes the rate alone. */
static cudnnStatus_t crm__dropout_seed(cudnnHandle_t h, const crm_dnn_ddesc *d)
{
    crm_call call = {.api = CRM_API_crm_dnn_dropout_seed};
    crm_args_crm_dnn_dropout_seed *a = &call.crm_call_u.crm_dnn_dropout_seed;
    crm_reply reply;
    cudnnStatus_t st = crm_dnn_handle_id(h, &a->handle);
    if (st != CUDNN_STATUS_SUCCESS || d->states == 0)
        return st;
    crm__dropout_wire(d, &a->d);
    if ((st = crm_dnn_refuse_in_capture(h)) != CUDNN_STATUS_SUCCESS)
        return st;
    st = crm_dnn_sync(&call, &reply);
    crm_conn_reply_free(&reply);
    return st;
}

#include "common/crm_dnn_dropout_api.c.inc"

cudnnStatus_t crm_dnn_wire_dropout(const cudnnDropoutDescriptor_t d, crm_dnn_dropout *w)
{
    if (d == NULL)
        return CUDNN_STATUS_BAD_PARAM;
    crm__dropout_wire(&d->d, w);
    return CUDNN_STATUS_SUCCESS;
}
