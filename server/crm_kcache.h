/* crm_kcache.h -- the server's content-addressed cache of device code images: an
 * image a client shipped once, and that loaded, is kept as
 * DIR/USER/<sha256>.fatbin, so the same user's later sessions send only its
 * digest. Each user has a directory of their own, so that a digest says nothing
 * of what another tenant ran, and a size cap ($CUDAREM_CACHE_MAX, from
 * --cache-max) beyond which the least recently used images go. */
#ifndef CRM_KCACHE_H
#define CRM_KCACHE_H

#include <stddef.h>
#include <stdint.h>
#include "common/crm_digest.h"

#define CRM_KCACHE_ENV "CUDAREM_CACHE_DIR"     /* set by cudarem-server from --cache-dir */
#define CRM_KCACHE_MAX_ENV "CUDAREM_CACHE_MAX" /* bytes per user, from --cache-max */
#define CRM_KCACHE_MAX_DEFAULT (1ull << 30)

/* The cache directory: $CUDAREM_CACHE_DIR ("off" disables the cache: NULL), else
 * $XDG_CACHE_HOME/cudarem/modules, else $HOME/.cache/cudarem/modules, else
 * /tmp/cudarem-cache-UID. Created (0700) at first use. */
const char *crm_kcache_dir(void);

/* The cap on one user's images, in bytes ($CUDAREM_CACHE_MAX, else 1 GiB). */
uint64_t crm_kcache_max(void);

/* Reads user's image of digest d into a malloc'd *data of *len bytes, checking
 * that its contents still hash to d, and marks it used. 0, or -1 when absent or
 * damaged. */
int crm_kcache_get(const char *user, const unsigned char d[CRM_DIGEST_LEN], unsigned char **data, size_t *len);

/* Stores an image that loaded under its digest d for user (atomically: temporary
 * file, then rename), then removes that user's least recently used images while
 * they hold more than crm_kcache_max(). Failures are logged and otherwise
 * ignored: the cache only saves transfers. */
void crm_kcache_put(const char *user, const unsigned char d[CRM_DIGEST_LEN], const void *data, size_t len);

#endif
