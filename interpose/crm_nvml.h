/* crm_nvml.h -- internal interface of the shim's NVML (libnvidia-ml.so.1 ABI,
 * interpose/crm_nvml*.c): the pure formatting and parsing of device ids, and the
 * state every NVML call checks (initialised, valid handle). Include it first: it
 * asks nvml.h for the unversioned legacy prototypes, which the shim exports too. */
#ifndef CRM_NVML_H
#define CRM_NVML_H

#define NVML_NO_UNVERSIONED_FUNC_DEFS
#include <stddef.h>
#include <cuda_runtime_api.h>
#include <nvml.h>

#define CRM_NVML_MAX_DEVICES 64

/* What an nvmlDevice_t points to: one per device index, never freed. */
struct nvmlDevice_st {
    int index;
};

/* --- crm_nvml_ids.c: pure functions, unit-tested (tests/nvml/check_nvml_ids.c) --- */

/* NVML's "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" of a CUDA device UUID into buf
 * (41 bytes with the NUL); returns the length it needs without the NUL. */
int crm_nvml_format_uuid(const unsigned char bytes[16], char *buf, size_t len);
/* "%08X:%02X:%02X.0" (busId) or, legacy, "%04X:%02X:%02X.0" (busIdLegacy) into buf;
 * returns the length it needs without the NUL. */
int crm_nvml_format_bus_id(unsigned domain, unsigned bus, unsigned device, int legacy, char *buf,
                           size_t len);
/* Parses a PCI bus id as NVML accepts it: "domain:bus:device.function",
 * "domain:bus:device", "bus:device.function" or "bus:device", hexadecimal of any
 * case, domain 0 when absent, function 0 when absent. 0, or -1 when malformed or
 * out of range (domain 32 bits, bus 8, device 5, function 3). */
int crm_nvml_parse_bus_id(const char *s, unsigned *domain, unsigned *bus, unsigned *device,
                          unsigned *function);
/* Copies the string src into NVML's caller buffer: INVALID_ARGUMENT for a NULL buf,
 * INSUFFICIENT_SIZE when len cannot hold it with its NUL. */
nvmlReturn_t crm_nvml_copy_string(const char *src, char *buf, unsigned len);

/* --- crm_nvml_init.c: the library's state --- */

/* NVML_SUCCESS between nvmlInit and the matching nvmlShutdown, else UNINITIALIZED. */
nvmlReturn_t crm_nvml_ready(void);
/* The session's device count: NVML_SUCCESS, or the error of a lost server. */
nvmlReturn_t crm_nvml_count(unsigned *count);
/* Checks readiness and the handle; sets *index. INVALID_ARGUMENT for a handle that
 * is not one of ours or names no device of the session. */
nvmlReturn_t crm_nvml_device(nvmlDevice_t h, int *index);
/* The handle of device index (which the caller checked). */
nvmlDevice_t crm_nvml_handle(int index);
/* The device's cudaDeviceProp, cached by the runtime part of the shim; the CUDA
 * runtime's last error is left as it was. */
nvmlReturn_t crm_nvml_props(int index, struct cudaDeviceProp *out);
/* NVML's status for a CUDA error of the session. */
nvmlReturn_t crm_nvml_from_cuda(cudaError_t err);

#endif
