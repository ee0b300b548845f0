/* check_pool.c -- unit tests of client/crm_pool.c: CUDAREM_SERVER lists, the pooled
 * device numbering, CUDAREM_PICK and CUDA_VISIBLE_DEVICES over the pool. */
#include "tests/unit/crm_check.h"

#include <string.h>
#include "client/crm_pool.h"

static crm_pool_spec spec;
static crm_pool_map map;
static char err[512];

START_TEST(test_parse_list_and_gpus)
{
    ck_assert_int_eq(crm_pool_parse("gpu1:7470@1+0,unix:/run/cudarem.sock,[::1]:7470@3", &spec, err, sizeof err), 0);
    ck_assert_int_eq(spec.nservers, 3);
    ck_assert_str_eq(spec.servers[0].addr, "gpu1:7470");
    ck_assert_int_eq(spec.servers[0].ngpus, 2);
    ck_assert_int_eq(spec.servers[0].gpus[0], 1);
    ck_assert_int_eq(spec.servers[0].gpus[1], 0);
    ck_assert_str_eq(spec.servers[1].addr, "unix:/run/cudarem.sock");
    ck_assert_int_eq(spec.servers[1].ngpus, 0);
    ck_assert_str_eq(spec.servers[2].addr, "[::1]:7470");
    ck_assert_int_eq(spec.servers[2].gpus[0], 3);
    ck_assert_int_eq(crm_pool_parse("tcp:h:1", &spec, err, sizeof err), 0);
    ck_assert_int_eq(spec.nservers, 1);
}
END_TEST

START_TEST(test_parse_refuses)
{
    static const char *const bad[] = {"", "a:1,", ",a:1", "a:1@", "a:1@x", "a:1@1+", "a:1@-1", "a:1@64", "@1",
                                      "a:1,,b:2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        ck_assert_msg(crm_pool_parse(bad[i], &spec, err, sizeof err) == -1, "'%s' parsed", bad[i]);
        ck_assert_msg(err[0] != '\0', "'%s': no reason given", bad[i]);
    }
    char many[4096] = "";
    for (int i = 0; i < CRM_POOL_MAX_SERVERS + 1; i++)
        strcat(many, i ? ",h:1" : "h:1");
    ck_assert_int_eq(crm_pool_parse(many, &spec, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "servers"));
}
END_TEST

START_TEST(test_build_numbers_devices_in_list_order)
{
    int offered[] = {2, 3};
    ck_assert_int_eq(crm_pool_parse("a:1,b:1@2+0", &spec, err, sizeof err), 0);
    ck_assert_int_eq(crm_pool_build(&spec, offered, &map, err, sizeof err), 0);
    ck_assert_int_eq(map.count, 4);
    int want[][2] = {{0, 0}, {0, 1}, {1, 2}, {1, 0}};
    for (int g = 0; g < 4; g++) {
        ck_assert_int_eq(map.dev[g].server, want[g][0]);
        ck_assert_int_eq(map.dev[g].local, want[g][1]);
    }
    ck_assert_int_eq(crm_pool_parse("a:1,b:1@3", &spec, err, sizeof err), 0);
    ck_assert_int_eq(crm_pool_build(&spec, offered, &map, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "has no GPU 3"));
}
END_TEST

/* Four devices: memory shares 50 %, 0 %, 0 % with a session, 0 %. */
static void loaded_map(void)
{
    memset(&map, 0, sizeof map);
    map.count = 4;
    for (int g = 0; g < 4; g++)
        map.dev[g] = (crm_pool_device){.server = g / 2, .local = g % 2, .memory_total = 1000};
    map.dev[0].memory_used = 500;
    map.dev[2].sessions = 1;
}

START_TEST(test_pick_least_loaded_is_stable)
{
    loaded_map();
    ck_assert_int_eq(crm_pool_pick(&map, "least-loaded"), 0);
    int order[] = {1, 3, 2, 0}; /* idle ones in list order, then by sessions, then by memory */
    for (int g = 0; g < 4; g++)
        ck_assert_int_eq(map.dev[g].server * 2 + map.dev[g].local, order[g]);
    loaded_map();
    ck_assert_int_eq(crm_pool_pick(&map, NULL), 0);
    ck_assert_int_eq(crm_pool_pick(&map, "order"), 0);
    for (int g = 0; g < 4; g++)
        ck_assert_int_eq(map.dev[g].server * 2 + map.dev[g].local, g);
    ck_assert_int_eq(crm_pool_pick(&map, "fastest"), -1);
}
END_TEST

static int device_at(int g)
{
    return map.dev[g].server * 2 + map.dev[g].local;
}

START_TEST(test_visible_devices_over_the_pool)
{
    loaded_map();
    crm_pool_visible(&map, "3,1");
    ck_assert_int_eq(map.count, 2);
    ck_assert_int_eq(device_at(0), 3);
    ck_assert_int_eq(device_at(1), 1);
    loaded_map();
    crm_pool_visible(&map, "2,9,0"); /* CUDA stops at the first index that is not valid */
    ck_assert_int_eq(map.count, 1);
    ck_assert_int_eq(device_at(0), 2);
    loaded_map();
    crm_pool_visible(&map, "1,1,2"); /* a repeated index is not valid either */
    ck_assert_int_eq(map.count, 1);
    loaded_map();
    crm_pool_visible(&map, "");
    ck_assert_int_eq(map.count, 0);
    loaded_map();
    crm_pool_visible(&map, "GPU-1234");
    ck_assert_int_eq(map.count, 0);
    loaded_map();
    crm_pool_visible(&map, NULL);
    ck_assert_int_eq(map.count, 4);
}
END_TEST

static Suite *crm_pool_suite(void)
{
    Suite *s = suite_create("pool");
    TCase *tc = tcase_create("pool");
    tcase_add_test(tc, test_parse_list_and_gpus);
    tcase_add_test(tc, test_parse_refuses);
    tcase_add_test(tc, test_build_numbers_devices_in_list_order);
    tcase_add_test(tc, test_pick_least_loaded_is_stable);
    tcase_add_test(tc, test_visible_devices_over_the_pool);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(crm_pool_suite)
