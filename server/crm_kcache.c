/* crm_kcache.c -- the on-disk cache of device code images, keyed by SHA-256. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
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

static int crm__path(const unsigned char d[CRM_DIGEST_LEN], char *path, size_t len)
{
    char hex[2 * CRM_DIGEST_LEN + 1];
    const char *dir = crm_kcache_dir();
    if (dir == NULL)
        return -1;
    crm_sha256_hex(d, hex);
    return (size_t)snprintf(path, len, "%s/%s.fatbin", dir, hex) < len ? 0 : -1;
}

int crm_kcache_get(const unsigned char d[CRM_DIGEST_LEN], unsigned char **data, size_t *len)
{
    char path[PATH_MAX];
    struct stat st;
    unsigned char got[CRM_DIGEST_LEN];
    if (crm__path(d, path, sizeof path) != 0)
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
    *data = buf;
    *len = (size_t)st.st_size;
    return 0;
}

void crm_kcache_put(const unsigned char d[CRM_DIGEST_LEN], const void *data, size_t len)
{
    char path[PATH_MAX], tmp[PATH_MAX + 32];
    struct stat st;
    if (crm__path(d, path, sizeof path) != 0 || stat(path, &st) == 0)
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
}
