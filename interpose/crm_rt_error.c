/* crm_rt_error.c -- exported error calls, answered locally with no round trip. */
#include <cuda_runtime_api.h>
#include "client/crm_conn.h"
#include "client/crm_handles.h"
#include "common/crm_errors.h"
#include "interpose/crm_export.h"

/* Queued calls may have failed: learn it before answering (one round trip, only
 * when something is queued). */
static void crm__collect_queued_errors(void)
{
    if (!crm_conn_has_pending())
        return;
    crm_conn_flush();
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
