/* check_ptrmap.c -- unit tests of client/crm_ptrmap: classifying addresses as device,
 * pinned, registered or plain host memory, kind-exact removal, dropping a device, and
 * device memory fresh from a server replacing stale records, across threads too.
 *
 * The pointer tables are process-global: every test runs in its own forked process
 * (Check's default), so no test sees another's ranges. Do not run with CK_FORK=no. */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>

#include "client/crm_ptrmap.h"
#include "tests/unit/crm_check.h"

#define DEV  0x7f1000000000ull   /* device ranges live up here */
#define HOST 0x000055aa00000000ull /* and host ranges down here */

static enum crm_mem_kind classify(uint64_t addr)
{
    return crm_ptrmap_classify(addr, NULL);
}

START_TEST(test_unknown_address_is_plain_host_memory)
{
    crm_range r = {.base = 1, .size = 2, .kind = 3, .device = 4};
    ck_assert_int_eq(crm_ptrmap_classify(HOST, &r), CRM_MEM_NONE);
    ck_assert_uint_eq(r.base, 1); /* untouched */
    ck_assert_int_eq(classify(0), CRM_MEM_NONE);
    ck_assert_int_eq(classify(UINT64_MAX), CRM_MEM_NONE);
}
END_TEST

START_TEST(test_device_range_classified_with_its_range)
{
    ck_assert_int_eq(crm_ptrmap_add(CRM_MEM_DEVICE, DEV, 4096, 1, 0), 0);
    crm_range r;
    ck_assert_int_eq(crm_ptrmap_classify(DEV + 100, &r), CRM_MEM_DEVICE);
    ck_assert_uint_eq(r.base, DEV);
    ck_assert_uint_eq(r.size, 4096);
    ck_assert_int_eq(r.device, 1);
    ck_assert_uint_eq(r.kind & 0xff, CRM_MEM_DEVICE);
    ck_assert_int_eq(classify(DEV), CRM_MEM_DEVICE);
    ck_assert_int_eq(classify(DEV + 4095), CRM_MEM_DEVICE);
    ck_assert_int_eq(classify(DEV + 4096), CRM_MEM_NONE);
    ck_assert_int_eq(classify(DEV - 1), CRM_MEM_NONE);
}
END_TEST

START_TEST(test_pinned_and_registered_classified_with_flags)
{
    ck_assert_int_eq(crm_ptrmap_add(CRM_MEM_PINNED, HOST, 8192, -1, 0x5), 0);
    ck_assert_int_eq(crm_ptrmap_add(CRM_MEM_REGISTERED, HOST + 8192, 100, -1, 0x2), 0);
    crm_range r;
    ck_assert_int_eq(crm_ptrmap_classify(HOST + 8191, &r), CRM_MEM_PINNED);
    ck_assert_uint_eq(r.base, HOST);
    ck_assert_uint_eq(r.kind >> 8, 0x5);
    ck_assert_int_eq(crm_ptrmap_classify(HOST + 8192, &r), CRM_MEM_REGISTERED);
    ck_assert_uint_eq(r.size, 100);
    ck_assert_uint_eq(r.kind >> 8, 0x2);
    ck_assert_int_eq(classify(HOST + 8292), CRM_MEM_NONE);
}
END_TEST

START_TEST(test_same_side_overlap_rejected_other_side_allowed)
{
    ck_assert_int_eq(crm_ptrmap_add(CRM_MEM_PINNED, HOST, 4096, -1, 0), 0);
    /* Pinned and registered share the host side. */
    ck_assert_int_eq(crm_ptrmap_add(CRM_MEM_REGISTERED, HOST + 4000, 4096, -1, 0), -1);
    ck_assert_int_eq(crm_ptrmap_add(CRM_MEM_PINNED, HOST, 1, -1, 0), -1);
    ck_assert_int_eq(crm_ptrmap_add(CRM_MEM_DEVICE, DEV, 4096, 0, 0), 0);
    ck_assert_int_eq(crm_ptrmap_add(CRM_MEM_DEVICE, DEV + 4095, 16, 1, 0), -1);
    /* The device side is separate: a device range may cover a host range's addresses. */
    ck_assert_int_eq(crm_ptrmap_add(CRM_MEM_DEVICE, HOST + 2048, 4096, 0, 0), 0);
    ck_assert_int_eq(crm_ptrmap_add(CRM_MEM_DEVICE, 0, 0, 0, 0), -1); /* zero size */
}
END_TEST

