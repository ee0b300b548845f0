/* crm_hostmem.c -- the table of shared pinned allocations: creating a region and
 * having the server attach it, finding the region of a copy's host side, and
 * letting a region go. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "client/crm_conn.h"
#include "client/crm_hostmem.h"
#include "common/crm_log.h"
#include "crm_client_gen.h"
#include "protocol/crm_shm.h"

typedef struct crm__shared {
    crm_shm_region shm;
    uint64_t id;      /* the server's name for it */
    pid_t owner;      /* the process whose session attached it: a forked child's
                         session has never heard of it */
} crm__shared;

static pthread_mutex_t crm__lock = PTHREAD_MUTEX_INITIALIZER;
static crm__shared *crm__table;
static size_t crm__count, crm__cap;
static uint64_t crm__next_id;

static int crm__sharing_off(void)
{
    const char *v = getenv("CUDAREM_SHARED_PINNED");
    return v != NULL && strcmp(v, "off") == 0;
}

static int crm__append(const crm__shared *s)
{
    if (crm__count == crm__cap) {
        size_t cap = crm__cap ? 2 * crm__cap : 16;
        crm__shared *t = realloc(crm__table, cap * sizeof *t);
        if (t == NULL)
            return -1;
        crm__table = t;
        crm__cap = cap;
    }
    crm__table[crm__count++] = *s;
    return 0;
}

/* Has the server attach region s under a fresh id. 0 or -1. */
static int crm__attach(crm__shared *s, const char *name, unsigned char *cookie)
{
    pthread_mutex_lock(&crm__lock);
    s->id = ++crm__next_id;
    pthread_mutex_unlock(&crm__lock);
    crm_bytes name_bytes = {.crm_bytes_len = (u_int)strlen(name), .crm_bytes_val = (char *)name};
    crm_bytes cookie_bytes = {.crm_bytes_len = CRM_SHM_COOKIE, .crm_bytes_val = (char *)cookie};
    return crm_rpc_crm_host_attach(s->id, &name_bytes, s->shm.size, &cookie_bytes) == cudaSuccess ? 0 : -1;
}

int crm_hostmem_alloc(size_t size, void **out)
{
    crm_session_info info;
    char name[CRM_SHM_NAME_MAX];
    unsigned char cookie[CRM_SHM_COOKIE];
    crm__shared s = {.owner = getpid()};
    /* a pool's copies may go to any of its servers: pinned memory shared with one
     * would serve only that one, so a pool keeps it private */
    if (size <= CRM_HOSTMEM_MIN_BYTES || crm__sharing_off() || crm_conn_session(&info) != cudaSuccess ||
        crm_conn_pooled() || crm_conn_bulk_route() != CRM_ROUTE_RING)
        return -1;
    if (crm_shm_region_create(&s.shm, size, name, cookie) != 0)
        return -1;
    int attached = crm__attach(&s, name, cookie) == 0;
    crm_shm_unlink(name); /* attached or refused: the name has served */
    int reserved = crm_shm_region_reserve(&s.shm) == 0; /* only now: the name lived as short as it could */
    pthread_mutex_lock(&crm__lock);
    int kept = attached && reserved && crm__append(&s) == 0;
    pthread_mutex_unlock(&crm__lock);
    if (!kept) {
        if (attached)
            crm_rpc_crm_host_detach(s.id);
        crm_shm_region_unmap(&s.shm);
        crm_debug("pinned allocation of %zu bytes stays private: %s", size,
                  !attached ? "the server did not attach it" : "no room for it in /dev/shm");
        return -1;
    }
    *out = s.shm.data;
    return 0;
}

int crm_hostmem_free(void *p)
{
    crm__shared s;
    int found = 0;
    pthread_mutex_lock(&crm__lock);
    for (size_t i = 0; i < crm__count && !found; i++) {
        if (crm__table[i].shm.data != p)
            continue;
        s = crm__table[i];
        crm__table[i] = crm__table[--crm__count];
        found = 1;
    }
    pthread_mutex_unlock(&crm__lock);
    if (!found)
        return -1;
    if (s.owner == getpid())
        crm_rpc_crm_host_detach(s.id); /* queued: after every copy that uses it */
    crm_shm_region_unmap(&s.shm);
    return 0;
}

int crm_hostmem_find(const void *p, uint64_t extent, uint64_t *id, uint64_t *offset)
{
    uintptr_t at = (uintptr_t)p;
    pid_t self = getpid();
    int found = 0;
    pthread_mutex_lock(&crm__lock);
    for (size_t i = 0; i < crm__count && !found; i++) {
        const crm__shared *s = &crm__table[i];
        uintptr_t base = (uintptr_t)s->shm.data;
        if (at < base || at - base > s->shm.size || extent > s->shm.size - (at - base) || s->owner != self)
            continue;
        *id = s->id;
        *offset = at - base;
        found = 1;
    }
    pthread_mutex_unlock(&crm__lock);
    return found;
}
