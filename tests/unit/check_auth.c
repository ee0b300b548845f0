/* check_auth.c -- unit tests of the token exchange (common/crm_auth.h): a client
 * holding the token convinces a server holding only the verifier, and nothing
 * else does; the auth file's lines and the token's text parse strictly. */
#include <stdlib.h>
#include <string.h>
#include "common/crm_auth.h"
#include "tests/unit/crm_check.h"

static const unsigned char cnonce[CRM_AUTH_NONCE_LEN] = {1, 2, 3};
static const unsigned char snonce[CRM_AUTH_NONCE_LEN] = {9, 8, 7};

/* The whole exchange: the client's proof for `secret` against verifier v. */
static int exchange(const crm_auth_verifier *v, const char *user, const char *secret, unsigned char *t,
                    crm_auth_verifier *client)
{
    unsigned char ck[CRM_AUTH_KEY_LEN], proof[CRM_AUTH_KEY_LEN];
    ck_assert_int_eq(crm_auth_derive(secret, v->salt, v->iterations, client, ck), 0);
    ck_assert_int_eq(crm_auth_transcript(user, cnonce, snonce, t), 0);
    ck_assert_int_eq(crm_auth_client_proof(ck, client->stored_key, t, proof), 0);
    return crm_auth_check_proof(v, t, proof);
}

START_TEST(test_right_token_proves_and_both_sides_agree)
{
    crm_auth_verifier v, c;
    unsigned char t[CRM_AUTH_KEY_LEN], ssig[CRM_AUTH_KEY_LEN], csig[CRM_AUTH_KEY_LEN];
    unsigned char stok[CRM_AUTH_CHAN_TOKEN_LEN], ctok[CRM_AUTH_CHAN_TOKEN_LEN];
    ck_assert_int_eq(crm_auth_verifier_new("alice", "s3cret", &v), 0);
    ck_assert_int_eq(exchange(&v, "alice", "s3cret", t, &c), 1);
    ck_assert_int_eq(crm_auth_server_signature(v.server_key, t, ssig), 0);
    ck_assert_int_eq(crm_auth_server_signature(c.server_key, t, csig), 0);
    ck_assert(crm_auth_equal(ssig, csig, sizeof ssig));
    ck_assert_int_eq(crm_auth_chan_token(v.stored_key, t, stok), 0);
    ck_assert_int_eq(crm_auth_chan_token(c.stored_key, t, ctok), 0);
    ck_assert_mem_eq(stok, ctok, sizeof stok);
}
END_TEST

START_TEST(test_wrong_token_or_replay_fails)
{
    crm_auth_verifier v, c;
    unsigned char t[CRM_AUTH_KEY_LEN], t2[CRM_AUTH_KEY_LEN], ck[CRM_AUTH_KEY_LEN], proof[CRM_AUTH_KEY_LEN];
    ck_assert_int_eq(crm_auth_verifier_new("alice", "s3cret", &v), 0);
    ck_assert_int_eq(exchange(&v, "alice", "s3cret!", t, &c), 0);
    ck_assert_int_eq(exchange(&v, "alice", "", t, &c), 0);
    /* A proof recorded for one server nonce is worthless under another. */
    ck_assert_int_eq(crm_auth_derive("s3cret", v.salt, v.iterations, &c, ck), 0);
    ck_assert_int_eq(crm_auth_transcript("alice", cnonce, snonce, t), 0);
    ck_assert_int_eq(crm_auth_client_proof(ck, c.stored_key, t, proof), 0);
    ck_assert_int_eq(crm_auth_check_proof(&v, t, proof), 1);
    unsigned char other[CRM_AUTH_NONCE_LEN] = {9, 8, 6};
    ck_assert_int_eq(crm_auth_transcript("alice", cnonce, other, t2), 0);
    ck_assert_int_eq(crm_auth_check_proof(&v, t2, proof), 0);
    /* Nor under another user name. */
    ck_assert_int_eq(crm_auth_transcript("alicf", cnonce, snonce, t2), 0);
    ck_assert_int_eq(crm_auth_check_proof(&v, t2, proof), 0);
    /* What the auth file holds is not enough: its stored key as the client key fails. */
    ck_assert_int_eq(crm_auth_client_proof(v.stored_key, v.stored_key, t, proof), 0);
    ck_assert_int_eq(crm_auth_check_proof(&v, t, proof), 0);
    /* Every single flipped bit of a good proof is refused. */
    ck_assert_int_eq(crm_auth_client_proof(ck, c.stored_key, t, proof), 0);
    for (int bit = 0; bit < 8 * CRM_AUTH_KEY_LEN; bit++) {
        proof[bit / 8] ^= (unsigned char)(1u << bit % 8);
        ck_assert_int_eq(crm_auth_check_proof(&v, t, proof), 0);
        proof[bit / 8] ^= (unsigned char)(1u << bit % 8);
    }
}
END_TEST

START_TEST(test_salts_differ_per_verifier)
{
    crm_auth_verifier a, b;
    ck_assert_int_eq(crm_auth_verifier_new("alice", "same", &a), 0);
    ck_assert_int_eq(crm_auth_verifier_new("alice", "same", &b), 0);
    ck_assert(memcmp(a.salt, b.salt, sizeof a.salt) != 0);
    ck_assert(memcmp(a.stored_key, b.stored_key, sizeof a.stored_key) != 0);
    ck_assert_uint_eq(a.iterations, CRM_AUTH_ITERATIONS);
}
END_TEST