START_TEST(test_device_ranges_win_over_host_ranges)
{
    ck_assert_int_eq(crm_ptrmap_add(CRM_MEM_PINNED, HOST, 8192, -1, 0), 0);
    ck_assert_int_eq(crm_ptrmap_add(CRM_MEM_DEVICE, HOST + 4096, 8192, 0, 0), 0);
    crm_range r;
    ck_assert_int_eq(crm_ptrmap_classify(HOST, &r), CRM_MEM_PINNED);
    ck_assert_int_eq(crm_ptrmap_classify(HOST + 4096, &r), CRM_MEM_DEVICE);
    ck_assert_uint_eq(r.base, HOST + 4096);
    ck_assert_int_eq(classify(HOST + 8191), CRM_MEM_DEVICE);
    ck_assert_int_eq(classify(HOST + 12287), CRM_MEM_DEVICE);
    ck_assert_int_eq(classify(HOST + 12288), CRM_MEM_NONE);
}
END_TEST

START_TEST(test_remove_needs_matching_kind_and_exact_base)
{
    ck_assert_int_eq(crm_ptrmap_add(CRM_MEM_PINNED, HOST, 4096, -1, 7), 0);
    ck_assert_int_eq(crm_ptrmap_add(CRM_MEM_REGISTERED, HOST + 4096, 4096, -1, 0), 0);
    ck_assert_int_eq(crm_ptrmap_add(CRM_MEM_DEVICE, DEV, 4096, 2, 0), 0);
    crm_range out = {.base = 77};

    ck_assert_int_eq(crm_ptrmap_remove(CRM_MEM_REGISTERED, HOST, &out), -1);
    ck_assert_int_eq(crm_ptrmap_remove(CRM_MEM_DEVICE, HOST, &out), -1);
    ck_assert_int_eq(crm_ptrmap_remove(CRM_MEM_NONE, HOST, &out), -1);
    ck_assert_int_eq(crm_ptrmap_remove(CRM_MEM_PINNED, HOST + 1, &out), -1);
    ck_assert_int_eq(crm_ptrmap_remove(CRM_MEM_PINNED, HOST + 4096, &out), -1);
    ck_assert_int_eq(crm_ptrmap_remove(CRM_MEM_PINNED, DEV, &out), -1);
    ck_assert_int_eq(crm_ptrmap_remove(CRM_MEM_DEVICE, DEV + 8, &out), -1);
    ck_assert_uint_eq(out.base, 77); /* untouched on failure */
    ck_assert_int_eq(classify(HOST), CRM_MEM_PINNED);
    ck_assert_int_eq(classify(HOST + 4096), CRM_MEM_REGISTERED);
    ck_assert_int_eq(classify(DEV), CRM_MEM_DEVICE);

    ck_assert_int_eq(crm_ptrmap_remove(CRM_MEM_PINNED, HOST, &out), 0);
    ck_assert_uint_eq(out.base, HOST);
    ck_assert_uint_eq(out.size, 4096);
    ck_assert_uint_eq(out.kind, CRM_MEM_PINNED | 7u << 8);
    ck_assert_int_eq(classify(HOST), CRM_MEM_NONE);
    ck_assert_int_eq(classify(HOST + 4096), CRM_MEM_REGISTERED);
    ck_assert_int_eq(crm_ptrmap_remove(CRM_MEM_PINNED, HOST, &out), -1);

    ck_assert_int_eq(crm_ptrmap_remove(CRM_MEM_REGISTERED, HOST + 4096, NULL), 0);
    ck_assert_int_eq(crm_ptrmap_remove(CRM_MEM_DEVICE, DEV, &out), 0);
    ck_assert_int_eq(out.device, 2);
    ck_assert_int_eq(classify(HOST + 4096), CRM_MEM_NONE);
    ck_assert_int_eq(classify(DEV), CRM_MEM_NONE);
}
END_TEST

