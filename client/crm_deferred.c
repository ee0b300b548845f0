/* crm_deferred.c -- failures of queued and posted calls, kept per issuing thread. */
#include <stdlib.h>
#include <string.h>
#include "client/crm_deferred.h"

static int crm__entry_of(const crm_deferred *d, uint64_t owner)
{
    for (unsigned i = 0; i < d->count; i++)
        if (d->entries[i].owner == owner)
            return (int)i;
    return -1;
}

/* Room for one more entry; -1 when memory runs out. */
static int crm__room(crm_deferred *d)
{
    if (d->count < d->cap)
        return 0;
    unsigned cap = d->cap ? d->cap * 2 : 16;
    struct crm_deferred_entry *grown = realloc(d->entries, cap * sizeof *grown);
    if (grown == NULL)
        return -1;
    d->entries = grown;
    d->cap = cap;
    return 0;
}

void crm_deferred_note(crm_deferred *d, uint64_t owner, int api, int status)
{
    struct crm_deferred_entry e = {owner, api, status};
    if (owner != 0 && crm__entry_of(d, owner) >= 0)
        return;
    if (owner != 0 && crm__room(d) == 0)
        d->entries[d->count++] = e;
    else if (d->anyone.api == 0)
        d->anyone = e;
}

int crm_deferred_take(crm_deferred *d, uint64_t owner, int *api, int *status)
{
    int i = crm__entry_of(d, owner);
    if (i < 0 && d->anyone.api == 0)
        return 0;
    struct crm_deferred_entry *e = i >= 0 ? &d->entries[i] : &d->anyone;
    *api = e->api;
    *status = e->status;
    if (i < 0) {
        d->anyone.api = 0;
        return 1;
    }
    memmove(&d->entries[i], &d->entries[i + 1], (d->count - (unsigned)i - 1) * sizeof *d->entries);
    d->count--;
    return 1;
}

void crm_deferred_clear(crm_deferred *d)
{
    d->count = 0;
    d->anyone.api = 0;
}

void crm_deferred_free(crm_deferred *d)
{
    free(d->entries);
    memset(d, 0, sizeof *d);
}

int crm_owner_set_add(crm_owner_set *s, uint64_t owner)
{
    for (unsigned i = 0; i < s->count; i++)
        if (s->owners[i] == owner)
            return 0;
    if (s->count == s->cap) {
        unsigned cap = s->cap ? s->cap * 2 : 16;
        uint64_t *grown = realloc(s->owners, cap * sizeof *grown);
        if (grown == NULL) {
            s->overflow = 1;
            return -1;
        }
        s->owners = grown;
        s->cap = cap;
    }
    s->owners[s->count++] = owner;
    return 0;
}

void crm_owner_set_clear(crm_owner_set *s)
{
    s->count = 0;
    s->overflow = 0;
}

void crm_owner_set_free(crm_owner_set *s)
{
    free(s->owners);
    memset(s, 0, sizeof *s);
}
