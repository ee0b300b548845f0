/* crm_nvml_monitor.c -- NVML queries of what changes while programs run: memory
 * (the server's cudaMemGetInfo of the device, so NVML and CUDA always agree),
 * utilisation and the running processes; each is one monitoring call
 * (protocol/nvml.api). */
#include "interpose/crm_nvml.h"

#include <string.h>
#include "client/crm_conn.h"
#include "crm_client_gen.h"
#include "interpose/crm_export.h"

/* Asks the server for the parts `what` of device's figures into *st (caller frees
 * it with xdr_free); the part's own status is the caller's to read. */
static nvmlReturn_t crm__query(nvmlDevice_t device, const void *out, unsigned what, crm_nvml_stats *st)
{
    int index;
    nvmlReturn_t r = crm_nvml_device(device, &index);
    memset(st, 0, sizeof *st);
    if (r == NVML_SUCCESS && out == NULL)
        r = NVML_ERROR_INVALID_ARGUMENT;
    if (r != NVML_SUCCESS)
        return r;
    int local;
    int saved = crm_conn_device_begin(index, &local); /* a pooled device: its server's number */
    r = crm_rpc_crm_nvml_query(local, what, st);
    crm_conn_device_end(saved);
    return r;
}

static void crm__free(crm_nvml_stats *st)
{
    xdr_free((xdrproc_t)xdr_crm_nvml_stats, (char *)st);
}

CRM_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
    crm_nvml_stats st;
    nvmlReturn_t r = crm__query(device, memory, CRM_NVML_MEMORY, &st);
    if (r == NVML_SUCCESS && (r = (nvmlReturn_t)st.mem_status) == NVML_SUCCESS) {
        memory->total = st.mem_total;
        memory->free = st.mem_free;
        memory->used = st.mem_total - st.mem_free;
    }
    crm__free(&st);
    return r;
}

/* No memory is set aside beyond what cudaMemGetInfo already leaves out: reserved 0. */
CRM_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory)
{
    nvmlMemory_t m;
    if (crm_nvml_ready() == NVML_SUCCESS && memory != NULL && memory->version != nvmlMemory_v2)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    nvmlReturn_t r = nvmlDeviceGetMemoryInfo(device, memory != NULL ? &m : NULL);
    if (r == NVML_SUCCESS) {
        memory->total = m.total;
        memory->reserved = 0;
        memory->free = m.free;
        memory->used = m.used;
    }
    return r;
}

CRM_EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization)
{
    crm_nvml_stats st;
    nvmlReturn_t r = crm__query(device, utilization, CRM_NVML_UTIL, &st);
    if (r == NVML_SUCCESS && (r = (nvmlReturn_t)st.util_status) == NVML_SUCCESS) {
        utilization->gpu = st.util_gpu;
        utilization->memory = st.util_mem;
    }
    crm__free(&st);
    return r;
}

/* Checks NVML's in/out count convention: *infoCount is the room in infos (which may
 * be NULL when it is 0); INSUFFICIENT_SIZE with the count needed when too small. */
static nvmlReturn_t crm__fit(unsigned n, unsigned *infoCount, const void *infos)
{
    unsigned room = *infoCount;
    *infoCount = n;
    if (n > room)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    return n > 0 && infos == NULL ? NVML_ERROR_INVALID_ARGUMENT : NVML_SUCCESS;
}

/* The sessions of the server using the device, under their client's pid (pids of
 * other hosts may repeat); v1 entries have no instance ids, later ones get
 * 0xFFFFFFFF (no MIG). */
static nvmlReturn_t crm__processes(nvmlDevice_t device, unsigned *infoCount, void *infos, int v1)
{
    crm_nvml_stats st;
    nvmlReturn_t r = crm__query(device, infoCount, CRM_NVML_PROCS, &st);
    if (r == NVML_SUCCESS && (r = (nvmlReturn_t)st.procs_status) == NVML_SUCCESS)
        r = crm__fit(st.procs.procs_len, infoCount, infos);
    for (unsigned i = 0; r == NVML_SUCCESS && i < st.procs.procs_len; i++) {
        const crm_nvml_proc *p = &st.procs.procs_val[i];
        if (v1)
            ((nvmlProcessInfo_v1_t *)infos)[i] = (nvmlProcessInfo_v1_t){.pid = p->pid, .usedGpuMemory = p->used};
        else
            ((nvmlProcessInfo_t *)infos)[i] = (nvmlProcessInfo_t){
                .pid = p->pid, .usedGpuMemory = p->used, .gpuInstanceId = 0xFFFFFFFFu,
                .computeInstanceId = 0xFFFFFFFFu};
    }
    crm__free(&st);
    return r;
}

CRM_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                                nvmlProcessInfo_t *infos)
{
    return crm__processes(device, infoCount, infos, 0);
}

CRM_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int *infoCount,
                                                                nvmlProcessInfo_v2_t *infos)
{
    return crm__processes(device, infoCount, infos, 0);
}

CRM_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int *infoCount,
                                                             nvmlProcessInfo_v1_t *infos)
{
    return crm__processes(device, infoCount, infos, 1);
}

/* cudarem serves compute sessions only: no graphics or MPS clients, ever. */
static nvmlReturn_t crm__none(nvmlDevice_t device, unsigned *infoCount)
{
    int index;
    nvmlReturn_t r = crm_nvml_device(device, &index);
    if (r == NVML_SUCCESS && infoCount == NULL)
        r = NVML_ERROR_INVALID_ARGUMENT;
    if (r == NVML_SUCCESS)
        *infoCount = 0;
    return r;
}

#define CRM__NO_PROCESSES(NAME, INFO)                                                          \
    CRM_EXPORT nvmlReturn_t NAME(nvmlDevice_t device, unsigned int *infoCount, INFO *infos)     \
    {                                                                                          \
        (void)infos;                                                                           \
        return crm__none(device, infoCount);                                                   \
    }
CRM__NO_PROCESSES(nvmlDeviceGetGraphicsRunningProcesses_v3, nvmlProcessInfo_t)
CRM__NO_PROCESSES(nvmlDeviceGetGraphicsRunningProcesses_v2, nvmlProcessInfo_v2_t)
CRM__NO_PROCESSES(nvmlDeviceGetGraphicsRunningProcesses, nvmlProcessInfo_v1_t)
CRM__NO_PROCESSES(nvmlDeviceGetMPSComputeRunningProcesses_v3, nvmlProcessInfo_t)
CRM__NO_PROCESSES(nvmlDeviceGetMPSComputeRunningProcesses_v2, nvmlProcessInfo_v2_t)
CRM__NO_PROCESSES(nvmlDeviceGetMPSComputeRunningProcesses, nvmlProcessInfo_v1_t)
