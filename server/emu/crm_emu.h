/* crm_emu.h -- internal interface between the files of the CPU-emulated CUDA device.
 *
 * libcudarem-emu.so exports only CUDA runtime names (CRM_EXPORT), and crm_emu_set_log
 * for the server; everything here is crm__ and hidden. All shared tables (device memory, host memory, streams, events)
 * are guarded by one process-wide read/write lock: lookups and the copies that use
 * them take it shared, anything that changes a table takes it exclusive.
 */
#ifndef CRM_EMU_H
#define CRM_EMU_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

#define CRM_EXPORT __attribute__((visibility("default")))

#define CRM_EMU_MAX_DEVICES 8

/* --- crm_emu_limits.c: context limits (cudaDeviceSetLimit) --- */
size_t crm__emu_limit(int dev, enum cudaLimit limit); /* dev's value of limit, its default until set */
void crm__emu_limits_reset(int dev);                  /* back to the defaults (cudaDeviceReset) */

/* --- crm_emu_log.c: the device's messages, one line each (no newline in fmt) --- */
void crm__emu_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* --- crm_emu_env.c: parsing of the configuration variables (pure functions) --- */

/* Parses "<digits>[K|M|G|T][B]" (case-insensitive, binary units). Returns 0 and sets
 * *out; -1 on syntax error, zero or overflow. */
int crm__emu_parse_size(const char *s, size_t *out);

/* Parses a device count; returns it clamped to 1..CRM_EMU_MAX_DEVICES, or dflt when s
 * is NULL or not a number. */
int crm__emu_parse_devices(const char *s, int dflt);

/* --- crm_emu_state.c: configuration, current device, the lock --- */

int crm__emu_device_count(void);        /* CUDAREM_EMU_DEVICES, read once */
size_t crm__emu_mem_size(void);         /* per-device memory, read once */
int crm__emu_valid_device(int dev);     /* 1 when 0 <= dev < device count */
int crm__emu_current(void);             /* this thread's current device */
void crm__emu_set_current(int dev);
void crm__emu_rdlock(void);
void crm__emu_wrlock(void);
void crm__emu_unlock(void);

/* --- crm_emu_error.c --- */

/* Records err as this thread's last error when it is not cudaSuccess; returns err.
 * Every exported function returns through it. */
cudaError_t crm__emu_ret(cudaError_t err);
/* A kernel's fault (an illegal or misaligned address, a failed assert, trap, a
 * timeout) leaves the current device's context unusable, as on a GPU: the error is
 * kept (crm__emu_poison), every call that uses the context returns it
 * (CRM__EMU_STICKY at their start), until cudaDeviceReset. */
void crm__emu_poison(cudaError_t err);
cudaError_t crm__emu_sticky(void);       /* the current device's, cudaSuccess when none */
void crm__emu_unpoison(void);
#define CRM__EMU_STICKY()                                 \
    do {                                                  \
        cudaError_t crm_sticky_ = crm__emu_sticky();      \
        if (crm_sticky_ != cudaSuccess)                   \
            return crm__emu_ret(crm_sticky_);             \
    } while (0)

/* --- crm_emu_mem.c: device memory in the fixed window (callers hold the lock) --- */

/* Maps size bytes for dev (exclusive lock). Returns cudaSuccess and sets *out, or
 * cudaErrorMemoryAllocation when dev's memory or the window is exhausted. */
cudaError_t crm__mem_alloc(int dev, size_t size, void **out);

/* --- crm_emu_populate.c: backing allocations with pages ahead of their first use --- */

/* Hands what the budget allows of a new allocation [base, base + size) to the
 * thread that backs it; returns the bytes taken on, which crm__populate_release
 * gives back when the allocation is freed (and drops what is still to do). */
size_t crm__populate(void *base, size_t size);
void crm__populate_release(void *base, size_t size, size_t taken);

/* Unmaps the allocation starting exactly at p (exclusive lock); cudaErrorInvalidValue
 * when p is not the start of a live allocation. */
cudaError_t crm__mem_free(void *p);

/* Returns 1 when [p, p + n) (n > 0) lies inside one live allocation and sets *dev to
 * its device (dev may be NULL). */
int crm__mem_range(const void *p, size_t n, int *dev);

size_t crm__mem_used(int dev);          /* bytes charged to dev, by every process */

/* The valid bytes [*lo, *hi) of the plain allocation holding p (not a reservation's
 * mapping); 0 when there is none. */
int crm__mem_bounds(const void *p, uintptr_t *lo, uintptr_t *hi);

/* Reserves size bytes of addresses (PROT_NONE, charged to no device) from a multiple
 * of align (a power of two >= the page size), at hint when that range is free (0: no
 * hint); exclusive lock. cudaErrorInvalidValue for a bad size or alignment,
 * cudaErrorMemoryAllocation when the window is full. */
cudaError_t crm__mem_reserve(size_t size, size_t align, uintptr_t hint, void **out);
/* Releases the reservation of exactly [p, p + size); cudaErrorInvalidValue if none. */
cudaError_t crm__mem_unreserve(void *p, size_t size);
/* 1 when [p, p + n) lies inside one reservation. */
int crm__mem_reservation(const void *p, size_t n);

/* --- crm_emu_vmm.c: physical memory mapped into reservations (lock held) --- */

/* 1 when every byte of [p, p + n) is mapped with access set; *dev (may be NULL) is
 * the device of the memory at p. */
int crm__vmm_range(const void *p, size_t n, int *dev);

/* Memory use shared by the processes of one emulated device (crm_emu_pool.c). */
int crm__pool_charge(int dev, size_t bytes, size_t limit); /* 0, or -1 if it does not fit */
void crm__pool_release(int dev, size_t bytes);
size_t crm__pool_used(int dev);
void crm__mem_release_device(int dev);  /* frees every allocation of dev (exclusive) */

/* --- crm_emu_hostmem.c: page-locked / registered host memory (lock held) --- */

/* Returns 1 when p lies in a cudaMallocHost/cudaHostAlloc/cudaHostRegister range and
 * sets *dev to the device that was current when it was made (dev may be NULL). */
int crm__host_find(const void *p, int *dev);
void crm__host_release_device(int dev); /* frees/unregisters all of dev (exclusive) */

/* --- crm_emu_stream.c / crm_emu_event.c (lock held) --- */

/* Returns cudaSuccess when s is a default stream or a live stream, and sets *dev to
 * the device it belongs to (dev may be NULL); else cudaErrorInvalidResourceHandle. */
cudaError_t crm__stream_check(cudaStream_t s, int *dev);
void crm__stream_release_device(int dev); /* destroys all streams of dev (exclusive) */
void crm__event_release_device(int dev);  /* destroys all events of dev (exclusive) */

/* --- crm_emu_blas.c: IEEE half and bfloat16 <-> float, round to nearest even, NaN
 * and infinity kept (cuBLAS's and cuDNN's 16-bit data) --- */

float crm__half_to_float(uint16_t h);
uint16_t crm__float_to_half(float f);
float crm__bf16_to_float(uint16_t b);
uint16_t crm__float_to_bf16(float f);

/* --- crm_emu_registry.c: set of live opaque handles --- */

typedef struct crm__registry {
    void **items;  /* live handles, unordered */
    size_t count;  /* number of live handles */
    size_t cap;    /* allocated slots */
} crm__registry;

int crm__registry_add(crm__registry *r, void *h);    /* 0, or -1 on ENOMEM */
int crm__registry_has(const crm__registry *r, const void *h);
int crm__registry_remove(crm__registry *r, void *h); /* 0, or -1 when absent */

#endif
