/* crm_shm.c -- creating, attaching and checking shared-memory regions, and the
 * process's bulk window, which is one of them. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "protocol/crm_shm.h"
#include "protocol/crm_shm_guard.h"

char *crm_shm_data;
uint64_t crm_shm_data_size;
static crm_shm_region crm__window = {.fd = -1};

/* Maps fd as region r (fd stays open). 0 or -1. */
static int crm__map_fd(crm_shm_region *r, int fd, uint64_t size)
{
    size_t total = CRM_SHM_HEADER + size;
    void *p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        return -1;
    *r = (crm_shm_region){.map = p, .map_size = total, .data = (char *)p + CRM_SHM_HEADER, .size = size, .fd = -1};
    return 0;
}

static int crm__random_name(char *name, unsigned char *cookie)
{
    unsigned char rnd[8];
    if (getrandom(rnd, sizeof rnd, 0) != sizeof rnd || getrandom(cookie, CRM_SHM_COOKIE, 0) != CRM_SHM_COOKIE)
        return -1;
    snprintf(name, CRM_SHM_NAME_MAX, "%s%d-%02x%02x%02x%02x%02x%02x%02x%02x", CRM_SHM_NAME_PREFIX, (int)getpid(),
             rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
    return 0;
}

int crm_shm_region_create(crm_shm_region *r, uint64_t size, char *name, unsigned char *cookie)
{
    *r = (crm_shm_region){.fd = -1};
    if (size == 0 || size > CRM_SHM_SIZE_MAX || crm__random_name(name, cookie) != 0)
        return -1;
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    if (ftruncate(fd, (off_t)(CRM_SHM_HEADER + size)) != 0 || crm__map_fd(r, fd, size) != 0) {
        close(fd);
        shm_unlink(name);
        return -1;
    }
    r->fd = fd;
    memcpy(r->map, cookie, CRM_SHM_COOKIE);
    return 0;
}

int crm_shm_region_reserve(crm_shm_region *r)
{
    if (r->fd < 0)
        return -1;
    /* posix_fallocate, not ftruncate alone: on a full /dev/shm it fails here,
     * where a later touch of the memory would raise SIGBUS */
    int rc = posix_fallocate(r->fd, 0, (off_t)r->map_size) == 0 ? 0 : -1;
    close(r->fd);
    r->fd = -1;
    return rc;
}

void crm_shm_unlink(const char *name)
{
    shm_unlink(name);
}

/* A name the client may legitimately have made: our prefix, no other slash. */
static int crm__name_ok(const char *name)
{
    size_t n = strlen(CRM_SHM_NAME_PREFIX);
    return strncmp(name, CRM_SHM_NAME_PREFIX, n) == 0 && strchr(name + 1, '/') == NULL &&
           strlen(name) < CRM_SHM_NAME_MAX;
}

int crm_shm_region_attach(crm_shm_region *r, const char *name, uint64_t size, const unsigned char *cookie)
{
    struct stat st;
    *r = (crm_shm_region){.fd = -1};
    if (!crm__name_ok(name) || size == 0 || size > CRM_SHM_SIZE_MAX)
        return -1;
    int fd = shm_open(name, O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0);
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != CRM_SHM_HEADER + size) {
        close(fd);
        return -1;
    }
    int mapped = crm__map_fd(r, fd, size);
    close(fd);
    if (mapped != 0)
        return -1;
    if (memcmp(r->map, cookie, CRM_SHM_COOKIE) != 0) { /* not the client's region */
        crm_shm_region_unmap(r);
        return -1;
    }
    if (crm_shm_guard_add(r->map, r->map_size) != 0) { /* the client may shrink it from now on */
        crm_shm_region_unmap(r);
        return -1;
    }
    shm_unlink(name); /* mapped now: the name has served, even if the client dies before it says so */
    return 0;
}

void crm_shm_region_unmap(crm_shm_region *r)
{
    if (r->map != NULL) {
        crm_shm_guard_remove(r->map);
        munmap(r->map, r->map_size);
    }
    if (r->fd >= 0)
        close(r->fd);
    *r = (crm_shm_region){.fd = -1};
}

static int crm__window_set(int rc)
{
    crm_shm_data = rc == 0 ? crm__window.data : NULL;
    crm_shm_data_size = rc == 0 ? crm__window.size : 0;
    return rc;
}

int crm_shm_sweep_stale(const char *dir, long max_age_s)
{
    struct stat st;
    int removed = 0;
    DIR *d = opendir(dir);
    time_t now = time(NULL);
    size_t plen = strlen(CRM_SHM_NAME_PREFIX) - 1; /* the prefix without its slash */
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) {
        if (strncmp(e->d_name, CRM_SHM_NAME_PREFIX + 1, plen) != 0 || strlen(e->d_name) >= CRM_SHM_NAME_MAX)
            continue;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
            st.st_uid != geteuid() || now - st.st_mtime <= max_age_s)
            continue;
        removed += unlinkat(dirfd(d), e->d_name, 0) == 0;
    }
    if (d != NULL)
        closedir(d);
    return removed;
}

int crm_shm_create(uint64_t size, char *name, unsigned char *cookie)
{
    static int swept;
    if (!swept++)
        crm_shm_sweep_stale("/dev/shm", CRM_SHM_STALE_S); /* once per process, before our first name */
    int rc = crm_shm_region_create(&crm__window, size, name, cookie);
    if (rc == 0) {
        close(crm__window.fd);
        crm__window.fd = -1;
    }
    return crm__window_set(rc);
}

int crm_shm_attach(const char *name, uint64_t size, const unsigned char *cookie)
{
    return crm__window_set(crm_shm_region_attach(&crm__window, name, size, cookie));
}

void crm_shm_detach(void)
{
    crm_shm_region_unmap(&crm__window);
    crm__window_set(-1);
}
