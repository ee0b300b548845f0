/* crm_devout.c -- the device's printed output (crm_devout.h): standard output of
 * the session process goes to an anonymous in-memory file; after each batch what
 * it holds is read, and the file emptied. The emulated device writes a kernel's
 * printf text there when the kernel ends; NVIDIA's runtime writes a GPU's printf
 * FIFO there at each synchronisation.
 *
 * The C library's stdout stream is replaced by one that writes to that file and
 * notes that it did, so that with the emulated device, whose output all goes
 * through stdio, a batch that printed nothing costs no system call. With a GPU
 * every batch looks at the file, since NVIDIA's libraries may write to the
 * descriptor itself. */
#include "server/crm_devout.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "common/crm_log.h"

static int crm__devout_fd = -1;
static int crm__devout_every_batch = 1;  /* look at the file after every batch */
static atomic_int crm__devout_written;  /* stdout wrote since the last look */

/* The write function of the stdout stream: to the file, and noted. */
static ssize_t crm__devout_write(void *cookie, const char *buf, size_t len)
{
    (void)cookie;
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(STDOUT_FILENO, buf + done, len - done);
        if (n <= 0)
            break;
        done += (size_t)n;
    }
    atomic_store(&crm__devout_written, 1); /* after the bytes: a look that sees the note sees them */
    return done > 0 || len == 0 ? (ssize_t)done : -1;
}

/* Points stdio's stdout at a stream that notes its writes; the file is looked at
 * after every batch when that fails. */
static void crm__devout_watch(void)
{
    FILE *watched = fopencookie(NULL, "w", (cookie_io_functions_t){.write = crm__devout_write});
    if (watched == NULL)
        return;
    setvbuf(watched, NULL, _IOLBF, BUFSIZ);
    stdout = watched;
    crm__devout_every_batch = 0;
}

int crm_devout_capture(int stdio_only)
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
    if (stdio_only)
        crm__devout_watch();
    return 0;
}

size_t crm_devout_take(char **text, size_t max)
{
    *text = NULL;
    if (crm__devout_fd < 0)
        return 0;
    fflush(stdout);
    if (!crm__devout_every_batch && !atomic_exchange(&crm__devout_written, 0))
        return 0; /* nothing printed since the last look */
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