START_TEST(test_remove_device_leaves_host_range_at_same_base)
{
    ck_assert_int_eq(crm_ptrmap_add(CRM_MEM_REGISTERED, HOST, 4096, -1, 0), 0);
    ck_assert_int_eq(crm_ptrmap_add(CRM_MEM_DEVICE, HOST, 4096, 0, 0), 0);
    ck_assert_int_eq(classify(HOST), CRM_MEM_DEVICE);
    ck_assert_int_eq(crm_ptrmap_remove(CRM_MEM_DEVICE, HOST, NULL), 0);
    ck_assert_int_eq(classify(HOST), CRM_MEM_REGISTERED);
    ck_assert_int_eq(crm_ptrmap_remove(CRM_MEM_DEVICE, HOST, NULL), -1);
    ck_assert_int_eq(classify(HOST), CRM_MEM_REGISTERED);
}
END_TEST

START_TEST(test_drop_device_forgets_only_that_device)
{
    for (uint64_t i = 0; i < 300; i++)
        ck_assert_int_eq(crm_ptrmap_add(CRM_MEM_DEVICE, DEV + i * 4096, 4096, (int)(i % 3), 0), 0);
    ck_assert_int_eq(crm_ptrmap_add(CRM_MEM_PINNED, HOST, 4096, 1, 0), 0); /* host side, "device" 1 */
    crm_ptrmap_drop_device(1);
    for (uint64_t i = 0; i < 300; i++) {
        crm_range r;
        enum crm_mem_kind k = crm_ptrmap_classify(DEV + i * 4096 + 1, &r);
        if (i % 3 == 1) {
            ck_assert_int_eq(k, CRM_MEM_NONE);
        } else {
            ck_assert_int_eq(k, CRM_MEM_DEVICE);
            ck_assert_int_eq(r.device, (int)(i % 3));
        }
    }
    ck_assert_int_eq(classify(HOST), CRM_MEM_PINNED);
    /* The freed space can be used again; dropping an unknown device does nothing. */
    ck_assert_int_eq(crm_ptrmap_add(CRM_MEM_DEVICE, DEV + 4096, 4096, 0, 0), 0);
    crm_ptrmap_drop_device(5);
    ck_assert_int_eq(classify(DEV + 4096), CRM_MEM_DEVICE);
    crm_ptrmap_drop_device(0);
    crm_ptrmap_drop_device(2);
    for (uint64_t i = 0; i < 300; i++)
        ck_assert_int_eq(classify(DEV + i * 4096), CRM_MEM_NONE);
    ck_assert_int_eq(classify(HOST), CRM_MEM_PINNED);
}
END_TEST

/* ------------------------------------------------------------------ threads */

#define THREADS 8
#define PER_THREAD 500

static void *add_many(void *arg)
{
    uintptr_t t = (uintptr_t)arg;
    for (uint64_t i = 0; i < PER_THREAD; i++) {
        uint64_t base = DEV + (i * THREADS + t) * 256;
        if (crm_ptrmap_add(CRM_MEM_DEVICE, base, 256, (int)t, 0) != 0)
            return (void *)1;
        if (crm_ptrmap_classify(base + 255, NULL) != CRM_MEM_DEVICE)
            return (void *)2;
        if (i % 2 && crm_ptrmap_remove(CRM_MEM_DEVICE, base, NULL) != 0)
            return (void *)3;
    }
    return NULL;
}

START_TEST(test_concurrent_adds_and_removes_are_consistent)
{
    pthread_t th[THREADS];
    for (uintptr_t t = 0; t < THREADS; t++)
        ck_assert_int_eq(pthread_create(&th[t], NULL, add_many, (void *)t), 0);
    for (int t = 0; t < THREADS; t++) {
        void *rc = (void *)99;
        ck_assert_int_eq(pthread_join(th[t], &rc), 0);
        ck_assert_ptr_null(rc);
    }
    for (uint64_t i = 0; i < PER_THREAD; i++)
        for (uint64_t t = 0; t < THREADS; t++) {
            crm_range r;
            enum crm_mem_kind k = crm_ptrmap_classify(DEV + (i * THREADS + t) * 256, &r);
            ck_assert_int_eq(k, i % 2 ? CRM_MEM_NONE : CRM_MEM_DEVICE);
            if (k == CRM_MEM_DEVICE)
                ck_assert_int_eq(r.device, (int)t);
        }
}
END_TEST

