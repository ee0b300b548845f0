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
    else if (api == CRM_API_cudaStreamDestroy)
        c.crm_call_u.cudaStreamDestroy.stream = stream;
    return c;
}

static crm_call event_call(int api, uint64_t event, uint64_t stream)
{
    crm_call c;
    memset(&c, 0, sizeof c);
    c.api = api;
    if (api == CRM_API_cudaEventRecord) {
        c.crm_call_u.cudaEventRecord.event = event;
        c.crm_call_u.cudaEventRecord.stream = stream;
    } else if (api == CRM_API_cudaEventQuery) {
        c.crm_call_u.cudaEventQuery.event = event;
    } else if (api == CRM_API_cudaEventSynchronize) {
        c.crm_call_u.cudaEventSynchronize.event = event;
    } else if (api == CRM_API_cudaEventDestroy) {
        c.crm_call_u.cudaEventDestroy.event = event;
    }
    return c;
}

/* Notes call, as the connection does for every call it queues or sends. */
static void note(crm_idle *st, crm_call c)
{
    crm_idle_note(st, &c);
}

/* A round trip whose final call is c, answered with err. */
static void round_trip(crm_idle *st, crm_call c, int err)
{
    crm_reply r;
    memset(&r, 0, sizeof r);
    r.api = c.api;
    r.crm_reply_u.crm_memcpy_d2h.err = err; /* err is the first field of every arm */
    crm_idle_note(st, &c);
    crm_idle_after(st, &c, &r);
}

/* 1 when st answers the event call with success; -1 with "not ready"; 0: the server must. */
static int event_answered(crm_idle *st, int api, uint64_t event)
{
    crm_call c = event_call(api, event, 0);
    crm_reply r;
    if (!crm_idle_answers(st, &c, &r))
        return 0;
    ck_assert_int_eq(r.api, api);
    return r.crm_reply_u.cudaEventQuery.err == cudaSuccess ? 1 : r.crm_reply_u.cudaEventQuery.err == cudaErrorNotReady ? -1 : 99;
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

static int answers(crm_idle *st, int api, uint64_t stream)
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
    crm_idle_note(&st, &c);
    crm_idle_after(&st, &c, &r);
    ck_assert(answers(&st, CRM_API_cudaStreamSynchronize, STREAM_A));
    ck_assert(answers(&st, CRM_API_cudaStreamQuery, STREAM_A));
    ck_assert(!answers(&st, CRM_API_cudaStreamSynchronize, STREAM_B));
    ck_assert(!answers(&st, CRM_API_cudaDeviceSynchronize, 0));
    crm_idle_free(&st);
}
END_TEST

/* cudaMemcpy runs on the legacy default stream. */
START_TEST(test_sync_copy_drains_legacy_stream)
{
    crm_idle st = {0};
    crm_call c = d2h(STREAM_A, 0);
    crm_reply r = ok_reply(CRM_API_crm_memcpy_d2h, 0);
    crm_idle_note(&st, &c);
    crm_idle_after(&st, &c, &r);
    ck_assert(answers(&st, CRM_API_cudaStreamSynchronize, CRM_WIRE_LEGACY_STREAM));
    ck_assert(!answers(&st, CRM_API_cudaStreamSynchronize, STREAM_A));
    crm_idle_free(&st);
}
END_TEST

/* A failed copy proves nothing: the synchronisation goes to the server. */
START_TEST(test_failed_copy_proves_nothing)
{
    crm_idle st = {0};
    crm_call c = d2h(STREAM_A, 1);
    crm_reply r = ok_reply(CRM_API_crm_memcpy_d2h, cudaErrorIllegalAddress);
    crm_idle_note(&st, &c);
    crm_idle_after(&st, &c, &r);
    ck_assert(!answers(&st, CRM_API_cudaStreamSynchronize, STREAM_A));
    crm_reply lost = ok_reply(CRM_API_crm_memcpy_d2h, 0);
    crm_idle_note(&st, &c);
    crm_idle_after(&st, NULL, &lost); /* replies lost */
    ck_assert(!answers(&st, CRM_API_cudaStreamSynchronize, STREAM_A));
    crm_idle_free(&st);
}
END_TEST

/* A device synchronisation drains every stream; any other call noted after it
 * ends that, and so does forgetting (a closed session). */
START_TEST(test_device_sync_then_other_call)
{
    crm_idle st = {0};
    crm_call c = stream_call(CRM_API_cudaDeviceSynchronize, 0);
    crm_reply r = ok_reply(CRM_API_cudaDeviceSynchronize, 0);
    crm_idle_note(&st, &c);
    crm_idle_after(&st, &c, &r);
    ck_assert(answers(&st, CRM_API_cudaDeviceSynchronize, 0));
    ck_assert(answers(&st, CRM_API_cudaStreamSynchronize, STREAM_B));
    crm_call other = stream_call(CRM_API_cudaMalloc, 0);
    crm_reply oreply = ok_reply(CRM_API_cudaMalloc, 0);
    crm_idle_note(&st, &other);
    crm_idle_after(&st, &other, &oreply);
    ck_assert(!answers(&st, CRM_API_cudaStreamSynchronize, STREAM_B));
    crm_idle_note(&st, &c);
    crm_idle_after(&st, &c, &r);
    crm_idle_forget(&st);
    ck_assert(!answers(&st, CRM_API_cudaDeviceSynchronize, 0));
    crm_idle_free(&st);
}
END_TEST

