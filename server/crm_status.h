/* crm_status.h -- what an administrator's observer session (CRM_CAP_OBSERVE in
 * HELLO; cudarem-smi) may ask: CRM_STATUS, the server's devices, sessions and
 * counts from the shared table (server/crm_monitor.h), and CRM_END, which tells
 * another session's process to end (SIGTERM: it frees all it held and logs its
 * end, as when its client leaves). Anyone else is answered with a refusal. */
#ifndef CRM_STATUS_H
#define CRM_STATUS_H

#include <stddef.h>
#include <stdint.h>
#include "crm_api.h"
#include "server/crm_session.h"
#include "server/crm_srv_rpc.h"

void crm_status_serve(crm_srv_rpc *x, crm_session *s);
void crm_status_end(crm_srv_rpc *x, crm_session *s);

/* The status of the server into *res (free with xdr_free(xdr_crm_status_res)). */
void crm_status_fill(crm_status_res *res);
/* Tells the process of session id to end (SIGTERM), logged as asked by `by`: 0,
 * or -1 with why set (no such session, or it is the caller's own). */
int crm_status_end_session(uint64_t id, const char *by, char *why, size_t whylen);

#endif
