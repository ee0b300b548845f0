/* crm_managed.c -- managed memory's table of allocations, the state of each block,
 * the transfers that keep the program's view coherent, the hooks of every call,
 * faults (from client/crm_managed_fault.c) and prefetches (client/crm_managed.h).
 * Registered memory: crm_managed_register.c; advice: crm_managed_advice.c. */
#include "client/crm_managed.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "client/crm_conn.h"
#include "client/crm_graph.h"
#include "client/crm_handles.h"
#include "client/crm_managed_fault.h"
#include "client/crm_managed_int.h"
#include "common/crm_emu_window.h"
#include "common/crm_log.h"
#include "crm_client_gen.h"


pthread_mutex_t crm__managed_lock = PTHREAD_MUTEX_INITIALIZER;
static crm__region *crm__regions; /* sorted by base */
static unsigned crm__count, crm__cap;
int crm__managed_live;             /* regions exist: the hooks have work to look at (atomic) */
int crm__managed_dirty;            /* some block may be DIRTY (atomic) */
int crm__managed_valid;            /* some block may be CLEAN or DIRTY (atomic) */
__thread int crm__managed_inside;  /* this thread runs managed memory's own calls */
static crm_managed_stats crm__stats;

size_t crm__managed_page(void)
{
    return (size_t)sysconf(_SC_PAGESIZE);
}

/* The region holding addr, or NULL; lock held. */
crm__region *crm__managed_lookup(uint64_t addr)
{
    size_t lo = 0, hi = crm__count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        crm__region *r = &crm__regions[mid];
        if (addr < r->base)
            hi = mid;
        else if (addr - r->base >= r->mapped)
            lo = mid + 1;
        else
            return r;
    }
    return NULL;
}

/* Bytes of block i of r (the last one may be short). */
uint64_t crm__managed_block_len(const crm__region *r, size_t i)
{
    uint64_t off = (uint64_t)i * CRM_MANAGED_BLOCK;
    return r->mapped - off < CRM_MANAGED_BLOCK ? r->mapped - off : CRM_MANAGED_BLOCK;
}

/* Sets the program's view of blocks [first, end) to `state`, with its protection. */
int crm__managed_set(crm__region *r, size_t first, size_t end, uint8_t state)
{
    static const int prot[] = {PROT_NONE, PROT_READ, PROT_READ | PROT_WRITE};
    uint64_t off = (uint64_t)first * CRM_MANAGED_BLOCK;
    uint64_t len = (uint64_t)(end - 1) * CRM_MANAGED_BLOCK + crm__managed_block_len(r, end - 1) - off;
    if (mprotect((void *)(uintptr_t)(r->base + off), len, prot[state]) != 0) {
        crm_error("managed memory at 0x%llx: mprotect failed (%s)", (unsigned long long)(r->base + off),
                  strerror(errno));
        return -1;
    }
    for (size_t i = first; i < end; i++)
        r->blocks[i].state = state;
    if (state == CRM__DIRTY)
        __atomic_store_n(&crm__managed_dirty, 1, __ATOMIC_RELEASE);
    if (state != CRM__INVALID) {
        r->valid = 1;
        __atomic_store_n(&crm__managed_valid, 1, __ATOMIC_RELAXED);
    }
    return 0;
}

/* ---- the table --------------------------------------------------------------------- */

int crm__managed_insert(const crm__region *r)
{
    crm__region *grown = crm_grow(crm__regions, &crm__cap, crm__count, sizeof *grown);
    if (grown == NULL)
        return -1;
    crm__regions = grown;
    unsigned at = 0;
    while (at < crm__count && crm__regions[at].base < r->base)
        at++;
    memmove(&crm__regions[at + 1], &crm__regions[at], (crm__count - at) * sizeof *r);
    crm__regions[at] = *r;
    crm__count++;
    __atomic_store_n(&crm__managed_live, 1, __ATOMIC_RELAXED);
    return 0;
}

/* A forked child inherits neither view (its touch faults where no memory is, and
 * ends it, as CUDA memory is not a child's), nor the table: a shared memory file
 * would let a child's writes reach the parent's memory without a word. */
static void crm__fork_prepare(void)
{
    pthread_mutex_lock(&crm__managed_lock);
}

static void crm__fork_parent(void)
{
    pthread_mutex_unlock(&crm__managed_lock);
}