START_TEST(test_fresh_device_memory_drops_stale_ranges)
{
    /* Stale records: a range under the new one's start, one inside, one past its end. */
    ck_assert_int_eq(crm_ptrmap_add(CRM_MEM_DEVICE, DEV, 4096, 0, 0), 0);
    ck_assert_int_eq(crm_ptrmap_add(CRM_MEM_DEVICE, DEV + 8192, 100, 1, 0), 0);
    ck_assert_int_eq(crm_ptrmap_add(CRM_MEM_DEVICE, DEV + 12000, 4096, 0, 0), 0);
    ck_assert_int_eq(crm_ptrmap_add(CRM_MEM_DEVICE, DEV + 20000, 64, 0, 0), 0); /* untouched */
    ck_assert_int_eq(crm_ptrmap_add(CRM_MEM_PINNED, HOST, 4096, -1, 0), 0);
    ck_assert_int_eq(crm_ptrmap_add_fresh(DEV + 2048, 10000, 0, 0, 0), 0);
    crm_range r;
    ck_assert_int_eq(crm_ptrmap_classify(DEV + 2048, &r), CRM_MEM_DEVICE);
    ck_assert_uint_eq(r.base, DEV + 2048);
    ck_assert_uint_eq(r.size, 10000);
    ck_assert_int_eq(crm_ptrmap_classify(DEV + 12047, &r), CRM_MEM_DEVICE);
    ck_assert_uint_eq(r.base, DEV + 2048);
    ck_assert_int_eq(classify(DEV), CRM_MEM_NONE);
    ck_assert_int_eq(classify(DEV + 12048), CRM_MEM_NONE);
    ck_assert_int_eq(classify(DEV + 20000), CRM_MEM_DEVICE);
    ck_assert_int_eq(classify(HOST), CRM_MEM_PINNED);
    /* The same range again replaces itself; zero and wrapping sizes are refused. */
    ck_assert_int_eq(crm_ptrmap_add_fresh(DEV + 2048, 10000, 0, 0, 0), 0);
    ck_assert_int_eq(crm_ptrmap_add_fresh(DEV, 0, 0, 0, 0), -1);
    ck_assert_int_eq(crm_ptrmap_add_fresh(UINT64_MAX - 10, 100, 0, 0, 0), -1);
    ck_assert_int_eq(classify(DEV + 2048), CRM_MEM_DEVICE);
}
END_TEST

START_TEST(test_fresh_memory_in_a_pool_keeps_other_devices_ranges)
{
    ck_assert_int_eq(crm_ptrmap_add(CRM_MEM_DEVICE, DEV, 4096, 1, 0), 0);
    ck_assert_int_eq(crm_ptrmap_add(CRM_MEM_DEVICE, DEV + 4096, 4096, 0, 0), 0);
    /* Overlapping device 1's memory: refused, nothing changed. */
    ck_assert_int_eq(crm_ptrmap_add_fresh(DEV + 2048, 4096, 0, 0, 1), -1);
    crm_range r;
    ck_assert_int_eq(crm_ptrmap_classify(DEV + 2048, &r), CRM_MEM_DEVICE);
    ck_assert_int_eq(r.device, 1);
    ck_assert_int_eq(crm_ptrmap_classify(DEV + 4096, &r), CRM_MEM_DEVICE);
    ck_assert_int_eq(r.device, 0);
    /* Overlapping only device 0's own stale record: replaced. */
    ck_assert_int_eq(crm_ptrmap_add_fresh(DEV + 6000, 4096, 0, 0, 1), 0);
    ck_assert_int_eq(crm_ptrmap_classify(DEV + 4096, &r), CRM_MEM_NONE);
    ck_assert_int_eq(crm_ptrmap_classify(DEV + 10095, &r), CRM_MEM_DEVICE);
    ck_assert_uint_eq(r.base, DEV + 6000);
}
END_TEST

