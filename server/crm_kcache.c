/* crm_kcache.c -- the on-disk cache of device code images, keyed by user and SHA-256
 * (server/crm_kcache.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/crm_auth.h"
#include "common/crm_fatbin.h"
#include "common/crm_log.h"
#include "server/crm_kcache.h"

static char crm__dir[PATH_MAX];
static int crm__dir_state; /* 0 unknown, 1 usable, -1 off */

/* mkdir -p with mode 0700. */
static int crm__mkdirs(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        int rc = mkdir(path, 0700);
        *p = '/';
        if (rc != 0 && errno != EEXIST)
            return -1;
    }
    return mkdir(path, 0700) == 0 || errno == EEXIST ? 0 : -1;
}

const char *crm_kcache_dir(void)
{
    if (crm__dir_state != 0)
        return crm__dir_state > 0 ? crm__dir : NULL;
    const char *env = getenv(CRM_KCACHE_ENV), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    crm__dir_state = -1;
    if (env != NULL && strcmp(env, "off") == 0)
        return NULL;
    if (env != NULL && *env != '\0')
        snprintf(crm__dir, sizeof crm__dir, "%s", env);
    else if (xdg != NULL && *xdg == '/')
        snprintf(crm__dir, sizeof crm__dir, "%s/cudarem/modules", xdg);
    else if (home != NULL && *home == '/')
        snprintf(crm__dir, sizeof crm__dir, "%s/.cache/cudarem/modules", home);
    else
        snprintf(crm__dir, sizeof crm__dir, "/tmp/cudarem-cache-%u", (unsigned)getuid());
    if (crm__mkdirs(crm__dir) != 0) {
        crm_warn("module cache %s unusable (%s): every session ships its modules", crm__dir, strerror(errno));
        return NULL;
    }
    crm__dir_state = 1;
    return crm__dir;
}

uint64_t crm_kcache_max(void)
{
    const char *env = getenv(CRM_KCACHE_MAX_ENV);
    char *end;
    unsigned long long v = env != NULL ? strtoull(env, &end, 10) : 0;
    return env != NULL && *env != '\0' && *end == '\0' ? v : CRM_KCACHE_MAX_DEFAULT;
}

/* The directory of user's images (created 0700), in dir; 0 or -1. A user's name
 * is checked (crm_auth_user_valid) before it names a directory. */
static int crm__user_dir(const char *user, char *dir, size_t len)
{
    const char *top = crm_kcache_dir();
    if (top == NULL || user == NULL || !crm_auth_user_valid(user) || user[0] == '.')
        return -1;
    if ((size_t)snprintf(dir, len, "%s/%s", top, user) >= len)
        return -1;
    return mkdir(dir, 0700) == 0 || errno == EEXIST ? 0 : -1;
}

static int crm__path(const char *user, const unsigned char d[CRM_DIGEST_LEN], char *path, size_t len)
{
    char hex[2 * CRM_DIGEST_LEN + 1], dir[PATH_MAX];
    if (crm__user_dir(user, dir, sizeof dir) != 0)
        return -1;
    crm_sha256_hex(d, hex);
    return (size_t)snprintf(path, len, "%s/%s.fatbin", dir, hex) < len ? 0 : -1;
}

/* One cached image, for eviction. */
typedef struct crm__entry {
    char name[2 * CRM_DIGEST_LEN + 16];
    struct timespec used; /* its mtime: stored or last read */
    uint64_t size;
} crm__entry;

static int crm__older(const void *a, const void *b)
{
    const struct timespec *x = &((const crm__entry *)a)->used, *y = &((const crm__entry *)b)->used;
    if (x->tv_sec != y->tv_sec)
        return x->tv_sec < y->tv_sec ? -1 : 1;
    return x->tv_nsec < y->tv_nsec ? -1 : x->tv_nsec > y->tv_nsec;
}

/* The images of directory dir into *out (malloc'd); their count, or -1. */
static int crm__list(const char *dir, crm__entry **out, uint64_t *total)
{
    DIR *d = opendir(dir);
    int n = 0, cap = 0;
    crm__entry *e = NULL;
    *total = 0;
    if (d == NULL)
        return -1;
    for (struct dirent *de; (de = readdir(d)) != NULL;) {
        struct stat st;
        size_t len = strlen(de->d_name);
        if (len < 8 || strcmp(de->d_name + len - 7, ".fatbin") != 0 || len >= sizeof e[0].name ||
            fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (n == cap) {
            crm__entry *g = realloc(e, (size_t)(cap = cap ? 2 * cap : 64) * sizeof *e);
            if (g == NULL)
                break;
            e = g;
        }
        snprintf(e[n].name, sizeof e[n].name, "%s", de->d_name);
        e[n].used = st.st_mtim;
        e[n].size = (uint64_t)st.st_size;
        *total += e[n++].size;
    }
    closedir(d);
    *out = e;
    return n;
}

/* Removes user's least recently used images while they hold more than the cap. */
static void crm__evict(const char *user)
{
    char dir[PATH_MAX], path[PATH_MAX + 80];
    crm__entry *e = NULL;
    uint64_t total, max = crm_kcache_max();
    if (crm__user_dir(user, dir, sizeof dir) != 0)
        return;
    int n = crm__list(dir, &e, &total);
    if (n > 0 && total > max) {
        qsort(e, (size_t)n, sizeof *e, crm__older);
        for (int i = 0; i < n && total > max; i++) {
            snprintf(path, sizeof path, "%s/%s", dir, e[i].name);
            if (unlink(path) == 0) {
                total -= e[i].size;
                crm_debug("module cache: %s over its %llu bytes: removed %s", user, (unsigned long long)max, path);
            }
        }
    }
    free(e);
}

int crm_kcache_get(const char *user, const unsigned char d[CRM_DIGEST_LEN], unsigned char **data, size_t *len)
{
    char path[PATH_MAX];
    struct stat st;
    unsigned char got[CRM_DIGEST_LEN];
    if (crm__path(user, d, path, sizeof path) != 0)
        return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    unsigned char *buf = NULL;
    if (fstat(fd, &st) != 0 || st.st_size <= 0 || (uint64_t)st.st_size > CRM_FATBIN_MAX ||
        (buf = malloc((size_t)st.st_size)) == NULL || read(fd, buf, (size_t)st.st_size) != st.st_size ||
        crm_sha256(buf, (size_t)st.st_size, got) != 0 || memcmp(got, d, CRM_DIGEST_LEN) != 0) {
        crm_warn("module cache: ignoring damaged %s", path);
        free(buf);
        close(fd);
        return -1;
    }
    close(fd);
    utimensat(AT_FDCWD, path, NULL, 0); /* used now: the last to be evicted */
    *data = buf;
    *len = (size_t)st.st_size;
    return 0;
}

void crm_kcache_put(const char *user, const unsigned char d[CRM_DIGEST_LEN], const void *data, size_t len)
{
    char path[PATH_MAX], tmp[PATH_MAX + 32];
    struct stat st;
    if (len > crm_kcache_max() || crm__path(user, d, path, sizeof path) != 0 || stat(path, &st) == 0)
        return;
    snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        crm_warn("module cache: cannot store %s: %s", path, strerror(errno));
        return;
    }
    int ok = write(fd, data, len) == (ssize_t)len;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        crm_warn("module cache: cannot store %s: %s", path, strerror(errno));
        unlink(tmp);
        return;
    }
    crm_debug("module cache: stored %s (%zu bytes)", path, len);
    crm__evict(user);
}
