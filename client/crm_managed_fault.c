/* crm_managed_fault.c -- SIGSEGV for managed memory, chained to the program's own
 * handler (client/crm_managed_fault.h). */
#include "client/crm_managed_fault.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "common/crm_log.h"

/* glibc's own name for sigaction, which nobody interposes: reached without dlsym,
 * which a sanitizer's runtime may call this before it can serve (its interceptor
 * takes this library's sigaction as the real one). */
extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);

static pthread_once_t crm__once = PTHREAD_ONCE_INIT;
int crm_managed_fault_on;           /* 1 once the handler is in place (atomic) */
static int crm__window;             /* the device address window is reserved here */
static struct sigaction crm__prev;  /* the program's handler, called for faults not ours */
static pthread_mutex_t crm__prev_lock = PTHREAD_MUTEX_INITIALIZER;

int crm_managed_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    return __sigaction(sig, act, old);
}

/* 1 for a write, 0 for a read, -1 when the machine does not say. */
static int crm__is_write(const void *ctx)
{
#if defined(__x86_64__)
    const ucontext_t *uc = ctx;
    return (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;
#else
    (void)ctx;
    return -1;
#endif
}

/* A fault that is not ours goes where it would have gone without cudarem. */
static void crm__chain(int sig, siginfo_t *si, void *ctx)
{
    struct sigaction prev;
    pthread_mutex_lock(&crm__prev_lock);
    prev = crm__prev;
    pthread_mutex_unlock(&crm__prev_lock);
    if ((prev.sa_flags & SA_SIGINFO) && prev.sa_sigaction != NULL) {
        prev.sa_sigaction(sig, si, ctx);
    } else if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
        prev.sa_handler(sig);
    } else { /* the default action: die of this signal, as without us */
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        crm_managed_real_sigaction(sig, &dfl, NULL);
        raise(sig); /* delivered when this handler returns, or at once for a fault retried */
    }
}

static void crm__on_fault(int sig, siginfo_t *si, void *ctx)
{
    int saved = errno;
    int rc = si->si_code == SEGV_ACCERR ? crm_managed_fault((uint64_t)(uintptr_t)si->si_addr, crm__is_write(ctx)) : 0;
    errno = saved;
    if (rc == 1)
        return; /* the access runs again, now allowed */
    if (rc < 0) { /* managed memory that cannot be read: a bus error, as a GPU gone from its bus gives */
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        crm_managed_real_sigaction(SIGBUS, &dfl, NULL);
        raise(SIGBUS);
        return;
    }
    crm__chain(sig, si, ctx);
}

static void crm__install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = crm__on_fault;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    pthread_mutex_lock(&crm__prev_lock);
    int rc = crm_managed_real_sigaction(SIGSEGV, &sa, &crm__prev);
    pthread_mutex_unlock(&crm__prev_lock);
    if (rc == 0)
        __atomic_store_n(&crm_managed_fault_on, 1, __ATOMIC_RELEASE);
    else
        crm_error("managed memory: cannot install the SIGSEGV handler (%s)", strerror(errno));
}

int crm_managed_fault_install(void)
{
    pthread_once(&crm__once, crm__install);
    return crm_managed_fault_installed() ? 0 : -1;
}

int crm_managed_fault_installed(void)
{
    return __atomic_load_n(&crm_managed_fault_on, __ATOMIC_ACQUIRE);
}

int crm_managed_fault_chain(const struct sigaction *act, struct sigaction *old)
{
    pthread_mutex_lock(&crm__prev_lock);
    if (old != NULL)
        *old = crm__prev;
    if (act != NULL)
        crm__prev = *act;
    pthread_mutex_unlock(&crm__prev_lock);
    return 0;
}

void crm_managed_window_note(int ours)
{
    crm__window = ours;
}

int crm_managed_window_ours(void)
{
    return crm__window;
}

void crm_managed_window_restore(uint64_t base, uint64_t len)
{
    if (mmap((void *)(uintptr_t)base, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1,
             0) == MAP_FAILED)
        crm_warn("managed memory at 0x%llx: could not give the addresses back (%s)", (unsigned long long)base,
                 strerror(errno));
}
