/* check_deferred.c -- unit tests of client/crm_deferred: failures of queued and
 * posted calls kept for the thread that issued them (its first one), the failure
 * kept for every thread, and the set of threads that posted since an answer. */
#include <stdint.h>
#include <stdlib.h>

#include "client/crm_deferred.h"
#include "tests/unit/crm_check.h"

START_TEST(test_each_thread_takes_only_its_own)
{
    crm_deferred d = {0};
    int api = -1, status = -1;
    crm_deferred_note(&d, 7, 100, 700);
    crm_deferred_note(&d, 3, 101, 98);
    ck_assert_int_eq(crm_deferred_take(&d, 5, &api, &status), 0); /* thread 5 has none */
    ck_assert_int_eq(api, -1);
    ck_assert_int_eq(crm_deferred_take(&d, 3, &api, &status), 1);
    ck_assert_int_eq(api, 101);
    ck_assert_int_eq(status, 98);
    ck_assert_int_eq(crm_deferred_take(&d, 3, &api, &status), 0); /* taken once */
    ck_assert_int_eq(crm_deferred_take(&d, 7, &api, &status), 1);
    ck_assert_int_eq(status, 700);
    ck_assert_uint_eq(d.count, 0);
    crm_deferred_free(&d);
}
END_TEST

START_TEST(test_a_thread_keeps_its_first_failure)
{
    crm_deferred d = {0};
    int api, status;
    crm_deferred_note(&d, 9, 1, 11);
    crm_deferred_note(&d, 9, 2, 22);
    ck_assert_int_eq(crm_deferred_take(&d, 9, &api, &status), 1);
    ck_assert_int_eq(api, 1);
    ck_assert_int_eq(status, 11);
    ck_assert_int_eq(crm_deferred_take(&d, 9, &api, &status), 0);
    crm_deferred_free(&d);
}
END_TEST

START_TEST(test_everyones_failure_goes_to_the_next_taker)
{
    crm_deferred d = {0};
    int api, status;
    crm_deferred_note(&d, 0, 5, 55);
    crm_deferred_note(&d, 4, 6, 66);
    ck_assert_int_eq(crm_deferred_take(&d, 4, &api, &status), 1); /* its own first */
    ck_assert_int_eq(api, 6);
    ck_assert_int_eq(crm_deferred_take(&d, 8, &api, &status), 1);
    ck_assert_int_eq(api, 5);
    ck_assert_int_eq(crm_deferred_take(&d, 4, &api, &status), 0);
    crm_deferred_free(&d);
}
END_TEST

START_TEST(test_many_threads_and_clear)
{
    crm_deferred d = {0};
    int api, status;
    for (uint64_t t = 1; t <= 1000; t++)
        crm_deferred_note(&d, t, (int)t, (int)(t * 2));
    for (int t = 1000; t >= 1; t -= 3) {
        ck_assert_int_eq(crm_deferred_take(&d, (uint64_t)t, &api, &status), 1);
        ck_assert_int_eq(status, t * 2);
    }
    ck_assert_uint_eq(d.count, 1000 - 334);
    crm_deferred_clear(&d);
    ck_assert_int_eq(crm_deferred_take(&d, 2, &api, &status), 0);
    crm_deferred_free(&d);
}
END_TEST

START_TEST(test_owner_set_keeps_each_once)
{
    crm_owner_set s = {0};
    for (int round = 0; round < 3; round++)
        for (uint64_t t = 1; t <= 40; t++)
            ck_assert_int_eq(crm_owner_set_add(&s, t), 0);
    ck_assert_uint_eq(s.count, 40);
    ck_assert_int_eq(s.overflow, 0);
    crm_owner_set_clear(&s);
    ck_assert_uint_eq(s.count, 0);
    ck_assert_int_eq(crm_owner_set_add(&s, 12), 0);
    ck_assert_uint_eq(s.owners[0], 12);
    crm_owner_set_free(&s);
}
END_TEST

Suite *crm_deferred_suite(void)
{
    Suite *s = suite_create("deferred");
    TCase *tc = tcase_create("deferred");
    tcase_add_test(tc, test_each_thread_takes_only_its_own);
    tcase_add_test(tc, test_a_thread_keeps_its_first_failure);
    tcase_add_test(tc, test_everyones_failure_goes_to_the_next_taker);
    tcase_add_test(tc, test_many_threads_and_clear);
    tcase_add_test(tc, test_owner_set_keeps_each_once);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(crm_deferred_suite)
