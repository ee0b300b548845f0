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

int crm_deferred_note(crm_deferred *d, uint64_t owner, int api, int status)
{
    if (crm__entry_of(d, owner) >= 0)
        return 0;
    if (d->count == d->cap) {
        unsigned cap = d->cap ? d->cap * 2 : 16;
        struct crm_deferred_entry *grown = realloc(d->entries, cap * sizeof *grown);
        if (grown == NULL) {
            /* no room for owner's: the first entry becomes everyone's, so the
             * failure is still reported, to the next thread that synchronises */
            if (d->count == 0)
                return -1;
            d->entries[0].owner = 0;
            return -1;
        }
        d->entries = grown;
        d->cap = cap;
    }
    d->entries[d->count++] = (struct crm_deferred_entry){owner, api, status};
    return 0;
}

int crm_deferred_take(crm_deferred *d, uint64_t owner, int *api, int *status)
{
    int i = crm__entry_of(d, owner);
    if (i < 0)
        i = crm__entry_of(d, 0);
    if (i < 0)
        return 0;
    *api = d->entries[i].api;
    *status = d->entries[i].status;
    memmove(&d->entries[i], &d->entries[i + 1], (d->count - (unsigned)i - 1) * sizeof *d->entries);
    d->count--;
    return 1;
}

void crm_deferred_clear(crm_deferred *d)
{
    d->count = 0;
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