/* A stand-in for the server's allocator: SLOTS addresses, fewer than the threads, so
 * an address one thread frees is soon another's. Threads allocate as cudaMalloc
 * does (the server hands out, then the table records) and free as cudaFree does
 * (the table forgets, then the server frees): every thread's record must then
 * hold from its add to its own remove, whoever reaches the table first. */
#define SLOTS 3
static pthread_mutex_t server_lock = PTHREAD_MUTEX_INITIALIZER;
static int server_used[SLOTS];

static uint64_t server_alloc(void)
{
    for (;;) {
        pthread_mutex_lock(&server_lock);
        for (int i = 0; i < SLOTS; i++)
            if (!server_used[i]) {
                server_used[i] = 1;
                pthread_mutex_unlock(&server_lock);
                return DEV + (uint64_t)i * 4096;
            }
        pthread_mutex_unlock(&server_lock);
        sched_yield();
    }
}

static void server_free(uint64_t addr)
{
    pthread_mutex_lock(&server_lock);
    server_used[(addr - DEV) / 4096] = 0;
    pthread_mutex_unlock(&server_lock);
}

static void *free_then_reuse(void *arg)
{
    uintptr_t t = (uintptr_t)arg;
    for (uint64_t i = 0; i < PER_THREAD * 4; i++) {
        uint64_t base = server_alloc();
        crm_range gone;
        if (crm_ptrmap_add_fresh(base, 1024 + 8 * (i % 64), (int)t, 0, 0) != 0)
            return (void *)1;
        sched_yield();
        if (!crm_ptrmap_device_region(base, 1024, 1024, 1))
            return (void *)2;
        if (crm_ptrmap_remove(CRM_MEM_DEVICE, base, &gone) != 0 || gone.device != (int)t)
            return (void *)3;
        server_free(base);
    }
    return NULL;
}

START_TEST(test_concurrent_free_and_reuse_keep_every_fresh_record)
{
    pthread_t th[THREADS];
    for (uintptr_t t = 0; t < THREADS; t++)
        ck_assert_int_eq(pthread_create(&th[t], NULL, free_then_reuse, (void *)t), 0);
    for (int t = 0; t < THREADS; t++) {
        void *rc = (void *)99;
        ck_assert_int_eq(pthread_join(th[t], &rc), 0);
        ck_assert_ptr_null(rc);
    }
    for (uint64_t i = 0; i < SLOTS; i++)
        ck_assert_int_eq(classify(DEV + i * 4096), CRM_MEM_NONE);
}
END_TEST

Suite *crm_ptrmap_suite(void)
{
    Suite *s = suite_create("ptrmap");
    TCase *tc = tcase_create("classify");
    /* the threaded cases spin (sched_yield) on a model of the server's reuse: on a
     * loaded 2-core machine they take seconds; what they check is consistency */
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_unknown_address_is_plain_host_memory);
    tcase_add_test(tc, test_device_range_classified_with_its_range);
    tcase_add_test(tc, test_pinned_and_registered_classified_with_flags);
    tcase_add_test(tc, test_same_side_overlap_rejected_other_side_allowed);
    tcase_add_test(tc, test_device_ranges_win_over_host_ranges);
    tcase_add_test(tc, test_remove_needs_matching_kind_and_exact_base);
    tcase_add_test(tc, test_remove_device_leaves_host_range_at_same_base);
    tcase_add_test(tc, test_drop_device_forgets_only_that_device);
    tcase_add_test(tc, test_concurrent_adds_and_removes_are_consistent);
    tcase_add_test(tc, test_fresh_device_memory_drops_stale_ranges);
    tcase_add_test(tc, test_fresh_memory_in_a_pool_keeps_other_devices_ranges);
    tcase_add_test(tc, test_concurrent_free_and_reuse_keep_every_fresh_record);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(crm_ptrmap_suite)
