/* crm_quota.c -- parsing and lookup of --quota limits (server/crm_quota.h). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/crm_auth.h"
#include "server/crm_quota.h"

typedef struct crm__line {
    char user[CRM_AUTH_USER_MAX + 1];
    crm_quota q;
} crm__line;

static crm__line crm__lines[CRM_QUOTA_MAX];
static int crm__nlines;

/* "8G" -> 8 << 30: 0, or -1 when not a size. */
static int crm__size(const char *text, size_t len, uint64_t *out)
{
    char buf[32], *end;
    if (len == 0 || len >= sizeof buf || !isdigit((unsigned char)text[0]))
        return -1;
    memcpy(buf, text, len);
    buf[len] = '\0';
    unsigned long long v = strtoull(buf, &end, 10);
    int shift = 0;
    switch (toupper((unsigned char)*end)) {
    case '\0': break;
    case 'K': shift = 10; break;
    case 'M': shift = 20; break;
    case 'G': shift = 30; break;
    case 'T': shift = 40; break;
    default: return -1;
    }
    if (*end != '\0' && end[1] != '\0' && !(toupper((unsigned char)end[1]) == 'B' && end[2] == '\0') &&
        !(toupper((unsigned char)end[1]) == 'I' && toupper((unsigned char)end[2]) == 'B' && end[3] == '\0'))
        return -1;
    if (v == 0 || v > (UINT64_MAX >> shift))
        return -1;
    *out = (uint64_t)v << shift;
    return 0;
}

int crm_quota_size(const char *text, uint64_t *out)
{
    return crm__size(text, strlen(text), out);
}

/* One "key=value" of a spec into q. 0 or -1. */
static int crm__field(const char *f, size_t len, crm_quota *q, char *err, size_t errlen)
{
    const char *eq = memchr(f, '=', len);
    size_t klen = eq ? (size_t)(eq - f) : len, vlen = eq ? len - klen - 1 : 0;
    if (eq && klen == 3 && strncmp(f, "mem", 3) == 0) {
        if (crm__size(eq + 1, vlen, &q->mem) == 0)
            return 0;
        snprintf(err, errlen, "mem=%.*s: not a size (e.g. 512M, 8G)", (int)vlen, eq + 1);
        return -1;
    }
    if (eq && klen == 8 && strncmp(f, "sessions", 8) == 0) {
        uint64_t n;
        char buf[16];
        snprintf(buf, sizeof buf, "%.*s", (int)(vlen < 15 ? vlen : 15), eq + 1);
        if (vlen > 0 && vlen < 8 && strspn(buf, "0123456789") == vlen && (n = strtoull(buf, NULL, 10)) > 0) {
            q->sessions = (int)n;
            return 0;
        }
        snprintf(err, errlen, "sessions=%.*s: not a count of at least 1", (int)vlen, eq + 1);
        return -1;
    }
    snprintf(err, errlen, "unknown limit '%.*s' (mem=SIZE or sessions=N)", (int)klen, f);
    return -1;
}

int crm_quota_parse(const char *spec, char *user, size_t userlen, crm_quota *q, char *err, size_t errlen)
{
    const char *colon = strchr(spec, ':');
    memset(q, 0, sizeof *q);
    if (colon == NULL || colon[1] == '\0') {
        snprintf(err, errlen, "expected USER:mem=SIZE,sessions=N (USER may be '*')");
        return -1;
    }
    size_t ulen = (size_t)(colon - spec);
    if (ulen >= userlen) {
        snprintf(err, errlen, "user name too long");
        return -1;
    }
    memcpy(user, spec, ulen);
    user[ulen] = '\0';
    if (strcmp(user, "*") != 0 && !crm_auth_user_valid(user)) {
        snprintf(err, errlen, "user '%s' is not '*' or 1-%d of A-Z a-z 0-9 . _ -", user, CRM_AUTH_USER_MAX);
        return -1;
    }
    for (const char *f = colon + 1; *f != '\0';) {
        size_t len = strcspn(f, ",");
        if (crm__field(f, len, q, err, errlen) != 0)
            return -1;
        f += len + (f[len] == ',');
    }
    return 0;
}

int crm_quota_add(const char *spec, char *err, size_t errlen)
{
    crm__line l;
    if (crm_quota_parse(spec, l.user, sizeof l.user, &l.q, err, errlen) != 0)
        return -1;
    for (int i = 0; i < crm__nlines; i++)
        if (strcmp(crm__lines[i].user, l.user) == 0) {
            crm__lines[i] = l;
            return 0;
        }
    if (crm__nlines == CRM_QUOTA_MAX) {
        snprintf(err, errlen, "at most %d --quota lines", CRM_QUOTA_MAX);
        return -1;
    }
    crm__lines[crm__nlines++] = l;
    return 0;
}

crm_quota crm_quota_of(const char *user)
{
    const crm_quota *any = NULL;
    for (int i = 0; i < crm__nlines; i++) {
        if (strcmp(crm__lines[i].user, user) == 0)
            return crm__lines[i].q;
        if (strcmp(crm__lines[i].user, "*") == 0)
            any = &crm__lines[i].q;
    }
    return any ? *any : (crm_quota){0, 0};
}

void crm_quota_clear(void)
{
    crm__nlines = 0;
}
