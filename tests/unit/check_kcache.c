/* check_kcache.c -- unit tests of the module cache (server/crm_kcache.h) in a
 * scratch directory: an image comes back only to the user who stored it, a damaged
 * one never, and past the size cap the least recently used images go first, a read
 * counting as a use. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "common/crm_digest.h"
#include "server/crm_kcache.h"
#include "tests/unit/crm_check.h"

static char dir[64];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/crm-kcache-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    setenv(CRM_KCACHE_ENV, dir, 1);
    setenv(CRM_KCACHE_MAX_ENV, "3000", 1);
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* An image of 1,200 bytes filled with byte, and its digest. */
static void image(unsigned char byte, unsigned char *data, unsigned char d[CRM_DIGEST_LEN])
{
    memset(data, byte, 1200);
    ck_assert_int_eq(crm_sha256(data, 1200, d), 0);
}

static int cached(const char *user, const unsigned char d[CRM_DIGEST_LEN])
{
    unsigned char *data = NULL;
    size_t len = 0;
    int rc = crm_kcache_get(user, d, &data, &len);
    free(data);
    return rc == 0 && len == 1200;
}

static void tick(void)
{
    struct timespec ts = {0, 20 * 1000 * 1000}; /* the file system's time moves on */
    nanosleep(&ts, NULL);
}

START_TEST(test_per_user)
{
    unsigned char a[1200], da[CRM_DIGEST_LEN];
    image('a', a, da);
    crm_kcache_put("alice", da, a, sizeof a);
    ck_assert(cached("alice", da));
    ck_assert(!cached("bob", da));      /* another tenant learns nothing of alice's modules */
    ck_assert(!cached("../alice", da)); /* nor through a name that is no user's */
}
END_TEST

START_TEST(test_least_recently_used_goes_first)
{
    unsigned char a[1200], b[1200], c[1200], da[CRM_DIGEST_LEN], db[CRM_DIGEST_LEN], dc[CRM_DIGEST_LEN];
    image('a', a, da);
    image('b', b, db);
    image('c', c, dc);
    crm_kcache_put("alice", da, a, sizeof a);
    tick();
    crm_kcache_put("alice", db, b, sizeof b);
    tick();
    ck_assert(cached("alice", da)); /* a read: a is now the most recently used */
    tick();
    crm_kcache_put("alice", dc, c, sizeof c); /* 3,600 bytes over a cap of 3,000: b goes */
    ck_assert(cached("alice", da));
    ck_assert(!cached("alice", db));
    ck_assert(cached("alice", dc));
}
END_TEST

START_TEST(test_damaged_image_ignored)
{
    unsigned char a[1200], da[CRM_DIGEST_LEN], hex[2 * CRM_DIGEST_LEN + 1];
    char path[256];
    image('a', a, da);
    crm_kcache_put("alice", da, a, sizeof a);
    crm_sha256_hex(da, (char *)hex);
    snprintf(path, sizeof path, "%s/alice/%s.fatbin", dir, hex);
    FILE *f = fopen(path, "r+");
    ck_assert_ptr_nonnull(f);
    fputc('x', f);
    fclose(f);
    ck_assert(!cached("alice", da));
}
END_TEST

START_TEST(test_image_over_the_cap_not_kept)
{
    unsigned char a[1200], da[CRM_DIGEST_LEN];
    setenv(CRM_KCACHE_MAX_ENV, "1000", 1);
    image('a', a, da);
    crm_kcache_put("alice", da, a, sizeof a);
    ck_assert(!cached("alice", da));
}
END_TEST

static Suite *kcache_suite(void)
{
    Suite *s = suite_create("kcache");
    TCase *tc = tcase_create("cache");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_per_user);
    tcase_add_test(tc, test_least_recently_used_goes_first);
    tcase_add_test(tc, test_damaged_image_ignored);
    tcase_add_test(tc, test_image_over_the_cap_not_kept);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(kcache_suite)
