/* crm_devices.h -- what HELLO told the client of each device of its session (its
 * properties and every attribute), so device queries cost no round trip at all. */
#ifndef CRM_DEVICES_H
#define CRM_DEVICES_H

#include <cuda_runtime_api.h>
#include "crm_api.h"

/* Keeps copies of the n descriptions HELLO brought (replacing earlier ones);
 * descriptions of the wrong size are skipped. */
void crm_devices_store(const crm_device_desc *d, unsigned n);
/* 0 and *out when HELLO described device dev, else -1. */
int crm_devices_props(int dev, struct cudaDeviceProp *out);
/* 0 and the 2 * cudaDevAttrMax (status, value) pairs when HELLO described dev. */
int crm_devices_attrs(int dev, int *pairs);

/* What a device can do through cudarem, whatever the GPU can: managed memory
 * without concurrent access and memory allocated mapped (client/crm_managed.h);
 * capabilities that need the client's own memory mapped into the device (other
 * page-locked or registered memory, pageable access, concurrent managed access) or handles shared outside the session (IPC,
 * virtual memory, RDMA) are not remoted, so every layer reports them absent
 * (frameworks test these before they use them). Applied to the properties and
 * attribute pairs the client keeps. */
void crm_devices_mask_props(struct cudaDeviceProp *p);
void crm_devices_mask_attrs(int *pairs);

#endif
