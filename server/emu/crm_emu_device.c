/* crm_emu_device.c -- device management of the emulated device: count, selection, flags,
 * versions, synchronisation and reset. */
#include "server/emu/crm_emu.h"

#include <stdatomic.h>

#define CRM__SCHEDULE_VALID(f) \
    (((f) & cudaDeviceScheduleMask) == cudaDeviceScheduleAuto || \
     ((f) & cudaDeviceScheduleMask) == cudaDeviceScheduleSpin || \
     ((f) & cudaDeviceScheduleMask) == cudaDeviceScheduleYield || \
     ((f) & cudaDeviceScheduleMask) == cudaDeviceScheduleBlockingSync)

static _Atomic unsigned crm__dev_flags[CRM_EMU_MAX_DEVICES]; /* cudaSetDeviceFlags */

CRM_EXPORT cudaError_t cudaGetDeviceCount(int *count)
{
    if (count == NULL)
        return crm__emu_ret(cudaErrorInvalidValue);
    *count = crm__emu_device_count();
    return cudaSuccess;
}

CRM_EXPORT cudaError_t cudaGetDevice(int *device)
{
    if (device == NULL)
        return crm__emu_ret(cudaErrorInvalidValue);
    *device = crm__emu_current();
    return cudaSuccess;
}

/* Sets this thread's current device; out of range: cudaErrorInvalidDevice. */
CRM_EXPORT cudaError_t cudaSetDevice(int device)
{
    if (!crm__emu_valid_device(device))
        return crm__emu_ret(cudaErrorInvalidDevice);
    crm__emu_set_current(device);
    return cudaSuccess;
}

/* Bits outside cudaDeviceMask, or more than one scheduling policy, are
 * cudaErrorInvalidValue. */
CRM_EXPORT cudaError_t cudaSetDeviceFlags(unsigned int flags)
{
    if ((flags & ~(unsigned)cudaDeviceMask) != 0 || !CRM__SCHEDULE_VALID(flags))
        return crm__emu_ret(cudaErrorInvalidValue);
    atomic_store(&crm__dev_flags[crm__emu_current()], flags);
    return cudaSuccess;
}

/* The flags set last, plus cudaDeviceMapHost: mapped pinned memory is always on. */
CRM_EXPORT cudaError_t cudaGetDeviceFlags(unsigned int *flags)
{
    if (flags == NULL)
        return crm__emu_ret(cudaErrorInvalidValue);
    *flags = atomic_load(&crm__dev_flags[crm__emu_current()]) | cudaDeviceMapHost;
    return cudaSuccess;
}

CRM_EXPORT cudaError_t cudaDriverGetVersion(int *driverVersion)
{
    if (driverVersion == NULL)
        return crm__emu_ret(cudaErrorInvalidValue);
    *driverVersion = CUDART_VERSION;
    return cudaSuccess;
}

CRM_EXPORT cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
{
    if (runtimeVersion == NULL)
        return crm__emu_ret(cudaErrorInvalidValue);
    *runtimeVersion = CUDART_VERSION;
    return cudaSuccess;
}

/* All work completes when it is enqueued, so there is nothing to wait for. */
CRM_EXPORT cudaError_t cudaDeviceSynchronize(void)
{
    CRM__EMU_STICKY();
    return cudaSuccess;
}

/* Destroys the current device's state: device and page-locked allocations, host
 * registrations, streams, events, flags and a kernel fault's sticky error. */
CRM_EXPORT cudaError_t cudaDeviceReset(void)
{
    int dev = crm__emu_current();
    crm__emu_wrlock();
    crm__mem_release_device(dev);
    crm__host_release_device(dev);
    crm__stream_release_device(dev);
    crm__event_release_device(dev);
    crm__emu_unlock();
    crm__emu_limits_reset(dev);
    atomic_store(&crm__dev_flags[dev], 0);
    crm__emu_unpoison();
    return cudaSuccess;
}
