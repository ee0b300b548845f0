/* crm_limits.c -- the per-session limits' defaults and the parsing of --session-limits
 * (server/crm_limits.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/crm_limits.h"
#include "server/crm_quota.h"

/* The defaults, chosen as docs/operator-guide.md ("Strangers on the network") says. */
static const uint64_t crm__defaults[CRM_LIMIT_KINDS] = {
    [CRM_LIMIT_STREAMS] = 1024,       [CRM_LIMIT_EVENTS] = 65536,      [CRM_LIMIT_HANDLES] = 256,
    [CRM_LIMIT_MODULES] = 4096,       [CRM_LIMIT_MODULE_BYTES] = 4ull << 30,
    [CRM_LIMIT_FUNCTIONS] = 262144,   [CRM_LIMIT_ALLOCATIONS] = 1048576, [CRM_LIMIT_PINNED] = 4096,
    [CRM_LIMIT_HOST_MEMORY] = 16ull << 30,
};

crm_limits crm_session_limits;

crm_limits crm_limits_default(void)
{
    crm_limits l;
    for (int k = 0; k < CRM_LIMIT_KINDS; k++)
        l.max[k] = crm__defaults[k];
    return l;
}

/* VALUE of a count kind: digits, at most 10^15. 0 or -1. */
static int crm__count(const char *text, uint64_t *out)
{
    if (text[0] == '\0' || strlen(text) > 15 || strspn(text, "0123456789") != strlen(text))
        return -1;
    *out = strtoull(text, NULL, 10);
    return 0;
}

/* One "kind=value" into l. 0 or -1 with err set. */
static int crm__field(const char *f, crm_limits *l, char *err, size_t errlen)
{
    const char *eq = strchr(f, '=');
    size_t klen = eq ? (size_t)(eq - f) : strlen(f);
    for (int k = 0; k < CRM_LIMIT_KINDS; k++) {
        const char *name = crm_limit_name(k);
        if (eq == NULL || strlen(name) != klen || strncmp(f, name, klen) != 0)
            continue;
        uint64_t v;
        if (strcmp(eq + 1, "0") == 0) {
            l->max[k] = 0;
            return 0;
        }
        if (crm_limit_is_bytes(k) ? crm_quota_size(eq + 1, &v) == 0 : crm__count(eq + 1, &v) == 0) {
            l->max[k] = v;
            return 0;
        }
        snprintf(err, errlen, "%s=%s: not %s (0: no limit)", name, eq + 1,
                 crm_limit_is_bytes(k) ? "a size such as 512M or 2G" : "a count");
        return -1;
    }
    char known[256] = "";
    for (int k = 0; k < CRM_LIMIT_KINDS; k++)
        snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", k ? ", " : "", crm_limit_name(k));
    snprintf(err, errlen, "'%.*s' is not KIND=VALUE with KIND one of %s", (int)(klen < 64 ? klen : 64), f, known);
    return -1;
}

int crm_limits_parse(const char *spec, crm_limits *l, char *err, size_t errlen)
{
    crm_limits out = *l;
    char *copy = strdup(spec), *save = NULL;
    if (copy == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = 0, fields = 0;
    for (char *f = strtok_r(copy, ",", &save); f != NULL && rc == 0; f = strtok_r(NULL, ",", &save), fields++)
        rc = crm__field(f, &out, err, errlen);
    free(copy);
    if (rc == 0 && fields == 0) {
        snprintf(err, errlen, "expected KIND=VALUE[,KIND=VALUE...]");
        rc = -1;
    }
    if (rc == 0)
        *l = out;
    return rc;
}
