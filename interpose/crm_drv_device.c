/* crm_drv_device.c -- driver initialisation, versions, error names, and the device
 * queries (answered from the properties and attributes the runtime layer fetches
 * once per device: no round trip after the first). */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include "client/crm_conn.h"
#include "common/crm_errors.h"
#include "interpose/crm_drv.h"
#include "interpose/crm_drv_tables.h"
#include "interpose/crm_export.h"

#undef cuDeviceGetUuid /* cuda.h maps it to _v2; the older form is defined here too */

static atomic_int crm__initialised;

CUresult crm_drv_err(cudaError_t err)
{
    switch (err) {
    case cudaErrorInvalidConfiguration:
        /* NVIDIA's runtime passes a launch's driver result through unchanged, and a
         * GPU reports a bad launch geometry as cudaErrorInvalidConfiguration: its
         * driver answers with that number, which cuda.h does not name. */
        return (CUresult)cudaErrorInvalidConfiguration;
    case cudaErrorInvalidPitchValue:
    case cudaErrorInvalidHostPointer:
    case cudaErrorInvalidDevicePointer:
    case cudaErrorInvalidMemcpyDirection:
    case cudaErrorMissingConfiguration:
        return CUDA_ERROR_INVALID_VALUE;
    case cudaErrorInvalidSymbol:
        return CUDA_ERROR_NOT_FOUND;
    case cudaErrorInvalidDeviceFunction:
        return CUDA_ERROR_INVALID_HANDLE;
    case cudaErrorInsufficientDriver:
        return CUDA_ERROR_NO_DEVICE;
    default: /* the runtime's codes equal the driver's where both have them */
        return (CUresult)err;
    }
}

void crm_drv_mark_init(void)
{
    atomic_store(&crm__initialised, 1);
}

