/* crm_rt_device.c -- exported device-management calls: count, selection, properties
 * and attributes (each fetched once per session, then answered locally), versions
 * and reset, and the profiler switches (success: no profiler is attached). */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include "client/crm_conn.h"
#include "client/crm_devices.h"
#include "client/crm_graph.h"
#include "client/crm_handles.h"
#include "client/crm_managed.h"
#include "client/crm_ptrmap.h"
#include "crm_client_gen.h"
#include "interpose/crm_drv.h"
#include "interpose/crm_export.h"

#define CRM_MAX_DEVICES 64

static pthread_mutex_t crm__cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cudaDeviceProp *crm__props[CRM_MAX_DEVICES];      /* fetched once each */
static int *crm__attrs[CRM_MAX_DEVICES]; /* (status, value) per attribute, fetched once each */

/* Checks that `device` exists in the session; returns the CUDA error if not. */
static cudaError_t crm__check_device(int device)
{
    crm_session_info info;
    cudaError_t err = crm_conn_session(&info);
    if (err != cudaSuccess)
        return err;
    if (device < 0 || device >= info.device_count || device >= CRM_MAX_DEVICES)
        return cudaErrorInvalidDevice;
    return cudaSuccess;
}

CRM_EXPORT cudaError_t cudaGetDeviceCount(int *count)
{
    crm_session_info info;
    if (count == NULL)
        return crm_set_error(cudaErrorInvalidValue);
    cudaError_t err = crm_conn_session(&info);
    *count = err == cudaSuccess ? info.device_count : 0;
    if (err == cudaSuccess && info.device_count == 0)
        err = cudaErrorNoDevice;
    return crm_set_error(err);
}

CRM_EXPORT cudaError_t cudaGetDevice(int *device)
{
    if (device == NULL)
        return crm_set_error(cudaErrorInvalidValue);
    cudaError_t err = crm_conn_session(NULL);
    if (err == cudaSuccess)
        *device = crm_thread_device();
    return crm_set_error(err);
}

CRM_EXPORT cudaError_t cudaSetDevice(int device)
{
    cudaError_t err = crm__check_device(device);
    if (err == cudaSuccess) {
        crm_set_thread_device(device);
        crm_drv_runtime_set_device(device); /* its primary context becomes current */
    }
    return crm_set_error(err);
}

static cudaError_t crm__fetch_props(int device, struct cudaDeviceProp **out)
{
    crm_prop wire = {0, NULL};
    struct cudaDeviceProp told;
    if (crm_devices_props(device, &told) == 0) { /* HELLO brought it */
        if ((*out = malloc(sizeof **out)) == NULL)
            return cudaErrorMemoryAllocation;
        **out = told;
        crm_devices_mask_props(*out);
        return cudaSuccess;
    }
    int local;
    int saved = crm_conn_device_begin(device, &local);
    cudaError_t err = crm_rpc_cudaGetDeviceProperties(local, &wire);
    crm_conn_device_end(saved);
    if (err == cudaSuccess && wire.crm_prop_len != sizeof(struct cudaDeviceProp))
        err = cudaErrorInvalidValue; /* refused at HELLO already; belt and braces */
    if (err == cudaSuccess) {
        *out = malloc(sizeof **out);
        if (*out == NULL)
            err = cudaErrorMemoryAllocation;
        else
            memcpy(*out, wire.crm_prop_val, sizeof **out);
        if (*out != NULL)
            crm_devices_mask_props(*out);
    }
    xdr_free((xdrproc_t)xdr_crm_prop, (char *)&wire);
    return err;
}

CRM_EXPORT cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    if (prop == NULL)
        return crm_set_error(cudaErrorInvalidValue);
    cudaError_t err = crm__check_device(device);
    if (err != cudaSuccess)
        return crm_set_error(err);
    pthread_mutex_lock(&crm__cache_lock);
    if (crm__props[device] == NULL)
        err = crm__fetch_props(device, &crm__props[device]);
    if (err == cudaSuccess)
        *prop = *crm__props[device];
    pthread_mutex_unlock(&crm__cache_lock);
    return crm_set_error(err);
}

