/* crm_monitor.c -- the table of sessions and device busy time shared by the daemon and
 * its session processes (server/crm_monitor.h).
 *
 * One anonymous MAP_SHARED mapping, made by the daemon before it forks: a slot per
 * session process (its pid, the client's pid, its user, bytes held and whether it
 * used each device), a slot per user (sessions and bytes held per device) and, per
 * device, busy time in ten 100 ms buckets. A session writes only its own slot and
 * its user's counters (atomics); the buckets and the claiming of user slots are
 * guarded by one robust process-shared mutex, so a session dying inside it cannot
 * wedge the others.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "common/crm_log.h"
#include "server/crm_monitor_table.h"

crm__table *crm__t;   /* shared (daemon) or private (a lone session) */
crm__slot *crm__me;   /* this session's slot */

uint64_t crm_monitor_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int crm_monitor_init(void)
{
    pthread_mutexattr_t a;
    if (crm__t != NULL)
        return 0;
    void *p = mmap(NULL, sizeof(crm__table), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    crm__t = p; /* zero-filled: every slot free, every bucket empty */
    crm__t->start_unix = (int64_t)time(NULL);
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&crm__t->lock, &a);
    pthread_mutexattr_destroy(&a);
    return 0;
}

crm__table *crm__table_get(void)
{
    if (crm__t == NULL && crm_monitor_init() != 0)
        return NULL;
    return crm__t;
}

void crm__lock(void)
{
    if (pthread_mutex_lock(&crm__t->lock) == EOWNERDEAD)
        pthread_mutex_consistent(&crm__t->lock); /* the buckets hold only counters */
}

/* The user of slot s, or NULL. */
crm__user *crm__user_of(const crm__slot *s)
{
    int u = atomic_load(&s->user);
    return u > 0 && u <= CRM_MONITOR_USERS ? &crm__t->users[u - 1] : NULL;
}

/* Empties slot s, giving what it held back to its user. */
static void crm__slot_clear(crm__slot *s)
{
    crm__user *u = crm__user_of(s);
    for (int d = 0; d < CRM_MONITOR_DEVICES; d++) {
        int64_t held = atomic_exchange(&s->used[d], 0);
        if (u != NULL)
            atomic_fetch_sub(&u->used[d], held);
        atomic_store(&s->touched[d], 0);
    }
    if (u != NULL && atomic_exchange(&s->user, 0) != 0)
        atomic_fetch_sub(&u->sessions, 1);
    atomic_store(&s->client_pid, 0);
    atomic_store(&s->session_id, 0);
    atomic_store(&s->described, 0);
    atomic_store(&s->start_unix, 0);
    atomic_store(&s->calls, 0);
    atomic_store(&s->bytes_in, 0);
    atomic_store(&s->bytes_out, 0);
    atomic_store(&s->kernel_ns, 0);
    for (int k = 0; k < CRM_LIMIT_KINDS; k++)
        atomic_store(&s->held[k], 0);
}

/* The slot of user name (claimed when new, or when the table is full, one no
 * session uses), or 0 when none is free; as an index + 1. Under the lock. */
static int crm__user_slot(const char *name)
{
    int free_slot = 0;
    for (int i = 0; i < CRM_MONITOR_USERS; i++) {
        crm__user *u = &crm__t->users[i];
        if (strcmp(u->name, name) == 0)
            return i + 1;
        if (free_slot == 0 && (u->name[0] == '\0' || atomic_load(&u->sessions) == 0))
            free_slot = i + 1;
    }
    if (free_slot != 0) {
        crm__user *u = &crm__t->users[free_slot - 1];
        snprintf(u->name, sizeof u->name, "%s", name);
        for (int d = 0; d < CRM_MONITOR_DEVICES; d++)
            atomic_store(&u->used[d], 0);
    }
    return free_slot;
}

static int crm__server_max; /* --max-sessions, set in the daemon before it forks */

void crm_monitor_set_max_sessions(int max_sessions)
{
    crm__server_max = max_sessions;
}

/* Sessions admitted now, every user's. Under the lock. */
static int crm__admitted(void)
{
    int n = 0;
    for (int i = 0; i < CRM_MONITOR_USERS; i++)
        n += atomic_load(&crm__t->users[i].sessions);
    return n;
}

