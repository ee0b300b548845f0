/* crm_admit.c -- failed authentications per peer in the daemon, and the refusal of
 * a peer over the limit until its window ends (server/crm_admit.h). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
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
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char host[INET6_ADDRSTRLEN] = "?";
    struct ucred cred;
    socklen_t cl = sizeof cred;
    if (getpeername(fd, (struct sockaddr *)&ss, &sl) != 0 || ss.ss_family == AF_UNIX) {
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0)
            snprintf(key, len, "unix uid %d", (int)cred.uid);
        else
            snprintf(key, len, "unix");
        return;
    }
    if (ss.ss_family == AF_INET)
        inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, host, sizeof host);
    else if (ss.ss_family == AF_INET6)
        inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, host, sizeof host);
    snprintf(key, len, "%s", host);
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
