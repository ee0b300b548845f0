/* crm_rangemap.c -- sorted array of address ranges with binary search. */
#include <stdlib.h>
#include <string.h>
#include "common/crm_rangemap.h"

void crm_rangemap_init(crm_rangemap *m)
{
    memset(m, 0, sizeof *m);
}

void crm_rangemap_free(crm_rangemap *m)
{
    free(m->ranges);
    crm_rangemap_init(m);
}

/* Index of the first range whose base is > addr. */
static size_t crm__upper(const crm_rangemap *m, uint64_t addr)
{
    size_t lo = 0, hi = m->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->ranges[mid].base <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int crm__grow(crm_rangemap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 16;
    crm_range *r = realloc(m->ranges, cap * sizeof *r);
    if (r == NULL)
        return -1;
    m->ranges = r;
    m->cap = cap;
    return 0;
}

int crm_rangemap_add(crm_rangemap *m, crm_range r)
{
    if (r.size == 0 || r.base + r.size < r.base)
        return -1;
    size_t at = crm__upper(m, r.base);
    if (at > 0) {
        const crm_range *prev = &m->ranges[at - 1];
        if (prev->base + prev->size > r.base)
            return -1;
    }
    if (at < m->count && m->ranges[at].base < r.base + r.size)
        return -1;
    if (m->count == m->cap && crm__grow(m) != 0)
        return -1;
    memmove(&m->ranges[at + 1], &m->ranges[at], (m->count - at) * sizeof r);
    m->ranges[at] = r;
    m->count++;
    return 0;
}

int crm_rangemap_remove(crm_rangemap *m, uint64_t base, crm_range *out)
{
    size_t at = crm__upper(m, base);
    if (at == 0 || m->ranges[at - 1].base != base)
        return -1;
    at--;
    if (out != NULL)
        *out = m->ranges[at];
    memmove(&m->ranges[at], &m->ranges[at + 1], (m->count - at - 1) * sizeof(crm_range));
    m->count--;
    return 0;
}

const crm_range *crm_rangemap_find(const crm_rangemap *m, uint64_t addr)
{
    size_t at = crm__upper(m, addr);
    if (at == 0)
        return NULL;
    const crm_range *r = &m->ranges[at - 1];
    return addr - r->base < r->size ? r : NULL;
}

const crm_range *crm_rangemap_find_span(const crm_rangemap *m, uint64_t addr, uint64_t len)
{
    const crm_range *r = crm_rangemap_find(m, addr);
    if (r == NULL)
        return NULL;
    uint64_t room = r->size - (addr - r->base);
    return (len == 0 ? 1 : len) <= room ? r : NULL;
}

const crm_range *crm_rangemap_find_run(const crm_rangemap *m, uint64_t addr, uint64_t len, uint32_t join_kind)
{
    const crm_range *first = crm_rangemap_find(m, addr);
    if (first == NULL)
        return NULL;
    uint64_t need = len == 0 ? 1 : len;
    uint64_t room = first->size - (addr - first->base);
    for (const crm_range *r = first; room < need; r++) {
        const crm_range *next = r + 1;
        if (r->kind != join_kind || next == m->ranges + m->count || next->kind != join_kind ||
            next->base != r->base + r->size)
            return NULL;
        room += next->size;
    }
    return first;
}

int crm_rangemap_overlaps(const crm_rangemap *m, uint64_t addr, uint64_t len)
{
    if (len == 0)
        return 0;
    size_t at = crm__upper(m, addr);
    if (at > 0 && m->ranges[at - 1].base + m->ranges[at - 1].size > addr)
        return 1;
    return at < m->count && m->ranges[at].base - addr < len;
}
