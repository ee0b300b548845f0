/* crm_h_dnn_dropout.c -- the server's side of cuDNN dropout descriptors: seeding a
 * generator's state (cudnnSetDropoutDescriptor, sent by the shim's Set) and the
 * backend descriptor each compute call builds from the contents it carries
 * (cudnnRestoreDropoutDescriptor: the state is taken as the device holds it). */
#include "common/crm_dnn_dropout_desc.h"
#include "server/crm_backend.h"
#include "server/crm_h_dnn.h"

static cudnnDropoutDescriptor_t crm__dropout; /* scratch, reused by every call */

/* The wire's contents checked, and the state's range inside one allocation. */
static cudnnStatus_t crm__dropout_checked(crm_h_dnn_call *c, const crm_dnn_dropout *w, crm_dnn_ddesc *d, void **dev)
{
    *d = (crm_dnn_ddesc){.rate = w->rate, .states = w->states, .state_bytes = w->state_bytes, .seed = w->seed};
    cudnnStatus_t st = crm_dnn_dropout_check(d);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    if (d->states == 0) {
        *dev = NULL;
        return CUDNN_STATUS_SUCCESS;
    }
    return crm_h_dnn_workspace(c, d->states, d->state_bytes, dev);
}

static cudnnStatus_t crm__dropout_scratch(void)
{
    return crm__dropout != NULL ? CUDNN_STATUS_SUCCESS : crm_rt.cudnnCreateDropoutDescriptor(&crm__dropout);
}

cudnnStatus_t crm_srv_crm_dnn_dropout_seed(crm_session *s, uint64_t handle, const crm_dnn_dropout *d)
{
    crm_h_dnn_call c;
    crm_dnn_ddesc dd;
    void *states;
    cudnnStatus_t st;
    if ((st = crm_h_dnn_begin(&c, s, handle)) || (st = crm__dropout_checked(&c, d, &dd, &states)) ||
        (st = crm__dropout_scratch()))
        return st;
    return crm_rt.cudnnSetDropoutDescriptor(crm__dropout, c.h, dd.rate, states, dd.state_bytes, dd.seed);
}

/* A compute call that drops anything needs a seeded state: a descriptor set without
 * one (PyTorch's way to say "no dropout") is refused unless its rate is 0. */
cudnnStatus_t crm_h_dnn_dropout(crm_h_dnn_call *c, const crm_dnn_dropout *w, cudnnDropoutDescriptor_t *out)
{
    crm_dnn_ddesc dd;
    void *states;
    cudnnStatus_t st = crm__dropout_checked(c, w, &dd, &states);
    if (st == CUDNN_STATUS_SUCCESS && states == NULL && dd.rate != 0.0f)
        st = CUDNN_STATUS_BAD_PARAM;
    if (st != CUDNN_STATUS_SUCCESS || (st = crm__dropout_scratch()) != CUDNN_STATUS_SUCCESS)
        return st;
    *out = crm__dropout;
    return crm_rt.cudnnRestoreDropoutDescriptor(crm__dropout, c->h, dd.rate, states, dd.state_bytes, dd.seed);
}
