/* check_fatbin.c -- unit suite of the fatbinary, cubin and PTX parsers over
 * fatbinaries nvcc built from tests/kernels/fatbin_src.cu at test time (plain, zstd
 * and LZ4 compressed, several archs, PTX only): the kernels' parameter layouts must
 * be those the source declares, and malformed or truncated input must be refused
 * without a crash. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/crm_digest.h"
#include "common/crm_fatbin.h"
#include "tests/unit/crm_check.h"

static unsigned char *load(const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", KTEST_DIR, name);
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)n);
    ck_assert(buf != NULL && fread(buf, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

typedef struct expect {
    const char *name;
    unsigned n;
    crm_kparam_info p[8];
} expect;

/* The layouts fatbin_src.cu declares (offsets follow each type's alignment). */
static const expect layouts[] = {
    {"_Z6k_ptrsPKfS0_Pfi", 4, {{0, 8}, {8, 8}, {16, 8}, {24, 4}}},
    {"_Z9k_scalarscsixfd4Pair", 7, {{0, 1}, {2, 2}, {4, 4}, {8, 8}, {16, 4}, {24, 8}, {32, 24}}},
    {"_Z5k_big3BigPi", 2, {{0, 4000}, {4000, 8}}},
    {"_Z6k_hugei4HugePi", 3, {{0, 4}, {4, 20000}, {20008, 8}}},
    {"_Z6k_nonev", 0, {{0, 0}}},
    {"_Z6k_tmplIdEvPT_S0_", 2, {{0, 8}, {8, 8}}},
};

static void check_layouts(const crm_module_info *m)
{
    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
        const crm_kernel_info *k = crm_module_info_kernel(m, layouts[i].name);
        ck_assert_msg(k != NULL, "kernel %s not found", layouts[i].name);
        ck_assert_uint_eq(k->nparams, layouts[i].n);
        for (unsigned j = 0; j < layouts[i].n; j++) {
            ck_assert_msg(k->params[j].offset == layouts[i].p[j].offset && k->params[j].size == layouts[i].p[j].size,
                          "%s param %u: (%u,%u), expected (%u,%u)", k->name, j, k->params[j].offset,
                          k->params[j].size, layouts[i].p[j].offset, layouts[i].p[j].size);
        }
    }
    int internal = 0;
    for (size_t i = 0; i < m->nkernels; i++)
        internal += strstr(m->kernels[i].name, "k_internal") != NULL;
    ck_assert_msg(internal == 1, "the anonymous-namespace kernel is listed once");
}

static void check_globals(const crm_module_info *m)
{
    const crm_global_info *t = crm_module_info_global(m, "ktable"), *c = crm_module_info_global(m, "kcounter"),
                          *z = crm_module_info_global(m, "kzeros");
    float one = 1.0f;
    int seven = 7;
    ck_assert(t != NULL && c != NULL && z != NULL);
    ck_assert(t->size == 64 && t->constant && t->init != NULL && memcmp(t->init, &one, 4) == 0);
    ck_assert(c->size == 4 && !c->constant && c->init != NULL && memcmp(c->init, &seven, 4) == 0);
    ck_assert(z->size == 800 && z->init == NULL);
}

static void parse_file(const char *name, int want_elf, int want_compressed)
{
    size_t len;
    char err[256];
    crm_module_info m;
    crm_fatbin_entry es[16];
    unsigned char *fb = load(name, &len);
    ck_assert_uint_eq(crm_fatbin_size(fb, len), len);
    int n = crm_fatbin_entries(fb, len, es, 16);
    ck_assert_int_gt(n, 0);
    int compressed = 0;
    for (int i = 0; i < n && i < 16; i++)
        compressed += es[i].kind == CRM_FATBIN_ELF && crm_fatbin_compressed(&es[i]);
    ck_assert_int_eq(compressed > 0, want_compressed);
    ck_assert_msg(crm_module_info_parse(fb, len, &m, err, sizeof err) == 0, "%s: %s", name, err);
    ck_assert_int_eq(m.has_elf, want_elf);
    ck_assert_int_eq(m.from_ptx, !want_elf);
    check_layouts(&m);
    if (want_elf)
        check_globals(&m);
    crm_module_info_free(&m);
    free(fb);
}

