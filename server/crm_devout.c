/* crm_devout.c -- the device's printed output (crm_devout.h): standard output of
 * the session process goes to an anonymous in-memory file; after each batch what
 * it holds is read, and the file emptied. The emulated device writes a kernel's
 * printf text there when the kernel ends; NVIDIA's runtime writes a GPU's printf
 * FIFO there at each synchronisation. */
#include "server/crm_devout.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "common/crm_log.h"

static int crm__devout_fd = -1;

int crm_devout_capture(void)
{
    if (crm__devout_fd >= 0)
        return 0; /* already captured (a process serving sessions one after another) */
    int fd = memfd_create("cudarem-device-output", MFD_CLOEXEC);
    if (fd < 0) {
        crm_warn("device output stays on the server's standard output: memfd_create failed");
        return -1;
    }
    fflush(stdout);
    if (dup2(fd, STDOUT_FILENO) < 0) {
        close(fd);
        return -1;
    }
    crm__devout_fd = fd;
    return 0;
}

size_t crm_devout_take(char **text, size_t max)
{
    *text = NULL;
    if (crm__devout_fd < 0)
        return 0;
    fflush(stdout);
    off_t end = lseek(STDOUT_FILENO, 0, SEEK_CUR);
    if (end <= 0)
        return 0;
    size_t n = (size_t)end < max ? (size_t)end : max;
    char *buf = malloc(n);
    ssize_t got = buf != NULL ? pread(crm__devout_fd, buf, n, 0) : -1;
    if ((size_t)end > n)
        crm_warn("%lld bytes of device output past %zu dropped", (long long)end - (long long)n, max);
    if (ftruncate(crm__devout_fd, 0) != 0 || lseek(STDOUT_FILENO, 0, SEEK_SET) != 0)
        crm_warn("cannot empty the device output buffer");
    if (got <= 0) {
        free(buf);
        return 0;
    }
    *text = buf;
    return (size_t)got;
}
