/* check_limits.c -- unit tests of --session-limits (server/crm_limits.h): the
 * defaults, counts and sizes by kind, 0 for no limit, and specs refused with a
 * reason and nothing changed. */
#include <string.h>
#include "server/crm_limits.h"
#include "tests/unit/crm_check.h"

START_TEST(test_defaults_bound_every_kind)
{
    crm_limits l = crm_limits_default();
    for (int k = 0; k < CRM_LIMIT_KINDS; k++)
        ck_assert_msg(l.max[k] > 0, "%s has no default limit", crm_limit_name(k));
    ck_assert_uint_eq(l.max[CRM_LIMIT_STREAMS], 1024);
    ck_assert_uint_eq(l.max[CRM_LIMIT_HOST_MEMORY], 16ull << 30);
    ck_assert_ptr_null(crm_limit_name(CRM_LIMIT_KINDS));
    ck_assert_str_eq(crm_limit_name(CRM_LIMIT_MODULE_BYTES), "module-bytes");
}
END_TEST

START_TEST(test_parse_counts_and_sizes)
{
    char err[300];
    crm_limits l = crm_limits_default();
    ck_assert_int_eq(crm_limits_parse("streams=16,module-bytes=256K,host-memory=2G,events=0", &l, err, sizeof err), 0);
    ck_assert_uint_eq(l.max[CRM_LIMIT_STREAMS], 16);
    ck_assert_uint_eq(l.max[CRM_LIMIT_MODULE_BYTES], 256ull << 10);
    ck_assert_uint_eq(l.max[CRM_LIMIT_HOST_MEMORY], 2ull << 30);
    ck_assert_uint_eq(l.max[CRM_LIMIT_EVENTS], 0); /* no limit */
    ck_assert_uint_eq(l.max[CRM_LIMIT_HANDLES], 256); /* untouched: the default */
    ck_assert_int_eq(crm_limits_parse("functions=5", &l, err, sizeof err), 0);
    ck_assert_uint_eq(l.max[CRM_LIMIT_FUNCTIONS], 5);
    ck_assert_uint_eq(l.max[CRM_LIMIT_STREAMS], 16); /* a second option adds to the first */
}
END_TEST

START_TEST(test_bad_specs_change_nothing)
{
    static const char *bad[] = {"", ",", "streams", "streams=", "streams=-1", "streams=1K", "streams=1x",
                                "module-bytes=8X", "module-bytes=", "cpus=4", "streams=16,cpus=4",
                                "streams=9999999999999999"};
    char err[300];
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        crm_limits l = crm_limits_default(), before = l;
        err[0] = '\0';
        ck_assert_msg(crm_limits_parse(bad[i], &l, err, sizeof err) == -1, "accepted '%s'", bad[i]);
        ck_assert_msg(err[0] != '\0', "no reason for '%s'", bad[i]);
        ck_assert_msg(memcmp(&l, &before, sizeof l) == 0, "'%s' changed the limits", bad[i]);
    }
    crm_limits l = crm_limits_default();
    crm_limits_parse("cpus=4", &l, err, sizeof err);
    ck_assert_msg(strstr(err, "host-memory") != NULL, "the reason does not list the kinds: %s", err);
}
END_TEST

static Suite *limits_suite(void)
{
    Suite *s = suite_create("limits");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_defaults_bound_every_kind);
    tcase_add_test(tc, test_parse_counts_and_sizes);
    tcase_add_test(tc, test_bad_specs_change_nothing);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(limits_suite)
