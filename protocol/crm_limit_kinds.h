/* crm_limit_kinds.h -- the kinds of what one session may hold besides device memory
 * (--session-limits, server/crm_limits.h), shared by the server, which limits them,
 * and cudarem-smi, which shows them: their order is that of the status answer's
 * limits and held arrays (protocol/cudarem.x). */
#ifndef CRM_LIMIT_KINDS_H
#define CRM_LIMIT_KINDS_H

/* Append only: the wire carries them by position. */
enum crm_limit_kind {
    CRM_LIMIT_STREAMS = 0,      /* streams */
    CRM_LIMIT_EVENTS = 1,       /* events */
    CRM_LIMIT_HANDLES = 2,      /* library handles: cuBLAS, cuBLASLt, cuDNN */
    CRM_LIMIT_MODULES = 3,      /* device code modules loaded */
    CRM_LIMIT_MODULE_BYTES = 4, /* their images, bytes */
    CRM_LIMIT_FUNCTIONS = 5,    /* kernel handles taken from them */
    CRM_LIMIT_ALLOCATIONS = 6,  /* device memory allocations, mappings and symbols */
    CRM_LIMIT_PINNED = 7,       /* pinned host regions shared with the server */
    CRM_LIMIT_HOST_MEMORY = 8,  /* the session process's private resident memory, bytes */
    CRM_LIMIT_KINDS = 9
};

/* The name --session-limits takes for kind ("module-bytes"), NULL past the last. */
const char *crm_limit_name(int kind);
/* 1 when the kind is counted in bytes (shown as sizes, given with K, M, G, T). */
int crm_limit_is_bytes(int kind);

#endif
