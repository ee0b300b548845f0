/* crm_admit.c -- failed authentications per peer in the daemon, and the refusal of
 * a peer over the limit until its window ends (server/crm_admit.h). */
#include <stdio.h>
#include <string.h>
#include "common/crm_addr.h"
#include "common/crm_log.h"
#include "server/crm_admit.h"

#define CRM__SLOTS 256

typedef struct crm__peer {
    char key[CRM_ADMIT_KEY_MAX];
    time_t first;   /* first failure of the window */
    int failures;   /* in the window */
} crm__peer;

static crm__peer crm__peers[CRM__SLOTS];

void crm_admit_peer_key(int fd, char *key, size_t len)
{
    crm_peer p;
    crm_addr_peer(fd, &p);
    if (p.is_unix && p.uid >= 0)
        snprintf(key, len, "unix uid %ld", p.uid);
    else
        snprintf(key, len, "%s", p.is_unix ? "unix" : p.host);
}

/* The slot of key, or NULL. */
static crm__peer *crm__find(const char *key, time_t now)
{
    for (int i = 0; i < CRM__SLOTS; i++)
        if (crm__peers[i].failures > 0 && strcmp(crm__peers[i].key, key) == 0) {
            if (now - crm__peers[i].first >= CRM_ADMIT_WINDOW_S)
                crm__peers[i].failures = 0; /* its window is over */
            return crm__peers[i].failures > 0 ? &crm__peers[i] : NULL;
        }
    return NULL;
}

void crm_admit_failed(const char *key, time_t now)
{
    crm__peer *p = crm__find(key, now);
    if (p == NULL) { /* a free slot, else the one whose window began first */
        p = &crm__peers[0];
        for (int i = 0; i < CRM__SLOTS && p->failures > 0; i++)
            if (crm__peers[i].failures == 0 || crm__peers[i].first < p->first)
                p = &crm__peers[i];
        snprintf(p->key, sizeof p->key, "%s", key);
        p->first = now;
        p->failures = 0;
    }
    if (++p->failures == CRM_ADMIT_MAX_FAILURES)
        crm_warn("%s failed to authenticate %d times: refused for %d s", key, p->failures,
                 (int)(p->first + CRM_ADMIT_WINDOW_S - now));
}

const char *crm_admit_refusal(const char *key, time_t now)
{
    static char why[160];
    crm__peer *p = crm__find(key, now);
    if (p == NULL || p->failures < CRM_ADMIT_MAX_FAILURES)
        return NULL;
    snprintf(why, sizeof why, "too many failed authentications from %s: try again in %d s", key,
             (int)(p->first + CRM_ADMIT_WINDOW_S - now));
    return why;
}
