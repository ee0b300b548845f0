/* crm_graph_cond.c -- conditional handles of graphs (client/crm_graph_cond.h). */
#include <stdlib.h>
#include "client/crm_graph_cond.h"
#include "client/crm_ptrmap.h"
#include "crm_client_gen.h"

crm_gcond *crm_gcond_new(uint64_t cell, unsigned deflt, unsigned flags)
{
    crm_gcond *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->cell = cell;
    c->deflt = deflt;
    c->flags = flags;
    c->holders = 1;
    crm_rpc_crm_graph_cond_set(cell, deflt); /* queued; a failure shows at the next sync */
    return c;
}

void crm_gcond_hold(crm_gcond *c)
{
    __atomic_add_fetch(&c->holders, 1, __ATOMIC_RELAXED);
}

void crm_gcond_release(crm_gcond *c)
{
    if (c == NULL || __atomic_sub_fetch(&c->holders, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    if (crm_ptrmap_remove(CRM_MEM_DEVICE, c->cell, NULL) == 0)
        crm_rpc_cudaFree_queued(c->cell);
    free(c);
}