START_TEST(test_plain) { parse_file("fb_plain.fatbin", 1, 0); }
END_TEST
START_TEST(test_zstd) { parse_file("fb_compressed.fatbin", 1, 1); }
END_TEST
START_TEST(test_lz4) { parse_file("fb_lz4.fatbin", 1, 1); }
END_TEST
START_TEST(test_ptx_only) { parse_file("fb_ptx.fatbin", 0, 0); }
END_TEST

START_TEST(test_multi_arch)
{
    size_t len;
    crm_fatbin_entry es[16];
    unsigned char *fb = load("fb_multi.fatbin", &len);
    int n = crm_fatbin_entries(fb, len, es, 16), elf75 = 0, elf90 = 0, ptx = 0;
    for (int i = 0; i < n; i++) {
        elf75 += es[i].kind == CRM_FATBIN_ELF && es[i].arch == 75;
        elf90 += es[i].kind == CRM_FATBIN_ELF && es[i].arch == 90;
        ptx += es[i].kind == CRM_FATBIN_PTX;
    }
    ck_assert(elf75 == 1 && elf90 == 1 && ptx >= 1);
    free(fb);
    parse_file("fb_multi.fatbin", 1, 0);
}
END_TEST

/* Every prefix of a valid fatbinary is refused or parsed, never read past. */
/* The entry that slimming for `arch` keeps, as kind * 1000 + arch; 0 when the
 * whole image is to be used. The slim image must itself parse. */
static unsigned slim_pick(const unsigned char *fb, size_t len, unsigned arch)
{
    unsigned char *out = NULL;
    size_t outlen = 0;
    crm_fatbin_entry e[4];
    int rc = crm_fatbin_slim(fb, len, arch, &out, &outlen);
    ck_assert_int_ge(rc, 0);
    if (rc == 1)
        return 0;
    ck_assert_uint_eq(crm_fatbin_size(out, outlen), outlen);
    ck_assert_int_eq(crm_fatbin_entries(out, outlen, e, 4), 1);
    unsigned pick = (unsigned)e[0].kind * 1000 + e[0].arch;
    free(out);
    return pick;
}

/* A module crosses the wire as the one entry the server's device would load. */
START_TEST(test_slim_for_device)
{
    size_t len, plen;
    size_t xlen;
    unsigned char *fb = load("fb_multi.fatbin", &len), *plain = load("fb_plain.fatbin", &plen);
    unsigned char *ptx = load("fb_ptx.fatbin", &xlen);
    ck_assert_uint_eq(slim_pick(fb, len, 90), CRM_FATBIN_ELF * 1000 + 90);  /* its machine code */
    ck_assert_uint_eq(slim_pick(fb, len, 75), CRM_FATBIN_ELF * 1000 + 75);
    ck_assert_uint_eq(slim_pick(fb, len, 100), CRM_FATBIN_PTX * 1000 + 90); /* sm_9x code cannot run: PTX */
    ck_assert_uint_eq(slim_pick(fb, len, 86), 0);                          /* nothing suits: all of it */
    ck_assert_uint_eq(slim_pick(fb, len, 0), CRM_FATBIN_ELF * 1000 + 90);   /* the emulated device */
    ck_assert_uint_eq(slim_pick(plain, plen, 90), CRM_FATBIN_PTX * 1000 + 75); /* nvcc's default: sm_75 + PTX */
    ck_assert_uint_eq(slim_pick(ptx, xlen, 90), 0);                         /* one entry: nothing to leave */
    unsigned char *out;
    size_t outlen;
    ck_assert_int_eq(crm_fatbin_slim(fb, len - 1, 90, &out, &outlen), -1);
    ck_assert_int_eq(crm_fatbin_slim(fb, 0, 90, &out, &outlen), -1); /* no header to read: found by fuzz_image */
    free(fb);
    free(plain);
    free(ptx);
}
END_TEST