CUresult crm_drv_check_init(void)
{
    return atomic_load(&crm__initialised) ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

CUresult crm_drv_check_device(CUdevice dev)
{
    crm_session_info info;
    CUresult rc = crm_drv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if ((rc = crm_drv_err(crm_conn_session(&info))) != CUDA_SUCCESS)
        return rc;
    return dev >= 0 && dev < info.device_count ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

/* Opens the session: a driver with no reachable server has no device. */
CRM_EXPORT CUresult cuInit(unsigned int flags)
{
    crm_session_info info;
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = crm_drv_err(crm_conn_session(&info));
    if (rc == CUDA_SUCCESS && info.device_count == 0)
        rc = CUDA_ERROR_NO_DEVICE;
    if (rc == CUDA_SUCCESS)
        crm_drv_mark_init();
    return rc;
}

/* The server's driver version, else a current driver's (crm_conn_driver_version). */
CRM_EXPORT CUresult cuDriverGetVersion(int *driverVersion)
{
    if (driverVersion == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    *driverVersion = crm_conn_driver_version();
    return CUDA_SUCCESS;
}

static const char *crm__err_name(CUresult error)
{
    size_t lo = 0, hi = crm_drv_nerrnames;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (crm_drv_errnames[mid].value < (int)error)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < crm_drv_nerrnames && crm_drv_errnames[lo].value == (int)error ? crm_drv_errnames[lo].name : NULL;
}

CRM_EXPORT CUresult cuGetErrorName(CUresult error, const char **pStr)
{
    if (pStr == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    *pStr = crm__err_name(error);
    return *pStr != NULL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* The driver and the runtime describe a shared code in the same words; a code of
 * the driver alone is described by its name. */
CRM_EXPORT CUresult cuGetErrorString(CUresult error, const char **pStr)
{
    if (pStr == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    const char *name = crm__err_name(error);
    if (name == NULL) {
        *pStr = NULL;
        return CUDA_ERROR_INVALID_VALUE;
    }
    const char *rt = crm_error_name((int)error);
    *pStr = strncmp(rt, "cuda", 4) == 0 ? crm_error_string((int)error) : name;
    return CUDA_SUCCESS;
}

/* ---- devices --------------------------------------------------------------------- */

CRM_EXPORT CUresult cuDeviceGetCount(int *count)
{
    crm_session_info info;
    CUresult rc = crm_drv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (count == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    rc = crm_drv_err(crm_conn_session(&info));
    *count = rc == CUDA_SUCCESS ? info.device_count : 0;
    return rc;
}

CRM_EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    CUresult rc = crm_drv_check_device(ordinal);
    if (rc == CUDA_SUCCESS && device == NULL)
        rc = CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS)
        *device = ordinal;
    return rc;
}

/* The cached properties of dev. */
static CUresult crm__props(CUdevice dev, struct cudaDeviceProp *p)
{
    CUresult rc = crm_drv_check_device(dev);
    return rc != CUDA_SUCCESS ? rc : crm_drv_err(cudaGetDeviceProperties(p, dev));
}

CRM_EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    struct cudaDeviceProp p;
    if (name == NULL || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = crm__props(dev, &p);
    if (rc == CUDA_SUCCESS)
        snprintf(name, (size_t)len, "%s", p.name);
    return rc;
}

CRM_EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    struct cudaDeviceProp p;
    if (bytes == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = crm__props(dev, &p);
    if (rc == CUDA_SUCCESS)
        *bytes = p.totalGlobalMem;
    return rc;
}

CRM_EXPORT CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
    struct cudaDeviceProp p;
    if (uuid == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = crm__props(dev, &p);
    if (rc == CUDA_SUCCESS)
        memcpy(uuid->bytes, p.uuid.bytes, sizeof uuid->bytes);
    return rc;
}

CRM_EXPORT CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
    return cuDeviceGetUuid_v2(uuid, dev);
}

CRM_EXPORT CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    if (pi == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = crm_drv_check_device(dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    /* CUdevice_attribute and cudaDeviceAttr number the attributes alike. */
    return crm_drv_err(cudaDeviceGetAttribute(pi, (enum cudaDeviceAttr)attrib, dev));
}

CRM_EXPORT CUresult cuDeviceComputeCapability(int *major, int *minor, CUdevice dev)
{
    struct cudaDeviceProp p;
    if (major == NULL || minor == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = crm__props(dev, &p);
    if (rc == CUDA_SUCCESS)
        *major = p.major, *minor = p.minor;
    return rc;
}

CRM_EXPORT CUresult cuDeviceGetProperties(CUdevprop *prop, CUdevice dev)
{
    struct cudaDeviceProp p;
    if (prop == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = crm__props(dev, &p);
    if (rc != CUDA_SUCCESS)
        return rc;
    *prop = (CUdevprop){
        .maxThreadsPerBlock = p.maxThreadsPerBlock, .sharedMemPerBlock = (int)p.sharedMemPerBlock,
        .totalConstantMemory = (int)p.totalConstMem, .SIMDWidth = p.warpSize, .memPitch = (int)p.memPitch,
        .regsPerBlock = p.regsPerBlock, .textureAlign = (int)p.textureAlignment,
    };
    int rate = 0;
    cudaDeviceGetAttribute(&rate, cudaDevAttrClockRate, dev);
    prop->clockRate = rate;
    for (int i = 0; i < 3; i++)
        prop->maxThreadsDim[i] = p.maxThreadsDim[i], prop->maxGridSize[i] = p.maxGridSize[i];
    return CUDA_SUCCESS;
}

CRM_EXPORT CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
    struct cudaDeviceProp p;
    if (pciBusId == NULL || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = crm__props(dev, &p);
    if (rc == CUDA_SUCCESS)
        snprintf(pciBusId, (size_t)len, "%08x:%02x:%02x.0", (unsigned)p.pciDomainID, (unsigned)p.pciBusID,
                 (unsigned)p.pciDeviceID);
    return rc;
}

CRM_EXPORT CUresult cuDeviceGetByPCIBusId(CUdevice *dev, const char *pciBusId)
{
    unsigned domain = 0, bus = 0, device = 0;
    int count = 0;
    if (dev == NULL || pciBusId == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (sscanf(pciBusId, "%x:%x:%x", &domain, &bus, &device) != 3) {
        domain = 0;
        if (sscanf(pciBusId, "%x:%x", &bus, &device) != 2)
            return CUDA_ERROR_INVALID_VALUE;
    }
    CUresult rc = cuDeviceGetCount(&count);
    for (int i = 0; rc == CUDA_SUCCESS && i < count; i++) {
        struct cudaDeviceProp p;
        if ((rc = crm__props(i, &p)) == CUDA_SUCCESS && (unsigned)p.pciDomainID == domain &&
            (unsigned)p.pciBusID == bus && (unsigned)p.pciDeviceID == device) {
            *dev = i;
            return CUDA_SUCCESS;
        }
    }
    return rc != CUDA_SUCCESS ? rc : CUDA_ERROR_INVALID_DEVICE;
}

CRM_EXPORT CUresult cuDeviceGetP2PAttribute(int *value, CUdevice_P2PAttribute attrib, CUdevice srcDevice,
                                            CUdevice dstDevice)
{
    CUresult rc = crm_drv_check_device(srcDevice);
    if (rc == CUDA_SUCCESS)
        rc = crm_drv_check_device(dstDevice);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (value == NULL || srcDevice == dstDevice)
        return CUDA_ERROR_INVALID_VALUE;
    (void)attrib;
    *value = 0; /* peer access is not remoted: no pair of devices supports it */
    return CUDA_SUCCESS;
}

CRM_EXPORT CUresult cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev)
{
    CUresult rc = crm_drv_check_device(dev);
    if (rc == CUDA_SUCCESS)
        rc = crm_drv_check_device(peerDev);
    if (rc == CUDA_SUCCESS && canAccessPeer == NULL)
        rc = CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS)
        *canAccessPeer = 0;
    return rc;
}

/* Profiling is a tool's business: with no tool attached these succeed on a GPU. */
CRM_EXPORT CUresult cuProfilerStart(void)
{
    return crm_drv_check_init() == CUDA_SUCCESS ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

CRM_EXPORT CUresult cuProfilerStop(void)
{
    return cuProfilerStart();
}
