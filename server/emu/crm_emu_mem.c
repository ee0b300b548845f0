/* crm_emu_mem.c -- emulated device memory: the fixed window and its live-allocation table.
 *
 * The window is reserved PROT_NONE at the first allocation. An allocation maps its
 * pages read-write in place (device pointers are ordinary addresses inside this
 * process) and is followed by one PROT_NONE guard page, so overruns fault. Freeing
 * maps fresh PROT_NONE pages over it, which returns the memory to the system.
 * Placement is first-fit over the gaps between live allocations, so freed ranges
 * are reused. The table is an array sorted by address. A virtual address
 * reservation (cuMemAddressReserve) is an entry of no device, charged nothing;
 * crm_emu_vmm.c maps physical memory into it.
 */
#include "server/emu/crm_emu.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/crm_emu_window.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

typedef struct crm__alloc {
    uintptr_t base;  /* first byte, page aligned */
    size_t size;     /* bytes the caller asked for (the valid range) */
    size_t mapped;   /* size rounded up to pages: what is charged to dev */
    int dev;         /* owning device; -1: a virtual address reservation */
    size_t backed;   /* bytes crm__populate took on */
} crm__alloc;

static crm__alloc *crm__allocs;  /* live allocations sorted by base */
static size_t crm__nallocs;      /* entries in use */
static size_t crm__cap;          /* entries allocated */
static int crm__window_ready;    /* 1 once the window is reserved */
static uintptr_t crm__window;    /* its first address: the base of this process's slot */

static size_t crm__page(void)
{
    return (size_t)sysconf(_SC_PAGESIZE);
}

/* The address slot CUDAREM_EMU_SLOT names (common/crm_emu_window.h), 0 by default. */
static unsigned crm__slot(void)
{
    const char *v = getenv("CUDAREM_EMU_SLOT");
    char *end;
    unsigned long slot = v != NULL ? strtoul(v, &end, 10) : 0;
    return v != NULL && *v != '\0' && *end == '\0' && slot < CRM_EMU_SLOTS ? (unsigned)slot : 0;
}

/* Reserves the whole window of this process's slot PROT_NONE. Returns 0, or -1
 * when the range is taken. */
