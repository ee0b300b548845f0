/* crm_startup.c -- the limits on connections not yet admitted (server/crm_startup.h). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "server/crm_startup.h"

uint64_t crm_startup_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The oldest startup (of peer, or of any when peer is NULL) pending for at least
 * CRM_STARTUP_MIN_AGE_MS, or -1. */
static int crm__oldest(const crm_startup *pending, int n, const char *peer, uint64_t now_ms)
{
    int best = -1;
    for (int i = 0; i < n; i++) {
        if (peer != NULL && strcmp(pending[i].peer, peer) != 0)
            continue;
        if (now_ms - pending[i].started_ms < CRM_STARTUP_MIN_AGE_MS)
            continue;
        if (best < 0 || pending[i].started_ms < pending[best].started_ms)
            best = i;
    }
    return best;
}

/* The oldest startup from a source never admitted, of any age, or -1. */
static int crm__oldest_stranger(const crm_startup *pending, int n)
{
    int best = -1;
    for (int i = 0; i < n; i++)
        if (!pending[i].trusted && (best < 0 || pending[i].started_ms < pending[best].started_ms))
            best = i;
    return best;
}

enum crm_startup_verdict crm_startup_decide(const crm_startup *pending, int n, const char *peer, int trusted,
                                            uint64_t now_ms, int max_total, int max_per_peer, int *victim)
{
    int of_peer = 0;
    for (int i = 0; i < n; i++)
        of_peer += strcmp(pending[i].peer, peer) == 0;
    const char *scope = NULL; /* whose startup makes room: the peer's own first */
    if (max_per_peer > 0 && of_peer >= max_per_peer)
        scope = peer;
    else if (max_total > 0 && n >= max_total)
        scope = "";
    else
        return CRM_STARTUP_ACCEPT;
    *victim = crm__oldest(pending, n, scope[0] ? scope : NULL, now_ms);
    if (*victim < 0 && trusted && scope[0] == '\0')
        *victim = crm__oldest_stranger(pending, n); /* a returning user before any stranger */
    return *victim >= 0 ? CRM_STARTUP_EVICT : CRM_STARTUP_REFUSE;
}

void crm_startup_trust_add(crm_startup_trust *t, const char *peer, uint64_t now_ms)
{
    int slot = 0;
    for (int i = 0; i < CRM_STARTUP_TRUSTED; i++) {
        if (t->at_ms[i] != 0 && strcmp(t->peer[i], peer) == 0) {
            slot = i;
            break;
        }
        if (t->at_ms[i] < t->at_ms[slot])
            slot = i; /* a free entry, else the least recently admitted */
    }
    snprintf(t->peer[slot], sizeof t->peer[slot], "%s", peer);
    t->at_ms[slot] = now_ms ? now_ms : 1;
}

int crm_startup_trusted(const crm_startup_trust *t, const char *peer, uint64_t now_ms)
{
    for (int i = 0; i < CRM_STARTUP_TRUSTED; i++)
        if (t->at_ms[i] != 0 && now_ms - t->at_ms[i] < CRM_STARTUP_TRUST_MS && strcmp(t->peer[i], peer) == 0)
            return 1;
    return 0;
}

static volatile sig_atomic_t crm__admitted;
static int crm__notify_fd = -1;

static void crm__on_deadline(int sig)
{
    (void)sig;
    if (!crm__admitted)
        _exit(CRM_EXIT_GRACE);
}

void crm_startup_child_begin(int notify_fd, int grace_s)
{
    struct sigaction sa = {.sa_handler = crm__on_deadline};
    crm__admitted = 0;
    crm__notify_fd = notify_fd;
    sigaction(SIGALRM, &sa, NULL);
    sigaction(SIGUSR2, &sa, NULL);
    if (grace_s > 0)
        alarm((unsigned)grace_s);
}

void crm_startup_child_admitted(void)
{
    if (crm__admitted)
        return;
    crm__admitted = 1;
    alarm(0);
    signal(SIGUSR2, SIG_IGN);
    if (crm__notify_fd >= 0) {
        ssize_t n = write(crm__notify_fd, "h", 1);
        (void)n; /* a daemon gone is no concern of this session */
        close(crm__notify_fd);
        crm__notify_fd = -1;
    }
}
