/* crm_kattr.c -- per-function memory of attribute and occupancy answers (see
 * crm_kattr.h): an id table of small records, each with its last few occupancy
 * questions. */
#include "crm_kattr.h"

#include <pthread.h>
#include <stdlib.h>
#include "common/crm_idmap.h"

#define CRM__OCC_SLOTS 8   /* occupancy questions remembered per function, oldest replaced */
#define CRM__SET_SLOTS 24  /* settable attributes: cudaFuncAttribute values, the cache config last */

typedef struct crm__occ {
    int block_size;
    size_t dyn_smem;
    unsigned flags;
    int blocks;
} crm__occ;

typedef struct crm__kattr {
    int have_attrs;
    crm_func_attrs attrs;
    crm__occ occ[CRM__OCC_SLOTS];
    unsigned nocc;  /* slots used */
    unsigned next;  /* slot the next answer replaces once all are used */
    int set_known[CRM__SET_SLOTS];  /* 1: set_value holds the value last set */
    int set_value[CRM__SET_SLOTS];
} crm__kattr;

static pthread_mutex_t crm__lock = PTHREAD_MUTEX_INITIALIZER;
static crm_idmap crm__table;

/* The record of id, made when make is set; NULL when absent or out of memory. Lock held. */
static crm__kattr *crm__record(uint64_t id, int make)
{
    void *v = NULL;
    if (crm_idmap_get(&crm__table, id, &v) == 0)
        return v;
    if (!make)
        return NULL;
    crm__kattr *r = calloc(1, sizeof *r);
    if (r != NULL && crm_idmap_put(&crm__table, id, r) != 0) {
        free(r);
        r = NULL;
    }
    return r;
}

int crm_kattr_get(uint64_t id, crm_func_attrs *out)
{
    pthread_mutex_lock(&crm__lock);
    crm__kattr *r = crm__record(id, 0);
    int known = r != NULL && r->have_attrs;
    if (known)
        *out = r->attrs;
    pthread_mutex_unlock(&crm__lock);
    return known;
}

void crm_kattr_put(uint64_t id, const crm_func_attrs *attrs)
{
    pthread_mutex_lock(&crm__lock);
    crm__kattr *r = crm__record(id, 1);
    if (r != NULL) {
        r->attrs = *attrs;
        r->have_attrs = 1;
    }
    pthread_mutex_unlock(&crm__lock);
}

int crm_kattr_get_occupancy(uint64_t id, int block_size, size_t dyn_smem, unsigned flags, int *blocks)
{
    int known = 0;
    pthread_mutex_lock(&crm__lock);
    crm__kattr *r = crm__record(id, 0);
    for (unsigned i = 0; r != NULL && i < r->nocc && !known; i++) {
        const crm__occ *o = &r->occ[i];
        if (o->block_size == block_size && o->dyn_smem == dyn_smem && o->flags == flags) {
            *blocks = o->blocks;
            known = 1;
        }
    }
    pthread_mutex_unlock(&crm__lock);
    return known;
}

void crm_kattr_put_occupancy(uint64_t id, int block_size, size_t dyn_smem, unsigned flags, int blocks)
{
    pthread_mutex_lock(&crm__lock);
    crm__kattr *r = crm__record(id, 1);
    if (r != NULL) {
        unsigned slot = r->nocc < CRM__OCC_SLOTS ? r->nocc++ : r->next++ % CRM__OCC_SLOTS;
        r->occ[slot] = (crm__occ){block_size, dyn_smem, flags, blocks};
    }
    pthread_mutex_unlock(&crm__lock);
}

/* The slot of attr, or -1 for one not tracked. */
static int crm__set_slot(int attr)
{
    if (attr == -1)
        return CRM__SET_SLOTS - 1;
    return attr >= 0 && attr < CRM__SET_SLOTS - 1 ? attr : -1;
}

int crm_kattr_was_set(uint64_t id, int attr, int value)
{
    int slot = crm__set_slot(attr), known = 0;
    pthread_mutex_lock(&crm__lock);
    crm__kattr *r = slot >= 0 ? crm__record(id, 0) : NULL;
    if (r != NULL)
        known = r->set_known[slot] && r->set_value[slot] == value;
    pthread_mutex_unlock(&crm__lock);
    return known;
}

void crm_kattr_set(uint64_t id, int attr, int value)
{
    int slot = crm__set_slot(attr);
    pthread_mutex_lock(&crm__lock);
    crm__kattr *r = crm__record(id, 1);
    if (r != NULL) {
        r->have_attrs = 0; /* what the setting may change */
        r->nocc = r->next = 0;
        if (slot >= 0) {
            r->set_known[slot] = 1;
            r->set_value[slot] = value;
        }
    }
    pthread_mutex_unlock(&crm__lock);
}
