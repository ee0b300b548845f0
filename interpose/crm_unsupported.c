/* crm_unsupported.c -- the error and log line of calls cudarem does not remote. */
#include <cuda_runtime_api.h>
#include "client/crm_handles.h"
#include "common/crm_log.h"
#include "interpose/crm_unsupported.h"

int crm_unsupported(const char *name, int *logged, int status, int last_error)
{
    if (!__atomic_exchange_n(logged, 1, __ATOMIC_RELAXED))
        crm_warn("%s is not supported by cudarem; it returns status %d (not supported)", name, status);
    if (last_error)
        crm_set_error(cudaErrorNotSupported);
    return status;
}
