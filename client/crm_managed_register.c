/* crm_managed_register.c -- registered host memory the device reaches
 * (cudaHostRegisterMapped; client/crm_managed.h): the program's own pages become a
 * view of a memory file, tracked as managed memory's are, with a device twin at
 * another address; unregistering gives the pages back with the device's last bytes. */
#include "client/crm_managed.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "client/crm_handles.h"
#include "client/crm_managed_fault.h"
#include "client/crm_managed_int.h"
#include "common/crm_log.h"

/* 1 when every page of [base, base + len) belongs to private anonymous memory (the
 * heap, malloc'd or mmap'd anonymous regions): only such pages may be replaced by a
 * memory file without changing what they mean (a file's or a shared mapping's
 * pages would stop being the file's or the other process's). */
static int crm__anonymous(uint64_t base, uint64_t len)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[512];
    uint64_t covered = base, end = base + len;
    while (maps != NULL && covered < end && fgets(line, sizeof line, maps) != NULL) {
        unsigned long long lo, hi;
        char perms[8] = "", path[256] = "";
        if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %255s", &lo, &hi, perms, path) < 3 || hi <= covered)
            continue;
        if (lo > covered || perms[3] != 'p' || (path[0] != '\0' && strcmp(path, "[heap]") != 0))
            break; /* a hole, or memory that is not private anonymous */
        covered = hi;
    }
    if (maps != NULL)
        fclose(maps);
    return covered >= end;
}

/* Maps the memory file over the program's own pages at r->base, their bytes copied
 * into it first; r->alias gets the second view. 0, or -1 with nothing changed. */
static int crm__adopt_pages(crm__region *r)
{
    int fd = memfd_create("cudarem-registered", MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    int ok = ftruncate(fd, (off_t)r->mapped) == 0 &&
             pwrite(fd, (const void *)(uintptr_t)r->base, r->mapped, 0) == (ssize_t)r->mapped;
    r->alias = ok ? mmap(NULL, r->mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
    if (r->alias != MAP_FAILED &&
        mmap((void *)(uintptr_t)r->base, r->mapped, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) ==
            MAP_FAILED) {
        munmap(r->alias, r->mapped);
        r->alias = MAP_FAILED;
    }
    close(fd);
    if (r->alias == MAP_FAILED)
        return -1;
    crm__managed_not_inherited(r);
    return 0;
}

int crm_managed_register(uint64_t base, uint64_t size, uint64_t dev, int device)
{
    size_t page = crm__managed_page();
    crm__region r = {.base = base, .dev = dev, .registered = 1, .size = size, .device = device, .valid = 1};
    if (size == 0 || base % page != 0 || size % page != 0 || base + size < base || crm_managed_fault_install() != 0)
        return -1;
    r.mapped = size;
    r.nblocks = (r.mapped + CRM_MANAGED_BLOCK - 1) / CRM_MANAGED_BLOCK;
    r.blocks = calloc(r.nblocks, sizeof *r.blocks);
    if (r.blocks == NULL)
        return -1;
    for (size_t i = 0; i < r.nblocks; i++) /* the host's bytes: to the device before it may use them */
        r.blocks[i] = (crm__block){.state = CRM__DIRTY, .preferred = cudaInvalidDeviceId,
                                   .last_prefetch = cudaInvalidDeviceId};
    pthread_mutex_lock(&crm__managed_lock);
    int bad = crm__managed_lookup(base) != NULL || crm__managed_lookup(base + size - 1) != NULL ||
              !crm__anonymous(base, size) || crm__adopt_pages(&r) != 0;
    if (!bad && crm__managed_insert(&r) != 0)
        bad = 1; /* the pages stay the file's, with the program's bytes: harmless */
    if (!bad)
        __atomic_store_n(&crm__managed_dirty, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&crm__managed_lock);
    if (bad)
        free(r.blocks);
    return bad ? -1 : 0;
}

int crm_managed_unregister(uint64_t base)
{
    pthread_mutex_lock(&crm__managed_lock);
    crm__region *r = crm__managed_lookup(base);
    if (r == NULL || r->base != base || !r->registered) {
        pthread_mutex_unlock(&crm__managed_lock);
        return -1;
    }
    crm__managed_inside = 1;
    cudaError_t err = crm__managed_fetch_invalid(r, 0, r->nblocks, CRM_WIRE_LEGACY_STREAM); /* the device's last bytes */
    crm__managed_inside = 0;
    if (err != cudaSuccess)
        crm_error("cudaHostUnregister at 0x%llx: the device's bytes could not be read back (%s); the memory keeps "
                  "the host's", (unsigned long long)base, cudaGetErrorName(err));
    void *own = mmap((void *)(uintptr_t)r->base, r->mapped, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (own != MAP_FAILED)
        memcpy(own, r->alias, r->mapped);
    munmap(r->alias, r->mapped);
    crm__managed_forget(r);
    pthread_mutex_unlock(&crm__managed_lock);
    return own != MAP_FAILED ? 0 : -1;
}

uint64_t crm_managed_device_address(uint64_t addr, int *registered)
{
    uint64_t out = addr;
    int reg = 0;
    if (__atomic_load_n(&crm__managed_live, __ATOMIC_RELAXED)) {
        pthread_mutex_lock(&crm__managed_lock);
        crm__region *r = crm__managed_lookup(addr);
        if (r != NULL && addr - r->base < r->size) {
            out = r->dev + (addr - r->base);
            reg = r->registered;
        }
        pthread_mutex_unlock(&crm__managed_lock);
    }
    if (registered != NULL)
        *registered = reg;
    return out;
}

