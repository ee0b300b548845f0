/* crm_h_nvml.c -- handler of the monitoring call (protocol/nvml.api): a device's memory
 * as the backend's cudaMemGetInfo reports it, its utilisation and the client
 * processes using it, and the host's driver version; plus the timing of every call,
 * which makes the emulated device's utilisation and the metrics' histogram. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "server/crm_backend.h"
#include "server/crm_gpu_time.h"
#include "server/crm_h_nvml.h"
#include "server/crm_monitor.h"
#include "server/crm_session.h"

#define CRM__HOST_PROCS 256 /* processes asked of the host's NVML per query */

/* The kind of device work a call does on the emulated device, or -1 for calls that
 * only manage state. Copies to and from the client are not counted: their bytes
 * stream between the socket and device memory, at the network's pace. */
static int crm__busy_kind(int api)
{
    if (api == CRM_API_crm_launch || (api >= 1100 && api < 1400) || (api >= 2100 && api < 2500))
        return CRM_BUSY_COMPUTE; /* kernels, cuBLAS compute, cuDNN compute */
    if (api == CRM_API_crm_memset || api == CRM_API_crm_memcpy_d2d)
        return CRM_BUSY_MEMORY;
    return -1;
}

/* On a GPU, at most once a second: the current device's process samples from the
 * host's NVML, this process's kernel time added to the session's. */
static void crm__gpu_time_poll(void)
{
    static uint64_t next_ns;
    static unsigned long long last_seen;
    nvmlProcessUtilizationSample_t samples[CRM__HOST_PROCS];
    nvmlDevice_t dev;
    uint64_t now = crm_monitor_now_ns();
    if (now < next_ns)
        return;
    next_ns = now + 1000000000ull;
    unsigned n = CRM__HOST_PROCS;
    nvmlReturn_t r = crm_nvml_host_device(crm_session_device(), &dev);
    if (r == NVML_SUCCESS)
        r = crm_nvml_host_process_samples(dev, last_seen, samples, &n);
    if (r == NVML_SUCCESS)
        crm_monitor_add_kernel_time(crm_gpu_time_from_samples(samples, n, (unsigned)getpid(), &last_seen));
}

void crm_nvml_dispatch(crm_session *s, crm_call *call, crm_reply *reply)
{
    /* On a GPU the call only enqueues the work: the host's NVML measures it there. */
    int kind = crm_backend_kind() == CRM_BACKEND_EMU ? crm__busy_kind((int)call->api) : -1;
    uint64_t t0 = crm_monitor_now_ns();
    crm_dispatch_call(s, call, reply);
    uint64_t t1 = crm_monitor_now_ns();
    crm_monitor_call_time(t1 - t0); /* for the metrics' histogram */
    if (kind >= 0)
        crm_monitor_busy(crm_session_device(), (enum crm_monitor_busy)kind, t0, t1);
    else if (crm_backend_kind() == CRM_BACKEND_CUDA)
        crm__gpu_time_poll();
}

/* cudaMemGetInfo of `device` with that device selected for the call alone, as the
 * session's slice of it. */
static nvmlReturn_t crm__memory(crm_session *s, int device, crm_nvml_stats *st)
{
    int cur = crm_session_device();
    size_t free_b = 0, total_b = 0;
    cudaError_t err = crm_rt.cudaSetDevice(device);
    if (err == cudaSuccess)
        err = crm_rt.cudaMemGetInfo(&free_b, &total_b);
    crm_rt.cudaSetDevice(cur);
    if (err != cudaSuccess) {
        crm_rt.cudaGetLastError(); /* the client's own calls must not see it */
        return NVML_ERROR_UNKNOWN;
    }
    crm_session_slice(s, device, &free_b, &total_b);
    st->mem_free = free_b;
    st->mem_total = total_b;
    return NVML_SUCCESS;
}

static nvmlReturn_t crm__utilization(int device, crm_nvml_stats *st)
{
    nvmlDevice_t host;
    if (crm_backend_kind() == CRM_BACKEND_EMU) {
        crm_monitor_utilization(device, &st->util_gpu, &st->util_mem);
        return NVML_SUCCESS;
    }
    nvmlReturn_t r = crm_nvml_host_device(device, &host);
    return r == NVML_SUCCESS ? crm_nvml_host_utilization(host, &st->util_gpu, &st->util_mem) : r;
}

/* On the GPU backend a session's memory is what the host's NVML says its process
 * uses (its context included); the session table's count of its allocations is
 * the answer where the host has no NVML, and on the emulated device. */
static void crm__host_memory(int device, crm_monitor_proc *procs, int n)
{
    nvmlProcessInfo_t infos[CRM__HOST_PROCS];
    unsigned count = CRM__HOST_PROCS;
    nvmlDevice_t host;
    if (crm_nvml_host_device(device, &host) != NVML_SUCCESS ||
        crm_nvml_host_processes(host, infos, &count) != NVML_SUCCESS)
        return;
    for (int i = 0; i < n; i++)
        for (unsigned j = 0; j < count; j++)
            if ((pid_t)infos[j].pid == procs[i].server_pid && infos[j].usedGpuMemory != (unsigned long long)NVML_VALUE_NOT_AVAILABLE)
                procs[i].used = infos[j].usedGpuMemory;
}

/* Every session of this server using the device, under its client's pid: the
 * session processes share their table (server/crm_monitor.h). */
static nvmlReturn_t crm__processes(int device, crm_nvml_stats *st)
{
    crm_monitor_proc *procs = calloc(CRM_MONITOR_SESSIONS, sizeof *procs);
    if (procs == NULL)
        return NVML_ERROR_MEMORY;
    int n = crm_monitor_processes(device, procs, CRM_MONITOR_SESSIONS);
    if (n > CRM_MONITOR_SESSIONS)
        n = CRM_MONITOR_SESSIONS;
    crm__host_memory(device, procs, n);
    st->procs.procs_val = n > 0 ? calloc((size_t)n, sizeof *st->procs.procs_val) : NULL;
    if (n > 0 && st->procs.procs_val == NULL) {
        free(procs);
        return NVML_ERROR_MEMORY;
    }
    for (int i = 0; i < n; i++)
        st->procs.procs_val[i] = (crm_nvml_proc){.pid = procs[i].client_pid, .used = procs[i].used};
    st->procs.procs_len = (u_int)n;
    free(procs);
    return NVML_SUCCESS;
}

nvmlReturn_t crm_srv_crm_nvml_query(crm_session *s, int device, unsigned int what, crm_nvml_stats *stats)
{
    int count = 0;
    memset(stats, 0, sizeof *stats);
    if (what & CRM_NVML_DRIVER)
        crm_nvml_host_driver(stats->driver, sizeof stats->driver - 1); /* "" without one */
    if (!(what & (CRM_NVML_MEMORY | CRM_NVML_UTIL | CRM_NVML_PROCS)))
        return NVML_SUCCESS;
    if (crm_rt.cudaGetDeviceCount(&count) != cudaSuccess)
        crm_rt.cudaGetLastError();
    if (device < 0 || device >= count)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (what & CRM_NVML_MEMORY)
        stats->mem_status = crm__memory(s, device, stats);
    if (what & CRM_NVML_UTIL)
        stats->util_status = crm__utilization(device, stats);
    if (what & CRM_NVML_PROCS)
        stats->procs_status = crm__processes(device, stats);
    return NVML_SUCCESS;
}
