/* check_e2e_install.c -- end-to-end suite: what `make install` gives an operator.
 * Installed into a scratch prefix: the programs, the shim with its lib/ of NVIDIA
 * names, the emulated device, cudarem.pc, the systemd unit and the example
 * config are all there; pkg-config names the installed shim; the example config
 * parses; the installed server, started from a config file, finds its emulated
 * device beside the installed shim and serves a CUDA program through the installed
 * shim, and the installed cudarem-smi shows it; systemd-analyze verifies the unit;
 * the Kubernetes manifests of docs/k8s validate against Kubernetes' schemas. */
#include "tests/e2e/e2e_harness.h"
#include "tests/unit/crm_check.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef E2E_PYENV
#define E2E_PYENV ""
#endif

static char dir[64], prefix[E2E_PATH_LEN];

/* Runs argv (argv[0] a full path) with output in dir under tag: its exit status. */
static int run(const char *tag, char **argv, char **out)
{
    e2e_proc p;
    e2e_proc_opts o = {NULL, 0, 0};
    ck_assert_int_eq(e2e_run(&p, dir, tag, argv[0], argv, &o), 0);
    ck_assert_msg(WIFEXITED(p.status), "%s did not exit by itself", tag);
    char *text = e2e_read_file(p.out_path), *err = e2e_read_file(p.err_path);
    if (WEXITSTATUS(p.status) != 0)
        e2e_dump(tag, err, 3000);
    free(err);
    if (out != NULL)
        *out = text;
    else
        free(text);
    return WEXITSTATUS(p.status);
}

static void install(void)
{
    char pre[E2E_PATH_LEN + 8], sys[E2E_PATH_LEN + 16], unit[E2E_PATH_LEN + 16], src[E2E_PATH_LEN + 4];
    snprintf(prefix, sizeof prefix, "%s/usr", dir);
    snprintf(pre, sizeof pre, "PREFIX=%s", prefix);
    snprintf(sys, sizeof sys, "SYSCONFDIR=%s/etc", dir);
    snprintf(unit, sizeof unit, "SYSTEMDDIR=%s/systemd", dir);
    snprintf(src, sizeof src, "%s", e2e_source_dir());
    unsetenv("MAKEFLAGS"); /* the suite's own make's jobserver is not this one's */
    unsetenv("MFLAGS");
    unsetenv("MAKELEVEL");
    char *argv[] = {"/usr/bin/make", "-s", "-C", src, E2E_SAN ? "SAN=1" : "SAN=0", pre, sys, unit, "install", NULL};
    ck_assert_msg(run("make-install", argv, NULL) == 0, "make install failed");
}

static void setup(void)
{
    ck_assert_msg(e2e_dir_make(dir, sizeof dir) == 0, "mkdtemp failed");
    install();
}

static void teardown(void)
{
    e2e_dir_remove(dir);
}

static void must_exist(const char *rel)
{
    char path[2 * E2E_PATH_LEN];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    ck_assert_msg(stat(path, &st) == 0 && st.st_size > 0, "not installed: %s", rel);
}

