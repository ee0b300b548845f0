/* check_nvml_ids.c -- unit tests of interpose/crm_nvml_ids.c: NVML's UUID and PCI
 * bus id spellings and its string-copy rule. */
#include "interpose/crm_nvml.h"
#include "tests/unit/crm_check.h"

#include <string.h>

START_TEST(test_uuid_format)
{
    const unsigned char b[16] = {0x63, 0x75, 0x64, 0x61, 0x72, 0x65, 0x6d, 0x2d,
                                 0x65, 0x6d, 0x75, 0x2d, 0x64, 0x65, 0x76, 0x00};
    char buf[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
    ck_assert_int_eq(crm_nvml_format_uuid(b, buf, sizeof buf), 40);
    ck_assert_str_eq(buf, "GPU-63756461-7265-6d2d-656d-752d64657600");
}
END_TEST

START_TEST(test_uuid_format_truncates_safely)
{
    const unsigned char b[16] = {0xff};
    char buf[8];
    ck_assert_int_eq(crm_nvml_format_uuid(b, buf, sizeof buf), 40);
    ck_assert_str_eq(buf, "GPU-ff0");
}
END_TEST

START_TEST(test_bus_id_format)
{
    char buf[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
    crm_nvml_format_bus_id(0, 0x1b, 3, 0, buf, sizeof buf);
    ck_assert_str_eq(buf, "00000000:1B:03.0");
    crm_nvml_format_bus_id(0x10, 0xa, 0x1f, 1, buf, sizeof buf);
    ck_assert_str_eq(buf, "0010:0A:1F.0");
}
END_TEST

/* One accepted spelling and the ids it means. */
static const struct {
    const char *text;
    unsigned domain, bus, device, function;
} good[] = {
    {"00000000:1B:03.0", 0, 0x1b, 3, 0},
    {"0000:1b:03.0", 0, 0x1b, 3, 0},
    {"0010:0a:1f.7", 0x10, 0x0a, 0x1f, 7},
    {"1b:03.0", 0, 0x1b, 3, 0},
    {"1B:03", 0, 0x1b, 3, 0},
    {"0001:02:03", 1, 2, 3, 0},
    {"ffffffff:ff:1f.0", 0xffffffffu, 0xff, 0x1f, 0},
};

START_TEST(test_bus_id_parse_accepts)
{
    unsigned d = 9, b = 9, dev = 9, f = 9;
    ck_assert_int_eq(crm_nvml_parse_bus_id(good[_i].text, &d, &b, &dev, &f), 0);
    ck_assert_uint_eq(d, good[_i].domain);
    ck_assert_uint_eq(b, good[_i].bus);
    ck_assert_uint_eq(dev, good[_i].device);
    ck_assert_uint_eq(f, good[_i].function);
}
END_TEST

static const char *const bad[] = {
    "", "1b", ":03.0", "1b:", "1b:03.", "1b:03.8", "100:03.0", "1b:20.0", "0:1b:03:04",
    "123456789:1b:03.0", "1b:03.0 ", "g1:03.0", "1b.03.0", "1b:03.00", NULL,
};

START_TEST(test_bus_id_parse_refuses)
{
    unsigned d = 9, b = 9, dev = 9, f = 9;
    ck_assert_msg(crm_nvml_parse_bus_id(bad[_i], &d, &b, &dev, &f) == -1, "accepted \"%s\"",
                  bad[_i] ? bad[_i] : "(null)");
    ck_assert_uint_eq(d, 9); /* untouched on error */
}
END_TEST

START_TEST(test_bus_id_round_trip)
{
    char buf[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
    unsigned d, b, dev, f;
    for (int legacy = 0; legacy < 2; legacy++) {
        crm_nvml_format_bus_id(0x2a, 0xc1, 0x11, legacy, buf, sizeof buf);
        ck_assert_int_eq(crm_nvml_parse_bus_id(buf, &d, &b, &dev, &f), 0);
        ck_assert(d == 0x2a && b == 0xc1 && dev == 0x11 && f == 0);
    }
}
END_TEST

START_TEST(test_copy_string)
{
    char buf[6];
    ck_assert_int_eq(crm_nvml_copy_string("hello", buf, sizeof buf), NVML_SUCCESS);
    ck_assert_str_eq(buf, "hello");
    ck_assert_int_eq(crm_nvml_copy_string("hello!", buf, sizeof buf), NVML_ERROR_INSUFFICIENT_SIZE);
    ck_assert_str_eq(buf, "hello"); /* untouched */
    ck_assert_int_eq(crm_nvml_copy_string("x", NULL, 8), NVML_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(crm_nvml_copy_string("", buf, 1), NVML_SUCCESS);
    ck_assert_int_eq(crm_nvml_copy_string("", buf, 0), NVML_ERROR_INSUFFICIENT_SIZE);
}
END_TEST

static Suite *crm_nvml_ids_suite(void)
{
    Suite *s = suite_create("nvml_ids");
    TCase *tc = tcase_create("ids");
    tcase_add_test(tc, test_uuid_format);
    tcase_add_test(tc, test_uuid_format_truncates_safely);
    tcase_add_test(tc, test_bus_id_format);
    tcase_add_loop_test(tc, test_bus_id_parse_accepts, 0, (int)(sizeof good / sizeof good[0]));
    tcase_add_loop_test(tc, test_bus_id_parse_refuses, 0, (int)(sizeof bad / sizeof bad[0]));
    tcase_add_test(tc, test_bus_id_round_trip);
    tcase_add_test(tc, test_copy_string);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(crm_nvml_ids_suite)