START_TEST(test_file_line_round_trip)
{
    crm_auth_verifier v, back;
    char line[CRM_AUTH_LINE_MAX], err[200];
    ck_assert_int_eq(crm_auth_verifier_new("bob.smith-2_x", "tok", &v), 0);
    crm_auth_verifier_format(&v, line);
    ck_assert_ptr_nonnull(strstr(line, "bob.smith-2_x:cudarem-sha256:4096:"));
    ck_assert_int_eq(line[strlen(line) - 1], '\n');
    line[strlen(line) - 1] = '\0';
    ck_assert_int_eq(crm_auth_verifier_parse(line, &back, err, sizeof err), 0);
    ck_assert_str_eq(back.user, v.user);
    ck_assert_uint_eq(back.iterations, v.iterations);
    ck_assert_mem_eq(back.salt, v.salt, sizeof v.salt);
    ck_assert_mem_eq(back.stored_key, v.stored_key, sizeof v.stored_key);
    ck_assert_mem_eq(back.server_key, v.server_key, sizeof v.server_key);
    ck_assert_ptr_null(strstr(line, "tok")); /* the secret is not at rest (hex has no 't') */
    ck_assert_int_eq(back.admin, 0);
    /* the administrator role is the line's seventh field, and round-trips */
    v.admin = 1;
    crm_auth_verifier_format(&v, line);
    ck_assert_ptr_nonnull(strstr(line, ":admin\n"));
    line[strlen(line) - 1] = '\0';
    ck_assert_int_eq(crm_auth_verifier_parse(line, &back, err, sizeof err), 0);
    ck_assert_int_eq(back.admin, 1);
    ck_assert_mem_eq(back.server_key, v.server_key, sizeof v.server_key);
}
END_TEST

START_TEST(test_bad_file_lines_refused)
{
    static const char *bad[] = {
        "",
        "alice",
        "alice:plain:4096:00:00:00",
        "alice:cudarem-sha256:0:00000000000000000000000000000000:" /* zero iterations */
        "0000000000000000000000000000000000000000000000000000000000000000:"
        "0000000000000000000000000000000000000000000000000000000000000000",
        "alice:cudarem-sha256:4096:0000000000000000000000000000000:" /* short salt */
        "0000000000000000000000000000000000000000000000000000000000000000:"
        "0000000000000000000000000000000000000000000000000000000000000000",
        "alice:cudarem-sha256:4096:0000000000000000000000000000000g:" /* not hex */
        "0000000000000000000000000000000000000000000000000000000000000000:"
        "0000000000000000000000000000000000000000000000000000000000000000",
        "al ice:cudarem-sha256:4096:00000000000000000000000000000000:" /* space in the name */
        "0000000000000000000000000000000000000000000000000000000000000000:"
        "0000000000000000000000000000000000000000000000000000000000000000",
        "alice:cudarem-sha256:4096:00000000000000000000000000000000:" /* a seventh field, not a role */
        "0000000000000000000000000000000000000000000000000000000000000000:"
        "0000000000000000000000000000000000000000000000000000000000000000:00",
        "alice:cudarem-sha256:4096:00000000000000000000000000000000:" /* an eighth field */
        "0000000000000000000000000000000000000000000000000000000000000000:"
        "0000000000000000000000000000000000000000000000000000000000000000:admin:x",
        ":cudarem-sha256:4096:00000000000000000000000000000000:"
        "0000000000000000000000000000000000000000000000000000000000000000:"
        "0000000000000000000000000000000000000000000000000000000000000000",
    };
    crm_auth_verifier v;
    char err[200];
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = '\0';
        ck_assert_msg(crm_auth_verifier_parse(bad[i], &v, err, sizeof err) == -1, "accepted line %zu", i);
        ck_assert_msg(err[0] != '\0', "no reason for line %zu", i);
    }
}
END_TEST

START_TEST(test_token_text)
{
    char user[CRM_AUTH_USER_MAX + 1], secret[CRM_AUTH_SECRET_MAX + 1], err[200];
    ck_assert_int_eq(crm_auth_token_parse("alice:abc:def\n", "me", user, secret, err, sizeof err), 0);
    ck_assert_str_eq(user, "alice");
    ck_assert_str_eq(secret, "abc:def");
    ck_assert_int_eq(crm_auth_token_parse("justsecret", "me", user, secret, err, sizeof err), 0);
    ck_assert_str_eq(user, "me");
    ck_assert_str_eq(secret, "justsecret");
    ck_assert_int_eq(crm_auth_token_parse("alice:", "me", user, secret, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "empty"));
    ck_assert_int_eq(crm_auth_token_parse("a/b:x", "me", user, secret, err, sizeof err), -1);
    ck_assert_int_eq(crm_auth_token_parse(":x", "me", user, secret, err, sizeof err), -1);
    char longname[100];
    memset(longname, 'u', 80);
    strcpy(longname + 80, ":x");
    ck_assert_int_eq(crm_auth_token_parse(longname, "me", user, secret, err, sizeof err), -1);
    ck_assert_int_eq(crm_auth_user_valid("ok.name_1-x"), 1);
    ck_assert_int_eq(crm_auth_user_valid(""), 0);
    ck_assert_int_eq(crm_auth_user_valid("tab\t"), 0);
}
END_TEST

static Suite *auth_suite(void)
{
    Suite *s = suite_create("auth");
    TCase *tc = tcase_create("exchange");
    tcase_add_test(tc, test_right_token_proves_and_both_sides_agree);
    tcase_add_test(tc, test_wrong_token_or_replay_fails);
    tcase_add_test(tc, test_salts_differ_per_verifier);
    tcase_add_test(tc, test_file_line_round_trip);
    tcase_add_test(tc, test_bad_file_lines_refused);
    tcase_add_test(tc, test_token_text);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(auth_suite)