static void crm__fork_child(void)
{
    crm__count = 0; /* the regions' memory is the parent's */
    __atomic_store_n(&crm__managed_live, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&crm__managed_dirty, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&crm__managed_valid, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&crm__managed_lock);
}

static void crm__watch_forks(void)
{
    pthread_atfork(crm__fork_prepare, crm__fork_parent, crm__fork_child);
}

void crm__managed_not_inherited(crm__region *r)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, crm__watch_forks);
    if (madvise((void *)(uintptr_t)r->base, r->mapped, MADV_DONTFORK) != 0 ||
        madvise(r->alias, r->mapped, MADV_DONTFORK) != 0)
        crm_warn("managed memory at 0x%llx: a forked child would share it (%s)", (unsigned long long)r->base,
                 strerror(errno));
}

/* Maps the memory file twice: the view at base (state's protection), the alias anywhere. */
static int crm__map(crm__region *r, int zeroed)
{
    int fd = memfd_create("cudarem-managed", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)r->mapped) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    r->alias = mmap(NULL, r->mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    void *view = r->alias == MAP_FAILED ? MAP_FAILED
                                        : mmap((void *)(uintptr_t)r->base, r->mapped, zeroed ? PROT_READ : PROT_NONE,
                                               MAP_SHARED | MAP_FIXED, fd, 0);
    close(fd);
    if (view == MAP_FAILED) {
        if (r->alias != MAP_FAILED)
            munmap(r->alias, r->mapped);
        return -1;
    }
    crm__managed_not_inherited(r);
    return 0;
}

int crm_managed_add(uint64_t base, uint64_t size, int device, int zeroed)
{
    size_t page = crm__managed_page();
    crm__region r = {.base = base, .dev = base, .size = size, .device = device, .valid = zeroed};
    if (size == 0 || base % page != 0 || size > CRM_EMU_SPAN || !crm_emu_in_window((void *)(uintptr_t)base) ||
        !crm_emu_in_window((void *)(uintptr_t)(base + size - 1)) || !crm_managed_window_ours())
        return -1;
    r.mapped = (size + page - 1) / page * page;
    r.nblocks = (r.mapped + CRM_MANAGED_BLOCK - 1) / CRM_MANAGED_BLOCK;
    r.blocks = calloc(r.nblocks, sizeof *r.blocks);
    if (r.blocks == NULL || crm_managed_fault_install() != 0)
        goto fail;
    for (size_t i = 0; i < r.nblocks; i++)
        r.blocks[i] = (crm__block){.state = zeroed ? CRM__CLEAN : CRM__INVALID, .preferred = cudaInvalidDeviceId,
                                   .last_prefetch = cudaInvalidDeviceId};
    pthread_mutex_lock(&crm__managed_lock);
    int bad = crm__managed_lookup(base) != NULL || crm__managed_lookup(base + r.mapped - 1) != NULL || crm__map(&r, zeroed) != 0;
    if (!bad && crm__managed_insert(&r) != 0) {
        crm_managed_window_restore(base, r.mapped);
        munmap(r.alias, r.mapped);
        bad = 1;
    }
    if (!bad && zeroed)
        __atomic_store_n(&crm__managed_valid, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&crm__managed_lock);
    if (!bad)
        return 0;
fail:
    free(r.blocks);
    return -1;
}

void crm__managed_forget(crm__region *r)
{
    free(r->blocks);
    size_t at = (size_t)(r - crm__regions);
    memmove(r, r + 1, (crm__count - at - 1) * sizeof *r);
    crm__count--;
    __atomic_store_n(&crm__managed_live, crm__count > 0, __ATOMIC_RELAXED);
}

int crm_managed_remove(uint64_t base)
{
    pthread_mutex_lock(&crm__managed_lock);
    crm__region *r = crm__managed_lookup(base);
    if (r == NULL || r->base != base || r->registered) {
        pthread_mutex_unlock(&crm__managed_lock);
        return -1;
    }
    crm_managed_window_restore(r->base, r->mapped);
    munmap(r->alias, r->mapped);
    crm__managed_forget(r);
    pthread_mutex_unlock(&crm__managed_lock);
    return 0;
}

