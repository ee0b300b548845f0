/* dcheck.h -- the check macro of the driver test programs: a failed condition prints
 * "FAIL file:line message" and is counted in dcheck_failures. */
#ifndef DCHECK_H
#define DCHECK_H

#include <stdio.h>

static int dcheck_failures;

#define CHECK(cond, ...)                                   \
    do {                                                   \
        if (!(cond)) {                                     \
            printf("FAIL %s:%d ", __FILE__, __LINE__);     \
            printf(__VA_ARGS__);                           \
            printf("\n");                                  \
            dcheck_failures++;                             \
        }                                                  \
    } while (0)

#endif
