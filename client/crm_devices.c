/* crm_devices.c -- the device descriptions of the session (crm_devices.h). Locked:
 * a forked child's HELLO replaces them while other threads may read. */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "client/crm_devices.h"

typedef struct crm__device {
    struct cudaDeviceProp prop;
    int pairs[2 * cudaDevAttrMax];
} crm__device;

static pthread_mutex_t crm__lock = PTHREAD_MUTEX_INITIALIZER;
static crm__device *crm__devs;
static unsigned crm__ndevs;

static int crm__decode(const crm_device_desc *d, crm__device *out)
{
    if (d->prop.crm_prop_len != sizeof out->prop || d->attrs.crm_bytes_len != sizeof out->pairs)
        return -1;
    memcpy(&out->prop, d->prop.crm_prop_val, sizeof out->prop);
    const unsigned char *p = (const unsigned char *)d->attrs.crm_bytes_val;
    for (int i = 0; i < 2 * cudaDevAttrMax; i++) {
        uint32_t v;
        memcpy(&v, p + 4 * i, 4);
        out->pairs[i] = (int)ntohl(v);
    }
    return 0;
}

/* Attributes cudarem does not provide (runtime numbering, which the driver's
 * shares): 103-105 and 128 are the handle types the driver's virtual memory
 * allocations could be exported as (POSIX file descriptor, Win32, fabric), which
 * mean nothing to a client on another machine; the virtual memory management
 * itself (102) is remoted (interpose/crm_drv_vmm.c). */
static const int crm__absent[] = {
    cudaDevAttrPageableMemoryAccess,
    cudaDevAttrConcurrentManagedAccess, cudaDevAttrCanUseHostPointerForRegisteredMem,
    cudaDevAttrPageableMemoryAccessUsesHostPageTables, cudaDevAttrDirectManagedMemAccessFromHost,
    103, 104, 105, 128, cudaDevAttrGPUDirectRDMASupported, cudaDevAttrMemoryPoolSupportedHandleTypes,
    cudaDevAttrIpcEventSupport,
};

void crm_devices_mask_props(struct cudaDeviceProp *p)
{
    p->canMapHostMemory = 1; /* cudaHostAllocMapped: managed memory's machinery */
    p->managedMemory = 1; /* client/crm_managed.h, without concurrent access */
    p->pageableMemoryAccess = 0;
    p->concurrentManagedAccess = 0;
    p->pageableMemoryAccessUsesHostPageTables = 0;
    p->directManagedMemAccessFromHost = 0;
    p->gpuDirectRDMASupported = 0;
    p->memoryPoolSupportedHandleTypes = 0;
    p->ipcEventSupported = 0;
}

void crm_devices_mask_attrs(int *pairs)
{
    pairs[2 * cudaDevAttrManagedMemory] = 0;
    pairs[2 * cudaDevAttrManagedMemory + 1] = 1;
    pairs[2 * cudaDevAttrCanMapHostMemory] = 0;
    pairs[2 * cudaDevAttrCanMapHostMemory + 1] = 1;
    for (size_t i = 0; i < sizeof crm__absent / sizeof crm__absent[0]; i++)
        if (pairs[2 * crm__absent[i]] == 0) /* answered: say it is absent */
            pairs[2 * crm__absent[i] + 1] = 0;
}

void crm_devices_store(const crm_device_desc *d, unsigned n)
{
    crm__device *devs = n > 0 ? calloc(n, sizeof *devs) : NULL;
    unsigned got = 0;
    while (devs != NULL && got < n && crm__decode(&d[got], &devs[got]) == 0)
        got++;
    pthread_mutex_lock(&crm__lock);
    free(crm__devs);
    crm__devs = devs;
    crm__ndevs = got;
    pthread_mutex_unlock(&crm__lock);
}

int crm_devices_props(int dev, struct cudaDeviceProp *out)
{
    int rc = -1;
    pthread_mutex_lock(&crm__lock);
    if (dev >= 0 && (unsigned)dev < crm__ndevs) {
        *out = crm__devs[dev].prop;
        rc = 0;
    }
    pthread_mutex_unlock(&crm__lock);
    return rc;
}

int crm_devices_attrs(int dev, int *pairs)
{
    int rc = -1;
    pthread_mutex_lock(&crm__lock);
    if (dev >= 0 && (unsigned)dev < crm__ndevs) {
        memcpy(pairs, crm__devs[dev].pairs, sizeof crm__devs[dev].pairs);
        rc = 0;
    }
    pthread_mutex_unlock(&crm__lock);
    return rc;
}
