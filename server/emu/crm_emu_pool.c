/* crm_emu_pool.c -- device memory use shared by every process of one emulated device.
 *
 * A real GPU's memory is shared by all processes using it: one session's
 * allocations show in another's cudaMemGetInfo, and a process that dies gives its
 * memory back. The server runs each session in its own process, so the emulated
 * device keeps its usage in shared memory that CUDAREM_EMU_POOL names: "fd:N", a
 * file descriptor the processes inherit (the server's memory file, which goes away
 * with the last process however the daemon ends), or a shared memory object's name.
 * One slot per process with its bytes per device, plus totals
 * checked against the device size. Slots of processes that died are swept and
 * their bytes returned. Without CUDAREM_EMU_POOL (a program preloading the
 * library directly) the pool is private to the process.
 */
#include "server/emu/crm_emu.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define CRM_POOL_SLOTS 1024
#define CRM_POOL_SWEEP_NS 10000000ull /* a process's view of dead processes' bytes: at most 10 ms old */

typedef struct crm__pool_slot {
    _Atomic int pid;                                   /* owner, 0 = free */
    _Atomic unsigned long long used[CRM_EMU_MAX_DEVICES]; /* bytes it holds */
} crm__pool_slot;

typedef struct crm__pool {
    _Atomic unsigned long long total[CRM_EMU_MAX_DEVICES]; /* sum of the slots */
    crm__pool_slot slots[CRM_POOL_SLOTS];
} crm__pool;

static crm__pool *crm__p;       /* shared or private pool, set at first use */
static crm__pool_slot *crm__me; /* this process's slot; a forked child claims its own */
static pthread_mutex_t crm__lock = PTHREAD_MUTEX_INITIALIZER; /* guards the two above */

static crm__pool *crm__open_shared(const char *name)
{
    char *end;
    long inherited = strncmp(name, "fd:", 3) == 0 ? strtol(name + 3, &end, 10) : -1;
    int fd = inherited >= 0 && *end == '\0' ? fcntl((int)inherited, F_DUPFD_CLOEXEC, 0)
                                             : shm_open(name, O_RDWR | O_CREAT, 0600);
    if (fd < 0)
        return NULL;
    /* ftruncate zero-fills, which is the empty pool; every process does the same. */
    if (ftruncate(fd, sizeof(crm__pool)) != 0) {
        close(fd);
        return NULL;
    }
    void *p = mmap(NULL, sizeof(crm__pool), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    return p == MAP_FAILED ? NULL : p;
}

static int crm__alive(int pid)
{
    return pid > 0 && (kill(pid, 0) == 0 || errno != ESRCH);
}

/* Frees a dead process's slot, returning its bytes to the totals. */
static void crm__reclaim(crm__pool_slot *s, int dead_pid)
{
    if (!atomic_compare_exchange_strong(&s->pid, &dead_pid, -1))
        return; /* someone else reclaims it */
    for (int d = 0; d < CRM_EMU_MAX_DEVICES; d++)
        atomic_fetch_sub(&crm__p->total[d], atomic_exchange(&s->used[d], 0));
    atomic_store(&s->pid, 0);
}

static void crm__sweep(void)
{
    for (int i = 0; i < CRM_POOL_SLOTS; i++) {
        int pid = atomic_load(&crm__p->slots[i].pid);
        if (pid > 0 && !crm__alive(pid))
            crm__reclaim(&crm__p->slots[i], pid);
    }
}

static crm__pool_slot *crm__claim(int pid)
{
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < CRM_POOL_SLOTS; i++) {
            int free_pid = 0;
            if (atomic_compare_exchange_strong(&crm__p->slots[i].pid, &free_pid, pid))
                return &crm__p->slots[i];
        }
        crm__sweep();
    }
    return NULL;
}

/* Around a fork the lock is held, so the child never inherits it taken by a
 * thread it does not have; the child then claims a slot of its own. */
static void crm__fork_prepare(void)
{
    pthread_mutex_lock(&crm__lock);
}

static void crm__fork_parent(void)
{
    pthread_mutex_unlock(&crm__lock);
}

static void crm__fork_child(void)
{
    crm__me = NULL;
    pthread_mutex_unlock(&crm__lock);
}

static void crm__watch_fork(void)
{
    pthread_atfork(crm__fork_prepare, crm__fork_parent, crm__fork_child);
}

/* This process's slot in the pool, or NULL when none can be had; no system call
 * once claimed (cudaMemGetInfo asks on every call). */
static crm__pool_slot *crm__slot(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    crm__pool_slot *me = NULL;
    pthread_once(&once, crm__watch_fork);
    pthread_mutex_lock(&crm__lock);
    if (crm__p == NULL) {
        const char *name = getenv("CUDAREM_EMU_POOL");
        crm__p = name && *name ? crm__open_shared(name) : NULL;
        if (crm__p == NULL)
            crm__p = calloc(1, sizeof *crm__p);
    }
    if (crm__p != NULL && crm__me == NULL)
        crm__me = crm__claim((int)getpid());
    me = crm__me;
    pthread_mutex_unlock(&crm__lock);
    return me;
}

int crm__pool_charge(int dev, size_t bytes, size_t limit)
{
    crm__pool_slot *me = crm__slot();
    if (me == NULL)
        return -1;
    for (int attempt = 0; attempt < 2; attempt++) {
        unsigned long long cur = atomic_load(&crm__p->total[dev]);
        while (cur <= limit && bytes <= limit - cur) {
            if (atomic_compare_exchange_weak(&crm__p->total[dev], &cur, cur + bytes)) {
                atomic_fetch_add(&me->used[dev], bytes);
                return 0;
            }
        }
        crm__sweep(); /* memory of dead processes may be waiting to come back */
    }
    return -1;
}

void crm__pool_release(int dev, size_t bytes)
{
    crm__pool_slot *me = crm__slot();
    if (me == NULL)
        return;
    atomic_fetch_sub(&me->used[dev], bytes);
    atomic_fetch_sub(&crm__p->total[dev], bytes);
}

/* Sweeps when the last sweep of this process is CRM_POOL_SWEEP_NS old: the bytes
 * of a process that died come back to cudaMemGetInfo within that time, and a
 * program asking in a loop does not walk every slot each call (a tenth of the
 * server's time in a loop of cudaMemGetInfo). */
static void crm__sweep_now_and_then(void)
{
    static _Atomic unsigned long long swept_ns;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
    unsigned long long now = (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec + 1;
    unsigned long long last = atomic_load(&swept_ns);
    if (last != 0 && now - last < CRM_POOL_SWEEP_NS)
        return;
    atomic_store(&swept_ns, now);
    crm__sweep();
}

size_t crm__pool_used(int dev)
{
    if (crm__slot() == NULL)
        return 0;
    crm__sweep_now_and_then();
    return (size_t)atomic_load(&crm__p->total[dev]);
}
