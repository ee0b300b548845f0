/* check_quota.c -- unit tests of --quota's lines (server/crm_quota.h): sizes with
 * their suffixes, session counts, the '*' line for everyone else, and the lines
 * refused with a reason. */
#include <string.h>
#include "server/crm_quota.h"
#include "tests/unit/crm_check.h"

START_TEST(test_parse_limits)
{
    char user[80], err[200];
    crm_quota q;
    ck_assert_int_eq(crm_quota_parse("alice:mem=8G,sessions=2", user, sizeof user, &q, err, sizeof err), 0);
    ck_assert_str_eq(user, "alice");
    ck_assert_uint_eq(q.mem, 8ull << 30);
    ck_assert_int_eq(q.sessions, 2);
    ck_assert_int_eq(crm_quota_parse("*:mem=512M", user, sizeof user, &q, err, sizeof err), 0);
    ck_assert_str_eq(user, "*");
    ck_assert_uint_eq(q.mem, 512ull << 20);
    ck_assert_int_eq(q.sessions, 0);
    ck_assert_int_eq(crm_quota_parse("bob:sessions=1,mem=64KiB", user, sizeof user, &q, err, sizeof err), 0);
    ck_assert_uint_eq(q.mem, 64ull << 10);
    ck_assert_int_eq(crm_quota_parse("bob:mem=3TB", user, sizeof user, &q, err, sizeof err), 0);
    ck_assert_uint_eq(q.mem, 3ull << 40);
    ck_assert_int_eq(crm_quota_parse("bob:mem=1000", user, sizeof user, &q, err, sizeof err), 0);
    ck_assert_uint_eq(q.mem, 1000);
}
END_TEST

START_TEST(test_bad_lines_refused)
{
    static const char *bad[] = {"alice", "alice:", ":mem=1G", "alice:mem=", "alice:mem=0", "alice:mem=8X",
                                "alice:mem=G", "alice:mem=99999999999T", "alice:sessions=0", "alice:sessions=-1",
                                "alice:sessions=1x", "alice:cpu=1", "al/ice:mem=1G", "alice:mem=8GBs"};
    char user[80], err[200];
    crm_quota q;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = '\0';
        ck_assert_msg(crm_quota_parse(bad[i], user, sizeof user, &q, err, sizeof err) == -1, "accepted %s", bad[i]);
        ck_assert_msg(err[0] != '\0', "no reason for %s", bad[i]);
    }
}
END_TEST

START_TEST(test_lookup_prefers_own_line)
{
    char err[200];
    crm_quota_clear();
    ck_assert_uint_eq(crm_quota_of("alice").mem, 0); /* no lines: no limits */
    ck_assert_int_eq(crm_quota_add("*:mem=1G,sessions=4", err, sizeof err), 0);
    ck_assert_int_eq(crm_quota_add("alice:mem=8G", err, sizeof err), 0);
    ck_assert_uint_eq(crm_quota_of("alice").mem, 8ull << 30);
    ck_assert_int_eq(crm_quota_of("alice").sessions, 0); /* its own line, whole */
    ck_assert_uint_eq(crm_quota_of("bob").mem, 1ull << 30);
    ck_assert_int_eq(crm_quota_of("bob").sessions, 4);
    ck_assert_int_eq(crm_quota_add("alice:mem=2G", err, sizeof err), 0); /* replaces */
    ck_assert_uint_eq(crm_quota_of("alice").mem, 2ull << 30);
    crm_quota_clear();
}
END_TEST

static Suite *quota_suite(void)
{
    Suite *s = suite_create("quota");
    TCase *tc = tcase_create("lines");
    tcase_add_test(tc, test_parse_limits);
    tcase_add_test(tc, test_bad_lines_refused);
    tcase_add_test(tc, test_lookup_prefers_own_line);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(quota_suite)
