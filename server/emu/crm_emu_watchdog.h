/* crm_emu_watchdog.h -- the emulated device's watchdog, shared by the PTX engine
 * (a kernel) and the emulated cuBLAS (a batch's items): how long work may run, from
 * CUDAREM_EMU_KERNEL_TIMEOUT (the server's --emu-kernel-timeout, default 600 s), and
 * the monotonic clock it is measured on. Header-only: the PTX engine is also built
 * on its own (tests/fuzz/fuzz.mk). */
#ifndef CRM_EMU_WATCHDOG_H
#define CRM_EMU_WATCHDOG_H

#include <stdlib.h>
#include <time.h>

/* Seconds work may run before the watchdog stops it. */
static inline double crm_emu_watchdog_limit(void)
{
    const char *s = getenv("CUDAREM_EMU_KERNEL_TIMEOUT");
    double v = s != NULL ? strtod(s, NULL) : 0;
    return v > 0 ? v : 600;
}

/* Monotonic seconds. */
static inline double crm_emu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
