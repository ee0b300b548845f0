/* check_e2e_train.c -- end-to-end suite for examples/train.py: the numpy reference
 * against finite differences, the device's gradients against the reference, and
 * a short training run that must reach the accuracy floor, through the shim
 * against a real cudarem-server (emulated device) and in-process against
 * libcudarem-emu.so.
 *
 * Each run is bounded by E2E_RUN_TIMEOUT_MS; the per-epoch lines train.py prints
 * (loss, accuracy, seconds, round trips per step) are copied to this suite's
 * output so a test log shows what the run measured.
 */
#include "tests/e2e/e2e_harness.h"
#include "tests/unit/crm_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#ifndef TRAIN_PYTHON
#define TRAIN_PYTHON E2E_PYTHON
#endif

#define TRAIN_EPOCHS "2" /* seed 0 reaches 97.2 % by then; seeds 0-7 all reach 96 % or more */
#define TRAIN_FLOOR "0.95"

enum how {
    BARE,        /* plain Python, no device */
    IN_PROCESS,  /* --lib libcudarem-emu.so: the emulated device in-process, no server */
    SHIM_TCP,    /* through the preloaded shim to a fresh server over TCP */
    SHIM_UNIX,   /* the same over a Unix socket */
};

typedef struct run_result {
    char *out;          /* captured stdout (malloc'd) */
    int ok;             /* exited 0 and printed the expected line */
    long round_trips;   /* from the shim's CUDAREM_STATS file; -1 when not through it */
    long calls;
} run_result;

/* Prints the lines of OUT that contain NEEDLE, indented, under TAG. */
static void print_lines_with(const char *tag, const char *out, const char *needle)
{
    const char *line = out;
    while (*line != '\0') {
        size_t len = strcspn(line, "\n");
        if (memmem(line, len, needle, strlen(needle)) != NULL)
            printf("  %s: %.*s\n", tag, (int)len, line);
        line += len + (line[len] == '\n');
    }
    fflush(stdout);
}

/* The number after "KEY": in the shim's stats JSON, or -1. */
static long stats_field(const char *json, const char *key)
{
    char quoted[64];
    snprintf(quoted, sizeof quoted, "\"%s\":", key);
    const char *at = strstr(json, quoted);
    return at != NULL ? strtol(at + strlen(quoted), NULL, 10) : -1;
}

/* Builds into AV (room for AVLEN) the command running SCRIPT with ARGS the way
 * HOW says; in-process runs take all three libraries from libcudarem-emu.so,
 * with libasan preloaded first in the sanitizer flavour (that library is
 * ASan-built there) through env(1). LIB is storage for the library path. */
static void script_argv(char **av, int avlen, enum how how, const char *script,
                        const char *const *args, char *lib, size_t liblen)
{
    int i = 0;
    if (how == IN_PROCESS) {
        av[i++] = "/usr/bin/env";
        if (E2E_SAN) {
            av[i++] = "LD_PRELOAD=" E2E_ASAN_LIB;
            av[i++] = "ASAN_OPTIONS=detect_leaks=0";
        }
    }
    av[i++] = TRAIN_PYTHON;
    av[i++] = (char *)script;
    if (how == IN_PROCESS) {
        av[i++] = "--lib";
        av[i++] = (char *)e2e_build_path("libcudarem-emu.so", lib, liblen);
    }
    while (args != NULL && *args != NULL && i < avlen - 1)
        av[i++] = (char *)*args++;
    av[i] = NULL;
}

/* Dumps a failed run's output (and the server's log, if any) to stderr. */
static void dump_run(const char *tag, const e2e_proc *p, const char *out, const char *srv_log,
                     int srv_ok)
{
    char verdict[64], *perr = e2e_read_file(p->err_path);
    fprintf(stderr, "===== %s: program %s, server %s\n", tag,
            e2e_describe(p, verdict, sizeof verdict),
            srv_log == NULL ? "none" : srv_ok ? "stopped" : "did not stop cleanly");
    e2e_dump("program stdout", out, 6000);
    e2e_dump("program stderr", perr, 4000);
    if (srv_log != NULL)
        e2e_dump("server log", srv_log, 3000);
    free(perr);
}

/* Runs the Python script REL (relative to the source tree) with ARGS the way
 * HOW says (a fresh server for the shim runs, whose stats file is read back);
 * r.ok when it exited 0 with EXPECT in its stdout. The caller frees r.out. */
static run_result run_script(const char *tag, const char *rel, const char *const *args,
                             enum how how, const char *expect)
{
    char dir[64], err[512], script[E2E_PATH_LEN], lib[E2E_PATH_LEN], stats[E2E_PATH_LEN + 16];
    char *av[24], *srv_log = NULL;
    int shim = how == SHIM_TCP || how == SHIM_UNIX, srv_status = 0;
    e2e_server srv;
    e2e_proc p;
    run_result r = { NULL, 0, -1, -1 };

