/* crm_dnn_backend.c -- the cuDNN backend (graph) calls that carry a handle inside
 * their arguments, handed to NVIDIA's cuDNN with that handle translated: an
 * operation graph is given its handle as an attribute value (CUDNN_TYPE_HANDLE),
 * which NVIDIA's cuDNN dereferences, so the shim's value must never reach it. The
 * other backend calls go over by the generated trampolines (interpose/crm_fallback.h). */
#include <cudnn.h>
#include "common/crm_log.h"
#include "interpose/crm_export.h"
#include "interpose/crm_fallback.h"

void *crm_dnn_real_handle(void *handle); /* interpose/crm_dnn_handle.c */

typedef cudnnStatus_t (*crm__attr_fn)(cudnnBackendDescriptor_t, cudnnBackendAttributeName_t,
                                      cudnnBackendAttributeType_t, int64_t, void *);
typedef cudnnStatus_t (*crm__get_fn)(cudnnBackendDescriptor_t, cudnnBackendAttributeName_t,
                                     cudnnBackendAttributeType_t, int64_t, int64_t *, void *);

static int crm__logged;

/* NVIDIA's function `name`, or NULL (logged once: the call is not supported). */
static void *crm__nvidia(const char *name)
{
    void *fn = crm_fallback_symbol(CRM_FALLBACK_CUDNN, name);
    if (fn == NULL && !__atomic_exchange_n(&crm__logged, 1, __ATOMIC_RELAXED))
        crm_warn("%s needs NVIDIA's cuDNN on the client, which is not there: not supported", name);
    if (fn != NULL)
        __atomic_fetch_add(&crm_fallback_calls, 1, __ATOMIC_RELAXED);
    return fn;
}

CRM_EXPORT cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t descriptor,
                                                  cudnnBackendAttributeName_t attributeName,
                                                  cudnnBackendAttributeType_t attributeType, int64_t elementCount,
                                                  const void *arrayOfElements)
{
    crm__attr_fn set = (crm__attr_fn)crm__nvidia("cudnnBackendSetAttribute");
    if (set == NULL)
        return CUDNN_STATUS_NOT_SUPPORTED;
    if (attributeType != CUDNN_TYPE_HANDLE)
        return set(descriptor, attributeName, attributeType, elementCount, (void *)arrayOfElements);
    if (elementCount != 1 || arrayOfElements == NULL)
        return CUDNN_STATUS_BAD_PARAM;
    void *ours = *(void *const *)arrayOfElements, *real = crm_dnn_real_handle(ours);
    if (real == ours) /* not one of ours, or NVIDIA's cuDNN could not make its own */
        return CUDNN_STATUS_NOT_SUPPORTED;
    return set(descriptor, attributeName, attributeType, 1, &real);
}

/* A handle attribute read back is NVIDIA's: it is not the shim's handle, so it is
 * refused rather than handed to a program that would pass it on. */
CRM_EXPORT cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const descriptor,
                                                  cudnnBackendAttributeName_t attributeName,
                                                  cudnnBackendAttributeType_t attributeType,
                                                  int64_t requestedElementCount, int64_t *elementCount,
                                                  void *arrayOfElements)
{
    crm__get_fn get = (crm__get_fn)crm__nvidia("cudnnBackendGetAttribute");
    if (get == NULL)
        return CUDNN_STATUS_NOT_SUPPORTED;
    if (attributeType == CUDNN_TYPE_HANDLE)
        return CUDNN_STATUS_NOT_SUPPORTED;
    return get(descriptor, attributeName, attributeType, requestedElementCount, elementCount, arrayOfElements);
}
