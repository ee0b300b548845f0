/* check_gpu_time.c -- unit tests of server/crm_gpu_time.c: a session's kernel time
 * on a GPU from NVML's per-process utilisation samples. */
#include "tests/unit/crm_check.h"

#include "server/crm_gpu_time.h"

static nvmlProcessUtilizationSample_t at(unsigned pid, unsigned long long us, unsigned sm)
{
    nvmlProcessUtilizationSample_t s = {.pid = pid, .timeStamp = us, .smUtil = sm};
    return s;
}

/* The first look marks the start; later samples count their utilisation over the
 * time since the one before, other processes' samples only move *last_seen. */
START_TEST(test_samples_integrate)
{
    unsigned long long seen = 0;
    nvmlProcessUtilizationSample_t first[] = {at(7, 1000, 90), at(8, 1500, 100)};
    ck_assert_uint_eq(crm_gpu_time_from_samples(first, 2, 7, &seen), 0);
    ck_assert_uint_eq(seen, 1500);
    /* unordered: 7 at 1,200,000 (50 %) and 201,500 (100 %) */
    nvmlProcessUtilizationSample_t later[] = {at(7, 1201500, 50), at(9, 1300000, 100), at(7, 201500, 100)};
    uint64_t ns = crm_gpu_time_from_samples(later, 3, 7, &seen);
    ck_assert_uint_eq(ns, 200000ull * 1000 * 100 / 100 + 1000000ull * 1000 * 50 / 100);
    ck_assert_uint_eq(seen, 1300000);
}
END_TEST

/* A sample after a long idle gap covers at most CRM_GPU_TIME_SAMPLE_MAX_US; a
 * utilisation over 100 counts as 100; no sample of ours counts nothing. */
START_TEST(test_samples_bounded)
{
    unsigned long long seen = 1000;
    nvmlProcessUtilizationSample_t gap[] = {at(7, 1000 + 60000000ull, 250)};
    ck_assert_uint_eq(crm_gpu_time_from_samples(gap, 1, 7, &seen), CRM_GPU_TIME_SAMPLE_MAX_US * 1000);
    nvmlProcessUtilizationSample_t others[] = {at(3, seen + 5000, 100)};
    ck_assert_uint_eq(crm_gpu_time_from_samples(others, 1, 7, &seen), 0);
    ck_assert_uint_eq(crm_gpu_time_from_samples(NULL, 0, 7, &seen), 0);
}
END_TEST

static Suite *crm_gpu_time_suite(void)
{
    Suite *s = suite_create("gpu_time");
    TCase *tc = tcase_create("samples");
    tcase_add_test(tc, test_samples_integrate);
    tcase_add_test(tc, test_samples_bounded);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(crm_gpu_time_suite)