/* Fetches every attribute of `device` in one call; caller holds the lock. */
static cudaError_t crm__fetch_attrs(int device)
{
    crm_bytes wire = {0, NULL};
    if ((crm__attrs[device] = malloc(2 * cudaDevAttrMax * sizeof(int))) == NULL)
        return cudaErrorMemoryAllocation;
    if (crm_devices_attrs(device, crm__attrs[device]) == 0) { /* HELLO brought them */
        crm_devices_mask_attrs(crm__attrs[device]);
        return cudaSuccess;
    }
    free(crm__attrs[device]);
    crm__attrs[device] = NULL;
    int local;
    int saved = crm_conn_device_begin(device, &local);
    cudaError_t err = crm_rpc_crm_device_attrs(local, &wire);
    crm_conn_device_end(saved);
    if (err == cudaSuccess && wire.crm_bytes_len != 2 * cudaDevAttrMax * sizeof(uint32_t))
        err = cudaErrorInvalidValue;
    if (err == cudaSuccess && (crm__attrs[device] = malloc(wire.crm_bytes_len)) == NULL)
        err = cudaErrorMemoryAllocation;
    if (err == cudaSuccess) {
        const uint32_t *pairs = (const uint32_t *)(void *)wire.crm_bytes_val;
        for (int i = 0; i < 2 * cudaDevAttrMax; i++)
            crm__attrs[device][i] = (int)ntohl(pairs[i]);
    }
    xdr_free((xdrproc_t)xdr_crm_bytes, (char *)&wire);
    return err;
}

/* Answered from the per-session copy of every attribute: no round trip after the
 * first query of a device. */
CRM_EXPORT cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    if (value == NULL)
        return crm_set_error(cudaErrorInvalidValue);
    cudaError_t err = crm__check_device(device);
    if (err != cudaSuccess)
        return crm_set_error(err);
    if ((int)attr < 0 || (int)attr >= cudaDevAttrMax)
        return crm_set_error(cudaErrorInvalidValue);
    pthread_mutex_lock(&crm__cache_lock);
    if (crm__attrs[device] == NULL)
        err = crm__fetch_attrs(device);
    if (err == cudaSuccess && (err = (cudaError_t)crm__attrs[device][2 * attr]) == cudaSuccess)
        *value = crm__attrs[device][2 * attr + 1];
    pthread_mutex_unlock(&crm__cache_lock);
    return crm_set_error(err);
}

CRM_EXPORT cudaError_t cudaDriverGetVersion(int *driverVersion)
{
    if (driverVersion == NULL)
        return crm_set_error(cudaErrorInvalidValue);
    *driverVersion = crm_conn_driver_version(); /* the server's, else a current driver's */
    return cudaSuccess;
}

CRM_EXPORT cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
{
    if (runtimeVersion == NULL)
        return crm_set_error(cudaErrorInvalidValue);
    *runtimeVersion = CUDART_VERSION;
    return cudaSuccess;
}

CRM_EXPORT cudaError_t cudaDeviceReset(void)
{
    cudaError_t err = crm_rpc_cudaDeviceReset();
    if (err == cudaSuccess) {
        crm_ptrmap_drop_device(crm_thread_device());
        crm_managed_drop_device(crm_thread_device());
        crm_handles_reset();
        crm_capture_reset(); /* the streams it captured are gone */
    }
    return crm_set_error(err);
}

/* Profiling is a tool's business: with no profiler attached a GPU answers success
 * (NVIDIA's matrixMul and asyncAPI samples stop at the first failure). */
CRM_EXPORT cudaError_t cudaProfilerStart(void)
{
    return crm_set_error(crm_conn_session(NULL));
}

CRM_EXPORT cudaError_t cudaProfilerStop(void)
{
    return cudaProfilerStart();
}

/* Peer access is the driver's answer (interpose/crm_drv_device.c); the codes its
 * checks return coincide with the runtime's. */
CRM_EXPORT cudaError_t cudaDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice)
{
    crm_drv_runtime_bind();
    return crm_set_error((cudaError_t)cuDeviceCanAccessPeer(canAccessPeer, device, peerDevice));
}

CRM_EXPORT cudaError_t cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags)
{
    cudaError_t err = crm__check_device(peerDevice);
    if (err == cudaSuccess)
        err = flags != 0 ? cudaErrorInvalidValue : cudaErrorPeerAccessUnsupported;
    return crm_set_error(err);
}

CRM_EXPORT cudaError_t cudaDeviceDisablePeerAccess(int peerDevice)
{
    cudaError_t err = crm__check_device(peerDevice);
    return crm_set_error(err == cudaSuccess ? cudaErrorPeerAccessNotEnabled : err);
}
