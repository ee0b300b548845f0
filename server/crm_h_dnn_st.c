/* crm_h_dnn_st.c -- the server's spatial transformer descriptors: the backend
 * descriptor each call builds from the contents it carries, and the checks of theta
 * and the grid, whose extents the descriptor gives (common/crm_dnn_st_desc.h). */
#include <string.h>
#include "common/crm_dnn_st_desc.h"
#include "server/crm_backend.h"
#include "server/crm_h_dnn.h"

static cudnnSpatialTransformerDescriptor_t crm__st; /* scratch, reused by every call */

static cudnnStatus_t crm__st_checked(const crm_dnn_st *w, crm_dnn_sdesc *s)
{
    *s = (crm_dnn_sdesc){.sampler = w->sampler, .dtype = w->dtype, .nbdims = w->nbdims};
    memcpy(s->dims, w->dims, sizeof s->dims);
    return crm_dnn_st_check(s);
}

cudnnStatus_t crm_h_dnn_st(crm_h_dnn_call *c, const crm_dnn_st *w, cudnnSpatialTransformerDescriptor_t *out)
{
    crm_dnn_sdesc s;
    (void)c;
    cudnnStatus_t st = crm__st_checked(w, &s);
    if (st == CUDNN_STATUS_SUCCESS && crm__st == NULL)
        st = crm_rt.cudnnCreateSpatialTransformerDescriptor(&crm__st);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    *out = crm__st;
    return crm_rt.cudnnSetSpatialTransformerNdDescriptor(crm__st, (cudnnSamplerType_t)s.sampler,
                                                         (cudnnDataType_t)s.dtype, s.nbdims, s.dims);
}

cudnnStatus_t crm_h_dnn_st_ptr(crm_h_dnn_call *c, const crm_dnn_st *w, uint64_t ptr, int which, void **dev)
{
    crm_dnn_sdesc s;
    crm_dnn_tdesc t;
    uint64_t bytes;
    cudnnStatus_t st = crm__st_checked(w, &s);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    crm_dnn_st_array(&s, (enum crm_dnn_st_array)which, &t);
    if (crm_dnn_tensor_bytes(&t, &bytes) != 0)
        return CUDNN_STATUS_BAD_PARAM;
    return crm_h_dnn_workspace(c, ptr, bytes, dev); /* bytes > 0: ptr 0 is refused */
}
