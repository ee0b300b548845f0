/* crm_kcache.h -- the server's content-addressed cache of device code images: a
 * fatbinary a client shipped once is kept as DIR/<sha256>.fatbin, so later
 * sessions with the same module send only its digest. */
#ifndef CRM_KCACHE_H
#define CRM_KCACHE_H

#include <stddef.h>
#include "common/crm_digest.h"

#define CRM_KCACHE_ENV "CUDAREM_CACHE_DIR" /* set by cudarem-server from --cache-dir */

/* The cache directory: $CUDAREM_CACHE_DIR ("off" disables the cache: NULL), else
 * $XDG_CACHE_HOME/cudarem/modules, else $HOME/.cache/cudarem/modules, else
 * /tmp/cudarem-cache-UID. Created (0700) at first use. */
const char *crm_kcache_dir(void);

/* Reads the image of digest d into a malloc'd *data of *len bytes, checking that
 * its contents still hash to d. 0, or -1 when absent or damaged. */
int crm_kcache_get(const unsigned char d[CRM_DIGEST_LEN], unsigned char **data, size_t *len);

/* Stores an image under its digest d (atomically: temporary file, then rename).
 * Failures are logged and otherwise ignored: the cache only saves transfers. */
void crm_kcache_put(const unsigned char d[CRM_DIGEST_LEN], const void *data, size_t len);

#endif
