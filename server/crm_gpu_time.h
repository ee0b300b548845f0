/* crm_gpu_time.h -- a session's kernel time on a GPU. There a call only enqueues
 * its work, so timing calls (as the emulated device's are timed) measures nothing:
 * the host's NVML samples each process's share of SM time instead
 * (nvmlDeviceGetProcessUtilization), and the session process, at most once a
 * second, adds its own share over the time since its last look to the kernel time
 * the session table shows (cudarem-smi's share, the metrics; server/crm_h_nvml.c
 * looks). */
#ifndef CRM_GPU_TIME_H
#define CRM_GPU_TIME_H

#include <stdint.h>
#include <nvml.h>

/* The longest period one sample is taken to cover, in microseconds: the driver
 * samples every few hundred milliseconds, and a process idle in between has no
 * samples at all. */
#define CRM_GPU_TIME_SAMPLE_MAX_US 1000000ull

/* Nanoseconds of kernel time of process pid in n samples: each of its samples'
 * SM utilisation (a percentage) over the time since its previous sample, or since
 * *last_seen (microseconds) for the first, at most CRM_GPU_TIME_SAMPLE_MAX_US; with
 * *last_seen 0 (the first look) the first sample only marks a start. The newest
 * sample's time becomes *last_seen. */
uint64_t crm_gpu_time_from_samples(const nvmlProcessUtilizationSample_t *s, unsigned n, unsigned pid,
                                   unsigned long long *last_seen);

#endif
