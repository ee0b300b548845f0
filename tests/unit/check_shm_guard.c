/* check_shm_guard.c -- unit tests of protocol/crm_shm_guard.c: a region the
 * server attached that its client then truncates faults into zero pages instead
 * of killing the process, and the fault is recorded and stops the session; a
 * SIGBUS outside attached regions still kills; the table of regions is bounded and
 * reusable. */
#include <check.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "protocol/crm_shm.h"
#include "protocol/crm_shm_guard.h"
#include "tests/unit/crm_check.h"

#define REGION_BYTES (1u << 20)

START_TEST(test_a_truncated_region_reads_zeros_and_stops_the_session)
{
    crm_shm_region mine, theirs;
    char name[CRM_SHM_NAME_MAX];
    unsigned char cookie[CRM_SHM_COOKIE];
    volatile sig_atomic_t stop = 0;
    ck_assert_int_eq(crm_shm_guard_install(&stop), 0);
    ck_assert_int_eq(crm_shm_region_create(&mine, REGION_BYTES, name, cookie), 0);
    ck_assert_int_eq(crm_shm_region_attach(&theirs, name, REGION_BYTES, cookie), 0);
    memset(mine.data, 0x5a, REGION_BYTES);
    ck_assert_int_eq(theirs.data[REGION_BYTES - 1], 0x5a);
    ck_assert_int_eq(crm_shm_guard_faulted(), 0);
    ck_assert_int_eq(ftruncate(mine.fd, 0), 0); /* the client shrinks what it gave */
    volatile char *far = theirs.data + REGION_BYTES - 1;
    ck_assert_int_eq(*far, 0); /* faulted, and now a private zero page */
    ck_assert_int_eq(crm_shm_guard_faulted(), 1);
    ck_assert_int_eq(stop, 1);
    memset(theirs.data, 7, REGION_BYTES); /* writes land too, in the private pages */
    ck_assert_int_eq(theirs.data[4096], 7);
    crm_shm_region_unmap(&theirs);
    crm_shm_region_unmap(&mine);
    crm_shm_guard_reset();
    ck_assert_int_eq(crm_shm_guard_faulted(), 0);
}
END_TEST

/* In a child: a SIGBUS on a shared file mapping the guard does not watch. */
static void touch_unwatched_truncated_file(void)
{
    char path[] = "/tmp/crm-guard-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0 || crm_shm_guard_install(NULL) != 0 || ftruncate(fd, 8192) != 0)
        _exit(2);
    unlink(path);
    volatile char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED || ftruncate(fd, 0) != 0)
        _exit(3);
    p[4096] = 1;
    _exit(0);
}

START_TEST(test_a_fault_elsewhere_keeps_its_default_action)
{
    int status = 0;
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0)
        touch_unwatched_truncated_file();
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS, "child status %d", status);
}
END_TEST

START_TEST(test_the_table_is_bounded_and_reused)
{
    static char fake[CRM_SHM_GUARD_SLOTS + 1][1]; /* addresses only: never touched */
    for (int i = 0; i < CRM_SHM_GUARD_SLOTS; i++)
        ck_assert_int_eq(crm_shm_guard_add(fake[i], 4096), 0);
    ck_assert_int_eq(crm_shm_guard_add(fake[CRM_SHM_GUARD_SLOTS], 4096), -1);
    crm_shm_guard_remove(fake[17]);
    crm_shm_guard_remove(fake[CRM_SHM_GUARD_SLOTS]); /* never watched: nothing */
    ck_assert_int_eq(crm_shm_guard_add(fake[CRM_SHM_GUARD_SLOTS], 4096), 0);
    ck_assert_int_eq(crm_shm_guard_add(fake[17], 4096), -1);
    for (int i = 0; i <= CRM_SHM_GUARD_SLOTS; i++)
        crm_shm_guard_remove(fake[i]);
    ck_assert_int_eq(crm_shm_guard_add(fake[17], 4096), 0);
    crm_shm_guard_remove(fake[17]);
}
END_TEST

static Suite *shm_guard_suite(void)
{
    Suite *s = suite_create("shm_guard");
    TCase *tc = tcase_create("guard");
    tcase_add_test(tc, test_a_truncated_region_reads_zeros_and_stops_the_session);
    tcase_add_test(tc, test_a_fault_elsewhere_keeps_its_default_action);
    tcase_add_test(tc, test_the_table_is_bounded_and_reused);
    suite_add_tcase(s, tc);
    return s;
}

CRM_CHECK_MAIN(shm_guard_suite)
