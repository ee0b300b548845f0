/* crm_cubin_ptx.c -- the table of PTX kept beside client-compiled cubins
 * (client/crm_cubin_ptx.h): a short list searched by digest; programs compile a
 * handful of kernels. Entries live as long as the process. */
#include "client/crm_cubin_ptx.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/crm_digest.h"

typedef struct crm__entry {
    unsigned char digest[CRM_DIGEST_LEN];
    size_t len;      /* of the cubin */
    char *ptx;       /* NUL-terminated */
    size_t ptx_len;
    struct crm__entry *next;
} crm__entry;

static pthread_mutex_t crm__lock = PTHREAD_MUTEX_INITIALIZER;
static crm__entry *crm__head;

static crm__entry *crm__lookup(const unsigned char *digest, size_t len)
{
    for (crm__entry *e = crm__head; e != NULL; e = e->next)
        if (e->len == len && memcmp(e->digest, digest, CRM_DIGEST_LEN) == 0)
            return e;
    return NULL;
}

int crm_cubin_ptx_note(const void *cubin, size_t len, const char *ptx, size_t ptx_len)
{
    unsigned char d[CRM_DIGEST_LEN];
    if (crm_sha256(cubin, len, d) != 0)
        return -1;
    crm__entry *e = calloc(1, sizeof *e);
    char *copy = malloc(ptx_len + 1);
    if (e == NULL || copy == NULL) {
        free(e);
        free(copy);
        return -1;
    }
    memcpy(copy, ptx, ptx_len);
    copy[ptx_len] = '\0';
    *e = (crm__entry){.len = len, .ptx = copy, .ptx_len = ptx_len};
    memcpy(e->digest, d, sizeof d);
    pthread_mutex_lock(&crm__lock);
    int known = crm__lookup(d, len) != NULL;
    if (!known) {
        e->next = crm__head;
        crm__head = e;
    }
    pthread_mutex_unlock(&crm__lock);
    if (known) {
        free(copy);
        free(e);
    }
    return 0;
}

const char *crm_cubin_ptx_find(const void *cubin, size_t len, size_t *ptx_len)
{
    unsigned char d[CRM_DIGEST_LEN];
    if (__atomic_load_n(&crm__head, __ATOMIC_RELAXED) == NULL || crm_sha256(cubin, len, d) != 0)
        return NULL;
    pthread_mutex_lock(&crm__lock);
    crm__entry *e = crm__lookup(d, len);
    pthread_mutex_unlock(&crm__lock);
    if (e != NULL && ptx_len != NULL)
        *ptx_len = e->ptx_len;
    return e != NULL ? e->ptx : NULL;
}
