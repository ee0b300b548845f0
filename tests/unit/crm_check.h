/* crm_check.h -- shared main() for the Check test binaries: one suite per binary. */
#ifndef CRM_CHECK_H
#define CRM_CHECK_H

#include <check.h>
#include <stdlib.h>

/* Defines main() running SUITE_FN() and exiting non-zero when any test failed. */
#define CRM_CHECK_MAIN(SUITE_FN)                                  \
    int main(void)                                                \
    {                                                             \
        SRunner *runner = srunner_create(SUITE_FN());             \
        srunner_run_all(runner, CK_NORMAL);                       \
        int failed = srunner_ntests_failed(runner);               \
        srunner_free(runner);                                     \
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;         \
    }

#endif