static int crm__window_reserve(void)
{
    if (crm__window_ready)
        return 0;
    crm__window = crm_emu_slot_base(crm__slot());
    void *want = (void *)crm__window;
    void *got = mmap(want, CRM_EMU_WINDOW_SIZE, PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (got == MAP_FAILED)
        return -1;
    if (got != want) { /* a kernel without MAP_FIXED_NOREPLACE took it as a hint */
        munmap(got, CRM_EMU_WINDOW_SIZE);
        return -1;
    }
    crm__window_ready = 1;
    return 0;
}

/* Returns the index of the first allocation whose base is > a. */
static size_t crm__upper(uintptr_t a)
{
    size_t lo = 0, hi = crm__nallocs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (crm__allocs[mid].base <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Finds the first gap holding span bytes from a multiple of align (a power of two).
 * Returns 0 and sets *base and *idx (the insertion index), or -1 when the window is full. */
static int crm__find_gap(size_t span, size_t align, uintptr_t *base, size_t *idx)
{
    uintptr_t prev_end = crm__window;
    size_t guard = crm__page();
    for (size_t i = 0; i <= crm__nallocs; i++) {
        uintptr_t next = i < crm__nallocs ? crm__allocs[i].base
                                          : crm__window + CRM_EMU_WINDOW_SIZE;
        uintptr_t start = (prev_end + align - 1) & ~(uintptr_t)(align - 1);
        if (start <= next && next - start >= span) {
            *base = start;
            *idx = i;
            return 0;
        }
        if (i < crm__nallocs)
            prev_end = crm__allocs[i].base + crm__allocs[i].mapped + guard;
    }
    return -1;
}

/* Inserts a at index idx. Returns 0, or -1 on ENOMEM. */
static int crm__table_insert(size_t idx, const crm__alloc *a)
{
    if (crm__nallocs == crm__cap) {
        size_t cap = crm__cap ? crm__cap * 2 : 64;
        crm__alloc *n = realloc(crm__allocs, cap * sizeof *n);
        if (n == NULL)
            return -1;
        crm__allocs = n;
        crm__cap = cap;
    }
    memmove(&crm__allocs[idx + 1], &crm__allocs[idx], (crm__nallocs - idx) * sizeof *a);
    crm__allocs[idx] = *a;
    crm__nallocs++;
    return 0;
}

/* Returns pages [base, base + len) to PROT_NONE, dropping their contents. */
static void crm__unmap(uintptr_t base, size_t len)
{
    void *p = mmap((void *)base, len, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    assert(p == (void *)base);
    (void)p;
}

/* Removes entry idx from the table and releases its pages. */
static void crm__table_remove(size_t idx)
{
    crm__alloc a = crm__allocs[idx];
    crm__unmap(a.base, a.mapped);
    if (a.dev >= 0)
        crm__pool_release(a.dev, a.mapped);
    crm__populate_release((void *)a.base, a.mapped, a.backed);
    memmove(&crm__allocs[idx], &crm__allocs[idx + 1], (crm__nallocs - idx - 1) * sizeof a);
    crm__nallocs--;
}

cudaError_t crm__mem_alloc(int dev, size_t size, void **out)
{
    size_t page = crm__page();
    assert(crm__emu_valid_device(dev) && size > 0);
    if (size > SIZE_MAX - 2 * page)
        return cudaErrorMemoryAllocation;
    size_t mapped = (size + page - 1) / page * page;
    if (crm__window_reserve() != 0 || crm__pool_charge(dev, mapped, crm__emu_mem_size()) != 0)
        return cudaErrorMemoryAllocation;
    crm__alloc a = { .size = size, .mapped = mapped, .dev = dev };
    size_t idx;
    void *p = MAP_FAILED;
    if (crm__find_gap(mapped + page, page, &a.base, &idx) == 0)
        p = mmap((void *)a.base, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (p != MAP_FAILED)
        a.backed = crm__populate(p, mapped);
    if (p != MAP_FAILED && crm__table_insert(idx, &a) != 0) {
        crm__populate_release((void *)a.base, a.mapped, a.backed);
        crm__unmap(a.base, mapped);
        p = MAP_FAILED;
    }
    if (p == MAP_FAILED) {
        crm__pool_release(dev, mapped);
        return cudaErrorMemoryAllocation;
    }
    *out = p;
    return cudaSuccess;
}

/* 0 and the insertion index when [base, base + span) lies in the window, aligned
 * to align, clear of every allocation and its guard page; else -1. */
static int crm__fits_at(uintptr_t base, size_t span, size_t align, size_t *idx)
{
    size_t i = crm__upper(base), guard = crm__page();
    if (base == 0 || (base & (align - 1)) != 0 || base < crm__window || span > CRM_EMU_WINDOW_SIZE ||
        base - crm__window > CRM_EMU_WINDOW_SIZE - span)
        return -1;
    if (i > 0 && crm__allocs[i - 1].base + crm__allocs[i - 1].mapped + guard > base)
        return -1;
    if (i < crm__nallocs && crm__allocs[i].base < base + span)
        return -1;
    *idx = i;
    return 0;
}

cudaError_t crm__mem_reserve(size_t size, size_t align, uintptr_t hint, void **out)
{
    size_t page = crm__page(), idx;
    if (size == 0 || size > SIZE_MAX - 2 * page || align < page || (align & (align - 1)) != 0)
        return cudaErrorInvalidValue;
    crm__alloc a = { .size = size, .mapped = (size + page - 1) / page * page, .dev = -1 };
    if (crm__window_reserve() != 0)
        return cudaErrorMemoryAllocation;
    if (crm__fits_at(hint, a.mapped + page, align, &idx) == 0) /* the hint is free: as a GPU, take it */
        a.base = hint;
    else if (crm__find_gap(a.mapped + page, align, &a.base, &idx) != 0)
        return cudaErrorMemoryAllocation;
    if (crm__table_insert(idx, &a) != 0)
        return cudaErrorMemoryAllocation;
    *out = (void *)a.base; /* its pages stay PROT_NONE until crm_emu_vmm.c maps some */
    return cudaSuccess;
}

cudaError_t crm__mem_unreserve(void *p, size_t size)
{
    size_t i = crm__upper((uintptr_t)p);
    if (i == 0 || crm__allocs[i - 1].base != (uintptr_t)p || crm__allocs[i - 1].dev >= 0 ||
        crm__allocs[i - 1].size != size)
        return cudaErrorInvalidValue;
    crm__table_remove(i - 1);
    return cudaSuccess;
}

int crm__mem_reservation(const void *p, size_t n)
{
    uintptr_t a = (uintptr_t)p;
    size_t i = crm__upper(a);
    if (i == 0 || crm__allocs[i - 1].dev >= 0)
        return 0;
    size_t off = a - crm__allocs[i - 1].base;
    return off < crm__allocs[i - 1].size && n <= crm__allocs[i - 1].size - off;
}

cudaError_t crm__mem_free(void *p)
{
    size_t i = crm__upper((uintptr_t)p);
    if (i == 0 || crm__allocs[i - 1].base != (uintptr_t)p || crm__allocs[i - 1].dev < 0)
        return cudaErrorInvalidValue;
    crm__table_remove(i - 1);
    return cudaSuccess;
}

int crm__mem_range(const void *p, size_t n, int *dev)
{
    uintptr_t a = (uintptr_t)p;
    size_t i = crm__upper(a);
    if (i == 0)
        return 0;
    const crm__alloc *al = &crm__allocs[i - 1];
    size_t off = a - al->base;
    if (off >= al->size || n > al->size - off)
        return 0;
    if (al->dev < 0) /* a reservation: valid where it is mapped with access */
        return crm__vmm_range(p, n, dev);
    if (dev != NULL)
        *dev = al->dev;
    return 1;
}

int crm__mem_bounds(const void *p, uintptr_t *lo, uintptr_t *hi)
{
    uintptr_t a = (uintptr_t)p;
    size_t i = crm__upper(a);
    if (i == 0 || crm__allocs[i - 1].dev < 0 || a - crm__allocs[i - 1].base >= crm__allocs[i - 1].size)
        return 0;
    *lo = crm__allocs[i - 1].base;
    *hi = crm__allocs[i - 1].base + crm__allocs[i - 1].size;
    return 1;
}

size_t crm__mem_used(int dev)
{
    return crm__pool_used(dev);
}

void crm__mem_release_device(int dev)
{
    for (size_t i = crm__nallocs; i-- > 0;)
        if (crm__allocs[i].dev == dev)
            crm__table_remove(i);
}
