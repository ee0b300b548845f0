/* crm_nvml_init.c -- the shim's NVML library state and system calls: init and
 * shutdown (counted), device handles, error strings and the driver, CUDA and NVML
 * versions. The session opens at nvmlInit; everything here but the host driver
 * version (one message, then kept) is answered from what HELLO said. */
#include "interpose/crm_nvml.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "client/crm_conn.h"
#include "client/crm_handles.h"
#include "crm_client_gen.h"
#include "interpose/crm_export.h"

static int crm__inits;         /* nvmlInit calls not yet shut down */
static pthread_mutex_t crm__lock = PTHREAD_MUTEX_INITIALIZER; /* guards crm__inits, crm__driver */
static struct nvmlDevice_st crm__devices[CRM_NVML_MAX_DEVICES] = {
#define CRM__D(i) [i] = {i}
    CRM__D(0), CRM__D(1), CRM__D(2), CRM__D(3), CRM__D(4), CRM__D(5), CRM__D(6), CRM__D(7),
    CRM__D(8), CRM__D(9), CRM__D(10), CRM__D(11), CRM__D(12), CRM__D(13), CRM__D(14), CRM__D(15),
    CRM__D(16), CRM__D(17), CRM__D(18), CRM__D(19), CRM__D(20), CRM__D(21), CRM__D(22), CRM__D(23),
    CRM__D(24), CRM__D(25), CRM__D(26), CRM__D(27), CRM__D(28), CRM__D(29), CRM__D(30), CRM__D(31),
    CRM__D(32), CRM__D(33), CRM__D(34), CRM__D(35), CRM__D(36), CRM__D(37), CRM__D(38), CRM__D(39),
    CRM__D(40), CRM__D(41), CRM__D(42), CRM__D(43), CRM__D(44), CRM__D(45), CRM__D(46), CRM__D(47),
    CRM__D(48), CRM__D(49), CRM__D(50), CRM__D(51), CRM__D(52), CRM__D(53), CRM__D(54), CRM__D(55),
    CRM__D(56), CRM__D(57), CRM__D(58), CRM__D(59), CRM__D(60), CRM__D(61), CRM__D(62), CRM__D(63),
#undef CRM__D
};
static char crm__driver[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE]; /* host driver, "" until asked */

nvmlReturn_t crm_nvml_from_cuda(cudaError_t err)
{
    switch (err) {
    case cudaSuccess: return NVML_SUCCESS;
    case cudaErrorInvalidDevice:
    case cudaErrorInvalidValue: return NVML_ERROR_INVALID_ARGUMENT;
    case cudaErrorNoDevice: return NVML_ERROR_DRIVER_NOT_LOADED; /* no server to reach */
    case cudaErrorDevicesUnavailable: return NVML_ERROR_GPU_IS_LOST; /* the server went away */
    case cudaErrorMemoryAllocation: return NVML_ERROR_MEMORY;
    default: return NVML_ERROR_UNKNOWN;
    }
}

nvmlReturn_t crm_nvml_ready(void)
{
    return __atomic_load_n(&crm__inits, __ATOMIC_ACQUIRE) > 0 ? NVML_SUCCESS : NVML_ERROR_UNINITIALIZED;
}

/* A session that could not open (crm_conn_session: unusable, or refused for now):
 * to NVML, a machine whose driver sees no GPU. A server lost later fails the calls
 * themselves, with NVML_ERROR_GPU_IS_LOST. */
static int crm__no_gpus(cudaError_t err)
{
    return err == cudaErrorNoDevice || err == cudaErrorDevicesUnavailable;
}

nvmlReturn_t crm_nvml_count(unsigned *count)
{
    crm_session_info info;
    cudaError_t err = crm_conn_session(&info);
    int n = err == cudaSuccess ? info.device_count : 0;
    *count = (unsigned)(n > CRM_NVML_MAX_DEVICES ? CRM_NVML_MAX_DEVICES : n);
    /* Initialised with NVML_INIT_FLAG_NO_GPUS and no server: no devices. */
    return crm__no_gpus(err) ? NVML_SUCCESS : crm_nvml_from_cuda(err);
}

nvmlDevice_t crm_nvml_handle(int index)
{
    return &crm__devices[index];
}