void crm_managed_drop_device(int device)
{
    pthread_mutex_lock(&crm__managed_lock);
    size_t kept = 0;
    for (size_t i = 0; i < crm__count; i++) {
        crm__region *r = &crm__regions[i];
        if (r->device != device) {
            crm__regions[kept++] = *r;
            continue;
        }
        if (r->registered) { /* the program's memory again, with the bytes the host last had */
            void *own = mmap((void *)(uintptr_t)r->base, r->mapped, PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
            if (own != MAP_FAILED)
                memcpy(own, r->alias, r->mapped);
        } else {
            crm_managed_window_restore(r->base, r->mapped);
        }
        munmap(r->alias, r->mapped);
        free(r->blocks);
    }
    crm__count = kept;
    __atomic_store_n(&crm__managed_live, crm__count > 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&crm__managed_lock);
}

int crm_managed_find(uint64_t addr, uint64_t *base, uint64_t *size)
{
    if (!__atomic_load_n(&crm__managed_live, __ATOMIC_RELAXED))
        return 0;
    pthread_mutex_lock(&crm__managed_lock);
    crm__region *r = crm__managed_lookup(addr);
    if (r != NULL && addr - r->base >= r->size)
        r = NULL;
    if (r != NULL && base != NULL)
        *base = r->base;
    if (r != NULL && size != NULL)
        *size = r->size;
    pthread_mutex_unlock(&crm__managed_lock);
    return r != NULL;
}

/* ---- transfers ---------------------------------------------------------------------- */

/* The part of [off, off + len) of r inside the allocation: the mapping's last
 * page runs past it, and the server knows only the bytes asked for. */
static uint64_t crm__clip(const crm__region *r, uint64_t off, uint64_t len)
{
    return off + len > r->size ? r->size - off : len;
}

/* Sends bytes [off, off + len) of r to the device, ahead of every later call: a
 * synchronous copy on the server, so work on any stream after it sees the bytes. */
static cudaError_t crm__push(crm__region *r, uint64_t off, uint64_t len)
{
    len = crm__clip(r, off, len);
    int queued;
    int level = crm_conn_copy_level(len, &queued);
    crm_h2d_args args = {
        .dst = r->dev + off, .dpitch = len, .width = len, .height = 1, .stream = CRM_WIRE_LEGACY_STREAM,
        .async = 0, .src = r->alias + off, .spitch = len, .level = level,
    };
    cudaError_t err;
    if (queued) {
        err = crm_rpc_crm_memcpy_h2d(&args);
    } else {
        crm_call call = {.api = CRM_API_crm_memcpy_h2d};
        call.crm_call_u.crm_memcpy_h2d.data = args;
        err = crm_conn_post(&call);
    }
    crm__stats.pushes++;
    crm__stats.pushed_bytes += len;
    crm_conn_count_bulk(len, 0);
    return err;
}

/* Reads bytes [off, off + len) of r from the device into the alias: after the work
 * queued on `stream`, or with stream 0 after all of the device's work (a fault: one
 * message holds a device synchronisation and the copy, so a touch while a kernel
 * still runs on any stream reads what it wrote, never bytes from before it). A
 * failure the synchronisation reports is kept for the program's next synchronising
 * call, as a GPU reports it. */
static cudaError_t crm__fetch(crm__region *r, uint64_t off, uint64_t len, uint64_t stream)
{
    len = crm__clip(r, off, len);
    int queued;
    int level = crm_conn_copy_level(len, &queued);
    crm_call calls[2] = {{.api = CRM_API_cudaDeviceSynchronize}, {.api = CRM_API_crm_memcpy_d2h}};
    crm_reply replies[2];
    memset(replies, 0, sizeof replies);
    calls[1].crm_call_u.crm_memcpy_d2h = (crm_args_crm_memcpy_d2h){
        .src = r->dev + off, .spitch = len, .width = len, .height = 1, .stream = stream,
        .async = stream != CRM_WIRE_LEGACY_STREAM, .level = level};
    replies[1].crm_reply_u.crm_memcpy_d2h.data = (crm_d2h_res){.dst = r->alias + off, .dpitch = len, .width = len,
                                                                .height = 1};
    int first = stream != CRM_WIRE_LEGACY_STREAM; /* a prefetch orders on its stream alone */
    cudaError_t err = crm_conn_exec(&calls[first], &replies[first], 2 - (unsigned)first);
    cudaError_t synced = (cudaError_t)replies[0].crm_reply_u.cudaDeviceSynchronize.err;
    if (err == cudaSuccess && !first && synced != cudaSuccess)
        crm_conn_keep_failure(CRM_API_cudaDeviceSynchronize, synced);
    if (err == cudaSuccess)
        err = (cudaError_t)replies[1].crm_reply_u.crm_memcpy_d2h.err;
    if (err == cudaSuccess)
        memset(&replies[1].crm_reply_u.crm_memcpy_d2h, 0, sizeof replies[1].crm_reply_u.crm_memcpy_d2h);
    for (int i = first; i < 2; i++)
        crm_conn_reply_free(&replies[i]);
    crm__stats.fetches++;
    crm__stats.fetched_bytes += len;
    crm_conn_count_bulk(0, len);
    return err;
}

/* Calls fn(r, i, j, off, len, arg) for each run [i, j) of blocks of r in state
 * `state` within [first, end), the run's bytes at [off, off + len); stops at an error. */
typedef cudaError_t (*crm__run_fn)(crm__region *r, size_t i, size_t j, uint64_t off, uint64_t len, void *arg);
static cudaError_t crm__runs(crm__region *r, size_t first, size_t end, uint8_t state, crm__run_fn fn, void *arg)
{
    for (size_t i = first; i < end;) {
        if (r->blocks[i].state != state) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < end && r->blocks[j].state == state)
            j++;
        uint64_t off = (uint64_t)i * CRM_MANAGED_BLOCK;
        cudaError_t err = fn(r, i, j, off, (uint64_t)(j - 1) * CRM_MANAGED_BLOCK + crm__managed_block_len(r, j - 1) - off, arg);
        if (err != cudaSuccess)
            return err;
        i = j;
    }
    return cudaSuccess;
}