START_TEST(test_truncated)
{
    size_t len;
    char err[256];
    crm_module_info m;
    unsigned char *fb = load("fb_compressed.fatbin", &len);
    for (size_t cut = 0; cut < len; cut += (cut < 256 ? 1 : 97)) {
        unsigned char *copy = malloc(cut ? cut : 1);
        memcpy(copy, fb, cut);
        ck_assert_uint_eq(crm_fatbin_size(copy, cut), 0);
        ck_assert_int_eq(crm_module_info_parse(copy, cut, &m, err, sizeof err), -1);
        free(copy);
    }
    free(fb);
}
END_TEST

/* Random byte flips: any result is fine, as long as nothing crashes (ASan build). */
START_TEST(test_corrupted)
{
    const char *files[] = {"fb_plain.fatbin", "fb_compressed.fatbin", "fb_lz4.fatbin", "fb_ptx.fatbin"};
    char err[256];
    srand(1234);
    for (int f = 0; f < 4; f++) {
        size_t len;
        unsigned char *fb = load(files[f], &len);
        for (int round = 0; round < 300; round++) {
            unsigned char *copy = malloc(len);
            memcpy(copy, fb, len);
            for (int k = 0; k < 1 + round % 8; k++)
                copy[(size_t)rand() % len] = (unsigned char)rand();
            crm_module_info m;
            if (crm_module_info_parse(copy, len, &m, err, sizeof err) == 0)
                crm_module_info_free(&m);
            free(copy);
        }
        free(fb);
    }
}
END_TEST

START_TEST(test_garbage)
{
    char err[256];
    crm_module_info m;
    unsigned char junk[64] = {0x50, 0xed, 0x55, 0xba, 1, 0, 16, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f};
    ck_assert_uint_eq(crm_fatbin_size(junk, sizeof junk), 0);
    ck_assert_int_eq(crm_module_info_parse(junk, sizeof junk, &m, err, sizeof err), -1);
    ck_assert_int_eq(crm_module_info_from_elf("\177ELF", 4, &m, err, sizeof err), -1);
    const char *bad_ptx[] = {".entry k(.param .u32 a", ".entry (", ".entry k(.param .b8 x[0])",
                             ".entry k(.param .align 3 .b8 x[4])", ".entry k(.param x)"};
    for (size_t i = 0; i < sizeof bad_ptx / sizeof bad_ptx[0]; i++)
        ck_assert_msg(crm_module_info_from_ptx(bad_ptx[i], strlen(bad_ptx[i]), &m, err, sizeof err) == -1, "%s",
                      bad_ptx[i]);
    const char *ok = "// c\n.visible .entry k2(\n.param .u64 .ptr .global .align 4 p,\n.param .v2 .f32 v,\n"
                     ".param .align 16 .b8 s[20]\n)\n{ ret; }\n.entry k3() { }";
    ck_assert_int_eq(crm_module_info_from_ptx(ok, strlen(ok), &m, err, sizeof err), 0);
    const crm_kernel_info *k = crm_module_info_kernel(&m, "k2");
    ck_assert(k != NULL && k->nparams == 3);
    ck_assert(k->params[1].offset == 8 && k->params[1].size == 8 && k->params[2].offset == 16 && k->params[2].size == 20);
    ck_assert(crm_module_info_kernel(&m, "k3") != NULL && crm_module_info_kernel(&m, "k3")->nparams == 0);
    crm_module_info_free(&m);
}
END_TEST

START_TEST(test_sha256)
{
    unsigned char d[CRM_DIGEST_LEN];
    char hex[2 * CRM_DIGEST_LEN + 1];
    ck_assert_int_eq(crm_sha256("abc", 3, d), 0);
    crm_sha256_hex(d, hex);
    ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}
END_TEST

static Suite *fatbin_suite(void)
{
    Suite *s = suite_create("fatbin");
    TCase *tc = tcase_create("parse");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_plain);
    tcase_add_test(tc, test_zstd);
    tcase_add_test(tc, test_lz4);
    tcase_add_test(tc, test_ptx_only);
    tcase_add_test(tc, test_multi_arch);
    tcase_add_test(tc, test_slim_for_device);
    tcase_add_test(tc, test_truncated);
    tcase_add_test(tc, test_corrupted);
    tcase_add_test(tc, test_garbage);
    tcase_add_test(tc, test_sha256);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(fatbin_suite)
