/* check_codec.c -- unit tests of the adaptive compression policy
 * (client/crm_codec.c): what it learns from raw and compressed transfers and
 * what it decides from that. */
#include <stdlib.h>
#include "client/crm_codec.h"
#include "tests/unit/crm_check.h"

#define MIB (1ull << 20)

/* A message's bulk bytes: raw and on the wire, compression time, and the part
 * compression was tried on (tried bytes and what they became). */
static crm_payload_stats moved(uint64_t raw, uint64_t wire, uint64_t compress_ns, uint64_t tried, uint64_t tried_wire)
{
    crm_payload_stats s = {raw, wire, compress_ns, tried, tried_wire};
    return s;
}

START_TEST(test_fixed_modes)
{
    crm_codec_model m = {0};
    ck_assert_int_eq(crm_codec_decide(0, 64 * MIB, &m), 0);
    ck_assert_int_eq(crm_codec_decide(7, 64 * MIB, &m), 7);
}
END_TEST

/* Auto: raw until the link is known, then one probe of the compressor. */
START_TEST(test_auto_measures_then_probes)
{
    crm_codec_model m = {0};
    ck_assert_int_eq(crm_codec_decide(-1, 64 * MIB, &m), 0);
    crm_payload_stats s = moved(64 * MIB, 64 * MIB, 0, 0, 0);
    crm_codec_learn(&m, &s, 512000000); /* 64 MiB in 0.512 s: ~131 MB/s */
    ck_assert(m.link_bps > 1.2e8 && m.link_bps < 1.4e8);
    ck_assert_int_eq(crm_codec_decide(-1, 100 << 10, &m), 0); /* small: never */
    int level = crm_codec_decide(-1, 64 * MIB, &m);
    ck_assert_int_gt(level & CRM_LEVEL_MASK, 0);
    ck_assert(level & CRM_LEVEL_PROBE); /* only a few chunks: a probe must not cost a whole transfer */
}
END_TEST

/* A compressed transfer teaches gain and compressor speed, never the link speed:
 * with compression overlapping the sending, its elapsed time says little of it. */
START_TEST(test_compressed_transfer_leaves_the_link_alone)
{
    crm_codec_model m = {.link_bps = 1.25e8};
    crm_payload_stats s = moved(64 * MIB, 20 * MIB, 240000000, 64 * MIB, 20 * MIB); /* compressor ~280 MB/s */
    crm_codec_learn(&m, &s, 250000000);
    ck_assert(m.link_bps == 1.25e8);
    ck_assert(m.ratio > 0.31 && m.ratio < 0.32); /* the first sample is taken whole */
    ck_assert(m.comp_bps > 2.7e8 && m.comp_bps < 2.9e8);
    ck_assert_int_eq(crm_codec_decide(-1, 64 * MIB, &m), 1); /* 280 MB/s beats a 125 MB/s link: all chunks */
}
END_TEST

/* A compressor slower than the link is not used, except for a rare probe. */
START_TEST(test_slow_compressor_loses_to_a_fast_link)
{
    crm_codec_model m = {.link_bps = 2.5e9, .comp_bps = 2.8e8, .ratio = 0.31};
    int compressed = 0;
    for (int i = 0; i < 64; i++)
        compressed += crm_codec_decide(-1, 64 * MIB, &m) > 0;
    ck_assert_int_eq(compressed, 2); /* one reprobe in every 32 transfers */
}
END_TEST

/* Data that stopped compressing (ratio near 1) counts as raw: it measures the link. */
START_TEST(test_incompressible_counts_as_raw)
{
    crm_codec_model m = {.link_bps = 1e9, .comp_bps = 5e8, .ratio = 0.5};
    crm_payload_stats s = moved(64 * MIB, 64 * MIB + 768, 0, 0, 0);
    crm_codec_learn(&m, &s, 67108864ull * 10); /* 100 MB/s */
    ck_assert(m.link_bps < 1e9 && m.link_bps > 5e8); /* blended toward the new figure */
    ck_assert(m.ratio == 0.5);
}
END_TEST

/* A probe compressed 8 of 256 chunks: they teach gain and speed, the rest the link. */
START_TEST(test_probe_teaches_both)
{
    crm_codec_model m = {.link_bps = 2e9};
    crm_payload_stats s = moved(256 * MIB, 248 * MIB + 2621440, 30000000, 8 * MIB, 2621440);
    crm_codec_learn(&m, &s, 130000000); /* 0.13 s, 0.03 s of it compressing */
    ck_assert(m.ratio > 0.31 && m.ratio < 0.32);
    ck_assert(m.comp_bps > 2.7e8 && m.comp_bps < 2.9e8);
    ck_assert(m.link_bps > 2.2e9 && m.link_bps < 2.5e9); /* blended with ~2.6e9 from this message */
    ck_assert_int_eq(crm_codec_decide(-1, 64 * MIB, &m), 0); /* a fast link: raw */
}
END_TEST

/* Through the shared-memory ring auto mode sends raw; a fixed level still applies. */
START_TEST(test_same_machine_sends_raw)
{
    unsetenv("CUDAREM_COMPRESS");
    ck_assert_int_eq(crm_codec_choose(64 * MIB, 1, 0), 0);
}
END_TEST

/* On a data channel's socket auto mode leaves the choice to the sender's live one;
 * small transfers are still sent raw. */
START_TEST(test_channel_socket_chooses_live)
{
    unsetenv("CUDAREM_COMPRESS");
    int level = crm_codec_choose(64 * MIB, 0, 1);
    ck_assert(level & CRM_LEVEL_LIVE);
    ck_assert_int_gt(level & CRM_LEVEL_MASK, 0);
    ck_assert_int_eq(crm_codec_choose(64 << 10, 0, 1), 0);
}
END_TEST

START_TEST(test_tiny_messages_teach_nothing)
{
    crm_codec_model m = {0};
    crm_payload_stats s = moved(4096, 4096, 0, 0, 0);
    crm_codec_learn(&m, &s, 1000);
    ck_assert(m.link_bps == 0 && m.comp_bps == 0 && m.ratio == 0);
}
END_TEST

static Suite *codec_suite(void)
{
    Suite *s = suite_create("codec");
    TCase *tc = tcase_create("policy");
    tcase_add_test(tc, test_fixed_modes);
    tcase_add_test(tc, test_auto_measures_then_probes);
    tcase_add_test(tc, test_compressed_transfer_leaves_the_link_alone);
    tcase_add_test(tc, test_slow_compressor_loses_to_a_fast_link);
    tcase_add_test(tc, test_incompressible_counts_as_raw);
    tcase_add_test(tc, test_tiny_messages_teach_nothing);
    tcase_add_test(tc, test_probe_teaches_both);
    tcase_add_test(tc, test_same_machine_sends_raw);
    tcase_add_test(tc, test_channel_socket_chooses_live);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(codec_suite)
