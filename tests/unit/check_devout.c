/* check_devout.c -- unit tests of the capture of what the device prints
 * (server/crm_devout.c): what stdio and the descriptor receive comes back once,
 * in order, and a batch that printed nothing gives nothing.
 *
 * The capture takes over the process's standard output for good, so each test
 * runs it in a child of its own and reports through the exit status. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "server/crm_devout.h"
#include "tests/unit/crm_check.h"

/* 1 when the next take gives exactly want (NULL: nothing). */
static int takes(const char *want)
{
    char *text = NULL;
    size_t len = crm_devout_take(&text, 1 << 20);
    int ok = want == NULL ? len == 0 && text == NULL
                          : len == strlen(want) && text != NULL && memcmp(text, want, len) == 0;
    free(text);
    return ok;
}

/* Runs body in a child process; its exit status, 0 when every step held. */
static int in_child(int (*body)(void))
{
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0)
        _exit(body());
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status));
    return WEXITSTATUS(status);
}

/* The emulated device: its output all goes through stdio. */
static int stdio_only(void)
{
    if (crm_devout_capture(1) != 0)
        return 1;
    if (!takes(NULL))
        return 2;
    printf("thread 0 says %d\n", 42);
    fwrite("abc", 1, 3, stdout); /* not flushed yet: the take flushes */
    if (!takes("thread 0 says 42\nabc"))
        return 3;
    if (!takes(NULL))
        return 4; /* taken once */
    if (write(STDOUT_FILENO, "raw ", 4) != 4)
        return 5;
    if (!takes(NULL))
        return 6; /* a write past stdio is not looked for ... */
    printf("then stdio");
    if (!takes("raw then stdio"))
        return 7; /* ... and comes with the next that is, nothing lost */
    return 0;
}

/* A GPU: NVIDIA's libraries may write to the descriptor itself. */
static int every_batch(void)
{
    if (crm_devout_capture(0) != 0)
        return 1;
    if (write(STDOUT_FILENO, "fifo", 4) != 4)
        return 2;
    if (!takes("fifo"))
        return 3;
    printf("stdio");
    if (!takes("stdio") || !takes(NULL))
        return 4;
    return 0;
}

START_TEST(test_stdio_output_is_taken_once_and_nothing_costs_no_look)
{
    ck_assert_int_eq(in_child(stdio_only), 0);
}
END_TEST

START_TEST(test_descriptor_writes_are_seen_after_every_batch)
{
    ck_assert_int_eq(in_child(every_batch), 0);
}
END_TEST

static Suite *crm_devout_suite(void)
{
    Suite *s = suite_create("devout");
    TCase *tc = tcase_create("devout");
    tcase_add_test(tc, test_stdio_output_is_taken_once_and_nothing_costs_no_look);
    tcase_add_test(tc, test_descriptor_writes_are_seen_after_every_batch);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(crm_devout_suite)
