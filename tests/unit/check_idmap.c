/* check_idmap.c -- unit tests of common/crm_idmap: put/get/del/each, duplicate ids,
 * growth, and a long random run with deletes (tombstones) against a reference. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/crm_idmap.h"
#include "tests/unit/crm_check.h"

/* Assertion for hot loops: Check's ck_assert_* records a mark point (a write to a
 * pipe) on every success, which makes loops of millions of checks slow. */
#define REQUIRE(cond)                                         \
    do {                                                      \
        if (!(cond))                                          \
            ck_abort_msg("assertion failed: %s", #cond);      \
    } while (0)

static void *val(uintptr_t v)
{
    return (void *)v;
}

/* The table's own invariants: power-of-two size, counters match the slots. */
static void check_invariants(const crm_idmap *m)
{
    size_t used = 0, filled = 0;
    ck_assert_uint_eq(m->cap & (m->cap - 1), 0);
    for (size_t i = 0; i < m->cap; i++) {
        used += m->slots[i].state == 1;
        filled += m->slots[i].state != 0;
    }
    ck_assert_uint_eq(used, m->used);
    ck_assert_uint_eq(filled, m->filled);
    ck_assert_uint_lt(m->filled, m->cap + (m->cap == 0)); /* an empty slot ends every probe */
}

/* ------------------------------------------------------------------ basics */

START_TEST(test_empty_map_has_nothing)
{
    crm_idmap m;
    crm_idmap_init(&m);
    void *v = val(0x55);
    ck_assert_int_eq(crm_idmap_get(&m, 0, &v), -1);
    ck_assert_int_eq(crm_idmap_get(&m, 42, NULL), -1);
    ck_assert_int_eq(crm_idmap_del(&m, 42, &v), -1);
    ck_assert_ptr_eq(v, val(0x55)); /* untouched on failure */
    crm_idmap_free(&m);
}
END_TEST

START_TEST(test_put_get_del_round_trip)
{
    crm_idmap m;
    crm_idmap_init(&m);
    ck_assert_int_eq(crm_idmap_put(&m, 7, val(0x700)), 0);
    ck_assert_int_eq(crm_idmap_put(&m, 8, val(0x800)), 0);
    void *v = NULL;
    ck_assert_int_eq(crm_idmap_get(&m, 7, &v), 0);
    ck_assert_ptr_eq(v, val(0x700));
    ck_assert_int_eq(crm_idmap_get(&m, 8, NULL), 0);
    ck_assert_int_eq(crm_idmap_get(&m, 9, &v), -1);
    ck_assert_uint_eq(m.used, 2);

    ck_assert_int_eq(crm_idmap_del(&m, 7, &v), 0);
    ck_assert_ptr_eq(v, val(0x700));
    ck_assert_int_eq(crm_idmap_get(&m, 7, &v), -1);
    ck_assert_int_eq(crm_idmap_del(&m, 7, &v), -1);
    ck_assert_int_eq(crm_idmap_get(&m, 8, &v), 0);
    ck_assert_ptr_eq(v, val(0x800));
    ck_assert_int_eq(crm_idmap_del(&m, 8, NULL), 0);
    ck_assert_uint_eq(m.used, 0);
    /* A deleted id may be put again, with a new value. */
    ck_assert_int_eq(crm_idmap_put(&m, 7, val(0x701)), 0);
    ck_assert_int_eq(crm_idmap_get(&m, 7, &v), 0);
    ck_assert_ptr_eq(v, val(0x701));
    check_invariants(&m);
    crm_idmap_free(&m);
    ck_assert_uint_eq(m.cap, 0);
    ck_assert_ptr_null(m.slots);
}
END_TEST

START_TEST(test_duplicate_put_is_rejected_and_keeps_value)
{
    crm_idmap m;
    crm_idmap_init(&m);
    ck_assert_int_eq(crm_idmap_put(&m, 1234, val(1)), 0);
    ck_assert_int_eq(crm_idmap_put(&m, 1234, val(2)), -1);
    void *v = NULL;
    ck_assert_int_eq(crm_idmap_get(&m, 1234, &v), 0);
    ck_assert_ptr_eq(v, val(1));
    ck_assert_uint_eq(m.used, 1);
    /* Still rejected when the id sits behind a tombstone in its probe chain. */
    for (uint64_t id = 0; id < 10; id++)
        ck_assert_int_eq(crm_idmap_put(&m, id, val(id + 100)), 0);
    for (uint64_t id = 0; id < 10; id += 2)
        ck_assert_int_eq(crm_idmap_del(&m, id, NULL), 0);
    for (uint64_t id = 1; id < 10; id += 2)
        ck_assert_int_eq(crm_idmap_put(&m, id, val(0)), -1);
    ck_assert_int_eq(crm_idmap_put(&m, 1234, val(3)), -1);
    ck_assert_uint_eq(m.used, 6);
    check_invariants(&m);
    crm_idmap_free(&m);
}
END_TEST

START_TEST(test_extreme_ids_and_null_values)
{
    crm_idmap m;
    crm_idmap_init(&m);
    ck_assert_int_eq(crm_idmap_put(&m, 0, NULL), 0);
    ck_assert_int_eq(crm_idmap_put(&m, UINT64_MAX, val(9)), 0);
    void *v = val(1);
    ck_assert_int_eq(crm_idmap_get(&m, 0, &v), 0);
    ck_assert_ptr_null(v);
    ck_assert_int_eq(crm_idmap_put(&m, 0, val(5)), -1);
    ck_assert_int_eq(crm_idmap_get(&m, UINT64_MAX, &v), 0);
    ck_assert_ptr_eq(v, val(9));
    ck_assert_int_eq(crm_idmap_get(&m, UINT64_MAX - 1, &v), -1);
    ck_assert_int_eq(crm_idmap_del(&m, 0, &v), 0);
    ck_assert_int_eq(crm_idmap_get(&m, 0, &v), -1);
    crm_idmap_free(&m);
}
END_TEST

/* ------------------------------------------------------------------ each */

typedef struct visit {
    size_t calls;
    uint64_t id_sum;
    uintptr_t value_xor;
    int saw_deleted;
} visit;

static void count_entry(uint64_t id, void *value, void *arg)
{
    visit *v = arg;
    v->calls++;
    v->id_sum += id;
    v->value_xor ^= (uintptr_t)value;
    if (id % 3 == 0)
        v->saw_deleted = 1;
}

START_TEST(test_each_visits_every_live_entry_once)
{
    crm_idmap m;
    crm_idmap_init(&m);
    visit v = {0};
    crm_idmap_each(&m, count_entry, &v);
    ck_assert_uint_eq(v.calls, 0);

    uint64_t sum = 0;
    uintptr_t x = 0;
    size_t n = 0;
    for (uint64_t id = 1; id <= 1000; id++)
        ck_assert_int_eq(crm_idmap_put(&m, id, val((uintptr_t)id * 31)), 0);
    for (uint64_t id = 3; id <= 1000; id += 3)
        ck_assert_int_eq(crm_idmap_del(&m, id, NULL), 0);
    for (uint64_t id = 1; id <= 1000; id++)
        if (id % 3 != 0) {
            sum += id;
            x ^= (uintptr_t)id * 31;
            n++;
        }
    crm_idmap_each(&m, count_entry, &v);
    ck_assert_uint_eq(v.calls, n);
    ck_assert_uint_eq(v.id_sum, sum);
    ck_assert_uint_eq(v.value_xor, x);
    ck_assert_int_eq(v.saw_deleted, 0);
    crm_idmap_free(&m);
}
END_TEST

/* ------------------------------------------------------------------ growth */

START_TEST(test_growth_keeps_every_entry)
{
    crm_idmap m;
    crm_idmap_init(&m);
    const uint64_t n = 100000;
    size_t last_cap = 0;
    int grew = 0;
    for (uint64_t i = 0; i < n; i++) {
        /* Ids in strides that collide in the low bits without a good hash. */
        uint64_t id = i << 32 | 0x10;
        REQUIRE(crm_idmap_put(&m, id, val((uintptr_t)i + 1)) == 0);
        grew += m.cap != last_cap;
        last_cap = m.cap;
        REQUIRE(m.filled * 4 <= m.cap * 3); /* load factor kept */
    }
    REQUIRE(grew >= 10);
    REQUIRE(m.used == n);
    check_invariants(&m);
    for (uint64_t i = 0; i < n; i++) {
        void *v = NULL;
        REQUIRE(crm_idmap_get(&m, i << 32 | 0x10, &v) == 0);
        REQUIRE(v == val((uintptr_t)i + 1));
        REQUIRE(crm_idmap_get(&m, i << 32 | 0x11, &v) == -1);
    }
    crm_idmap_free(&m);
}
END_TEST

START_TEST(test_put_del_churn_does_not_grow_table)
{
    crm_idmap m;
    crm_idmap_init(&m);
    REQUIRE(crm_idmap_put(&m, 0xabc, val(1)) == 0);
    /* Fresh ids each time leave a trail of tombstones; rehashing must clear them
     * instead of growing the table or filling it up (a full table loops forever). */
    for (uint64_t id = 1; id <= 200000; id++) {
        REQUIRE(crm_idmap_put(&m, id << 20, val(2)) == 0);
        REQUIRE(crm_idmap_del(&m, id << 20, NULL) == 0);
        REQUIRE(m.filled < m.cap);
    }
    REQUIRE(m.cap <= 64);
    REQUIRE(m.used == 1);
    REQUIRE(crm_idmap_get(&m, 0xabc, NULL) == 0);
    REQUIRE(crm_idmap_get(&m, 1 << 20, NULL) == -1);
    check_invariants(&m);
    crm_idmap_free(&m);
}
END_TEST

/* ------------------------------------------------------------------ randomised */

#define UNIVERSE 4096u

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

/* Id i of the universe: spread over the 64-bit space, some sharing low bits. */
static uint64_t uid(uint32_t i)
{
    return (i & 1) ? (uint64_t)i * 0x9e3779b97f4a7c15ull : (uint64_t)i << 40;
}

START_TEST(test_random_ops_with_tombstones_match_reference)
{
    rng_state = 0x2545f4914f6cdd1dull;
    uintptr_t *ref = calloc(UNIVERSE, sizeof *ref); /* 0 = absent, else the value */
    REQUIRE(ref != NULL);
    crm_idmap m;
    crm_idmap_init(&m);
    size_t live = 0;
    for (int op = 0; op < 400000; op++) {
        uint32_t i = (uint32_t)(rnd() % UNIVERSE);
        /* Phases bias towards filling or draining, so the table grows and empties. */
        int fill = ((op / 50000) & 1) == 0;
        uint64_t r = rnd() % 10;
        void *v = NULL;
        if (r < (fill ? 6u : 3u)) {
            uintptr_t nv = (uintptr_t)rnd() | 1;
            int rc = crm_idmap_put(&m, uid(i), val(nv));
            REQUIRE(rc == (ref[i] ? -1 : 0));
            if (!ref[i]) {
                ref[i] = nv;
                live++;
            }
        } else if (r < 8) {
            int rc = crm_idmap_del(&m, uid(i), &v);
            REQUIRE(rc == (ref[i] ? 0 : -1));
            if (ref[i]) {
                REQUIRE(v == val(ref[i]));
                ref[i] = 0;
                live--;
            }
        } else {
            int rc = crm_idmap_get(&m, uid(i), &v);
            REQUIRE(rc == (ref[i] ? 0 : -1));
            if (ref[i])
                REQUIRE(v == val(ref[i]));
        }
        REQUIRE(m.used == live);
        if (op % 20000 == 0) {
            check_invariants(&m);
            for (uint32_t k = 0; k < UNIVERSE; k++)
                REQUIRE(crm_idmap_get(&m, uid(k), NULL) == (ref[k] ? 0 : -1));
        }
    }
    check_invariants(&m);
    visit vis = {0};
    crm_idmap_each(&m, count_entry, &vis);
    REQUIRE(vis.calls == live);
    crm_idmap_free(&m);
    free(ref);
}
END_TEST

Suite *crm_idmap_suite(void)
{
    Suite *s = suite_create("idmap");
    TCase *tc = tcase_create("basics");
    tcase_add_test(tc, test_empty_map_has_nothing);
    tcase_add_test(tc, test_put_get_del_round_trip);
    tcase_add_test(tc, test_duplicate_put_is_rejected_and_keeps_value);
    tcase_add_test(tc, test_extreme_ids_and_null_values);
    tcase_add_test(tc, test_each_visits_every_live_entry_once);
    suite_add_tcase(s, tc);

    TCase *tg = tcase_create("growth");
    tcase_set_timeout(tg, 60);
    tcase_add_test(tg, test_growth_keeps_every_entry);
    tcase_add_test(tg, test_put_del_churn_does_not_grow_table);
    tcase_add_test(tg, test_random_ops_with_tombstones_match_reference);
    suite_add_tcase(s, tg);
    return s;
}

CRM_CHECK_MAIN(crm_idmap_suite)
