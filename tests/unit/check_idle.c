/* check_idle.c -- unit tests of what the client answers itself after a round trip
 * (client/crm_idle.c: a synchronisation the last copy or sync already drained) and
 * of the round trips counted by call (client/crm_rtcount.c). */
#include <string.h>
#include "client/crm_handles.h"
#include "client/crm_idle.h"
#include "client/crm_rtcount.h"
#include "tests/unit/crm_check.h"

#define STREAM_A 0x7000ull
#define STREAM_B 0x7100ull

static crm_call d2h(uint64_t stream, int async)
{
    crm_call c;
    memset(&c, 0, sizeof c);
    c.api = CRM_API_crm_memcpy_d2h;
    c.crm_call_u.crm_memcpy_d2h.stream = stream;
    c.crm_call_u.crm_memcpy_d2h.async = async;
    c.crm_call_u.crm_memcpy_d2h.width = 4;
    c.crm_call_u.crm_memcpy_d2h.height = 1;
    return c;
}

static crm_call stream_call(int api, uint64_t stream)
{
    crm_call c;
    memset(&c, 0, sizeof c);
    c.api = api;
    if (api == CRM_API_cudaStreamSynchronize)
        c.crm_call_u.cudaStreamSynchronize.stream = stream;
    else if (api == CRM_API_cudaStreamQuery)
        c.crm_call_u.cudaStreamQuery.stream = stream;
    return c;
}

static crm_reply ok_reply(int api, int err)
{
    crm_reply r;
    memset(&r, 0, sizeof r);
    r.api = api;
    if (api == CRM_API_crm_memcpy_d2h)
        r.crm_reply_u.crm_memcpy_d2h.err = err;
    else if (api == CRM_API_cudaStreamSynchronize)
        r.crm_reply_u.cudaStreamSynchronize.err = err;
    else if (api == CRM_API_cudaDeviceSynchronize)
        r.crm_reply_u.cudaDeviceSynchronize.err = err;
    return r;
}

static int answers(const crm_idle *st, int api, uint64_t stream)
{
    crm_call c = stream_call(api, stream);
    crm_reply r;
    memset(&r, 0xab, sizeof r);
    int yes = crm_idle_answers(st, &c, &r);
    if (yes) {
        ck_assert_int_eq(r.api, api);
        ck_assert_int_eq(r.crm_reply_u.cudaStreamSynchronize.err, 0);
    }
    return yes;
}

/* torch's .item(): an async copy on stream A, then cudaStreamSynchronize(A). */
START_TEST(test_copy_drains_its_stream)
{
    crm_idle st = {0};
    crm_call c = d2h(STREAM_A, 1);
    crm_reply r = ok_reply(CRM_API_crm_memcpy_d2h, 0);
    crm_idle_after(&st, &c, &r);
    ck_assert(answers(&st, CRM_API_cudaStreamSynchronize, STREAM_A));
    ck_assert(answers(&st, CRM_API_cudaStreamQuery, STREAM_A));
    ck_assert(!answers(&st, CRM_API_cudaStreamSynchronize, STREAM_B));
    ck_assert(!answers(&st, CRM_API_cudaDeviceSynchronize, 0));
}
END_TEST

/* cudaMemcpy runs on the legacy default stream. */
START_TEST(test_sync_copy_drains_legacy_stream)
{
    crm_idle st = {0};
    crm_call c = d2h(STREAM_A, 0);
    crm_reply r = ok_reply(CRM_API_crm_memcpy_d2h, 0);
    crm_idle_after(&st, &c, &r);
    ck_assert(answers(&st, CRM_API_cudaStreamSynchronize, CRM_WIRE_LEGACY_STREAM));
    ck_assert(!answers(&st, CRM_API_cudaStreamSynchronize, STREAM_A));
}
END_TEST

/* A failed copy proves nothing: the synchronisation goes to the server. */
START_TEST(test_failed_copy_proves_nothing)
{
    crm_idle st = {0};
    crm_call c = d2h(STREAM_A, 1);
    crm_reply r = ok_reply(CRM_API_crm_memcpy_d2h, cudaErrorIllegalAddress);
    crm_idle_after(&st, &c, &r);
    ck_assert(!answers(&st, CRM_API_cudaStreamSynchronize, STREAM_A));
    crm_reply lost = ok_reply(CRM_API_crm_memcpy_d2h, 0);
    crm_idle_after(&st, NULL, &lost); /* replies lost */
    ck_assert(!answers(&st, CRM_API_cudaStreamSynchronize, STREAM_A));
}
END_TEST