/* A dirty run becomes read-only first, so a write racing the copy faults and waits for the lock. */
static cudaError_t crm__push_run(crm__region *r, size_t i, size_t j, uint64_t off, uint64_t len, void *arg)
{
    (void)arg;
    return crm__managed_set(r, i, j, CRM__CLEAN) != 0 ? cudaErrorUnknown : crm__push(r, off, len);
}

static cudaError_t crm__fetch_run(crm__region *r, size_t i, size_t j, uint64_t off, uint64_t len, void *arg)
{
    cudaError_t err = crm__fetch(r, off, len, *(const uint64_t *)arg);
    return err != cudaSuccess ? err : crm__managed_set(r, i, j, CRM__CLEAN) != 0 ? cudaErrorUnknown : cudaSuccess;
}

/* Pushes every DIRTY run of blocks [first, end) of r, which become CLEAN. */
static cudaError_t crm__push_dirty(crm__region *r, size_t first, size_t end)
{
    return crm__runs(r, first, end, CRM__DIRTY, crm__push_run, NULL);
}

/* Fetches every INVALID run of blocks [first, end) of r, after the work queued on
 * `stream`; they become CLEAN. */
cudaError_t crm__managed_fetch_invalid(crm__region *r, size_t first, size_t end, uint64_t stream)
{
    return crm__runs(r, first, end, CRM__INVALID, crm__fetch_run, &stream);
}

/* ---- the hooks ---------------------------------------------------------------------- */

/* Calls that never read or write device memory: allocation, streams, events,
 * synchronisation and queries. Everything else is assumed to. */
static int crm__pure(int api)
{
    switch (api) {
    case CRM_API_cudaSetDevice: case CRM_API_cudaGetDeviceProperties: case CRM_API_cudaDeviceGetAttribute:
    case CRM_API_cudaDeviceSynchronize: case CRM_API_cudaSetDeviceFlags: case CRM_API_cudaGetDeviceFlags:
    case CRM_API_cudaMemGetInfo: case CRM_API_cudaDeviceGetStreamPriorityRange: case CRM_API_crm_device_attrs:
    case CRM_API_cudaDeviceSetLimit: case CRM_API_cudaDeviceGetLimit:
    case CRM_API_cudaMalloc: case CRM_API_cudaFree: case CRM_API_cudaMallocPitch: case CRM_API_crm_malloc_managed:
    case CRM_API_crm_stream_create: case CRM_API_cudaStreamDestroy: case CRM_API_cudaStreamSynchronize:
    case CRM_API_cudaStreamQuery: case CRM_API_cudaStreamWaitEvent: case CRM_API_cudaStreamGetFlags:
    case CRM_API_cudaStreamGetPriority: case CRM_API_crm_event_create: case CRM_API_cudaEventDestroy:
    case CRM_API_cudaEventRecord: case CRM_API_cudaEventRecordWithFlags: case CRM_API_cudaEventSynchronize:
    case CRM_API_cudaEventQuery: case CRM_API_cudaEventElapsedTime: case CRM_API_crm_function_get:
    case CRM_API_crm_func_get_attributes: case CRM_API_crm_func_set_attribute:
    case CRM_API_crm_func_set_cache_config: case CRM_API_crm_occupancy: case CRM_API_crm_graph_drop:
        return 1;
    default:
        return 0;
    }
}

