/* crm_nvml_fabric.c -- NVML's GPU fabric queries (nvmlDeviceGetGpuFabricInfo*),
 * answered by the client: a GPU reached through cudarem is in no NVLink fabric the
 * client could share memory over (fabric handles of the server's machine mean
 * nothing here), so its probe state is "not supported", as for any GPU outside a
 * fabric. torch asks this before it considers fabric handles for expandable
 * segments. */
#include <string.h>
#include <nvml.h>
#include "interpose/crm_export.h"
#include "interpose/crm_nvml.h"

/* Fills the fields versions 2 and 3 share. */
static void crm__no_fabric(unsigned char uuid[NVML_GPU_FABRIC_UUID_LEN], nvmlReturn_t *status,
                           unsigned int *clique, nvmlGpuFabricState_t *state, unsigned int *health)
{
    memset(uuid, 0, NVML_GPU_FABRIC_UUID_LEN);
    *status = NVML_SUCCESS;
    *clique = 0;
    *state = NVML_GPU_FABRIC_STATE_NOT_SUPPORTED;
    *health = 0;
}

/* The checks both queries make: a live device handle, somewhere to answer. */
static nvmlReturn_t crm__fabric_args(nvmlDevice_t device, const void *info)
{
    int index;
    nvmlReturn_t r = crm_nvml_device(device, &index);
    return r != NVML_SUCCESS ? r : info == NULL ? NVML_ERROR_INVALID_ARGUMENT : NVML_SUCCESS;
}

CRM_EXPORT nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device, nvmlGpuFabricInfoV_t *info)
{
    nvmlReturn_t r = crm__fabric_args(device, info);
    if (r != NVML_SUCCESS)
        return r;
    if (info->version != nvmlGpuFabricInfo_v2 && info->version != nvmlGpuFabricInfo_v3)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    crm__no_fabric(info->clusterUuid, &info->status, &info->cliqueId, &info->state, &info->healthMask);
    if (info->version == nvmlGpuFabricInfo_v3)
        info->healthSummary = NVML_GPU_FABRIC_HEALTH_SUMMARY_NOT_SUPPORTED;
    return NVML_SUCCESS;
}

CRM_EXPORT nvmlReturn_t nvmlDeviceGetGpuFabricInfo(nvmlDevice_t device, nvmlGpuFabricInfo_t *info)
{
    nvmlReturn_t r = crm__fabric_args(device, info);
    if (r != NVML_SUCCESS)
        return r;
    unsigned int health = 0;
    crm__no_fabric(info->clusterUuid, &info->status, &info->cliqueId, &info->state, &health);
    return NVML_SUCCESS;
}
