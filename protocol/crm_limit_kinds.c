/* crm_limit_kinds.c -- the names of the session limits' kinds
 * (protocol/crm_limit_kinds.h). */
#include <stddef.h>
#include "protocol/crm_limit_kinds.h"

static const char *const crm__names[CRM_LIMIT_KINDS] = {
    [CRM_LIMIT_STREAMS] = "streams",       [CRM_LIMIT_EVENTS] = "events",
    [CRM_LIMIT_HANDLES] = "handles",       [CRM_LIMIT_MODULES] = "modules",
    [CRM_LIMIT_MODULE_BYTES] = "module-bytes", [CRM_LIMIT_FUNCTIONS] = "functions",
    [CRM_LIMIT_ALLOCATIONS] = "allocations", [CRM_LIMIT_PINNED] = "pinned",
    [CRM_LIMIT_HOST_MEMORY] = "host-memory",
};

const char *crm_limit_name(int kind)
{
    return kind >= 0 && kind < CRM_LIMIT_KINDS ? crm__names[kind] : NULL;
}

int crm_limit_is_bytes(int kind)
{
    return kind == CRM_LIMIT_MODULE_BYTES || kind == CRM_LIMIT_HOST_MEMORY;
}
