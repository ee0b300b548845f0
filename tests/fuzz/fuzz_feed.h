/* fuzz_feed.h -- the harnesses' feeder thread: writes a fuzz input into one end of
 * a socket pair, ends the stream, and reads whatever the other end answers until
 * it closes (replies, acknowledgements), so the side under test never blocks on a
 * full socket. */
#ifndef FUZZ_FEED_H
#define FUZZ_FEED_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

typedef struct feeder {
    int fd;
    const uint8_t *data;
    size_t size;
} feeder;

static void *feed(void *arg)
{
    feeder *f = arg;
    char sink[65536];
    for (size_t off = 0; off < f->size;) {
        ssize_t n = send(f->fd, f->data + off, f->size - off, MSG_NOSIGNAL);
        if (n <= 0)
            break;
        off += (size_t)n;
    }
    shutdown(f->fd, SHUT_WR);
    while (recv(f->fd, sink, sizeof sink, 0) > 0)
        ;
    return NULL;
}

#endif