/* Registers the calling session (slot me) with user under max_sessions and the
 * server's --max-sessions. 0, -1 (the user's limit) or -2 (the server's). */
static int crm__join_user(crm__slot *me, const char *user, int max_sessions)
{
    int rc = 0;
    crm__lock();
    int u = crm__user_slot(user);
    if (crm__server_max > 0 && crm__admitted() >= crm__server_max)
        rc = -2;
    else if (u != 0) {
        crm__user *cu = &crm__t->users[u - 1];
        if (max_sessions > 0 && atomic_load(&cu->sessions) >= max_sessions)
            rc = -1;
        else {
            atomic_fetch_add(&cu->sessions, 1);
            atomic_store(&me->user, u);
        }
    }
    pthread_mutex_unlock(&crm__t->lock);
    return rc;
}

/* A slot whose process is gone (a session killed before the daemon reaped it, or a
 * daemon that is itself gone) is free again. */
static int crm__claim(crm__slot *s, int pid)
{
    int cur = atomic_load(&s->server_pid);
    if (cur != 0 && (kill(cur, 0) == 0 || errno != ESRCH))
        return 0;
    return atomic_compare_exchange_strong(&s->server_pid, &cur, pid);
}

int crm_monitor_session_start(uint64_t session_id, uint32_t client_pid, const char *user, int max_sessions)
{
    crm__table *t = crm__table_get();
    int pid = (int)getpid();
    for (int i = 0; t != NULL && crm__me == NULL && i < CRM_MONITOR_SESSIONS; i++) {
        if (!crm__claim(&t->slots[i], pid))
            continue;
        crm__me = &t->slots[i];
        crm__slot_clear(crm__me); /* a dead session's memory goes back to its user */
        atomic_store(&crm__me->session_id, session_id);
        atomic_store(&crm__me->client_pid, client_pid);
    }
    if (crm__me == NULL) {
        crm_warn("session %llu: the session table is full; NVML will not list it and quotas do not count it",
                 (unsigned long long)session_id);
        return 0;
    }
    int rc = crm__join_user(crm__me, user, max_sessions);
    if (rc == 0)
        return 0;
    atomic_store(&crm__me->server_pid, 0);
    crm__me = NULL;
    return rc;
}

void crm_monitor_session_end(void)
{
    if (crm__me == NULL)
        return;
    crm__slot_clear(crm__me);
    atomic_store(&crm__me->server_pid, 0);
    crm__me = NULL;
}

void crm_monitor_forget(pid_t server_pid)
{
    for (int i = 0; crm__t != NULL && i < CRM_MONITOR_SESSIONS; i++) {
        int cur = (int)server_pid;
        crm__slot *s = &crm__t->slots[i];
        if (atomic_load(&s->server_pid) != cur)
            continue;
        crm__slot_clear(s);
        atomic_compare_exchange_strong(&s->server_pid, &cur, 0);
    }
}

static int crm__valid(int device)
{
    return device >= 0 && device < CRM_MONITOR_DEVICES;
}

void crm_monitor_charge(int device, int64_t bytes)
{
    if (crm__me == NULL || !crm__valid(device))
        return;
    crm__user *u = crm__user_of(crm__me);
    atomic_fetch_add(&crm__me->used[device], bytes);
    if (u != NULL)
        atomic_fetch_add(&u->used[device], bytes);
    atomic_store(&crm__me->touched[device], 1);
}

int crm_monitor_charge_within(int device, uint64_t bytes, uint64_t limit)
{
    crm__user *u = crm__me != NULL && crm__valid(device) ? crm__user_of(crm__me) : NULL;
    if (bytes > INT64_MAX)
        return -1; /* more than any device holds (and than the counters can take back) */
    if (limit == 0 || u == NULL) {
        crm_monitor_charge(device, (int64_t)bytes);
        return 0;
    }
    int64_t cur = atomic_load(&u->used[device]);
    do {
        if (cur < 0 || (uint64_t)cur + bytes > limit)
            return -1;
    } while (!atomic_compare_exchange_weak(&u->used[device], &cur, cur + (int64_t)bytes));
    atomic_fetch_add(&crm__me->used[device], (int64_t)bytes);
    atomic_store(&crm__me->touched[device], 1);
    return 0;
}

