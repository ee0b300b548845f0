/* crm_deferred.h -- failures of calls that returned before they ran (queued and
 * posted calls), kept for the thread that issued them. A local GPU's runtime
 * reports such a failure to its caller, at the call or at that thread's next
 * synchronising call; with one connection serving every thread of a program, a
 * failure kept for "whoever synchronises next" reached another thread, and the
 * thread whose call failed went on as if it had run. Not locked: the connection's
 * lock guards both tables. */
#ifndef CRM_DEFERRED_H
#define CRM_DEFERRED_H

#include <stdint.h>

/* The first failure of each thread that has one waiting, and one for whichever
 * thread takes it first (its thread unknown, or no memory to keep it apart). */
typedef struct crm_deferred {
    struct crm_deferred_entry {
        uint64_t owner; /* crm_thread_serial() of the issuing thread */
        int api;        /* 0: none */
        int status;
    } *entries, anyone;
    unsigned count, cap;
} crm_deferred;

/* Keeps a failure for owner (0: for anyone), unless one is waiting there already.
 * When memory runs out it is kept for anyone, so it is never lost. */
void crm_deferred_note(crm_deferred *d, uint64_t owner, int api, int status);
/* Removes and returns owner's failure, else the one kept for anyone: 1 with *api
 * and *status set, 0 when there is none. */
int crm_deferred_take(crm_deferred *d, uint64_t owner, int *api, int *status);
/* Forgets every failure (a new session). */
void crm_deferred_clear(crm_deferred *d);
void crm_deferred_free(crm_deferred *d);

/* The threads that posted calls since a server last answered: a posted call's
 * failure comes back with that answer, naming the call but not its thread, and is
 * kept for each of them. */
typedef struct crm_owner_set {
    uint64_t *owners;
    unsigned count, cap;
    int overflow; /* an owner could not be added: the failure is everyone's */
} crm_owner_set;

/* Adds owner once; -1 (and overflow set) when memory runs out. */
int crm_owner_set_add(crm_owner_set *s, uint64_t owner);
void crm_owner_set_clear(crm_owner_set *s);
void crm_owner_set_free(crm_owner_set *s);

#endif
