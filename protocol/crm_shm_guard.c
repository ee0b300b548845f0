/* crm_shm_guard.c -- the watched regions and the SIGBUS handler of
 * protocol/crm_shm_guard.h. The handler reads the table without a lock: a slot's
 * end is written before its start, and a start of 0 marks a free slot. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include "protocol/crm_shm_guard.h"

typedef struct crm__slot {
    _Atomic uintptr_t start; /* 0: free */
    _Atomic uintptr_t end;
} crm__slot;

static crm__slot crm__slots[CRM_SHM_GUARD_SLOTS];
static _Atomic int crm__watched; /* slots in use: removal skips the scan at 0 */
static pthread_mutex_t crm__lock = PTHREAD_MUTEX_INITIALIZER;
static volatile sig_atomic_t *crm__stop;
static volatile sig_atomic_t crm__faulted;

/* Replaces the whole watched region holding `at` with private zero pages. 1 when
 * `at` was in one and the new pages are in place. */
static int crm__cover(uintptr_t at)
{
    for (size_t i = 0; i < CRM_SHM_GUARD_SLOTS; i++) {
        uintptr_t start = atomic_load_explicit(&crm__slots[i].start, memory_order_acquire);
        uintptr_t end = atomic_load_explicit(&crm__slots[i].end, memory_order_relaxed);
        if (start == 0 || at < start || at >= end)
            continue;
        void *p = mmap((void *)start, end - start, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                       -1, 0);
        return p != MAP_FAILED;
    }
    return 0;
}

static void crm__on_sigbus(int sig, siginfo_t *info, void *context)
{
    (void)context;
    if (info->si_code > 0 && crm__cover((uintptr_t)info->si_addr)) {
        crm__faulted = 1;
        if (crm__stop != NULL)
            *crm__stop = 1;
        return; /* the access runs again, on the zero pages */
    }
    /* not ours: the default action, once this handler returns (sig is blocked here) */
    signal(sig, SIG_DFL);
    raise(sig);
}

int crm_shm_guard_install(volatile sig_atomic_t *stop)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = crm__on_sigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    crm__stop = stop;
    return sigaction(SIGBUS, &sa, NULL);
}

int crm_shm_guard_add(void *map, size_t size)
{
    int rc = -1;
    pthread_mutex_lock(&crm__lock);
    for (size_t i = 0; i < CRM_SHM_GUARD_SLOTS && rc != 0; i++) {
        if (atomic_load_explicit(&crm__slots[i].start, memory_order_relaxed) != 0)
            continue;
        atomic_store_explicit(&crm__slots[i].end, (uintptr_t)map + size, memory_order_relaxed);
        atomic_store_explicit(&crm__slots[i].start, (uintptr_t)map, memory_order_release);
        atomic_fetch_add(&crm__watched, 1);
        rc = 0;
    }
    pthread_mutex_unlock(&crm__lock);
    return rc;
}

void crm_shm_guard_remove(void *map)
{
    if (atomic_load(&crm__watched) == 0)
        return;
    pthread_mutex_lock(&crm__lock);
    for (size_t i = 0; i < CRM_SHM_GUARD_SLOTS; i++) {
        if (atomic_load_explicit(&crm__slots[i].start, memory_order_relaxed) == (uintptr_t)map) {
            atomic_store_explicit(&crm__slots[i].start, 0, memory_order_release);
            atomic_fetch_sub(&crm__watched, 1);
            break;
        }
    }
    pthread_mutex_unlock(&crm__lock);
}

int crm_shm_guard_faulted(void)
{
    return crm__faulted != 0;
}

void crm_shm_guard_reset(void)
{
    crm__faulted = 0;
}
