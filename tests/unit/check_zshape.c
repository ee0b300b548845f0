/* check_zshape.c -- unit tests of the choice of zstd parameter set
 * (protocol/crm_zshape.c) on recorded samples: the sizes 64 KiB samples of each
 * data kind came to with zstd level 1's own parameters and with the LEAN set
 * (zstd 1.5, 1 MiB chunks of the kinds benchmarks/bench_cuda.cu makes, and of
 * the GPL's text). The chunks themselves: level 1 gave the 4-letter data 3.23x
 * and LEAN 3.90x; text 2.43x and 1.84x. The text's sizes are from LEAN's former
 * 256-entry hash table; the 64-entry one only makes LEAN lose more there (the
 * GPL-3's first 64 KiB: 30700 bytes with 256 entries, 34415 with 64). */
#include "protocol/crm_zshape.h"
#include "tests/unit/crm_check.h"

#define SAMPLE (64u << 10)

typedef struct recorded {
    const char *kind;
    uint64_t level, lean;    /* stored bytes of the sample with each set */
    int best;                /* the set to end up with, from either start */
} recorded;

static const recorded samples[] = {
    {"lowentropy (4 letters)", 20514, 16837, CRM_ZSHAPE_LEAN},
    {"text", 24955, 32814, CRM_ZSHAPE_LEVEL},
    {"sparse", 6821, 6821, CRM_ZSHAPE_LEVEL},
    {"relu activations", 37143, 37437, CRM_ZSHAPE_LEVEL},
    {"weights", 60634, 60634, CRM_ZSHAPE_LEVEL},
    {"zeros", 20, 20, CRM_ZSHAPE_LEVEL},
    /* check_wire's sentences of 12 words: with LEAN their sample shrinks about as
     * much as the 4-letter data's (0.284 against 0.257 of the raw bytes) */
    {"sentences", 12820, 18644, CRM_ZSHAPE_LEVEL},
};
#define SENTENCES (NSAMPLES - 1)
#define NSAMPLES (int)(sizeof samples / sizeof samples[0])

/* Feeds one chunk of a recorded kind as the encoder does; 1 when it was a check. */
static int feed(crm_zshape *z, const recorded *r)
{
    uint64_t stored = z->set == CRM_ZSHAPE_LEAN ? r->lean : r->level;
    if (!crm_zshape_due(z, SAMPLE, stored))
        return 0;
    crm_zshape_checked(z, SAMPLE, r->level, r->lean);
    return 1;
}

START_TEST(test_recorded_kinds_get_their_better_set)
{
    const recorded *r = &samples[_i];
    for (int start = CRM_ZSHAPE_LEVEL; start <= CRM_ZSHAPE_LEAN; start++) {
        crm_zshape z = {.set = start};
        ck_assert_int_eq(feed(&z, r), 1); /* a fresh state checks the first chunk */
        ck_assert_msg(z.set == r->best, "%s from set %d: got %d", r->kind, start, z.set);
    }
}
END_TEST

START_TEST(test_checks_every_sixteenth_chunk_of_steady_data)
{
    crm_zshape z = {0};
    int checks = 0;
    for (int chunk = 0; chunk < 4 * CRM_ZSHAPE_CHECK; chunk++)
        checks += feed(&z, &samples[0]);
    ck_assert_int_eq(checks, 4);
    ck_assert_int_eq(z.set, CRM_ZSHAPE_LEAN);
}
END_TEST

/* Text after 4-letter data: its first chunk shrinks differently enough to be
 * checked at once, and the level's set comes back; then the other way. */
START_TEST(test_changed_data_is_checked_at_once)
{
    crm_zshape z = {0};
    feed(&z, &samples[0]);
    feed(&z, &samples[0]);
    ck_assert_int_eq(z.set, CRM_ZSHAPE_LEAN);
    ck_assert_int_eq(feed(&z, &samples[1]), 1);
    ck_assert_int_eq(z.set, CRM_ZSHAPE_LEVEL);
    ck_assert_int_eq(feed(&z, &samples[1]), 0);
    ck_assert_int_eq(feed(&z, &samples[0]), 1);
    ck_assert_int_eq(z.set, CRM_ZSHAPE_LEAN);
}
END_TEST

/* Data whose sample shrinks as much as the last check's with the set in use goes
 * unnoticed within a payload; a payload of several chunks checks its first. */
START_TEST(test_new_payload_is_checked)
{
    crm_zshape z = {0};
    feed(&z, &samples[0]);
    ck_assert_int_eq(z.set, CRM_ZSHAPE_LEAN);
    ck_assert_int_eq(feed(&z, &samples[SENTENCES]), 0); /* the same ratio with LEAN */
    ck_assert_int_eq(z.set, CRM_ZSHAPE_LEAN);
    crm_zshape_payload(&z);
    ck_assert_int_eq(feed(&z, &samples[SENTENCES]), 1);
    ck_assert_int_eq(z.set, CRM_ZSHAPE_LEVEL);
    ck_assert_int_eq(feed(&z, &samples[SENTENCES]), 0);
}
END_TEST

/* Within the margin the set in use stays: no flapping on near-equal samples. */
START_TEST(test_near_equal_samples_keep_the_set)
{
    crm_zshape lean = {.set = CRM_ZSHAPE_LEAN}, level = {.set = CRM_ZSHAPE_LEVEL};
    crm_zshape_checked(&lean, SAMPLE, 10000, 9800);
    crm_zshape_checked(&level, SAMPLE, 10000, 9800);
    ck_assert_int_eq(lean.set, CRM_ZSHAPE_LEAN);
    ck_assert_int_eq(level.set, CRM_ZSHAPE_LEVEL);
    crm_zshape_checked(&lean, SAMPLE, 10000, 10000); /* no gain: the level's own set */
    ck_assert_int_eq(lean.set, CRM_ZSHAPE_LEVEL);
    crm_zshape_checked(&level, SAMPLE, 10000, 9600);
    ck_assert_int_eq(level.set, CRM_ZSHAPE_LEAN);
}
END_TEST

static Suite *crm_zshape_suite(void)
{
    Suite *s = suite_create("zshape");
    TCase *tc = tcase_create("zshape");
    tcase_add_loop_test(tc, test_recorded_kinds_get_their_better_set, 0, NSAMPLES);
    tcase_add_test(tc, test_checks_every_sixteenth_chunk_of_steady_data);
    tcase_add_test(tc, test_changed_data_is_checked_at_once);
    tcase_add_test(tc, test_new_payload_is_checked);
    tcase_add_test(tc, test_near_equal_samples_keep_the_set);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(crm_zshape_suite)