/* 1 when some call of calls[0..n) may use device memory; *writes: may write it. */
static int crm__touches(const crm_call *calls, unsigned n, int *writes)
{
    int touches = 0;
    *writes = 0;
    for (unsigned i = 0; i < n; i++) {
        if (crm__pure(calls[i].api))
            continue;
        touches = 1;
        if (calls[i].api != CRM_API_crm_memcpy_d2h)
            *writes = 1;
    }
    return touches;
}

/* The flag says "dirty" until every push is queued: a call of another thread that
 * saw it clear earlier could be queued ahead of the bytes it needs. */
void crm_managed_before(const crm_call *calls, unsigned n)
{
    int writes, failed = 0;
    if (!__atomic_load_n(&crm__managed_dirty, __ATOMIC_ACQUIRE) || crm__managed_inside || !crm__touches(calls, n, &writes))
        return;
    pthread_mutex_lock(&crm__managed_lock);
    crm__managed_inside = 1;
    for (size_t i = 0; i < crm__count && !failed; i++)
        failed = crm__push_dirty(&crm__regions[i], 0, crm__regions[i].nblocks) != cudaSuccess;
    if (!failed) /* else what did not travel waits for the next call */
        __atomic_store_n(&crm__managed_dirty, 0, __ATOMIC_RELEASE);
    crm__managed_inside = 0;
    pthread_mutex_unlock(&crm__managed_lock);
}

void crm_managed_after(const crm_call *calls, unsigned n)
{
    int writes;
    if (!__atomic_load_n(&crm__managed_valid, __ATOMIC_RELAXED) || crm__managed_inside || !crm__touches(calls, n, &writes) ||
        !writes)
        return;
    pthread_mutex_lock(&crm__managed_lock);
    int kept = 0;
    for (size_t i = 0; i < crm__count; i++) {
        crm__region *r = &crm__regions[i];
        int dirty = 0;
        if (!r->valid)
            continue;
        for (size_t b = 0; b < r->nblocks && !dirty; b++)
            dirty = r->blocks[b].state == CRM__DIRTY; /* written since the call left: the host's */
        if (dirty || crm__managed_set(r, 0, r->nblocks, CRM__INVALID) != 0)
            kept = 1;
        else
            r->valid = 0;
    }
    __atomic_store_n(&crm__managed_valid, kept, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&crm__managed_lock);
}

/* ---- faults and prefetches ---------------------------------------------------------- */

/* Blocks a fault at block b of r fetches: a run going forward from the last
 * fetch reads twice as far ahead each time, up to CRM_MANAGED_READAHEAD. */
static size_t crm__fetch_end(crm__region *r, size_t b)
{
    if (b == r->next_fetch && b > 0)
        r->ahead = r->ahead * 2 > CRM_MANAGED_READAHEAD ? CRM_MANAGED_READAHEAD : r->ahead * 2;
    else
        r->ahead = CRM_MANAGED_BLOCK;
    size_t end = b + r->ahead / CRM_MANAGED_BLOCK;
    if (end > r->nblocks)
        end = r->nblocks;
    size_t stop = b + 1;
    while (stop < end && r->blocks[stop].state == CRM__INVALID)
        stop++;
    r->next_fetch = stop;
    return stop;
}

