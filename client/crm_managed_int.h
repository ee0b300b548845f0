/* crm_managed_int.h -- what the files of managed memory share (client/crm_managed.c:
 * the table, block states, transfers, hooks and faults; crm_managed_register.c:
 * registered host memory; crm_managed_advice.c: advice and range attributes).
 * Internal to those files. */
#ifndef CRM_MANAGED_INT_H
#define CRM_MANAGED_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

enum { CRM__INVALID = 0, CRM__CLEAN = 1, CRM__DIRTY = 2 };

typedef struct crm__block {
    uint8_t state;
    uint8_t read_mostly;
    int8_t preferred;     /* cudaMemAdvise's preferred location, cudaInvalidDeviceId when none */
    int8_t last_prefetch; /* where cudaMemPrefetchAsync last sent it, cudaInvalidDeviceId when never */
    uint32_t accessed_by; /* bit d + 1 for device d, bit 0 for the CPU */
} crm__block;

typedef struct crm__region {
    uint64_t base;     /* the program's view: the device address, but for registered memory */
    uint64_t dev;      /* the device address of the view's first byte */
    int registered;    /* cudaHostRegister'ed memory: the program's own pages, now the memory file's */
    uint64_t size;     /* bytes asked for */
    uint64_t mapped;   /* size rounded up to pages */
    char *alias;       /* the same bytes, always read-write, for cudarem alone */
    int device;
    size_t nblocks;
    crm__block *blocks;
    int valid;           /* some block may be CLEAN or DIRTY */
    uint64_t next_fetch; /* block after the last fetched run: a fault there reads ahead */
    uint64_t ahead;      /* bytes the next forward fault fetches */
} crm__region;

/* The table's lock; the flags the hooks read without it (atomic); this thread
 * running managed memory's own calls. */
extern pthread_mutex_t crm__managed_lock;
extern int crm__managed_live, crm__managed_dirty, crm__managed_valid;
extern __thread int crm__managed_inside;

size_t crm__managed_page(void);
/* The region whose view holds addr, or NULL; lock held. */
crm__region *crm__managed_lookup(uint64_t addr);
/* Adds r to the table (sorted by view); 0, or -1 when memory runs out. Lock held. */
int crm__managed_insert(const crm__region *r);
/* Keeps both views of r out of forked children (and the table too). Lock held. */
void crm__managed_not_inherited(crm__region *r);
/* Removes r from the table and frees its blocks (its mappings are the caller's). Lock held. */
void crm__managed_forget(crm__region *r);
/* Sets blocks [first, end) of r to state, with the view's protection; 0 or -1. Lock held. */
int crm__managed_set(crm__region *r, size_t first, size_t end, uint8_t state);
/* Fetches every INVALID run of blocks [first, end) after the work queued on wire
 * stream `stream`; they become CLEAN. Lock held, this thread marked inside. */
cudaError_t crm__managed_fetch_invalid(crm__region *r, size_t first, size_t end, uint64_t stream);
/* Runs fn over the blocks of each region [addr, addr + len) crosses; every byte
 * must be tracked (cudaErrorInvalidValue otherwise). Lock held. */
typedef cudaError_t (*crm__range_fn)(crm__region *r, size_t first, size_t end, void *arg);
cudaError_t crm__managed_each(uint64_t addr, uint64_t len, crm__range_fn fn, void *arg);

#endif