nvmlReturn_t crm_nvml_device(nvmlDevice_t h, int *index)
{
    unsigned count;
    nvmlReturn_t r = crm_nvml_ready();
    uintptr_t base = (uintptr_t)crm__devices, p = (uintptr_t)h;
    if (r != NVML_SUCCESS)
        return r;
    if (p < base || p >= base + sizeof crm__devices || (p - base) % sizeof crm__devices[0] != 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    if ((r = crm_nvml_count(&count)) != NVML_SUCCESS)
        return r;
    if ((unsigned)h->index >= count)
        return NVML_ERROR_INVALID_ARGUMENT;
    *index = h->index;
    return NVML_SUCCESS;
}

nvmlReturn_t crm_nvml_props(int index, struct cudaDeviceProp *out)
{
    /* An NVML query must not become the program's CUDA error. */
    cudaError_t saved = crm_peek_error();
    cudaError_t err = cudaGetDeviceProperties(out, index);
    crm_take_error();
    crm_set_error(saved);
    return crm_nvml_from_cuda(err);
}

/* Opens the session. A server that cannot be used is, as on a machine whose
 * driver finds no GPU, NVML_ERROR_DRIVER_NOT_LOADED, or no error (no devices)
 * with NVML_INIT_FLAG_NO_GPUS; the shim's log line says why. */
static nvmlReturn_t crm__init(unsigned flags)
{
    cudaError_t err = crm_conn_session(NULL);
    if (crm__no_gpus(err) && !(flags & NVML_INIT_FLAG_NO_GPUS))
        return NVML_ERROR_DRIVER_NOT_LOADED;
    if (err != cudaSuccess && !crm__no_gpus(err))
        return crm_nvml_from_cuda(err);
    __atomic_add_fetch(&crm__inits, 1, __ATOMIC_ACQ_REL);
    return NVML_SUCCESS;
}

CRM_EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
    return crm__init(flags);
}

CRM_EXPORT nvmlReturn_t nvmlInit_v2(void)
{
    return crm__init(0);
}

CRM_EXPORT nvmlReturn_t nvmlInit(void)
{
    return crm__init(0);
}

CRM_EXPORT nvmlReturn_t nvmlShutdown(void)
{
    nvmlReturn_t r = NVML_SUCCESS;
    pthread_mutex_lock(&crm__lock);
    if (crm__inits == 0)
        r = NVML_ERROR_UNINITIALIZED;
    else
        __atomic_sub_fetch(&crm__inits, 1, __ATOMIC_ACQ_REL);
    pthread_mutex_unlock(&crm__lock);
    return r;
}

#define CRM_NVML_ERRORS(XX)                                                      \
    XX(NVML_SUCCESS, "Success")                                                  \
    XX(NVML_ERROR_UNINITIALIZED, "Uninitialized")                                \
    XX(NVML_ERROR_INVALID_ARGUMENT, "Invalid Argument")                          \
    XX(NVML_ERROR_NOT_SUPPORTED, "Not Supported")                                \
    XX(NVML_ERROR_NO_PERMISSION, "Insufficient Permissions")                     \
    XX(NVML_ERROR_ALREADY_INITIALIZED, "Already Initialized")                    \
    XX(NVML_ERROR_NOT_FOUND, "Not Found")                                        \
    XX(NVML_ERROR_INSUFFICIENT_SIZE, "Insufficient Size")                        \
    XX(NVML_ERROR_INSUFFICIENT_POWER, "Insufficient External Power")             \
    XX(NVML_ERROR_DRIVER_NOT_LOADED, "Driver Not Loaded")                        \
    XX(NVML_ERROR_TIMEOUT, "Timeout")                                            \
    XX(NVML_ERROR_IRQ_ISSUE, "Interrupt request issue")                          \
    XX(NVML_ERROR_LIBRARY_NOT_FOUND, "NVML Shared Library Not Found")            \
    XX(NVML_ERROR_FUNCTION_NOT_FOUND, "Function Not Found")                      \
    XX(NVML_ERROR_CORRUPTED_INFOROM, "Corrupted infoROM")                        \
    XX(NVML_ERROR_GPU_IS_LOST, "GPU is lost")                                    \
    XX(NVML_ERROR_RESET_REQUIRED, "GPU requires restart")                        \
    XX(NVML_ERROR_OPERATING_SYSTEM, "The operating system has blocked the request") \
    XX(NVML_ERROR_LIB_RM_VERSION_MISMATCH, "RM has detected an NVML/RM version mismatch") \
    XX(NVML_ERROR_IN_USE, "In use by another client")                            \
    XX(NVML_ERROR_MEMORY, "Insufficient Memory")                                 \
    XX(NVML_ERROR_NO_DATA, "No data")                                            \
    XX(NVML_ERROR_VGPU_ECC_NOT_SUPPORTED, "vGPU ECC not supported")              \
    XX(NVML_ERROR_INSUFFICIENT_RESOURCES, "Insufficient resources")              \
    XX(NVML_ERROR_FREQ_NOT_SUPPORTED, "Frequency not supported")                 \
    XX(NVML_ERROR_ARGUMENT_VERSION_MISMATCH, "Argument version mismatch")        \
    XX(NVML_ERROR_DEPRECATED, "Deprecated")                                      \
    XX(NVML_ERROR_NOT_READY, "Not ready")                                        \
    XX(NVML_ERROR_GPU_NOT_FOUND, "GPU not found")                                \
    XX(NVML_ERROR_INVALID_STATE, "Invalid state")                                \
    XX(NVML_ERROR_UNKNOWN, "Unknown Error")

