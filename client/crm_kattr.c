/* crm_kattr.c -- per-function memory of attribute and occupancy answers (see
 * crm_kattr.h): an id table of small records, each with its last few occupancy
 * questions. */
#include "crm_kattr.h"

#include <pthread.h>
#include <stdlib.h>
#include "common/crm_idmap.h"

#define CRM__OCC_SLOTS 8 /* occupancy questions remembered per function, oldest replaced */

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

void crm_kattr_forget(uint64_t id)
{
    void *v = NULL;
    pthread_mutex_lock(&crm__lock);
    if (crm_idmap_del(&crm__table, id, &v) == 0)
        free(v);
    pthread_mutex_unlock(&crm__lock);
}