/* A device synchronisation drains every stream; any other call forgets it. */
START_TEST(test_device_sync_then_other_call)
{
    crm_idle st = {0};
    crm_call c = stream_call(CRM_API_cudaDeviceSynchronize, 0);
    crm_reply r = ok_reply(CRM_API_cudaDeviceSynchronize, 0);
    crm_idle_after(&st, &c, &r);
    ck_assert(answers(&st, CRM_API_cudaDeviceSynchronize, 0));
    ck_assert(answers(&st, CRM_API_cudaStreamSynchronize, STREAM_B));
    crm_call other = stream_call(CRM_API_cudaMalloc, 0);
    crm_reply oreply = ok_reply(CRM_API_cudaMalloc, 0);
    crm_idle_after(&st, &other, &oreply);
    ck_assert(!answers(&st, CRM_API_cudaStreamSynchronize, STREAM_B));
    crm_idle_after(&st, &c, &r);
    crm_idle_forget(&st);
    ck_assert(!answers(&st, CRM_API_cudaDeviceSynchronize, 0));
}
END_TEST

/* Only synchronisations are ever answered, never a call with a result. */
START_TEST(test_only_synchronisations)
{
    crm_idle st = {.known = 1, .all = 1};
    crm_call c = d2h(STREAM_A, 1);
    crm_reply r;
    memset(&r, 0, sizeof r);
    ck_assert(!crm_idle_answers(&st, &c, &r));
    ck_assert(!answers(&st, CRM_API_cudaMemGetInfo, 0));
}
END_TEST

START_TEST(test_rtcount_orders_and_cuts)
{
    crm_rtcount rc;
    memset(&rc, 0, sizeof rc);
    char buf[256];
    ck_assert_uint_eq(crm_rtcount_format(&rc, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "");
    crm_rtcount_add(&rc, CRM_API_cudaMalloc);
    crm_rtcount_add(&rc, CRM_API_crm_memcpy_d2h);
    crm_rtcount_add(&rc, CRM_API_crm_memcpy_d2h);
    crm_rtcount_add(&rc, 0);
    size_t need = crm_rtcount_format(&rc, buf, sizeof buf);
    ck_assert_str_eq(buf, "crm_memcpy_d2h=2 cudaMalloc=1 flush=1");
    ck_assert_uint_eq(need, strlen(buf));
    char small[8];
    ck_assert_uint_eq(crm_rtcount_format(&rc, small, sizeof small), need);
    ck_assert_str_eq(small, "crm_mem"); /* cut, NUL-terminated */
}
END_TEST

START_TEST(test_rtcount_overflow_goes_to_other)
{
    crm_rtcount rc;
    memset(&rc, 0, sizeof rc);
    for (int i = 0; i < CRM_RTCOUNT_SLOTS + 3; i++)
        crm_rtcount_add(&rc, 100000 + i);
    ck_assert_uint_eq(rc.used, CRM_RTCOUNT_SLOTS);
    ck_assert_uint_eq(rc.other, 3);
    char buf[8192];
    crm_rtcount_format(&rc, buf, sizeof buf);
    ck_assert_ptr_nonnull(strstr(buf, " other=3"));
}
END_TEST

static Suite *idle_suite(void)
{
    Suite *s = suite_create("idle");
    TCase *tc = tcase_create("idle");
    tcase_add_test(tc, test_copy_drains_its_stream);
    tcase_add_test(tc, test_sync_copy_drains_legacy_stream);
    tcase_add_test(tc, test_failed_copy_proves_nothing);
    tcase_add_test(tc, test_device_sync_then_other_call);
    tcase_add_test(tc, test_only_synchronisations);
    tcase_add_test(tc, test_rtcount_orders_and_cuts);
    tcase_add_test(tc, test_rtcount_overflow_goes_to_other);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(idle_suite)
