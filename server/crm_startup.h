/* crm_startup.h -- connections not yet admitted ("startups", as OpenSSH calls them):
 * what they may cost the server before a client has proved anything.
 *
 * Each connection is served by a process of its own from accept on. Until its
 * HELLO is answered it is a startup, and three limits bound what strangers can
 * hold that way: a deadline (--login-grace: a startup that has not finished its
 * handshake by then ends), and caps on startups at once, in total
 * (--max-startups) and per source (--max-startups-per-peer: an IP address, or a
 * uid on a Unix socket). A newcomer over a cap takes the place of the oldest
 * startup pending longer than CRM_STARTUP_MIN_AGE_MS (in total, or of the same
 * source), which is ended; when none is that old, the newcomer is closed at once,
 * with no process. A legitimate client finishes its handshake in milliseconds, so
 * the startups that are ended are those that sat idle. A newcomer from a source
 * that was admitted before (trusted: the daemon remembers CRM_STARTUP_TRUSTED
 * sources for CRM_STARTUP_TRUST_MS) over the total cap takes the place of the oldest
 * startup from a source never admitted, however young: strangers at many addresses
 * cannot keep returning users out. --max-sessions counts admitted sessions only.
 *
 * The policy (crm_startup_decide) is pure; the daemon keeps the table, and the
 * session process reports its HELLO over a pipe (crm_startup_child_*). */
#ifndef CRM_STARTUP_H
#define CRM_STARTUP_H

#include <stdint.h>

#define CRM_STARTUP_MIN_AGE_MS 2000 /* a startup younger than this is never ended for an untrusted newcomer */
#define CRM_STARTUP_TRUSTED 256     /* sources remembered as admitted before */
#define CRM_STARTUP_TRUST_MS (24ull * 3600 * 1000) /* for this long after their last admission */
#define CRM_EXIT_GRACE 5            /* a session process that ended at its --login-grace deadline */

/* One startup as the policy sees it. */
typedef struct crm_startup {
    const char *peer;     /* its source, as crm_admit_peer_key says */
    uint64_t started_ms;  /* accepted at, CLOCK_MONOTONIC milliseconds */
    int trusted;          /* its source was admitted before */
} crm_startup;

enum crm_startup_verdict {
    CRM_STARTUP_ACCEPT = 0, /* room for the newcomer */
    CRM_STARTUP_EVICT = 1,  /* end *victim first, then accept it */
    CRM_STARTUP_REFUSE = 2  /* close the newcomer: over a cap and nobody old enough to make room */
};

/* What to do with a newcomer from peer (trusted: admitted before), given the n
 * startups pending, the caps (0: none) and the time now. *victim is set for
 * CRM_STARTUP_EVICT. */
enum crm_startup_verdict crm_startup_decide(const crm_startup *pending, int n, const char *peer, int trusted,
                                            uint64_t now_ms, int max_total, int max_per_peer, int *victim);

/* The sources admitted before, remembered by the daemon: a fixed table, the least
 * recently admitted replaced first. */
typedef struct crm_startup_trust {
    char peer[CRM_STARTUP_TRUSTED][64];
    uint64_t at_ms[CRM_STARTUP_TRUSTED]; /* 0: a free entry */
} crm_startup_trust;

/* Remembers that peer was admitted at now_ms. */
void crm_startup_trust_add(crm_startup_trust *t, const char *peer, uint64_t now_ms);
/* 1 when peer was admitted within CRM_STARTUP_TRUST_MS of now_ms. */
int crm_startup_trusted(const crm_startup_trust *t, const char *peer, uint64_t now_ms);

/* CLOCK_MONOTONIC in milliseconds. */
uint64_t crm_startup_now_ms(void);

/* In a new session process: ends the process (exit CRM_EXIT_GRACE) if HELLO has
 * not been answered within grace_s seconds (0: no deadline), and on SIGUSR2 while
 * still a startup (the daemon making room); notify_fd (-1: none) hears of HELLO. */
void crm_startup_child_begin(int notify_fd, int grace_s);

/* HELLO answered (a session or an observer admitted): the deadline is lifted,
 * SIGUSR2 no longer ends the process, and the daemon is told. */
void crm_startup_child_admitted(void);

#endif
