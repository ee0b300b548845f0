/* crm_emu_limits.c -- the emulated device's context limits (cudaDeviceSetLimit,
 * cudaDeviceGetLimit), per device, with a GPU's defaults. The printf FIFO size
 * bounds what a launch's printf keeps (server/emu/ptx/ptx_printf.h); the others
 * are kept and answered: the engine's stacks and heap are host memory and grow as
 * needed, it launches no kernels from the device, and it has no L2 to tune. */
#include "server/emu/crm_emu.h"

#include <stdint.h>

#define CRM__NLIMITS ((int)cudaLimitPersistingL2CacheSize + 1)

static size_t crm__limits[CRM_EMU_MAX_DEVICES][CRM__NLIMITS];
static int crm__set[CRM_EMU_MAX_DEVICES][CRM__NLIMITS];

/* A GPU's value of limit before any is set. */
static size_t crm__default(enum cudaLimit limit)
{
    switch (limit) {
    case cudaLimitStackSize: return 1024;
    case cudaLimitPrintfFifoSize: return 1u << 20;
    case cudaLimitMallocHeapSize: return 8u << 20;
    case cudaLimitDevRuntimeSyncDepth: return 2;
    case cudaLimitDevRuntimePendingLaunchCount: return 2048;
    case cudaLimitMaxL2FetchGranularity: return 64;
    default: return 0; /* persisting L2 */
    }
}

size_t crm__emu_limit(int dev, enum cudaLimit limit)
{
    if (!crm__emu_valid_device(dev) || (int)limit < 0 || (int)limit >= CRM__NLIMITS)
        return 0;
    return __atomic_load_n(&crm__set[dev][limit], __ATOMIC_ACQUIRE) ? crm__limits[dev][limit] : crm__default(limit);
}

void crm__emu_limits_reset(int dev)
{
    for (int i = 0; crm__emu_valid_device(dev) && i < CRM__NLIMITS; i++)
        __atomic_store_n(&crm__set[dev][i], 0, __ATOMIC_RELEASE);
}

/* The value a GPU keeps for `value`, or SIZE_MAX when it refuses it. */
static size_t crm__accept(enum cudaLimit limit, size_t value)
{
    switch (limit) {
    case cudaLimitStackSize:
        return (value + 15) / 16 * 16; /* a stack is 16-byte aligned */
    case cudaLimitMaxL2FetchGranularity:
        return value <= 128 ? value : SIZE_MAX;
    case cudaLimitPersistingL2CacheSize:
        return value == 0 ? 0 : SIZE_MAX; /* the device reports no persisting L2 */
    default:
        return value;
    }
}

CRM_EXPORT cudaError_t cudaDeviceSetLimit(enum cudaLimit limit, size_t value)
{
    CRM__EMU_STICKY();
    int dev = crm__emu_current();
    if ((int)limit < 0 || (int)limit >= CRM__NLIMITS)
        return crm__emu_ret(cudaErrorUnsupportedLimit);
    size_t kept = crm__accept(limit, value);
    if (kept == SIZE_MAX)
        return crm__emu_ret(limit == cudaLimitPersistingL2CacheSize ? cudaErrorUnsupportedLimit
                                                                     : cudaErrorInvalidValue);
    crm__limits[dev][limit] = kept;
    __atomic_store_n(&crm__set[dev][limit], 1, __ATOMIC_RELEASE);
    return cudaSuccess;
}

CRM_EXPORT cudaError_t cudaDeviceGetLimit(size_t *pValue, enum cudaLimit limit)
{
    CRM__EMU_STICKY();
    if (pValue == NULL)
        return crm__emu_ret(cudaErrorInvalidValue);
    if ((int)limit < 0 || (int)limit >= CRM__NLIMITS)
        return crm__emu_ret(cudaErrorUnsupportedLimit);
    *pValue = crm__emu_limit(crm__emu_current(), limit);
    return cudaSuccess;
}
