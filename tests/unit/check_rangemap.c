/* check_rangemap.c -- unit tests of common/crm_rangemap: adding, finding, spanning and
 * removing address ranges, the edges (zero size, wrap-around, exclusive end) and a
 * randomised run checked against a brute-force reference. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/crm_rangemap.h"
#include "tests/unit/crm_check.h"

/* Assertion for hot loops: Check's ck_assert_* records a mark point (a write to a
 * pipe) on every success, which makes loops of millions of checks slow. */
#define REQUIRE(cond)                                         \
    do {                                                      \
        if (!(cond))                                          \
            ck_abort_msg("assertion failed: %s", #cond);      \
    } while (0)

static crm_range mk(uint64_t base, uint64_t size, uint32_t kind, int device)
{
    return (crm_range){.base = base, .size = size, .kind = kind, .device = device};
}

/* The map's own invariants: sorted by base, no overlap, no zero size, count <= cap. */
static void check_invariants(const crm_rangemap *m)
{
    REQUIRE(m->count <= m->cap);
    for (size_t i = 0; i < m->count; i++) {
        REQUIRE(m->ranges[i].size > 0);
        if (i > 0)
            REQUIRE(m->ranges[i - 1].base + m->ranges[i - 1].size <= m->ranges[i].base);
    }
}

/* ------------------------------------------------------------------ basics */

START_TEST(test_empty_map_finds_nothing)
{
    crm_rangemap m;
    crm_rangemap_init(&m);
    ck_assert_ptr_null(crm_rangemap_find(&m, 0));
    ck_assert_ptr_null(crm_rangemap_find(&m, UINT64_MAX));
    ck_assert_ptr_null(crm_rangemap_find_span(&m, 0x1000, 1));
    crm_range out = mk(1, 2, 3, 4);
    ck_assert_int_eq(crm_rangemap_remove(&m, 0, &out), -1);
    ck_assert_uint_eq(out.base, 1); /* untouched on failure */
    crm_rangemap_free(&m);
}
END_TEST

START_TEST(test_add_then_find_returns_range_with_tags)
{
    crm_rangemap m;
    crm_rangemap_init(&m);
    ck_assert_int_eq(crm_rangemap_add(&m, mk(0x1000, 0x1000, 7, 2)), 0);
    const crm_range *r = crm_rangemap_find(&m, 0x1000);
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(r->base, 0x1000);
    ck_assert_uint_eq(r->size, 0x1000);
    ck_assert_uint_eq(r->kind, 7);
    ck_assert_int_eq(r->device, 2);
    ck_assert_ptr_eq(crm_rangemap_find(&m, 0x1800), r);
    ck_assert_ptr_eq(crm_rangemap_find(&m, 0x1fff), r);
    ck_assert_ptr_null(crm_rangemap_find(&m, 0xfff));
    ck_assert_ptr_null(crm_rangemap_find(&m, 0));
    crm_rangemap_free(&m);
    ck_assert_uint_eq(m.count, 0);
    ck_assert_ptr_null(m.ranges);
}
END_TEST

START_TEST(test_find_at_exact_end_is_exclusive)
{
    crm_rangemap m;
    crm_rangemap_init(&m);
    ck_assert_int_eq(crm_rangemap_add(&m, mk(100, 50, 0, -1)), 0);
    ck_assert_ptr_nonnull(crm_rangemap_find(&m, 149));
    ck_assert_ptr_null(crm_rangemap_find(&m, 150));
    /* A neighbour starting at the end owns that address instead. */
    ck_assert_int_eq(crm_rangemap_add(&m, mk(150, 1, 1, -1)), 0);
    const crm_range *r = crm_rangemap_find(&m, 150);
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(r->base, 150);
    ck_assert_ptr_null(crm_rangemap_find(&m, 151));
    crm_rangemap_free(&m);
}
END_TEST

START_TEST(test_add_zero_size_is_rejected)
{
    crm_rangemap m;
    crm_rangemap_init(&m);
    ck_assert_int_eq(crm_rangemap_add(&m, mk(0x1000, 0, 0, 0)), -1);
    ck_assert_uint_eq(m.count, 0);
    ck_assert_ptr_null(crm_rangemap_find(&m, 0x1000));
    crm_rangemap_free(&m);
}
END_TEST

START_TEST(test_add_wrapping_range_is_rejected)
{
    crm_rangemap m;
    crm_rangemap_init(&m);
    ck_assert_int_eq(crm_rangemap_add(&m, mk(UINT64_MAX - 10, 100, 0, 0)), -1);
    ck_assert_int_eq(crm_rangemap_add(&m, mk(1, UINT64_MAX, 0, 0)), -1);
    ck_assert_int_eq(crm_rangemap_add(&m, mk(UINT64_MAX, UINT64_MAX, 0, 0)), -1);
    ck_assert_uint_eq(m.count, 0);
    ck_assert_ptr_null(crm_rangemap_find(&m, 0));
    ck_assert_ptr_null(crm_rangemap_find(&m, UINT64_MAX));
    crm_rangemap_free(&m);
}
END_TEST

START_TEST(test_range_ending_just_below_top_of_address_space)
{
    crm_rangemap m;
    crm_rangemap_init(&m);
    ck_assert_int_eq(crm_rangemap_add(&m, mk(UINT64_MAX - 16, 16, 0, 0)), 0);
    ck_assert_ptr_nonnull(crm_rangemap_find(&m, UINT64_MAX - 16));
    ck_assert_ptr_nonnull(crm_rangemap_find(&m, UINT64_MAX - 1));
    ck_assert_ptr_null(crm_rangemap_find(&m, UINT64_MAX));
    ck_assert_ptr_null(crm_rangemap_find_span(&m, UINT64_MAX - 1, 2));
    ck_assert_ptr_nonnull(crm_rangemap_find_span(&m, UINT64_MAX - 16, 16));
    /* Range starting at 0 works too. */
    ck_assert_int_eq(crm_rangemap_add(&m, mk(0, 1, 0, 0)), 0);
    ck_assert_ptr_nonnull(crm_rangemap_find(&m, 0));
    ck_assert_ptr_null(crm_rangemap_find(&m, 1));
    check_invariants(&m);
    crm_rangemap_free(&m);
}
END_TEST

START_TEST(test_overlapping_adds_are_rejected)
{
    crm_rangemap m;
    crm_rangemap_init(&m);
    ck_assert_int_eq(crm_rangemap_add(&m, mk(1000, 100, 1, 0)), 0);
    ck_assert_int_eq(crm_rangemap_add(&m, mk(1000, 100, 2, 0)), -1); /* identical */
    ck_assert_int_eq(crm_rangemap_add(&m, mk(950, 51, 2, 0)), -1);   /* left edge */
    ck_assert_int_eq(crm_rangemap_add(&m, mk(1099, 10, 2, 0)), -1);  /* right edge */
    ck_assert_int_eq(crm_rangemap_add(&m, mk(1010, 10, 2, 0)), -1);  /* inside */
    ck_assert_int_eq(crm_rangemap_add(&m, mk(900, 300, 2, 0)), -1);  /* around */
    ck_assert_int_eq(crm_rangemap_add(&m, mk(1000, 1, 2, 0)), -1);   /* same base */
    ck_assert_uint_eq(m.count, 1);
    /* Touching neighbours on both sides are fine. */
    ck_assert_int_eq(crm_rangemap_add(&m, mk(950, 50, 3, 0)), 0);
    ck_assert_int_eq(crm_rangemap_add(&m, mk(1100, 50, 4, 0)), 0);
    /* A range bridging the gap between two is rejected against the right one. */
    ck_assert_int_eq(crm_rangemap_add(&m, mk(2000, 10, 5, 0)), 0);
    ck_assert_int_eq(crm_rangemap_add(&m, mk(1150, 851, 6, 0)), -1);
    ck_assert_int_eq(crm_rangemap_add(&m, mk(1150, 850, 6, 0)), 0);
    ck_assert_uint_eq(m.count, 5);
    ck_assert_uint_eq(crm_rangemap_find(&m, 1000)->kind, 1);
    check_invariants(&m);
    crm_rangemap_free(&m);
}
END_TEST

/* ------------------------------------------------------------------ find_span */

START_TEST(test_find_span_inside_and_across_end)
{
    crm_rangemap m;
    crm_rangemap_init(&m);
    ck_assert_int_eq(crm_rangemap_add(&m, mk(0x1000, 0x100, 0, 0)), 0);
    ck_assert_int_eq(crm_rangemap_add(&m, mk(0x1100, 0x100, 0, 0)), 0); /* adjacent */
    ck_assert_ptr_nonnull(crm_rangemap_find_span(&m, 0x1000, 0x100));
    ck_assert_ptr_nonnull(crm_rangemap_find_span(&m, 0x1010, 0xf0));
    ck_assert_ptr_null(crm_rangemap_find_span(&m, 0x1010, 0xf1));
    /* Two adjacent ranges do not make one span. */
    ck_assert_ptr_null(crm_rangemap_find_span(&m, 0x10f0, 0x20));
    ck_assert_ptr_null(crm_rangemap_find_span(&m, 0x0fff, 2));
    ck_assert_ptr_null(crm_rangemap_find_span(&m, 0x1200, 1));
    /* Lengths near 2^64 do not wrap into a match. */
    ck_assert_ptr_null(crm_rangemap_find_span(&m, 0x1010, UINT64_MAX));
    ck_assert_ptr_null(crm_rangemap_find_span(&m, 0x1010, UINT64_MAX - 0x1010 + 1));
    crm_rangemap_free(&m);
}
END_TEST

START_TEST(test_find_span_len_zero_counts_as_one)
{
    crm_rangemap m;
    crm_rangemap_init(&m);
    ck_assert_int_eq(crm_rangemap_add(&m, mk(0x1000, 0x100, 0, 0)), 0);
    ck_assert_ptr_nonnull(crm_rangemap_find_span(&m, 0x10ff, 0));
    ck_assert_ptr_null(crm_rangemap_find_span(&m, 0x1100, 0));
    ck_assert_ptr_null(crm_rangemap_find_span(&m, 0xfff, 0));
    crm_rangemap_free(&m);
}
END_TEST

/* ------------------------------------------------------------------ find_run, overlaps */

#define JOIN 0x4a4fu

/* Adjacent ranges of the join kind form one run; any other kind, or a gap, ends it. */
START_TEST(test_find_run_joins_adjacent_ranges_of_its_kind)
{
    crm_rangemap m;
    crm_rangemap_init(&m);
    ck_assert_int_eq(crm_rangemap_add(&m, mk(0x1000, 0x100, JOIN, 0)), 0);
    ck_assert_int_eq(crm_rangemap_add(&m, mk(0x1100, 0x100, JOIN, 0)), 0);
    ck_assert_int_eq(crm_rangemap_add(&m, mk(0x1200, 0x100, JOIN, 0)), 0);
    ck_assert_int_eq(crm_rangemap_add(&m, mk(0x1300, 0x100, 7, 0)), 0);    /* another kind */
    ck_assert_int_eq(crm_rangemap_add(&m, mk(0x2000, 0x100, JOIN, 0)), 0); /* after a gap */
    const crm_range *r = crm_rangemap_find_run(&m, 0x10f0, 0x20, JOIN);
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(r->base, 0x1000);
    ck_assert_ptr_nonnull(crm_rangemap_find_run(&m, 0x1000, 0x300, JOIN));
    ck_assert_ptr_null(crm_rangemap_find_run(&m, 0x1000, 0x301, JOIN));     /* into the other kind */
    ck_assert_ptr_null(crm_rangemap_find_run(&m, 0x10f0, 0x20, 7));         /* not joinable as 7 */
    ck_assert_ptr_nonnull(crm_rangemap_find_run(&m, 0x1300, 0x100, JOIN));  /* one range alone is fine */
    ck_assert_ptr_null(crm_rangemap_find_run(&m, 0x1f00, 0x200, JOIN));
    ck_assert_ptr_null(crm_rangemap_find_run(&m, 0x2000, 0x101, JOIN));     /* past the last range */
    ck_assert_ptr_null(crm_rangemap_find_run(&m, 0x1010, UINT64_MAX, JOIN));
    crm_rangemap_free(&m);
}
END_TEST

START_TEST(test_overlaps)
{
    crm_rangemap m;
    crm_rangemap_init(&m);
    ck_assert_int_eq(crm_rangemap_add(&m, mk(0x1000, 0x100, 0, 0)), 0);
    ck_assert_int_eq(crm_rangemap_add(&m, mk(0x3000, 0x100, 0, 0)), 0);
    ck_assert(!crm_rangemap_overlaps(&m, 0x800, 0x800));    /* ends where the range starts */
    ck_assert(crm_rangemap_overlaps(&m, 0x800, 0x801));
    ck_assert(crm_rangemap_overlaps(&m, 0x10ff, 1));
    ck_assert(!crm_rangemap_overlaps(&m, 0x1100, 0x1f00));  /* the gap exactly */
    ck_assert(crm_rangemap_overlaps(&m, 0x1100, 0x1f01));
    ck_assert(crm_rangemap_overlaps(&m, 0x0, 0x10000));     /* around both */
    ck_assert(!crm_rangemap_overlaps(&m, 0x1050, 0));
    crm_rangemap_free(&m);
}
END_TEST

/* ------------------------------------------------------------------ remove */

START_TEST(test_remove_needs_exact_base)
{
    crm_rangemap m;
    crm_rangemap_init(&m);
    ck_assert_int_eq(crm_rangemap_add(&m, mk(0x1000, 0x100, 9, 1)), 0);
    ck_assert_int_eq(crm_rangemap_add(&m, mk(0x2000, 0x100, 8, 0)), 0);
    crm_range out = mk(0, 0, 0, 0);
    ck_assert_int_eq(crm_rangemap_remove(&m, 0x1001, &out), -1);
    ck_assert_int_eq(crm_rangemap_remove(&m, 0x10ff, &out), -1);
    ck_assert_int_eq(crm_rangemap_remove(&m, 0x0fff, &out), -1);
    ck_assert_int_eq(crm_rangemap_remove(&m, 0x1100, &out), -1);
    ck_assert_uint_eq(out.size, 0);
    ck_assert_uint_eq(m.count, 2);

    ck_assert_int_eq(crm_rangemap_remove(&m, 0x1000, &out), 0);
    ck_assert_uint_eq(out.base, 0x1000);
    ck_assert_uint_eq(out.size, 0x100);
    ck_assert_uint_eq(out.kind, 9);
    ck_assert_int_eq(out.device, 1);
    ck_assert_ptr_null(crm_rangemap_find(&m, 0x1000));
    ck_assert_ptr_nonnull(crm_rangemap_find(&m, 0x2000));
    ck_assert_int_eq(crm_rangemap_remove(&m, 0x1000, &out), -1); /* already gone */

    ck_assert_int_eq(crm_rangemap_remove(&m, 0x2000, NULL), 0);
    ck_assert_uint_eq(m.count, 0);
    /* The space is free again. */
    ck_assert_int_eq(crm_rangemap_add(&m, mk(0x1050, 0x1000, 0, 0)), 0);
    crm_rangemap_free(&m);
}
END_TEST

START_TEST(test_free_leaves_map_reusable)
{
    crm_rangemap m;
    crm_rangemap_init(&m);
    for (uint64_t i = 0; i < 100; i++)
        ck_assert_int_eq(crm_rangemap_add(&m, mk(i * 10, 5, 0, 0)), 0);
    crm_rangemap_free(&m);
    ck_assert_ptr_null(crm_rangemap_find(&m, 0));
    ck_assert_int_eq(crm_rangemap_add(&m, mk(0, 5, 0, 0)), 0);
    ck_assert_uint_eq(m.count, 1);
    crm_rangemap_free(&m);
}
END_TEST

/* ------------------------------------------------------------------ randomised */

#define SLOTS 20000u
#define SLOT_SIZE 4096u
#define NRANGES 10000u

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

typedef struct ref_range {
    uint64_t base, size;
    int live;
} ref_range;

/* Brute force: index of the live reference range containing addr, or -1. */
static long ref_find(const ref_range *ref, size_t n, uint64_t addr)
{
    long hit = -1;
    for (size_t i = 0; i < n; i++)
        if (ref[i].live && addr >= ref[i].base && addr - ref[i].base < ref[i].size) {
            REQUIRE(hit == -1); /* the reference never overlaps */
            hit = (long)i;
        }
    return hit;
}

static void check_against_reference(const crm_rangemap *m, const ref_range *ref, size_t n, int queries)
{
    size_t live = 0;
    for (size_t i = 0; i < n; i++) {
        if (!ref[i].live) {
            REQUIRE(crm_rangemap_find(m, ref[i].base) == NULL);
            continue;
        }
        live++;
        const crm_range *r = crm_rangemap_find(m, ref[i].base + ref[i].size - 1);
        REQUIRE(r != NULL);
        REQUIRE(r->base == ref[i].base);
        REQUIRE(r->size == ref[i].size);
        REQUIRE(r->kind == (uint32_t)i);
        REQUIRE(crm_rangemap_find_span(m, ref[i].base, ref[i].size) == r);
        REQUIRE(crm_rangemap_find_span(m, ref[i].base, ref[i].size + 1) == NULL);
        /* Just past the end and just before the base lie outside this range. */
        const crm_range *after = crm_rangemap_find(m, ref[i].base + ref[i].size);
        REQUIRE(after == NULL || after->base == ref[i].base + ref[i].size);
        const crm_range *before = ref[i].base ? crm_rangemap_find(m, ref[i].base - 1) : NULL;
        REQUIRE(before == NULL || before->base + before->size == ref[i].base);
    }
    REQUIRE(m->count == live);
    check_invariants(m);
    /* Random addresses, including ones just outside ranges, against the brute force. */
    for (int q = 0; q < queries; q++) {
        uint64_t addr = rnd() % ((uint64_t)SLOTS * SLOT_SIZE + SLOT_SIZE);
        long want = ref_find(ref, n, addr);
        const crm_range *r = crm_rangemap_find(m, addr);
        if (want < 0) {
            REQUIRE(r == NULL);
        } else {
            REQUIRE(r != NULL);
            REQUIRE(r->base == ref[want].base);
        }
    }
}

START_TEST(test_many_random_ranges_match_brute_force)
{
    rng_state = 0x9e3779b97f4a7c15ull;
    /* Each range lives inside its own slot, so the reference never overlaps; the
     * order of insertion is shuffled. */
    uint32_t *order = malloc(SLOTS * sizeof *order);
    ref_range *ref = calloc(NRANGES, sizeof *ref);
    REQUIRE(order != NULL);
    REQUIRE(ref != NULL);
    for (uint32_t i = 0; i < SLOTS; i++)
        order[i] = i;
    for (uint32_t i = SLOTS - 1; i > 0; i--) {
        uint32_t j = (uint32_t)(rnd() % (i + 1));
        uint32_t t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    crm_rangemap m;
    crm_rangemap_init(&m);
    for (uint32_t i = 0; i < NRANGES; i++) {
        uint64_t size = 1 + rnd() % SLOT_SIZE;
        uint64_t off = rnd() % (SLOT_SIZE - size + 1);
        ref[i] = (ref_range){(uint64_t)order[i] * SLOT_SIZE + off, size, 1};
        REQUIRE(crm_rangemap_add(&m, mk(ref[i].base, size, i, (int)(i % 4))) == 0);
    }
    check_against_reference(&m, ref, NRANGES, 3000);

    /* Ranges overlapping a present one by at least a byte are all refused. */
    for (int k = 0; k < 2000; k++) {
        const ref_range *r = &ref[rnd() % NRANGES];
        uint64_t hit = r->base + rnd() % r->size;
        uint64_t before = rnd() % SLOT_SIZE;
        uint64_t base = hit >= before ? hit - before : 0;
        REQUIRE(crm_rangemap_add(&m, mk(base, hit - base + 1 + rnd() % 64, 0, 0)) == -1);
    }
    REQUIRE(m.count == NRANGES);

    /* Remove half at random, then check again; re-adding a removed range works. */
    for (uint32_t i = 0; i < NRANGES; i++) {
        if (rnd() & 1)
            continue;
        crm_range out;
        REQUIRE(crm_rangemap_remove(&m, ref[i].base + (ref[i].size > 1), &out) == (ref[i].size > 1 ? -1 : 0));
        if (ref[i].size > 1)
            REQUIRE(crm_rangemap_remove(&m, ref[i].base, &out) == 0);
        REQUIRE(out.kind == i);
        ref[i].live = 0;
    }
    check_against_reference(&m, ref, NRANGES, 3000);
    for (uint32_t i = 0; i < NRANGES; i += 7)
        if (!ref[i].live) {
            REQUIRE(crm_rangemap_add(&m, mk(ref[i].base, ref[i].size, i, 0)) == 0);
            ref[i].live = 1;
        }
    check_against_reference(&m, ref, NRANGES, 1000);
    crm_rangemap_free(&m);
    free(order);
    free(ref);
}
END_TEST

Suite *crm_rangemap_suite(void)
{
    Suite *s = suite_create("rangemap");
    TCase *tc = tcase_create("basics");
    tcase_add_test(tc, test_empty_map_finds_nothing);
    tcase_add_test(tc, test_add_then_find_returns_range_with_tags);
    tcase_add_test(tc, test_find_at_exact_end_is_exclusive);
    tcase_add_test(tc, test_add_zero_size_is_rejected);
    tcase_add_test(tc, test_add_wrapping_range_is_rejected);
    tcase_add_test(tc, test_range_ending_just_below_top_of_address_space);
    tcase_add_test(tc, test_overlapping_adds_are_rejected);
    tcase_add_test(tc, test_find_span_inside_and_across_end);
    tcase_add_test(tc, test_find_span_len_zero_counts_as_one);
    tcase_add_test(tc, test_find_run_joins_adjacent_ranges_of_its_kind);
    tcase_add_test(tc, test_overlaps);
    tcase_add_test(tc, test_remove_needs_exact_base);
    tcase_add_test(tc, test_free_leaves_map_reusable);
    suite_add_tcase(s, tc);

    TCase *tr = tcase_create("random");
    tcase_set_timeout(tr, 60);
    tcase_add_test(tr, test_many_random_ranges_match_brute_force);
    suite_add_tcase(s, tr);
    return s;
}

CRM_CHECK_MAIN(crm_rangemap_suite)
