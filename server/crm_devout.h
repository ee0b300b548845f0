/* crm_devout.h -- what the device prints (kernel printf, failed device asserts):
 * a session process's standard output is captured, and what was written there
 * during a batch travels back in that batch's reply for the client to print. */
#ifndef CRM_DEVOUT_H
#define CRM_DEVOUT_H

#include <stddef.h>

/* Points this process's standard output at a capture buffer; 0, or -1 (output
 * then stays where it was). stdio_only: everything the device prints goes
 * through stdio's stdout (the emulated device), so a batch after which nothing
 * was written there skips looking at the buffer. */
int crm_devout_capture(int stdio_only);
/* What was printed since the last call, at most max bytes (the rest is dropped and
 * logged): a malloc'd buffer in *text (NULL when nothing) and its length. */
size_t crm_devout_take(char **text, size_t max);

#endif
