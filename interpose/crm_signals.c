/* crm_signals.c -- exported sigaction and signal: once managed memory's SIGSEGV
 * handler is installed (client/crm_managed_fault.h), a program or runtime that
 * installs its own (Python's faulthandler, which pytest enables) gets it chained
 * behind ours instead of replacing it, as a JVM's libjsig chains; every other
 * signal, and SIGSEGV before then, goes straight to libc. Exported under glibc's
 * version of both names, which is what programs' references carry.
 *
 * A sanitizer's runtime takes this sigaction as the real one and calls it while it
 * initialises, before it can run instrumented code: so this file is built without
 * sanitizers (interpose/interpose.mk) and calls nothing instrumented on that path. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include "client/crm_managed_fault.h"
#include "interpose/crm_export.h"

extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);
extern sighandler_t bsd_signal(int sig, sighandler_t handler); /* glibc's signal under its other name */

CRM_EXPORT int crm_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (sig == SIGSEGV && __atomic_load_n(&crm_managed_fault_on, __ATOMIC_ACQUIRE))
        return crm_managed_fault_chain(act, old);
    return __sigaction(sig, act, old);
}

CRM_EXPORT sighandler_t crm_signal(int sig, sighandler_t handler)
{
    struct sigaction sa, old;
    if (sig != SIGSEGV || !__atomic_load_n(&crm_managed_fault_on, __ATOMIC_ACQUIRE))
        return bsd_signal(sig, handler); /* libc's, exactly */
    if (handler == SIG_ERR) {
        errno = EINVAL;
        return SIG_ERR;
    }
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (crm_sigaction(sig, &sa, &old) != 0)
        return SIG_ERR;
    if (old.sa_flags & SA_SIGINFO) { /* the same pointer, as libc's signal returns it */
        sighandler_t h;
        memcpy(&h, &old.sa_sigaction, sizeof h);
        return h;
    }
    return old.sa_handler;
}

__asm__(".symver crm_sigaction, sigaction@@GLIBC_2.2.5");
__asm__(".symver crm_signal, signal@@GLIBC_2.2.5");
