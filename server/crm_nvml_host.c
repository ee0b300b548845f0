/* crm_nvml_host.c -- the GPU host's own NVML, for figures only the driver knows
 * (utilisation, per-process memory, the kernel driver version) on the GPU backend.
 * libnvidia-ml.so.1 is loaded with dlopen in the session process at first use, so
 * the server builds and runs without it; every call then answers "not supported". */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "common/crm_log.h"
#include "server/crm_backend.h"
#include "server/crm_h_nvml.h"

static struct {
    __typeof__(nvmlInit_v2) *init;
    __typeof__(nvmlDeviceGetHandleByPciBusId_v2) *by_pci;
    __typeof__(nvmlDeviceGetUtilizationRates) *util;
    __typeof__(nvmlDeviceGetComputeRunningProcesses_v3) *procs;
    __typeof__(nvmlSystemGetDriverVersion) *driver;
    __typeof__(nvmlDeviceGetProcessUtilization) *proc_util;
} crm__nvml;
static int crm__nvml_ok; /* 1 once loaded and initialised */
static pthread_once_t crm__nvml_once = PTHREAD_ONCE_INIT;

static void crm__nvml_load(void)
{
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        crm_debug("no host NVML (%s): utilisation answers not supported", dlerror());
        return;
    }
    *(void **)&crm__nvml.init = dlsym(lib, "nvmlInit_v2");
    *(void **)&crm__nvml.by_pci = dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
    *(void **)&crm__nvml.util = dlsym(lib, "nvmlDeviceGetUtilizationRates");
    *(void **)&crm__nvml.procs = dlsym(lib, "nvmlDeviceGetComputeRunningProcesses_v3");
    *(void **)&crm__nvml.driver = dlsym(lib, "nvmlSystemGetDriverVersion");
    *(void **)&crm__nvml.proc_util = dlsym(lib, "nvmlDeviceGetProcessUtilization");
    if (crm__nvml.init == NULL || crm__nvml.by_pci == NULL || crm__nvml.init() != NVML_SUCCESS) {
        crm_warn("the host's libnvidia-ml.so.1 cannot be initialised: utilisation answers not supported");
        return;
    }
    crm__nvml_ok = 1;
}

static int crm__ready(void)
{
    if (crm_backend_kind() != CRM_BACKEND_CUDA)
        return 0; /* the emulated device is not the host's GPU, even where there is one */
    pthread_once(&crm__nvml_once, crm__nvml_load);
    return crm__nvml_ok;
}

nvmlReturn_t crm_nvml_host_device(int device, nvmlDevice_t *out)
{
    struct cudaDeviceProp p;
    char bus[32];
    if (!crm__ready())
        return NVML_ERROR_NOT_SUPPORTED;
    if (crm_rt.cudaGetDeviceProperties(&p, device) != cudaSuccess) {
        crm_rt.cudaGetLastError();
        return NVML_ERROR_NOT_SUPPORTED;
    }
    /* By bus id, not index: CUDA_VISIBLE_DEVICES (--gpu) renumbers CUDA's devices only. */
    snprintf(bus, sizeof bus, "%08X:%02X:%02X.0", (unsigned)p.pciDomainID, (unsigned)p.pciBusID,
             (unsigned)p.pciDeviceID);
    return crm__nvml.by_pci(bus, out) == NVML_SUCCESS ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
}

nvmlReturn_t crm_nvml_host_utilization(nvmlDevice_t dev, unsigned *gpu, unsigned *mem)
{
    nvmlUtilization_t u;
    if (!crm__ready() || crm__nvml.util == NULL)
        return NVML_ERROR_NOT_SUPPORTED;
    nvmlReturn_t r = crm__nvml.util(dev, &u);
    if (r == NVML_SUCCESS) {
        *gpu = u.gpu;
        *mem = u.memory;
    }
    return r;
}

nvmlReturn_t crm_nvml_host_processes(nvmlDevice_t dev, nvmlProcessInfo_t *infos, unsigned *count)
{
    if (!crm__ready() || crm__nvml.procs == NULL)
        return NVML_ERROR_NOT_SUPPORTED;
    return crm__nvml.procs(dev, count, infos);
}

nvmlReturn_t crm_nvml_host_driver(char *buf, size_t len)
{
    if (!crm__ready() || crm__nvml.driver == NULL)
        return NVML_ERROR_NOT_SUPPORTED;
    return crm__nvml.driver(buf, (unsigned)len);
}

nvmlReturn_t crm_nvml_host_process_samples(nvmlDevice_t dev, unsigned long long since,
                                           nvmlProcessUtilizationSample_t *samples, unsigned *count)
{
    if (!crm__ready() || crm__nvml.proc_util == NULL)
        return NVML_ERROR_NOT_SUPPORTED;
    return crm__nvml.proc_util(dev, samples, count, since);
}
