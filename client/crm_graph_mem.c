/* crm_graph_mem.c -- memory graphs allocate (client/crm_graph_mem.h). */
#include <pthread.h>
#include <stdlib.h>
#include "client/crm_graph_mem.h"
#include "client/crm_ptrmap.h"
#include "common/crm_idmap.h"
#include "crm_client_gen.h"

typedef struct crm__gmem {
    uint64_t size;
    unsigned holders;
    int freed;          /* a free node or the program freed it */
} crm__gmem;

static pthread_mutex_t crm__lock = PTHREAD_MUTEX_INITIALIZER;
static crm_idmap crm__mem;   /* ptr -> crm__gmem */
static uint64_t crm__current, crm__high;

int crm_gmem_add(uint64_t ptr, uint64_t size)
{
    crm__gmem *m = calloc(1, sizeof *m);
    if (m == NULL)
        return -1;
    m->size = size;
    m->holders = 1;
    pthread_mutex_lock(&crm__lock);
    int rc = crm_idmap_put(&crm__mem, ptr, m);
    if (rc == 0 && (crm__current += size) > crm__high)
        crm__high = crm__current;
    pthread_mutex_unlock(&crm__lock);
    if (rc != 0)
        free(m);
    return rc;
}

void crm_gmem_hold(uint64_t ptr)
{
    void *v;
    pthread_mutex_lock(&crm__lock);
    if (crm_idmap_get(&crm__mem, ptr, &v) == 0)
        ((crm__gmem *)v)->holders++;
    pthread_mutex_unlock(&crm__lock);
}

/* Forgets m (lock held): its bytes are no graph's any more. */
static void crm__forget(uint64_t ptr, crm__gmem *m)
{
    crm_idmap_del(&crm__mem, ptr, NULL);
    crm__current -= m->size;
    free(m);
}

/* Gives ptr back to the device: queued, as a known allocation's cudaFree is. */
static void crm__device_free(uint64_t ptr)
{
    if (crm_ptrmap_remove(CRM_MEM_DEVICE, ptr, NULL) == 0)
        crm_rpc_cudaFree_queued(ptr);
}

void crm_gmem_release(uint64_t ptr)
{
    void *v;
    int now = 0;
    pthread_mutex_lock(&crm__lock);
    if (crm_idmap_get(&crm__mem, ptr, &v) == 0) {
        crm__gmem *m = v;
        if (--m->holders == 0 && m->freed) {
            crm__forget(ptr, m);
            now = 1;
        }
    }
    pthread_mutex_unlock(&crm__lock);
    if (now)
        crm__device_free(ptr);
}

int crm_gmem_known(uint64_t ptr)
{
    pthread_mutex_lock(&crm__lock);
    int known = crm_idmap_get(&crm__mem, ptr, NULL) == 0;
    pthread_mutex_unlock(&crm__lock);
    return known;
}

int crm_gmem_free(uint64_t ptr)
{
    void *v;
    int known, now = 0;
    pthread_mutex_lock(&crm__lock);
    if ((known = crm_idmap_get(&crm__mem, ptr, &v) == 0)) {
        crm__gmem *m = v;
        m->freed = 1;
        if (m->holders == 0) {
            crm__forget(ptr, m);
            now = 1;
        }
    }
    pthread_mutex_unlock(&crm__lock);
    if (now)
        crm__device_free(ptr);
    return known;
}

void crm_gmem_usage(uint64_t *current, uint64_t *high)
{
    pthread_mutex_lock(&crm__lock);
    *current = crm__current;
    *high = crm__high;
    pthread_mutex_unlock(&crm__lock);
}

void crm_gmem_reset_high(void)
{
    pthread_mutex_lock(&crm__lock);
    crm__high = crm__current;
    pthread_mutex_unlock(&crm__lock);
}

cudaError_t crm_gmem_alloc_step(const void *args, uint64_t stream)
{
    void *v;
    (void)stream;
    pthread_mutex_lock(&crm__lock);
    if (crm_idmap_get(&crm__mem, ((const crm_gmem_node *)args)->ptr, &v) == 0)
        ((crm__gmem *)v)->freed = 0;
    pthread_mutex_unlock(&crm__lock);
    return cudaSuccess;
}

cudaError_t crm_gmem_free_step(const void *args, uint64_t stream)
{
    (void)stream;
    crm_gmem_free(((const crm_gmem_node *)args)->ptr);
    return cudaSuccess;
}