START_TEST(test_files_and_pkg_config)
{
    static const char *const files[] = {
        "usr/bin/cudarem-server", "usr/bin/cudarem-smi", "usr/lib/cudarem/libcudarem.so",
        "usr/lib/cudarem/libcudarem-emu.so", "usr/lib/cudarem/lib/libcudart.so.13",
        "usr/lib/cudarem/lib/libcuda.so.1", "usr/lib/pkgconfig/cudarem.pc", "systemd/cudarem-server.service",
        "etc/cudarem/server.conf.example", "usr/share/doc/cudarem/README.md",
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        must_exist(files[i]);
    char pcpath[E2E_PATH_LEN + 32], want[E2E_PATH_LEN + 32], *out;
    snprintf(pcpath, sizeof pcpath, "%s/lib/pkgconfig", prefix);
    setenv("PKG_CONFIG_PATH", pcpath, 1);
    char *argv[] = {"/usr/bin/pkg-config", "--variable=shim", "cudarem", NULL};
    ck_assert_int_eq(run("pkg-config", argv, &out), 0);
    unsetenv("PKG_CONFIG_PATH");
    snprintf(want, sizeof want, "%s/lib/cudarem/libcudarem.so\n", prefix);
    ck_assert_str_eq(out, want);
    free(out);
}
END_TEST

/* man finds both pages under the prefix, and they render without roff's warnings. */
START_TEST(test_manual_pages)
{
    static const char *const pages[][2] = {
        {"cudarem-server", "cudarem-server - lend this host's GPUs"},
        {"cudarem-smi", "cudarem-smi - see and end the sessions"},
    };
    char manpath[E2E_PATH_LEN + 32];
    snprintf(manpath, sizeof manpath, "%s/share/man", prefix);
    setenv("MANWIDTH", "200", 1);
    setenv("MAN_DISABLE_SECCOMP", "1", 1); /* man-db's sandbox fails in some containers */
    setenv("LC_ALL", "C", 1);              /* no "can't set the locale" on stderr */
    for (size_t i = 0; i < sizeof pages / sizeof *pages; i++) {
        char *argv[] = {"/usr/bin/man", "--warnings", "-M", manpath, "-P", "cat", (char *)pages[i][0], NULL};
        e2e_proc p;
        e2e_proc_opts o = {NULL, 0, 0};
        ck_assert_int_eq(e2e_run(&p, dir, pages[i][0], argv[0], argv, &o), 0);
        char *out = e2e_read_file(p.out_path), *err = e2e_read_file(p.err_path);
        int ok = WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0 && strstr(out, pages[i][1]) != NULL &&
                 strstr(out, "OPTIONS") != NULL && err[0] == '\0';
        if (!ok) {
            e2e_dump(pages[i][0], out, 2000);
            e2e_dump("man's stderr (roff's warnings)", err, 2000);
        }
        free(out);
        free(err);
        ck_assert_msg(ok, "man %s: no page, or warnings", pages[i][0]);
    }
}
END_TEST

START_TEST(test_installed_server_serves)
{
    char server[E2E_PATH_LEN + 32], smi[E2E_PATH_LEN + 32], example[E2E_PATH_LEN + 64], conf[E2E_PATH_LEN];
    char sock[E2E_PATH_LEN + 8], addr[E2E_PATH_LEN + 16], preload[3 * E2E_PATH_LEN], prog[E2E_PATH_LEN], *out;
    snprintf(server, sizeof server, "%s/bin/cudarem-server", prefix);
    snprintf(smi, sizeof smi, "%s/bin/cudarem-smi", prefix);
    snprintf(example, sizeof example, "%s/etc/cudarem/server.conf.example", dir);
    ck_assert_msg(run("example-parses", (char *[]){server, "--config", example, "--help", NULL}, NULL) == 0,
                  "the example config does not parse");

    snprintf(conf, sizeof conf, "%s/server.conf", dir);
    snprintf(sock, sizeof sock, "%s/s.sock", dir);
    FILE *f = fopen(conf, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "# a test's config\nlisten = unix:%s\ndevice = emu\ninsecure\ncache-dir = off\n", sock);
    fclose(f);
    e2e_proc srv;
    e2e_proc_opts o = {NULL, 0, 0};
    ck_assert_int_eq(e2e_spawn(&srv, dir, "installed-server", server, (char *[]){server, "--config", conf, NULL}, &o),
                     0);
    for (int i = 0; i < 100 && access(sock, F_OK) != 0; i++)
        e2e_sleep_ms(50);
    ck_assert_msg(access(sock, F_OK) == 0, "the installed server does not listen");

    snprintf(addr, sizeof addr, "unix:%s", sock);
    snprintf(preload, sizeof preload, "%s%s%s/lib/cudarem/libcudarem.so", E2E_SAN ? E2E_ASAN_LIB : "",
             E2E_SAN ? " " : "", prefix);
    setenv("LD_PRELOAD", preload, 1);
    setenv("CUDAREM_SERVER", addr, 1);
    if (E2E_SAN)
        setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
    e2e_build_path("cuda/copy", prog, sizeof prog);
    int rc = run("installed-shim", (char *[]){prog, NULL}, &out);
    unsetenv("LD_PRELOAD");
    unsetenv("CUDAREM_SERVER");
    ck_assert_msg(rc == 0 && strstr(out, "PASS copy") != NULL, "copy through the installed shim: %s", out);
    free(out);
    ck_assert_int_eq(run("installed-smi", (char *[]){smi, "-s", addr, NULL}, &out), 0);
    ck_assert_msg(strstr(out, "backend emu") != NULL, "smi: %s", out);
    free(out);
    kill(srv.pid, SIGTERM);
    ck_assert_int_eq(e2e_wait(&srv, 20000), 0);
}
END_TEST

START_TEST(test_systemd_unit_verifies)
{
    char unit[E2E_PATH_LEN + 32];
    snprintf(unit, sizeof unit, "%s/systemd/cudarem-server.service", dir);
    ck_assert_msg(access("/usr/bin/systemd-analyze", X_OK) == 0,
                  "no systemd-analyze: tools/install-deps.sh installs the Debian package systemd");
    ck_assert_msg(run("systemd-analyze", (char *[]){"/usr/bin/systemd-analyze", "verify", unit, NULL}, NULL) == 0,
                  "systemd-analyze verify failed");
}
END_TEST

START_TEST(test_kubernetes_manifests_validate)
{
    char python[E2E_PATH_LEN], a[E2E_PATH_LEN], b[E2E_PATH_LEN];
    const char *env = getenv("CUDAREM_PYENV");
    snprintf(python, sizeof python, "%s/bin/python", env && *env ? env : E2E_PYENV);
    ck_assert_msg(access(python, X_OK) == 0, "no Python environment at %s (run tools/python-env.sh)", python);
    snprintf(a, sizeof a, "%s/docs/k8s/cudarem-server.yaml", e2e_source_dir());
    snprintf(b, sizeof b, "%s/docs/k8s/cudarem-client-pod.yaml", e2e_source_dir());
    char *argv[] = {python, "-m", "kubernetes_validate", "--strict", "-k", "1.37", a, b, NULL};
    ck_assert_msg(run("kubernetes-validate", argv, NULL) == 0, "docs/k8s does not validate");
}
END_TEST

static Suite *install_suite(void)
{
    Suite *s = suite_create("e2e_install");
    TCase *tc = tcase_create("install");
    tcase_add_unchecked_fixture(tc, setup, teardown); /* one install for all the tests */
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_files_and_pkg_config);
    tcase_add_test(tc, test_manual_pages);
    tcase_add_test(tc, test_installed_server_serves);
    tcase_add_test(tc, test_systemd_unit_verifies);
    tcase_add_test(tc, test_kubernetes_manifests_validate);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(install_suite)
