/* check_e2e_frameworks.c -- end-to-end suite: the Python frameworks (CuPy, numba-cuda,
 * NVML's pynvml, PyTorch) run their tests/python/<name>_basic.py through the shim
 * against a real cudarem-server on the emulated device.
 *
 * The interpreter is the virtual environment tools/python-env.sh builds: the
 * directory in $CUDAREM_PYENV when set, else the one the build found
 * (E2E_PYENV). Which frameworks run comes from $CRM_FRAMEWORKS (names separated
 * by spaces; unset: all), which `make` sets from FRAMEWORK_TESTS; an unknown name
 * or an incomplete environment is a failure, never a skip.
 *
 * Each test starts its own server, runs one script over the Unix socket (bounded
 * to CRM_FW_TIMEOUT_MS: a hang fails), requires exit 0 with "PASS <name>", then
 * stops the server with SIGTERM and requires it to exit 0. The scripts run with
 * LD_LIBRARY_PATH=build/lib, so libraries they link against cuBLAS and cuDNN
 * (CuPy's, torch's) reach the shim, as the README tells users to do.
 */
#include "tests/e2e/e2e_harness.h"
#include "tests/unit/crm_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef E2E_PYENV
#define E2E_PYENV ""
#endif

/* Importing torch with its CUDA libraries takes seconds here; under ASan, more. */
#define CRM_FW_TIMEOUT_MS (E2E_SAN ? 600000 : 240000)

static const char *const frameworks[] = { "nvml", "cupy", "numba", "torch" };
#define NFRAMEWORKS ((int)(sizeof frameworks / sizeof frameworks[0]))

/* The environment's directory: $CUDAREM_PYENV, else the build's. */
static const char *pyenv_dir(void)
{
    const char *d = getenv("CUDAREM_PYENV");
    return d != NULL && d[0] != '\0' ? d : E2E_PYENV;
}

/* Runs tests/python/NAME_basic.py through the shim and asserts it passed. */
static void run_framework(const char *name)
{
    char dir[64], err[512], verdict[64], python[E2E_PATH_LEN], stamp[E2E_PATH_LEN];
    char script[E2E_PATH_LEN], tag[64], pass[80];
    struct stat st;
    e2e_server srv;
    e2e_proc p;

    snprintf(python, sizeof python, "%s/bin/python", pyenv_dir());
    snprintf(stamp, sizeof stamp, "%s/cudarem-stamp", pyenv_dir());
    ck_assert_msg(stat(python, &st) == 0 && stat(stamp, &st) == 0,
                  "%s: no complete Python environment at '%s' (run tools/python-env.sh)", name,
                  pyenv_dir());
    snprintf(script, sizeof script, "%s/tests/python/%s_basic.py", e2e_source_dir(), name);
    snprintf(tag, sizeof tag, "%s_basic", name);
    snprintf(pass, sizeof pass, "PASS %s_basic", name);

    ck_assert_msg(e2e_dir_make(dir, sizeof dir) == 0, "mkdtemp failed");
    if (e2e_server_start(&srv, dir, 0, err, sizeof err) != 0) {
        char *log = e2e_read_file(srv.log_path);
        e2e_dump("server log", log, 4000);
        free(log);
        e2e_dir_remove(dir);
        ck_abort_msg("%s: server start: %s", name, err);
    }
    char ldpath[2 * E2E_PATH_LEN + 64];
    e2e_client_library_path(e2e_framework_library_path(pyenv_dir(), ldpath, sizeof ldpath));
    e2e_proc_opts o = { srv.unix_addr, 1, 0 };
    char *argv[] = { python, script, NULL };
    int spawned = e2e_spawn(&p, dir, tag, python, argv, &o) == 0;
    if (spawned)
        e2e_wait(&p, CRM_FW_TIMEOUT_MS);
    e2e_client_library_path(NULL);
    int srv_status = e2e_server_stop(&srv);

    char *out = e2e_read_file(p.out_path), *perr = e2e_read_file(p.err_path);
    char *log = e2e_read_file(srv.log_path);
    e2e_describe(&p, verdict, sizeof verdict);
    int ok = spawned && !p.timed_out && WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0 &&
             strstr(out, pass) != NULL;
    int srv_ok = srv_status >= 0 && WIFEXITED(srv_status) && WEXITSTATUS(srv_status) == 0;
    if (!ok || !srv_ok) {
        fprintf(stderr, "===== %s: script %s, server %s\n", tag, verdict,
                srv_status < 0 ? "did not stop on SIGTERM" : "stopped");
        e2e_dump("script stdout", out, 8000);
        e2e_dump("script stderr", perr, 4000);
        e2e_dump("server log", log, 3000);
    }
    free(perr);
    free(log);
    e2e_dir_remove(dir);
    if (!ok) {
        char first[400] = "";
        const char *f = strstr(out, "FAIL");
        if (f != NULL)
            snprintf(first, sizeof first, "; first: %.*s", (int)strcspn(f, "\n"), f);
        free(out);
        ck_abort_msg("%s: %s, expected exit 0 and %s%s", tag, verdict, pass, first);
    }
    free(out);
    ck_assert_msg(srv_ok, "%s: server status 0x%x after SIGTERM, expected exit 0", tag,
                  (unsigned)srv_status);
}

START_TEST(test_framework)
{
    run_framework(frameworks[_i]);
}
END_TEST

/* A name in $CRM_FRAMEWORKS that matches no framework. */
START_TEST(test_unknown_framework)
{
    ck_abort_msg("CRM_FRAMEWORKS ('%s') names something other than nvml, cupy, numba, torch",
                 getenv("CRM_FRAMEWORKS"));
}
END_TEST

/* 1 if NAME is a word of LIST (space-separated). */
static int listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *w = list; (w = strstr(w, name)) != NULL; w += n)
        if ((w == list || w[-1] == ' ') && (w[n] == ' ' || w[n] == '\0'))
            return 1;
    return 0;
}

static Suite *e2e_frameworks_suite(void)
{
    Suite *s = suite_create("e2e_frameworks");
    TCase *tc = tcase_create("frameworks");
    const char *sel = getenv("CRM_FRAMEWORKS");
    int known = 0;
    tcase_set_timeout(tc, CRM_FW_TIMEOUT_MS / 1000 + 60);
    for (int i = 0; i < NFRAMEWORKS; i++) {
        if (sel == NULL || listed(sel, frameworks[i])) {
            tcase_add_loop_test(tc, test_framework, i, i + 1);
            known++;
        }
    }
    if (sel != NULL) {
        int words = 0;
        for (const char *w = sel; *w != '\0';) {
            w += strspn(w, " ");
            if (*w != '\0')
                words++;
            w += strcspn(w, " ");
        }
        if (words != known || known == 0)
            tcase_add_test(tc, test_unknown_framework);
    }
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(e2e_frameworks_suite)
