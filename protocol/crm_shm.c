/* crm_shm.c -- creating, attaching and checking the shared-memory bulk window. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include "protocol/crm_shm.h"

char *crm_shm_data;
uint64_t crm_shm_data_size;
static char *crm__map;
static size_t crm__map_size;

static int crm__map_fd(int fd, uint64_t size)
{
    size_t total = CRM_SHM_HEADER + size;
    void *p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return -1;
    crm__map = p;
    crm__map_size = total;
    crm_shm_data = crm__map + CRM_SHM_HEADER;
    crm_shm_data_size = size;
    return 0;
}

int crm_shm_create(uint64_t size, char *name, unsigned char *cookie)
{
    unsigned char rnd[8];
    if (getrandom(rnd, sizeof rnd, 0) != sizeof rnd || getrandom(cookie, CRM_SHM_COOKIE, 0) != CRM_SHM_COOKIE)
        return -1;
    snprintf(name, 64, "%s%d-%02x%02x%02x%02x%02x%02x%02x%02x", CRM_SHM_NAME_PREFIX, (int)getpid(), rnd[0], rnd[1],
             rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    if (ftruncate(fd, (off_t)(CRM_SHM_HEADER + size)) != 0 || crm__map_fd(fd, size) != 0) {
        shm_unlink(name);
        return -1;
    }
    memcpy(crm__map, cookie, CRM_SHM_COOKIE);
    return 0;
}

void crm_shm_unlink(const char *name)
{
    shm_unlink(name);
}

/* A name the client may legitimately have made: our prefix, no other slash. */
static int crm__name_ok(const char *name)
{
    size_t n = strlen(CRM_SHM_NAME_PREFIX);
    return strncmp(name, CRM_SHM_NAME_PREFIX, n) == 0 && strchr(name + 1, '/') == NULL && strlen(name) < 64;
}

int crm_shm_attach(const char *name, uint64_t size, const unsigned char *cookie)
{
    struct stat st;
    if (!crm__name_ok(name) || size == 0 || size > (1ull << 40))
        return -1;
    int fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_size != CRM_SHM_HEADER + size) {
        close(fd);
        return -1;
    }
    if (crm__map_fd(fd, size) != 0) /* closes fd */
        return -1;
    if (memcmp(crm__map, cookie, CRM_SHM_COOKIE) != 0) { /* not the client's window */
        crm_shm_detach();
        return -1;
    }
    shm_unlink(name); /* mapped now: the name has served, even if the client dies before it says so */
    return 0;
}

void crm_shm_detach(void)
{
    if (crm__map != NULL)
        munmap(crm__map, crm__map_size);
    crm__map = NULL;
    crm_shm_data = NULL;
    crm_shm_data_size = 0;
}
