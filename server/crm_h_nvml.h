/* crm_h_nvml.h -- the server side of the shim's NVML: the monitoring handler's helpers,
 * the GPU host's own NVML (loaded with dlopen when there is one) and the timing of
 * calls as device busy time on the emulated device. */
#ifndef CRM_H_NVML_H
#define CRM_H_NVML_H

#include <stddef.h>
#include "crm_server_gen.h"

typedef struct crm_session crm_session;

/* Runs one decoded call (crm_dispatch_call). On the emulated device, whose work runs
 * inside the call, the time of kernel, library and device-memory calls counts as
 * the device's busy time (server/crm_monitor.h). */
void crm_nvml_dispatch(crm_session *s, crm_call *call, crm_reply *reply);

/* The host's NVML for backend device `device` (found by its PCI bus id), loaded and
 * initialised at first use: NVML_SUCCESS, or NVML_ERROR_NOT_SUPPORTED when the host
 * has no usable libnvidia-ml.so.1 or does not know the device. */
nvmlReturn_t crm_nvml_host_device(int device, nvmlDevice_t *out);
/* Utilisation rates of a host NVML device. */
nvmlReturn_t crm_nvml_host_utilization(nvmlDevice_t dev, unsigned *gpu, unsigned *mem);
/* The compute processes the host's NVML lists on dev: *count is the room in infos
 * on entry, the number listed on return (NVML_ERROR_INSUFFICIENT_SIZE when more). */
nvmlReturn_t crm_nvml_host_processes(nvmlDevice_t dev, nvmlProcessInfo_t *infos, unsigned *count);
/* The host's kernel driver version into buf; NOT_SUPPORTED without a host NVML. */
nvmlReturn_t crm_nvml_host_driver(char *buf, size_t len);
/* The SM-utilisation samples of every process on dev newer than `since` (a
 * timestamp in microseconds, 0: all the driver keeps); *count: room in, samples out. */
nvmlReturn_t crm_nvml_host_process_samples(nvmlDevice_t dev, unsigned long long since,
                                           nvmlProcessUtilizationSample_t *samples, unsigned *count);

#endif
