/* check_startup.c -- unit tests of the policy for connections not yet admitted
 * (server/crm_startup.h): room while under the caps, the peer's own oldest idle
 * startup ended first, the oldest of all past the total cap, a newcomer closed
 * when everyone over the cap is too young to make room for it unless its source was
 * admitted before; the table of such sources. */
#include <stdio.h>
#include <string.h>
#include "server/crm_startup.h"
#include "tests/unit/crm_check.h"

#define NOW 100000u
#define OLD (NOW - CRM_STARTUP_MIN_AGE_MS - 1)
#define YOUNG (NOW - 10)

START_TEST(test_room_under_the_caps)
{
    crm_startup p[] = {{"10.0.0.9", OLD, 0}, {"10.0.0.9", YOUNG, 0}};
    int v = -1;
    ck_assert_int_eq(crm_startup_decide(p, 2, "10.0.0.9", 0, NOW, 3, 3, &v), CRM_STARTUP_ACCEPT);
    ck_assert_int_eq(crm_startup_decide(p, 0, "10.0.0.1", 0, NOW, 1, 1, &v), CRM_STARTUP_ACCEPT);
    ck_assert_int_eq(crm_startup_decide(p, 2, "10.0.0.1", 0, NOW, 0, 0, &v), CRM_STARTUP_ACCEPT); /* no caps */
}
END_TEST

START_TEST(test_peer_cap_ends_its_own_oldest)
{
    crm_startup p[] = {{"10.0.0.1", OLD - 500, 0}, {"10.0.0.9", OLD, 0}, {"10.0.0.9", OLD - 100, 0},
                       {"10.0.0.9", YOUNG, 0}};
    int v = -1;
    /* 10.0.0.9 has 3 of its cap of 3: its own oldest idle one goes, not 10.0.0.1's older one */
    ck_assert_int_eq(crm_startup_decide(p, 4, "10.0.0.9", 0, NOW, 100, 3, &v), CRM_STARTUP_EVICT);
    ck_assert_int_eq(v, 2);
}
END_TEST

START_TEST(test_total_cap_ends_the_oldest)
{
    crm_startup p[] = {{"10.0.0.2", OLD, 0}, {"10.0.0.3", OLD - 7, 0}, {"10.0.0.4", YOUNG, 0}};
    int v = -1;
    ck_assert_int_eq(crm_startup_decide(p, 3, "10.0.0.5", 0, NOW, 3, 64, &v), CRM_STARTUP_EVICT);
    ck_assert_int_eq(v, 1);
}
END_TEST

START_TEST(test_refused_when_all_are_young)
{
    crm_startup p[] = {{"10.0.0.9", YOUNG, 0}, {"10.0.0.9", NOW - CRM_STARTUP_MIN_AGE_MS + 1, 0}};
    int v = -1;
    ck_assert_int_eq(crm_startup_decide(p, 2, "10.0.0.9", 0, NOW, 100, 2, &v), CRM_STARTUP_REFUSE);
    ck_assert_int_eq(crm_startup_decide(p, 2, "10.0.0.1", 0, NOW, 2, 100, &v), CRM_STARTUP_REFUSE);
    /* over its own cap, a peer may not end another's idle startup either */
    crm_startup q[] = {{"10.0.0.1", OLD, 0}, {"10.0.0.9", YOUNG, 0}};
    ck_assert_int_eq(crm_startup_decide(q, 2, "10.0.0.9", 0, NOW, 100, 1, &v), CRM_STARTUP_REFUSE);
}
END_TEST

/* Strangers at many addresses, all young, fill the total cap: a newcomer from a
 * source admitted before ends the oldest stranger's startup; a stranger is refused;
 * over its own source's cap even a trusted newcomer ends only its own. */
START_TEST(test_trusted_newcomer_passes_a_young_crowd)
{
    crm_startup p[] = {{"10.0.0.5", YOUNG, 0}, {"10.0.0.6", YOUNG - 5, 0}, {"10.0.0.1", YOUNG - 9, 1}};
    int v = -1;
    ck_assert_int_eq(crm_startup_decide(p, 3, "10.0.0.9", 0, NOW, 3, 64, &v), CRM_STARTUP_REFUSE);
    ck_assert_int_eq(crm_startup_decide(p, 3, "10.0.0.1", 1, NOW, 3, 64, &v), CRM_STARTUP_EVICT);
    ck_assert_int_eq(v, 1); /* the oldest stranger, not the trusted startup */
    crm_startup all_trusted[] = {{"10.0.0.2", YOUNG, 1}, {"10.0.0.3", YOUNG, 1}};
    ck_assert_int_eq(crm_startup_decide(all_trusted, 2, "10.0.0.1", 1, NOW, 2, 64, &v), CRM_STARTUP_REFUSE);
    crm_startup own[] = {{"10.0.0.1", YOUNG, 1}, {"10.0.0.5", OLD, 0}};
    ck_assert_int_eq(crm_startup_decide(own, 2, "10.0.0.1", 1, NOW, 100, 1, &v), CRM_STARTUP_REFUSE);
}
END_TEST

/* The table of sources admitted before: found while fresh, forgotten after
 * CRM_STARTUP_TRUST_MS, and full, it replaces the least recently admitted. */
START_TEST(test_trust_table)
{
    static crm_startup_trust t;
    memset(&t, 0, sizeof t);
    crm_startup_trust_add(&t, "10.0.0.1", 1000);
    ck_assert(crm_startup_trusted(&t, "10.0.0.1", 2000));
    ck_assert(!crm_startup_trusted(&t, "10.0.0.2", 2000));
    ck_assert(!crm_startup_trusted(&t, "10.0.0.1", 1000 + CRM_STARTUP_TRUST_MS));
    char peer[32];
    for (int i = 0; i < CRM_STARTUP_TRUSTED; i++) {
        snprintf(peer, sizeof peer, "10.1.%d.%d", i / 256, i % 256);
        crm_startup_trust_add(&t, peer, 5000 + (uint64_t)i);
    }
    ck_assert(!crm_startup_trusted(&t, "10.0.0.1", 6000)); /* the least recent, replaced */
    ck_assert(crm_startup_trusted(&t, "10.1.0.0", 6000));
    crm_startup_trust_add(&t, "10.1.0.0", 7000); /* refreshed, not added twice */
    crm_startup_trust_add(&t, "10.9.9.9", 7001);
    ck_assert(crm_startup_trusted(&t, "10.1.0.0", 7002));
    ck_assert(!crm_startup_trusted(&t, "10.1.0.1", 7002));
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
    tcase_add_test(tc, test_trusted_newcomer_passes_a_young_crowd);
    tcase_add_test(tc, test_trust_table);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(startup_suite)
