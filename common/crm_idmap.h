/* crm_idmap.h -- hash table from 64-bit ids to pointers: the server's tables of the
 * streams and events a session created under client-chosen ids. Not locked. */
#ifndef CRM_IDMAP_H
#define CRM_IDMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct crm_idmap_slot {
    uint64_t id;       /* key; meaningful when state == 1 */
    void *value;       /* the mapped pointer */
    int state;         /* 0 empty, 1 used, 2 deleted */
} crm_idmap_slot;

typedef struct crm_idmap {
    crm_idmap_slot *slots; /* power-of-two sized table */
    size_t cap;            /* slots allocated */
    size_t used;           /* live entries */
    size_t filled;         /* live + deleted slots */
} crm_idmap;

void crm_idmap_init(crm_idmap *m);
void crm_idmap_free(crm_idmap *m);
/* Adds id -> value; returns 0, or -1 when id is present already or memory runs out. */
int crm_idmap_put(crm_idmap *m, uint64_t id, void *value);
/* Returns 0 and sets *value (may be NULL) when id is present, else -1. */
int crm_idmap_get(const crm_idmap *m, uint64_t id, void **value);
/* Removes id, storing its value in *value (may be NULL); -1 when absent. */
int crm_idmap_del(crm_idmap *m, uint64_t id, void **value);
/* Calls fn on every entry; fn must not modify the map. */
void crm_idmap_each(const crm_idmap *m, void (*fn)(uint64_t id, void *value, void *arg), void *arg);

#endif