uint64_t crm_monitor_user_used(int device)
{
    if (crm__me == NULL || !crm__valid(device))
        return 0;
    crm__user *u = crm__user_of(crm__me);
    int64_t used = u ? atomic_load(&u->used[device]) : atomic_load(&crm__me->used[device]);
    return used > 0 ? (uint64_t)used : 0;
}

/* Adds [t0, t1) into the buckets of its epochs that are still in the window. */
static void crm__add_busy(crm__device_busy *b, int kind, uint64_t t0, uint64_t t1)
{
    uint64_t last = t1 / CRM__BUCKET_NS;
    uint64_t first = t0 / CRM__BUCKET_NS;
    if (last >= CRM__BUCKETS && first < last - (CRM__BUCKETS - 1))
        first = last - (CRM__BUCKETS - 1);
    for (uint64_t e = first; e <= last; e++) {
        uint64_t lo = e * CRM__BUCKET_NS, hi = lo + CRM__BUCKET_NS;
        uint64_t from = t0 > lo ? t0 : lo, to = t1 < hi ? t1 : hi;
        unsigned i = (unsigned)(e % CRM__BUCKETS);
        if (b->epoch[i] != e) {
            b->epoch[i] = e;
            b->busy[0][i] = b->busy[1][i] = 0;
        }
        if (to > from)
            b->busy[kind][i] += to - from;
    }
}

void crm_monitor_busy(int device, enum crm_monitor_busy kind, uint64_t t0_ns, uint64_t t1_ns)
{
    if (crm__table_get() == NULL || !crm__valid(device) || t1_ns <= t0_ns)
        return;
    if (crm__me != NULL) {
        atomic_store(&crm__me->touched[device], 1);
        if (kind == CRM_BUSY_COMPUTE)
            atomic_fetch_add(&crm__me->kernel_ns, t1_ns - t0_ns);
    }
    crm__lock();
    crm__add_busy(&crm__t->devices[device], (int)kind, t0_ns, t1_ns);
    pthread_mutex_unlock(&crm__t->lock);
}

void crm_monitor_add_kernel_time(uint64_t ns)
{
    if (crm__table_get() != NULL && crm__me != NULL && ns > 0)
        atomic_fetch_add(&crm__me->kernel_ns, ns);
}

static unsigned crm__percent(uint64_t busy, uint64_t window)
{
    return busy >= window ? 100u : (unsigned)(busy * 100 / window);
}

void crm_monitor_utilization(int device, unsigned *compute, unsigned *memory)
{
    uint64_t now = crm_monitor_now_ns(), sum[2] = {0, 0};
    uint64_t cur = now / CRM__BUCKET_NS;
    uint64_t oldest = cur >= CRM__BUCKETS - 1 ? cur - (CRM__BUCKETS - 1) : 0;
    *compute = *memory = 0;
    if (crm__table_get() == NULL || !crm__valid(device))
        return;
    crm__lock();
    const crm__device_busy *b = &crm__t->devices[device];
    for (unsigned i = 0; i < CRM__BUCKETS; i++)
        if (b->epoch[i] >= oldest && b->epoch[i] <= cur && (b->busy[0][i] || b->busy[1][i])) {
            sum[0] += b->busy[0][i];
            sum[1] += b->busy[1][i];
        }
    pthread_mutex_unlock(&crm__t->lock);
    uint64_t window = now - oldest * CRM__BUCKET_NS;
    *compute = crm__percent(sum[0], window);
    *memory = crm__percent(sum[1], window);
}

int crm_monitor_processes(int device, crm_monitor_proc *out, int max)
{
    int n = 0;
    if (crm__table_get() == NULL || !crm__valid(device))
        return 0;
    for (int i = 0; i < CRM_MONITOR_SESSIONS; i++) {
        const crm__slot *s = &crm__t->slots[i];
        int pid = atomic_load(&s->server_pid);
        if (pid <= 0 || !atomic_load(&s->touched[device]))
            continue;
        if (n < max) {
            int64_t used = atomic_load(&s->used[device]);
            out[n] = (crm_monitor_proc){.client_pid = atomic_load(&s->client_pid), .server_pid = pid,
                                        .used = used > 0 ? (uint64_t)used : 0};
        }
        n++;
    }
    return n;
}
