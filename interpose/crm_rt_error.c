/* crm_rt_error.c -- exported error calls, answered locally with no round trip. */
#include <cuda_runtime_api.h>
#include "client/crm_conn.h"
#include "client/crm_handles.h"
#include "common/crm_errors.h"
#include "interpose/crm_export.h"

/* The failures of queued calls that came back with an earlier answer become the
 * last error. Calls still queued are not sent for this: their failures are
 * asynchronous errors, which CUDA reports at the next synchronising call, and a
 * local GPU's cudaGetLastError right after a launch does not wait for the kernel
 * either. (torch asks after every kernel launch: sending the queue each time would
 * cost a round trip per kernel.) Launch checks a GPU makes at the call are made by
 * the client at the call. */
static void crm__collect_queued_errors(void)
{
    crm_set_error(crm_conn_take_deferred());
}

CRM_EXPORT cudaError_t cudaGetLastError(void)
{
    crm__collect_queued_errors();
    return crm_take_error();
}

CRM_EXPORT cudaError_t cudaPeekAtLastError(void)
{
    crm__collect_queued_errors();
    return crm_peek_error();
}

CRM_EXPORT const char *cudaGetErrorString(cudaError_t error)
{
    return crm_error_string((int)error);
}

CRM_EXPORT const char *cudaGetErrorName(cudaError_t error)
{
    return crm_error_name((int)error);
}
