/* check_shm.c -- unit tests of protocol/crm_shm.c: a region created by one side is
 * attached by the other only with its own name, size and cookie, the name is gone
 * once attached, both mappings see the same bytes, its pages can be reserved; and
 * the sweep removes only our old region names. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "protocol/crm_shm.h"
#include "tests/unit/crm_check.h"

START_TEST(test_create_attach_share_reserve)
{
    crm_shm_region mine, theirs;
    char name[CRM_SHM_NAME_MAX], path[CRM_SHM_NAME_MAX + 16];
    unsigned char cookie[CRM_SHM_COOKIE], wrong[CRM_SHM_COOKIE];
    ck_assert_int_eq(crm_shm_region_create(&mine, 1 << 20, name, cookie), 0);
    ck_assert_int_ge(mine.fd, 0);
    memcpy(wrong, cookie, sizeof wrong);
    wrong[0] ^= 0x80;
    ck_assert_int_eq(crm_shm_region_attach(&theirs, name, 1 << 20, wrong), -1);
    ck_assert_int_eq(crm_shm_region_attach(&theirs, name, 2 << 20, cookie), -1);
    ck_assert_int_eq(crm_shm_region_attach(&theirs, "/elsewhere", 1 << 20, cookie), -1);
    ck_assert_int_eq(crm_shm_region_attach(&theirs, name, 1 << 20, cookie), 0);
    snprintf(path, sizeof path, "/dev/shm%s", name);
    ck_assert_int_ne(access(path, F_OK), 0); /* attached: the name is gone */
    ck_assert_int_eq(crm_shm_region_reserve(&mine), 0);
    ck_assert_int_eq(mine.fd, -1);
    mine.data[12345] = 42;
    ck_assert_int_eq(theirs.data[12345], 42);
    theirs.data[(1 << 20) - 1] = 7;
    ck_assert_int_eq(mine.data[(1 << 20) - 1], 7);
    crm_shm_region_unmap(&theirs);
    crm_shm_region_unmap(&mine);
    ck_assert_ptr_null(mine.map);
}
END_TEST

static void make_file(const char *dir, const char *name, long age_s)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_CREAT | O_WRONLY, 0600);
    ck_assert_int_ge(fd, 0);
    struct timespec t[2] = {{.tv_sec = time(NULL) - age_s}, {.tv_sec = time(NULL) - age_s}};
    ck_assert_int_eq(futimens(fd, t), 0);
    close(fd);
}

START_TEST(test_sweep_removes_only_our_old_names)
{
    char dir[] = "/tmp/crm-shm-XXXXXX", path[512];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    make_file(dir, "cudarem-11-00112233aabbccdd", 7200);
    make_file(dir, "cudarem-12-00112233aabbccdd", 10);
    make_file(dir, "other-old", 7200);
    ck_assert_int_eq(crm_shm_sweep_stale(dir, 3600), 1);
    static const char *const left[] = {"cudarem-12-00112233aabbccdd", "other-old"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, left[i]);
        ck_assert_int_eq(access(path, F_OK), 0);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/cudarem-11-00112233aabbccdd", dir);
    ck_assert_int_ne(access(path, F_OK), 0);
    rmdir(dir);
}
END_TEST

static Suite *shm_suite(void)
{
    Suite *s = suite_create("shm");
    TCase *tc = tcase_create("shm");
    tcase_add_test(tc, test_create_attach_share_reserve);
    tcase_add_test(tc, test_sweep_removes_only_our_old_names);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(shm_suite)