CRM_EXPORT const char *nvmlErrorString(nvmlReturn_t result)
{
    switch (result) {
#define CRM__CASE(code, text) case code: return text;
        CRM_NVML_ERRORS(CRM__CASE)
#undef CRM__CASE
    default: return "Unknown Error";
    }
}

/* The host's kernel driver version, asked once; "" when the server has none. */
static nvmlReturn_t crm__host_driver(char *out, size_t len)
{
    crm_nvml_stats st;
    nvmlReturn_t r = NVML_SUCCESS;
    pthread_mutex_lock(&crm__lock);
    if (crm__driver[0] == '\0') {
        memset(&st, 0, sizeof st);
        r = crm_rpc_crm_nvml_query(-1, CRM_NVML_DRIVER, &st);
        if (r == NVML_SUCCESS) {
            st.driver[sizeof st.driver - 1] = '\0';
            snprintf(crm__driver, sizeof crm__driver, "%s", st.driver[0] ? st.driver : "-");
        }
        xdr_free((xdrproc_t)xdr_crm_nvml_stats, (char *)&st);
    }
    snprintf(out, len, "%s", strcmp(crm__driver, "-") == 0 ? "" : crm__driver);
    pthread_mutex_unlock(&crm__lock);
    return r;
}

/* The host's driver version; an emulated device (or a host without NVML) has no
 * kernel driver, so the CUDA driver version HELLO reported stands in ("13.0"). */
CRM_EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    char host[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE], text[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
    crm_session_info info;
    nvmlReturn_t r = crm_nvml_ready();
    if (r == NVML_SUCCESS && version == NULL)
        r = NVML_ERROR_INVALID_ARGUMENT;
    if (r == NVML_SUCCESS)
        r = crm_nvml_from_cuda(crm_conn_session(&info));
    if (r == NVML_SUCCESS)
        r = crm__host_driver(host, sizeof host);
    if (r != NVML_SUCCESS)
        return r;
    if (host[0] != '\0')
        snprintf(text, sizeof text, "%s", host);
    else
        snprintf(text, sizeof text, "%d.%d", info.driver_version / 1000, info.driver_version % 1000 / 10);
    return crm_nvml_copy_string(text, version, length);
}

/* NVML's API version, then the host's driver version where the host has one. */
CRM_EXPORT nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length)
{
    char host[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE], text[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE + 8];
    nvmlReturn_t r = crm_nvml_ready();
    if (r == NVML_SUCCESS && version == NULL)
        r = NVML_ERROR_INVALID_ARGUMENT;
    if (r == NVML_SUCCESS)
        r = crm__host_driver(host, sizeof host);
    if (r != NVML_SUCCESS)
        return r;
    snprintf(text, sizeof text, "%s%s%s", NVML_API_VERSION_STR, host[0] ? "." : "", host);
    return crm_nvml_copy_string(text, version, length);
}

/* The server's CUDA driver version (cudaDriverGetVersion's number, from HELLO), or
 * a current driver's when no server can be used (crm_conn_driver_version). */
CRM_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion)
{
    nvmlReturn_t r = crm_nvml_ready();
    if (r == NVML_SUCCESS && cudaDriverVersion == NULL)
        r = NVML_ERROR_INVALID_ARGUMENT;
    if (r == NVML_SUCCESS)
        *cudaDriverVersion = crm_conn_driver_version();
    return r;
}

CRM_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion)
{
    return nvmlSystemGetCudaDriverVersion_v2(cudaDriverVersion);
}
