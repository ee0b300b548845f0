/* crm_rangemap.h -- sorted table of address ranges [base, base+size): allocation tables
 * of the server (device memory a session owns) and of the client (pointer
 * classification for cudaMemcpyDefault and cudaPointerGetAttributes). Not locked. */
#ifndef CRM_RANGEMAP_H
#define CRM_RANGEMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct crm_range {
    uint64_t base;     /* first address */
    uint64_t size;     /* bytes, > 0 */
    uint32_t kind;     /* caller's tag (memory type, flags) */
    int device;        /* owning device, or -1 */
} crm_range;

typedef struct crm_rangemap {
    crm_range *ranges; /* sorted by base, never overlapping */
    size_t count;      /* ranges in use */
    size_t cap;        /* ranges allocated */
} crm_rangemap;

void crm_rangemap_init(crm_rangemap *m);
void crm_rangemap_free(crm_rangemap *m);
/* Adds a range; returns 0, or -1 when it overlaps one already present or memory runs out. */
int crm_rangemap_add(crm_rangemap *m, crm_range r);
/* Removes the range starting exactly at base into *out (may be NULL); -1 when none does. */
int crm_rangemap_remove(crm_rangemap *m, uint64_t base, crm_range *out);
/* Returns the range containing addr, or NULL. */
const crm_range *crm_rangemap_find(const crm_rangemap *m, uint64_t addr);
/* Returns the range containing all of [addr, addr+len) (len 0 counts as 1), or NULL. */
const crm_range *crm_rangemap_find_span(const crm_rangemap *m, uint64_t addr, uint64_t len);
/* Like find_span, but [addr, addr+len) may also run across adjacent ranges (each
 * starting where the one before ends) when all of them are of kind join_kind: the
 * mappings of one virtual address reservation. Returns the first range, or NULL. */
const crm_range *crm_rangemap_find_run(const crm_rangemap *m, uint64_t addr, uint64_t len, uint32_t join_kind);
/* 1 when some range overlaps [addr, addr+len); 0 for len 0. */
int crm_rangemap_overlaps(const crm_rangemap *m, uint64_t addr, uint64_t len);

#endif
