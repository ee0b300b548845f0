/* crm_emu_registry.c -- sets of live opaque handles (streams, events), so a stale or
 * forged handle is recognised without ever being dereferenced. */
#include "server/emu/crm_emu.h"

#include <stdlib.h>

int crm__registry_add(crm__registry *r, void *h)
{
    if (r->count == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        void **n = realloc(r->items, cap * sizeof *n);
        if (n == NULL)
            return -1;
        r->items = n;
        r->cap = cap;
    }
    r->items[r->count++] = h;
    return 0;
}

int crm__registry_has(const crm__registry *r, const void *h)
{
    for (size_t i = 0; i < r->count; i++)
        if (r->items[i] == h)
            return 1;
    return 0;
}

int crm__registry_remove(crm__registry *r, void *h)
{
    for (size_t i = 0; i < r->count; i++) {
        if (r->items[i] == h) {
            r->items[i] = r->items[--r->count];
            return 0;
        }
    }
    return -1;
}