int crm_managed_fault(uint64_t addr, int write)
{
    if (!__atomic_load_n(&crm__managed_live, __ATOMIC_RELAXED))
        return 0;
    if (crm__managed_inside || crm_conn_held_here()) {
        crm_error("cudarem touched managed memory at 0x%llx inside one of its own calls: a bug in cudarem",
                  (unsigned long long)addr);
        return -1;
    }
    pthread_mutex_lock(&crm__managed_lock);
    crm__region *r = crm__managed_lookup(addr);
    if (r == NULL) {
        pthread_mutex_unlock(&crm__managed_lock);
        return 0;
    }
    crm__managed_inside = 1;
    crm__stats.faults++;
    size_t b = (size_t)((addr - r->base) / CRM_MANAGED_BLOCK);
    int rc = 1;
    if (r->blocks[b].state == CRM__INVALID) {
        cudaError_t err = crm__managed_fetch_invalid(r, b, crm__fetch_end(r, b), CRM_WIRE_LEGACY_STREAM);
        if (err != cudaSuccess) {
            crm_error("managed memory at 0x%llx could not be read from the device: %s", (unsigned long long)addr,
                      cudaGetErrorName(err));
            rc = -1;
        }
    }
    /* write < 0: unknown; a fault on a readable block can only be a write */
    if (rc == 1 && r->blocks[b].state == CRM__CLEAN && write != 0 && crm__managed_set(r, b, b + 1, CRM__DIRTY) != 0)
        rc = -1;
    crm__managed_inside = 0;
    pthread_mutex_unlock(&crm__managed_lock);
    return rc;
}

/* Blocks [*first, *end) of r covering [addr, addr + len); lock held. */
static void crm__span(const crm__region *r, uint64_t addr, uint64_t len, size_t *first, size_t *end)
{
    uint64_t off = addr - r->base, last = off + (len ? len : 1) - 1;
    if (last >= r->mapped)
        last = r->mapped - 1;
    *first = (size_t)(off / CRM_MANAGED_BLOCK);
    *end = (size_t)(last / CRM_MANAGED_BLOCK) + 1;
}

/* Runs fn over the part of [addr, addr + len) in each region it crosses; every byte
 * must be managed. Lock held. */
cudaError_t crm__managed_each(uint64_t addr, uint64_t len, crm__range_fn fn, void *arg)
{
    uint64_t end = addr + (len ? len : 1);
    if (end < addr)
        return cudaErrorInvalidValue;
    while (addr < end) {
        crm__region *r = crm__managed_lookup(addr);
        if (r == NULL)
            return cudaErrorInvalidValue;
        uint64_t stop = r->base + r->mapped < end ? r->base + r->mapped : end;
        size_t first, last;
        crm__span(r, addr, stop - addr, &first, &last);
        cudaError_t err = fn(r, first, last, arg);
        if (err != cudaSuccess)
            return err;
        addr = stop;
    }
    return cudaSuccess;
}

static cudaError_t crm__note_prefetch(crm__region *r, size_t first, size_t end, int loc)
{
    for (size_t i = first; i < end; i++)
        r->blocks[i].last_prefetch = (int8_t)loc;
    return cudaSuccess;
}

static cudaError_t crm__to_host(crm__region *r, size_t first, size_t end, void *arg)
{
    cudaError_t err = crm__managed_fetch_invalid(r, first, end, *(uint64_t *)arg);
    return err == cudaSuccess ? crm__note_prefetch(r, first, end, cudaCpuDeviceId) : err;
}

static cudaError_t crm__to_device(crm__region *r, size_t first, size_t end, void *arg)
{
    (void)arg;
    cudaError_t err = crm__push_dirty(r, first, end);
    if (err == cudaSuccess && crm__managed_set(r, first, end, CRM__INVALID) != 0)
        err = cudaErrorUnknown;
    return err == cudaSuccess ? crm__note_prefetch(r, first, end, r->device) : err;
}

/* Runs fn over the range with the lock held and this thread marked inside. */
static cudaError_t crm__locked_each(uint64_t addr, uint64_t len, crm__range_fn fn, void *arg)
{
    pthread_mutex_lock(&crm__managed_lock);
    crm__managed_inside = 1;
    cudaError_t err = crm__managed_each(addr, len, fn, arg);
    crm__managed_inside = 0;
    pthread_mutex_unlock(&crm__managed_lock);
    return err;
}

cudaError_t crm_managed_to_host(uint64_t addr, uint64_t len, uint64_t stream)
{
    return crm__locked_each(addr, len, crm__to_host, &stream);
}

cudaError_t crm_managed_to_device(uint64_t addr, uint64_t len)
{
    return crm__locked_each(addr, len, crm__to_device, NULL);
}

void crm_managed_get_stats(crm_managed_stats *out)
{
    pthread_mutex_lock(&crm__managed_lock);
    *out = crm__stats;
    pthread_mutex_unlock(&crm__managed_lock);
}
