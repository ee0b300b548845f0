/* crm_quota.h -- what one user may take of a server (the vGPU slice): device memory
 * per device and sessions at once, from --quota. The daemon parses the limits; every
 * session process inherits them and enforces its user's through the shared session
 * table (server/crm_monitor.h), so the limits hold across a user's sessions. */
#ifndef CRM_QUOTA_H
#define CRM_QUOTA_H

#include <stddef.h>
#include <stdint.h>

#define CRM_QUOTA_MAX 64 /* --quota lines */

typedef struct crm_quota {
    uint64_t mem;  /* bytes of each device's memory, 0 = no limit */
    int sessions;  /* sessions at once, 0 = no limit */
} crm_quota;

/* Parses "USER:mem=SIZE,sessions=N" (USER may be '*', every user without a line of
 * its own; SIZE takes K, M, G or T, powers of 1024) into user and q. 0, or -1 with
 * err set. */
int crm_quota_parse(const char *spec, char *user, size_t userlen, crm_quota *q, char *err, size_t errlen);
/* A size with K, M, G or T (powers of 1024, optionally followed by B or iB):
 * "8G" -> 8 << 30. 0, or -1 when not a size. */
int crm_quota_size(const char *text, uint64_t *out);
/* Adds a parsed --quota; a second line for one user replaces the first. 0 or -1. */
int crm_quota_add(const char *spec, char *err, size_t errlen);
/* The limits of user: its own line, else '*''s, else none. */
crm_quota crm_quota_of(const char *user);
/* Forgets every line (tests). */
void crm_quota_clear(void);

#endif
