/* crm_managed_advice.c -- cudaMemAdvise's advice kept per block of managed memory,
 * and the range attributes cudaMemRangeGetAttribute reads back from it and from the
 * last prefetches (client/crm_managed.h). */
#include "client/crm_managed.h"

#include "client/crm_managed_int.h"

typedef struct crm__advice {
    enum crm_managed_advice what;
    int loc, set;
} crm__advice;

static uint32_t crm__loc_bit(int loc)
{
    return loc == cudaCpuDeviceId ? 1u : loc >= 0 && loc < 31 ? 1u << (loc + 1) : 0;
}

static cudaError_t crm__advise(crm__region *r, size_t first, size_t end, void *arg)
{
    const crm__advice *a = arg;
    for (size_t i = first; i < end; i++) {
        crm__block *blk = &r->blocks[i];
        if (a->what == CRM_ADV_READ_MOSTLY)
            blk->read_mostly = (uint8_t)a->set;
        else if (a->what == CRM_ADV_PREFERRED)
            blk->preferred = (int8_t)(a->set ? a->loc : cudaInvalidDeviceId);
        else if (a->set)
            blk->accessed_by |= crm__loc_bit(a->loc);
        else
            blk->accessed_by &= ~crm__loc_bit(a->loc);
    }
    return cudaSuccess;
}

cudaError_t crm_managed_advise(uint64_t addr, uint64_t len, enum crm_managed_advice what, int loc, int set)
{
    crm__advice a = {what, loc, set};
    pthread_mutex_lock(&crm__managed_lock);
    cudaError_t err = crm__managed_each(addr, len, crm__advise, &a);
    pthread_mutex_unlock(&crm__managed_lock);
    return err;
}

typedef struct crm__gather {
    enum crm_managed_advice what;
    int seen;        /* a block was looked at */
    int value;       /* read-mostly, or the location all blocks agree on */
    uint32_t common; /* accessed-by locations every block names */
} crm__gather;

static cudaError_t crm__gather_fn(crm__region *r, size_t first, size_t end, void *arg)
{
    crm__gather *g = arg;
    for (size_t i = first; i < end; i++) {
        const crm__block *blk = &r->blocks[i];
        int v = g->what == CRM_ADV_READ_MOSTLY ? blk->read_mostly
                : g->what == CRM_ADV_PREFERRED ? blk->preferred
                                               : blk->last_prefetch;
        if (g->what == CRM_ADV_ACCESSED_BY)
            g->common = g->seen ? g->common & blk->accessed_by : blk->accessed_by;
        else if (g->what == CRM_ADV_READ_MOSTLY)
            g->value = g->seen ? g->value && v : v;
        else
            g->value = !g->seen || g->value == v ? v : cudaInvalidDeviceId;
        g->seen = 1;
    }
    return cudaSuccess;
}

cudaError_t crm_managed_range_attr(uint64_t addr, uint64_t len, enum crm_managed_advice what, int *out, size_t n)
{
    crm__gather g = {.what = what};
    pthread_mutex_lock(&crm__managed_lock);
    cudaError_t err = crm__managed_each(addr, len, crm__gather_fn, &g);
    pthread_mutex_unlock(&crm__managed_lock);
    if (err != cudaSuccess)
        return err;
    if (what != CRM_ADV_ACCESSED_BY) {
        if (n > 0)
            out[0] = g.value;
        return cudaSuccess;
    }
    size_t k = 0;
    if ((g.common & 1u) && k < n)
        out[k++] = cudaCpuDeviceId;
    for (int d = 0; d < 31 && k < n; d++)
        if (g.common & (1u << (d + 1)))
            out[k++] = d;
    while (k < n)
        out[k++] = cudaInvalidDeviceId;
    return cudaSuccess;
}

