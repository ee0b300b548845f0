/* crm_rtcount.c -- counts synchronous round trips by the wire call they waited for
 * and writes them as text, largest first. */
#include "crm_rtcount.h"

#include <stdio.h>
#include <string.h>
#include "protocol/crm_wire.h"

void crm_rtcount_add(crm_rtcount *rc, int api)
{
    for (unsigned i = 0; i < rc->used; i++) {
        if (rc->api[i] == api) {
            rc->count[i]++;
            return;
        }
    }
    if (rc->used == CRM_RTCOUNT_SLOTS) {
        rc->other++;
        return;
    }
    rc->api[rc->used] = api;
    rc->count[rc->used++] = 1;
}

/* Index of the largest count not yet written (done[] marks written slots). */
static unsigned crm__largest(const crm_rtcount *rc, const char *done)
{
    unsigned best = rc->used;
    for (unsigned i = 0; i < rc->used; i++) {
        if (!done[i] && (best == rc->used || rc->count[i] > rc->count[best]))
            best = i;
    }
    return best;
}

static const char *crm__rt_name(int api)
{
    return api == 0 ? "flush" : crm_api_name(api);
}

size_t crm_rtcount_format(const crm_rtcount *rc, char *buf, size_t len)
{
    char done[CRM_RTCOUNT_SLOTS] = {0};
    size_t need = 0;
    if (len > 0)
        buf[0] = '\0';
    for (unsigned k = 0; k < rc->used; k++) {
        unsigned i = crm__largest(rc, done);
        done[i] = 1;
        int n = snprintf(need < len ? buf + need : NULL, need < len ? len - need : 0, "%s%s=%llu",
                         k > 0 ? " " : "", crm__rt_name(rc->api[i]), (unsigned long long)rc->count[i]);
        need += n > 0 ? (size_t)n : 0;
    }
    if (rc->other > 0) {
        int n = snprintf(need < len ? buf + need : NULL, need < len ? len - need : 0, "%sother=%llu",
                         rc->used > 0 ? " " : "", (unsigned long long)rc->other);
        need += n > 0 ? (size_t)n : 0;
    }
    return need;
}
