/* crm_ptrmap.c -- the client's device and host range tables behind one mutex. */
#include <pthread.h>
#include "client/crm_ptrmap.h"

static pthread_mutex_t crm__lock = PTHREAD_MUTEX_INITIALIZER;
static crm_rangemap crm__device_ranges; /* zero-initialised = empty */
static crm_rangemap crm__host_ranges;

static crm_rangemap *crm__map(enum crm_mem_kind kind)
{
    return kind == CRM_MEM_DEVICE ? &crm__device_ranges : &crm__host_ranges;
}

int crm_ptrmap_add(enum crm_mem_kind kind, uint64_t base, uint64_t size, int device, uint32_t flags)
{
    crm_range r = {.base = base, .size = size, .kind = (uint32_t)kind | (flags << 8), .device = device};
    pthread_mutex_lock(&crm__lock);
    int rc = crm_rangemap_add(crm__map(kind), r);
    pthread_mutex_unlock(&crm__lock);
    return rc;
}

/* 1 when every device range overlapping [base, base+size) is stale: any at all, or
 * in a pool only `device`'s own. */
static int crm__all_stale(uint64_t base, uint64_t size, int device, int pooled)
{
    const crm_rangemap *m = &crm__device_ranges;
    for (size_t i = 0; pooled && i < m->count && m->ranges[i].base < base + size; i++)
        if (m->ranges[i].base + m->ranges[i].size > base && m->ranges[i].device != device)
            return 0;
    return 1;
}

static void crm__drop_overlapping(uint64_t base, uint64_t size)
{
    crm_rangemap *m = &crm__device_ranges;
    for (size_t i = m->count; i-- > 0;)
        if (m->ranges[i].base < base + size && m->ranges[i].base + m->ranges[i].size > base)
            crm_rangemap_remove(m, m->ranges[i].base, NULL);
}

int crm_ptrmap_add_fresh(uint64_t base, uint64_t size, int device, uint32_t flags, int pooled)
{
    crm_range r = {.base = base, .size = size, .kind = (uint32_t)CRM_MEM_DEVICE | (flags << 8), .device = device};
    int rc = -1;
    if (size == 0 || base + size < base)
        return -1;
    pthread_mutex_lock(&crm__lock);
    if (crm__all_stale(base, size, device, pooled)) {
        crm__drop_overlapping(base, size);
        rc = crm_rangemap_add(&crm__device_ranges, r);
    }
    pthread_mutex_unlock(&crm__lock);
    return rc;
}

int crm_ptrmap_remove(enum crm_mem_kind kind, uint64_t base, crm_range *out)
{
    crm_range r;
    pthread_mutex_lock(&crm__lock);
    crm_rangemap *m = crm__map(kind);
    const crm_range *found = crm_rangemap_find(m, base);
    int rc = -1;
    if (found != NULL && found->base == base && (enum crm_mem_kind)(found->kind & 0xff) == kind)
        rc = crm_rangemap_remove(m, base, &r);
    pthread_mutex_unlock(&crm__lock);
    if (rc == 0 && out != NULL)
        *out = r;
    return rc;
}

enum crm_mem_kind crm_ptrmap_classify(uint64_t addr, crm_range *out)
{
    enum crm_mem_kind kind = CRM_MEM_NONE;
    pthread_mutex_lock(&crm__lock);
    const crm_range *r = crm_rangemap_find(&crm__device_ranges, addr);
    if (r == NULL)
        r = crm_rangemap_find(&crm__host_ranges, addr);
    if (r != NULL) {
        kind = (enum crm_mem_kind)(r->kind & 0xff);
        if (out != NULL)
            *out = *r;
    }
    pthread_mutex_unlock(&crm__lock);
    return kind;
}

int crm_ptrmap_device_region(uint64_t addr, uint64_t pitch, uint64_t width, uint64_t height)
{
    if (width == 0 || height == 0)
        return 1;
    if (height > 1 && (width > pitch || pitch > (UINT64_MAX - width) / (height - 1)))
        return 0;
    uint64_t extent = pitch * (height - 1) + width;
    pthread_mutex_lock(&crm__lock);
    int inside = crm_rangemap_find_run(&crm__device_ranges, addr, extent,
                                       (uint32_t)CRM_MEM_DEVICE | (CRM_PTRMAP_MAPPED << 8)) != NULL;
    pthread_mutex_unlock(&crm__lock);
    return inside;
}

void crm_ptrmap_drop_device(int device)
{
    pthread_mutex_lock(&crm__lock);
    crm_rangemap *m = &crm__device_ranges;
    for (size_t i = m->count; i-- > 0;)
        if (m->ranges[i].device == device)
            crm_rangemap_remove(m, m->ranges[i].base, NULL);
    pthread_mutex_unlock(&crm__lock);
}
