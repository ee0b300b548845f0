/* crm_idmap.c -- open-addressing hash table (linear probing, tombstones). */
#include <stdlib.h>
#include <string.h>
#include "common/crm_idmap.h"

void crm_idmap_init(crm_idmap *m)
{
    memset(m, 0, sizeof *m);
}

void crm_idmap_free(crm_idmap *m)
{
    free(m->slots);
    crm_idmap_init(m);
}

static size_t crm__hash(uint64_t id)
{
    id ^= id >> 33;
    id *= 0xff51afd7ed558ccdull;
    id ^= id >> 33;
    return (size_t)id;
}

/* Slot holding id, or NULL. */
static crm_idmap_slot *crm__find(const crm_idmap *m, uint64_t id)
{
    if (m->cap == 0)
        return NULL;
    for (size_t i = crm__hash(id) & (m->cap - 1), n = 0; n < m->cap; i = (i + 1) & (m->cap - 1), n++) {
        crm_idmap_slot *s = &m->slots[i];
        if (s->state == 0)
            return NULL;
        if (s->state == 1 && s->id == id)
            return s;
    }
    return NULL;
}

static void crm__insert(crm_idmap *m, uint64_t id, void *value)
{
    size_t i = crm__hash(id) & (m->cap - 1);
    while (m->slots[i].state == 1)
        i = (i + 1) & (m->cap - 1);
    if (m->slots[i].state == 0)
        m->filled++;
    m->slots[i] = (crm_idmap_slot){id, value, 1};
    m->used++;
}

static int crm__rehash(crm_idmap *m, size_t cap)
{
    crm_idmap old = *m;
    m->slots = calloc(cap, sizeof *m->slots);
    if (m->slots == NULL) {
        *m = old;
        return -1;
    }
    m->cap = cap;
    m->used = m->filled = 0;
    for (size_t i = 0; i < old.cap; i++)
        if (old.slots[i].state == 1)
            crm__insert(m, old.slots[i].id, old.slots[i].value);
    free(old.slots);
    return 0;
}

int crm_idmap_put(crm_idmap *m, uint64_t id, void *value)
{
    if (crm__find(m, id) != NULL)
        return -1;
    if ((m->filled + 1) * 4 > m->cap * 3) {
        size_t cap = m->cap ? m->cap : 16;
        while ((m->used + 1) * 2 > cap)
            cap *= 2;
        if (crm__rehash(m, cap) != 0)
            return -1;
    }
    crm__insert(m, id, value);
    return 0;
}

int crm_idmap_get(const crm_idmap *m, uint64_t id, void **value)
{
    crm_idmap_slot *s = crm__find(m, id);
    if (s == NULL)
        return -1;
    if (value != NULL)
        *value = s->value;
    return 0;
}

int crm_idmap_del(crm_idmap *m, uint64_t id, void **value)
{
    crm_idmap_slot *s = crm__find(m, id);
    if (s == NULL)
        return -1;
    if (value != NULL)
        *value = s->value;
    s->state = 2;
    m->used--;
    return 0;
}

void crm_idmap_each(const crm_idmap *m, void (*fn)(uint64_t id, void *value, void *arg), void *arg)
{
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].state == 1)
            fn(m->slots[i].id, m->slots[i].value, arg);
}