    snprintf(script, sizeof script, "%s/%s", e2e_source_dir(), rel);
    script_argv(av, 24, how, script, args, lib, sizeof lib);
    ck_assert_msg(e2e_dir_make(dir, sizeof dir) == 0, "mkdtemp failed");
    memset(&srv, 0, sizeof srv);
    if (shim && e2e_server_start(&srv, dir, 0, err, sizeof err) != 0) {
        char *log = e2e_read_file(srv.log_path);
        e2e_dump("server log", log, 4000);
        free(log);
        e2e_dir_remove(dir);
        ck_abort_msg("%s: server start: %s", tag, err);
    }
    e2e_proc_opts o = { how == SHIM_TCP ? srv.tcp_addr : how == SHIM_UNIX ? srv.unix_addr : NULL,
                        shim, 0 };
    snprintf(stats, sizeof stats, "%s/stats.json", dir);
    if (shim)
        setenv("CUDAREM_STATS", stats, 1); /* inherited by the child only: unset below */
    int spawned = e2e_run(&p, dir, tag, av[0], av, &o) == 0;
    unsetenv("CUDAREM_STATS");
    if (shim) {
        srv_status = e2e_server_stop(&srv);
        srv_log = e2e_read_file(srv.log_path);
        char *json = e2e_read_file(stats);
        r.round_trips = stats_field(json, "round_trips");
        r.calls = stats_field(json, "calls");
        free(json);
    }
    r.out = e2e_read_file(p.out_path);
    r.ok = spawned && !p.timed_out && WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0 &&
           strstr(r.out, expect) != NULL;
    int srv_ok = !shim ||
                 (srv_status >= 0 && WIFEXITED(srv_status) && WEXITSTATUS(srv_status) == 0);
    if (!r.ok || !srv_ok)
        dump_run(tag, &p, r.out, srv_log, srv_ok);
    free(srv_log);
    e2e_dir_remove(dir);
    ck_assert_msg(srv_ok, "%s: server status 0x%x after SIGTERM, expected exit 0", tag,
                  (unsigned)srv_status);
    return r;
}

/* Steps per epoch from train.py's header line ("..., 44 steps/epoch; ..."), or -1. */
static long steps_per_epoch(const char *out)
{
    const char *at = strstr(out, " steps/epoch");
    if (at == NULL)
        return -1;
    while (at > out && at[-1] >= '0' && at[-1] <= '9')
        at--;
    return strtol(at, NULL, 10);
}

/* Trains through HOW and requires the floor: exit 0, the final PASS line and one
 * line per epoch. Through the shim the whole run (setup and evaluation
 * included) must also take fewer round trips than it has steps: a step's calls
 * are all asynchronous, so they travel together with the next synchronous call. */
static void run_training(const char *tag, enum how how)
{
    const char *args[] = { "--epochs", TRAIN_EPOCHS, "--min-accuracy", TRAIN_FLOOR, NULL };
    run_result r = run_script(tag, "examples/train.py", args, how, ": PASS\n");
    long steps = steps_per_epoch(r.out) * atoi(TRAIN_EPOCHS);
    int epochs = e2e_count_lines_with(r.out, "epoch ");
    int ok = r.ok;
    print_lines_with(tag, r.out, "epoch ");
    print_lines_with(tag, r.out, "final test accuracy");
    if (r.round_trips >= 0)
        printf("  %s: whole run: %ld round trips, %ld calls, %ld steps\n", tag, r.round_trips,
               r.calls, steps);
    free(r.out);
    ck_assert_msg(ok, "%s: train.py did not reach test accuracy %s in %s epochs", tag,
                  TRAIN_FLOOR, TRAIN_EPOCHS);
    ck_assert_msg(epochs == atoi(TRAIN_EPOCHS), "%s: %d epoch lines, expected %s", tag, epochs,
                  TRAIN_EPOCHS);
    if (how == SHIM_TCP || how == SHIM_UNIX) {
        ck_assert_msg(r.round_trips > 0, "%s: no round trips in the shim's stats file", tag);
        ck_assert_msg(r.round_trips < steps, "%s: %ld round trips for %ld steps: training steps "
                      "wait for the server", tag, r.round_trips, steps);
    }
}

/* The numpy reference (the yardstick of the next test) against finite differences. */
START_TEST(test_reference_matches_finite_differences)
{
    run_result r = run_script("reference", "tests/train/reference_check.py", NULL, BARE,
                              "PASS reference\n");
    int ok = r.ok;
    free(r.out);
    ck_assert_msg(ok, "numpy reference gradients disagree with finite differences");
}
END_TEST

/* One batch's loss and gradients computed through the shim match the reference. */
START_TEST(test_device_gradients_match_reference)
{
    const char *args[] = { "--check", NULL };
    run_result r = run_script("check", "examples/train.py", args, SHIM_UNIX, "PASS gradients\n");
    print_lines_with("check", r.out, "check ");
    int ok = r.ok;
    free(r.out);
    ck_assert_msg(ok, "device gradients through the shim disagree with the numpy reference");
}
END_TEST

START_TEST(test_train_through_shim_tcp)
{
    run_training("shim-tcp", SHIM_TCP);
}
END_TEST

/* The benchmark's "local" baseline: the same script with all three libraries
 * taken from the emulated device in-process (no server, no shim). */
START_TEST(test_train_in_process_emu)
{
    run_training("in-process", IN_PROCESS);
}
END_TEST

static Suite *e2e_train_suite(void)
{
    Suite *s = suite_create("e2e_train");
    TCase *ref = tcase_create("reference"), *dev = tcase_create("device");
    tcase_set_timeout(ref, 90);
    tcase_set_timeout(dev, 90);
    tcase_add_test(ref, test_reference_matches_finite_differences);
    tcase_add_test(dev, test_device_gradients_match_reference);
    tcase_add_test(dev, test_train_through_shim_tcp);
    tcase_add_test(dev, test_train_in_process_emu);
    suite_add_tcase(s, ref);
    suite_add_tcase(s, dev);
    return s;
}

CRM_CHECK_MAIN(e2e_train_suite)
