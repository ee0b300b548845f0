/* crm_emu_state.c -- the emulated device's configuration, per-thread current device and lock. */
#include "server/emu/crm_emu.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/crm_emu_window.h"

static pthread_once_t crm__config_once = PTHREAD_ONCE_INIT;
static int crm__ndev;            /* number of emulated devices, 1..8 */
static size_t crm__mem_bytes;    /* memory of each device */
/* Writer-preferring, so a steady stream of copies cannot starve cudaMalloc/cudaFree. */
static pthread_rwlock_t crm__lock = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
static _Thread_local int crm__current; /* this thread's current device */

/* Half the machine's physical RAM (the default device memory). */
static size_t crm__default_mem(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || psize <= 0)
        return (size_t)1 << 30;
    return (size_t)pages / 2 * (size_t)psize;
}

/* Reads CUDAREM_EMU_DEVICES and CUDAREM_EMU_MEM once. All devices together must fit
 * in the window, so each device's memory is capped at window size / device count. */
static void crm__config_load(void)
{
    crm__ndev = crm__emu_parse_devices(getenv("CUDAREM_EMU_DEVICES"), 1);
    if (crm__emu_parse_size(getenv("CUDAREM_EMU_MEM"), &crm__mem_bytes) != 0)
        crm__mem_bytes = crm__default_mem();
    size_t cap = (size_t)CRM_EMU_WINDOW_SIZE / (size_t)crm__ndev;
    if (crm__mem_bytes > cap)
        crm__mem_bytes = cap;
}

int crm__emu_device_count(void)
{
    pthread_once(&crm__config_once, crm__config_load);
    return crm__ndev;
}

size_t crm__emu_mem_size(void)
{
    pthread_once(&crm__config_once, crm__config_load);
    return crm__mem_bytes;
}

int crm__emu_valid_device(int dev)
{
    return dev >= 0 && dev < crm__emu_device_count();
}

int crm__emu_current(void)
{
    return crm__current;
}

void crm__emu_set_current(int dev)
{
    crm__current = dev;
}

void crm__emu_rdlock(void)
{
    pthread_rwlock_rdlock(&crm__lock);
}

void crm__emu_wrlock(void)
{
    pthread_rwlock_wrlock(&crm__lock);
}

void crm__emu_unlock(void)
{
    pthread_rwlock_unlock(&crm__lock);
}
