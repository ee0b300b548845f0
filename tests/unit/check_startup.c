/* check_startup.c -- unit tests of the policy for connections not yet admitted
 * (server/crm_startup.h): room while under the caps, the peer's own oldest idle
 * startup ended first, the oldest of all past the total cap, and a newcomer closed
 * when everyone over the cap is too young to make room for it. */
#include "server/crm_startup.h"
#include "tests/unit/crm_check.h"

#define NOW 100000u
#define OLD (NOW - CRM_STARTUP_MIN_AGE_MS - 1)
#define YOUNG (NOW - 10)

START_TEST(test_room_under_the_caps)
{
    crm_startup p[] = {{"10.0.0.9", OLD}, {"10.0.0.9", YOUNG}};
    int v = -1;
    ck_assert_int_eq(crm_startup_decide(p, 2, "10.0.0.9", NOW, 3, 3, &v), CRM_STARTUP_ACCEPT);
    ck_assert_int_eq(crm_startup_decide(p, 0, "10.0.0.1", NOW, 1, 1, &v), CRM_STARTUP_ACCEPT);
    ck_assert_int_eq(crm_startup_decide(p, 2, "10.0.0.1", NOW, 0, 0, &v), CRM_STARTUP_ACCEPT); /* no caps */
}
END_TEST

START_TEST(test_peer_cap_ends_its_own_oldest)
{
    crm_startup p[] = {{"10.0.0.1", OLD - 500}, {"10.0.0.9", OLD}, {"10.0.0.9", OLD - 100}, {"10.0.0.9", YOUNG}};
    int v = -1;
    /* 10.0.0.9 has 3 of its cap of 3: its own oldest idle one goes, not 10.0.0.1's older one */
    ck_assert_int_eq(crm_startup_decide(p, 4, "10.0.0.9", NOW, 100, 3, &v), CRM_STARTUP_EVICT);
    ck_assert_int_eq(v, 2);
}
END_TEST

START_TEST(test_total_cap_ends_the_oldest)
{
    crm_startup p[] = {{"10.0.0.2", OLD}, {"10.0.0.3", OLD - 7}, {"10.0.0.4", YOUNG}};
    int v = -1;
    ck_assert_int_eq(crm_startup_decide(p, 3, "10.0.0.5", NOW, 3, 64, &v), CRM_STARTUP_EVICT);
    ck_assert_int_eq(v, 1);
}
END_TEST

START_TEST(test_refused_when_all_are_young)
{
    crm_startup p[] = {{"10.0.0.9", YOUNG}, {"10.0.0.9", NOW - CRM_STARTUP_MIN_AGE_MS + 1}};
    int v = -1;
    ck_assert_int_eq(crm_startup_decide(p, 2, "10.0.0.9", NOW, 100, 2, &v), CRM_STARTUP_REFUSE);
    ck_assert_int_eq(crm_startup_decide(p, 2, "10.0.0.1", NOW, 2, 100, &v), CRM_STARTUP_REFUSE);
    /* over its own cap, a peer may not end another's idle startup either */
    crm_startup q[] = {{"10.0.0.1", OLD}, {"10.0.0.9", YOUNG}};
    ck_assert_int_eq(crm_startup_decide(q, 2, "10.0.0.9", NOW, 100, 1, &v), CRM_STARTUP_REFUSE);
}
END_TEST

static Suite *startup_suite(void)
{
    Suite *s = suite_create("startup");
    TCase *tc = tcase_create("policy");
    tcase_add_test(tc, test_room_under_the_caps);
    tcase_add_test(tc, test_peer_cap_ends_its_own_oldest);
    tcase_add_test(tc, test_total_cap_ends_the_oldest);
    tcase_add_test(tc, test_refused_when_all_are_young);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(startup_suite)