/* Only synchronisations are ever answered, never a call with a result. */
START_TEST(test_only_synchronisations)
{
    crm_idle st = {.seq = 1, .all_drained = 1};
    crm_call c = d2h(STREAM_A, 1);
    crm_reply r;
    memset(&r, 0, sizeof r);
    ck_assert(!crm_idle_answers(&st, &c, &r));
    ck_assert(!answers(&st, CRM_API_cudaMemGetInfo, 0));
    crm_idle_free(&st);
}
END_TEST

/* torch's pinned-memory allocator: an event recorded after an input copy on stream
 * A, then `.item()` (a copy on A) and more queued work, then a query of the event. */
START_TEST(test_event_before_a_drain_is_done)
{
    crm_idle st;
    memset(&st, 0, sizeof st);
    note(&st, event_call(CRM_API_cudaEventRecord, 0xe1, STREAM_A));
    note(&st, event_call(CRM_API_cudaEventRecord, 0xe2, STREAM_B));
    crm_idle_sent(&st);
    ck_assert(!event_answered(&st, CRM_API_cudaEventQuery, 0xe1));
    round_trip(&st, d2h(STREAM_A, 1), 0);
    crm_idle_sent(&st);
    note(&st, d2h(STREAM_A, 1)); /* queued work after it does not matter */
    ck_assert(event_answered(&st, CRM_API_cudaEventQuery, 0xe1));
    ck_assert(event_answered(&st, CRM_API_cudaEventSynchronize, 0xe1));
    ck_assert(!event_answered(&st, CRM_API_cudaEventQuery, 0xe2)); /* another stream */
    ck_assert(!event_answered(&st, CRM_API_cudaEventQuery, 0xe3)); /* never recorded here */
    /* recorded again after the drain and sent: not known done until the next one */
    note(&st, event_call(CRM_API_cudaEventRecord, 0xe1, STREAM_A));
    crm_idle_sent(&st);
    ck_assert(!event_answered(&st, CRM_API_cudaEventQuery, 0xe1));
    round_trip(&st, stream_call(CRM_API_cudaDeviceSynchronize, 0), 0);
    ck_assert(event_answered(&st, CRM_API_cudaEventQuery, 0xe1));
    ck_assert(event_answered(&st, CRM_API_cudaEventQuery, 0xe2));
    note(&st, event_call(CRM_API_cudaEventDestroy, 0xe2, 0));
    ck_assert(!event_answered(&st, CRM_API_cudaEventQuery, 0xe2)); /* forgotten */
    crm_idle_free(&st);
}
END_TEST

/* A failed copy or a destroyed stream proves nothing about its events. */
START_TEST(test_event_needs_a_successful_drain)
{
    crm_idle st;
    memset(&st, 0, sizeof st);
    note(&st, event_call(CRM_API_cudaEventRecord, 0xe1, STREAM_A));
    round_trip(&st, d2h(STREAM_A, 1), cudaErrorIllegalAddress);
    crm_idle_sent(&st);
    ck_assert(!event_answered(&st, CRM_API_cudaEventQuery, 0xe1));
    round_trip(&st, stream_call(CRM_API_cudaStreamSynchronize, STREAM_A), 0);
    ck_assert(event_answered(&st, CRM_API_cudaEventQuery, 0xe1));
    note(&st, stream_call(CRM_API_cudaStreamDestroy, STREAM_A));
    ck_assert(!event_answered(&st, CRM_API_cudaEventQuery, 0xe1));
    crm_idle_free(&st);
}
END_TEST

/* A record still in the client's queue: the first query answers "not ready" without
 * a round trip (its work has not reached the server), the next goes to the server;
 * a synchronisation always waits. */
START_TEST(test_event_still_queued_is_not_ready_once)
{
    crm_idle st;
    memset(&st, 0, sizeof st);
    note(&st, event_call(CRM_API_cudaEventRecord, 0xe1, STREAM_A));
    ck_assert_int_eq(event_answered(&st, CRM_API_cudaEventSynchronize, 0xe1), 0);
    ck_assert_int_eq(event_answered(&st, CRM_API_cudaEventQuery, 0xe1), -1);
    ck_assert_int_eq(event_answered(&st, CRM_API_cudaEventQuery, 0xe1), 0);
    note(&st, event_call(CRM_API_cudaEventRecord, 0xe1, STREAM_A)); /* a new record: once more */
    ck_assert_int_eq(event_answered(&st, CRM_API_cudaEventQuery, 0xe1), -1);
    crm_idle_sent(&st);
    note(&st, event_call(CRM_API_cudaEventRecord, 0xe2, STREAM_A));
    crm_idle_sent(&st);
    ck_assert_int_eq(event_answered(&st, CRM_API_cudaEventQuery, 0xe2), 0); /* sent: ask */
    crm_idle_free(&st);
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
    tcase_add_test(tc, test_event_before_a_drain_is_done);
    tcase_add_test(tc, test_event_needs_a_successful_drain);
    tcase_add_test(tc, test_event_still_queued_is_not_ready_once);
    tcase_add_test(tc, test_rtcount_orders_and_cuts);
    tcase_add_test(tc, test_rtcount_overflow_goes_to_other);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(idle_suite)
