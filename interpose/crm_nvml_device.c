/* crm_nvml_device.c -- NVML device queries answered from the session and from the
 * device properties the runtime part of the shim fetches once per device: count,
 * handles (by index, UUID, PCI bus id), index, name, UUID, PCI info and compute
 * capability. None costs a message after a device's first properties. */
#include "interpose/crm_nvml.h"

#include <string.h>
#include "interpose/crm_export.h"

CRM_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount)
{
    nvmlReturn_t r = crm_nvml_ready();
    if (r == NVML_SUCCESS && deviceCount == NULL)
        r = NVML_ERROR_INVALID_ARGUMENT;
    return r == NVML_SUCCESS ? crm_nvml_count(deviceCount) : r;
}

CRM_EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int *deviceCount)
{
    return nvmlDeviceGetCount_v2(deviceCount);
}

CRM_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    unsigned count = 0;
    nvmlReturn_t r = crm_nvml_ready();
    if (r == NVML_SUCCESS && device == NULL)
        r = NVML_ERROR_INVALID_ARGUMENT;
    if (r == NVML_SUCCESS && (r = crm_nvml_count(&count)) == NVML_SUCCESS && index >= count)
        r = NVML_ERROR_INVALID_ARGUMENT;
    if (r == NVML_SUCCESS)
        *device = crm_nvml_handle((int)index);
    return r;
}

CRM_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device)
{
    return nvmlDeviceGetHandleByIndex_v2(index, device);
}

/* Generic worker of the lookups by id: the first device whose properties `match`
 * accepts; NVML_ERROR_NOT_FOUND when none does. */
static nvmlReturn_t crm__find(int (*match)(const struct cudaDeviceProp *p, const void *key), const void *key,
                              nvmlDevice_t *device)
{
    struct cudaDeviceProp p;
    unsigned count = 0;
    nvmlReturn_t r = crm_nvml_ready();
    if (r == NVML_SUCCESS && device == NULL)
        r = NVML_ERROR_INVALID_ARGUMENT;
    if (r == NVML_SUCCESS)
        r = crm_nvml_count(&count);
    for (unsigned i = 0; r == NVML_SUCCESS && i < count; i++) {
        if ((r = crm_nvml_props((int)i, &p)) == NVML_SUCCESS && match(&p, key)) {
            *device = crm_nvml_handle((int)i);
            return NVML_SUCCESS;
        }
    }
    return r == NVML_SUCCESS ? NVML_ERROR_NOT_FOUND : r;
}

static int crm__uuid_is(const struct cudaDeviceProp *p, const void *key)
{
    char text[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
    crm_nvml_format_uuid((const unsigned char *)p->uuid.bytes, text, sizeof text);
    return strcmp(text, key) == 0;
}

CRM_EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
    if (crm_nvml_ready() == NVML_SUCCESS && uuid == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    return crm__find(crm__uuid_is, uuid, device);
}

static int crm__bus_is(const struct cudaDeviceProp *p, const void *key)
{
    const unsigned *want = key; /* domain, bus, device */
    return (unsigned)p->pciDomainID == want[0] && (unsigned)p->pciBusID == want[1] &&
           (unsigned)p->pciDeviceID == want[2];
}

CRM_EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId, nvmlDevice_t *device)
{
    unsigned want[3], function;
    nvmlReturn_t r = crm_nvml_ready();
    if (r != NVML_SUCCESS)
        return r;
    if (crm_nvml_parse_bus_id(pciBusId, &want[0], &want[1], &want[2], &function) != 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (function != 0) /* CUDA devices are function 0 */
        return device == NULL ? NVML_ERROR_INVALID_ARGUMENT : NVML_ERROR_NOT_FOUND;
    return crm__find(crm__bus_is, want, device);
}

CRM_EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char *pciBusId, nvmlDevice_t *device)
{
    return nvmlDeviceGetHandleByPciBusId_v2(pciBusId, device);
}

CRM_EXPORT nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index)
{
    int i;
    nvmlReturn_t r = crm_nvml_device(device, &i);
    if (r == NVML_SUCCESS && index == NULL)
        r = NVML_ERROR_INVALID_ARGUMENT;
    if (r == NVML_SUCCESS)
        *index = (unsigned)i;
    return r;
}

/* Checks the handle and `out`, and fetches the device's properties. */
static nvmlReturn_t crm__props_of(nvmlDevice_t device, const void *out, struct cudaDeviceProp *p)
{
    int i;
    nvmlReturn_t r = crm_nvml_device(device, &i);
    if (r == NVML_SUCCESS && out == NULL)
        r = NVML_ERROR_INVALID_ARGUMENT;
    return r == NVML_SUCCESS ? crm_nvml_props(i, p) : r;
}

CRM_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
    struct cudaDeviceProp p;
    nvmlReturn_t r = crm__props_of(device, name, &p);
    if (r == NVML_SUCCESS) {
        p.name[sizeof p.name - 1] = '\0';
        r = crm_nvml_copy_string(p.name, name, length);
    }
    return r;
}

CRM_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
    struct cudaDeviceProp p;
    char text[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
    nvmlReturn_t r = crm__props_of(device, uuid, &p);
    if (r == NVML_SUCCESS) {
        crm_nvml_format_uuid((const unsigned char *)p.uuid.bytes, text, sizeof text);
        r = crm_nvml_copy_string(text, uuid, length);
    }
    return r;
}

/* Fills the part of nvmlPciInfo_t every version shares (up to pciSubSystemId); the
 * vendor and device product ids are not in cudaDeviceProp, so pciDeviceId and
 * pciSubSystemId are 0 (unknown). */
static void crm__pci_common(const struct cudaDeviceProp *p, nvmlPciInfo_t *pci)
{
    crm_nvml_format_bus_id((unsigned)p->pciDomainID, (unsigned)p->pciBusID, (unsigned)p->pciDeviceID, 1,
                           pci->busIdLegacy, sizeof pci->busIdLegacy);
    pci->domain = (unsigned)p->pciDomainID;
    pci->bus = (unsigned)p->pciBusID;
    pci->device = (unsigned)p->pciDeviceID;
    pci->pciDeviceId = 0;
    pci->pciSubSystemId = 0;
}

CRM_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    struct cudaDeviceProp p;
    nvmlReturn_t r = crm__props_of(device, pci, &p);
    if (r == NVML_SUCCESS) {
        crm__pci_common(&p, pci);
        crm_nvml_format_bus_id((unsigned)p.pciDomainID, (unsigned)p.pciBusID, (unsigned)p.pciDeviceID, 0,
                               pci->busId, sizeof pci->busId);
    }
    return r;
}

/* The older versions' structure ends before busId (v1: reserved words there), so
 * they fill only the common part. */
CRM_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    struct cudaDeviceProp p;
    nvmlReturn_t r = crm__props_of(device, pci, &p);
    if (r == NVML_SUCCESS)
        crm__pci_common(&p, pci);
    return r;
}

CRM_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    return nvmlDeviceGetPciInfo_v2(device, pci);
}

CRM_EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor)
{
    struct cudaDeviceProp p;
    nvmlReturn_t r = crm__props_of(device, major, &p);
    if (r == NVML_SUCCESS && minor == NULL)
        r = NVML_ERROR_INVALID_ARGUMENT;
    if (r == NVML_SUCCESS) {
        *major = p.major;
        *minor = p.minor;
    }
    return r;
}
