/* bench_raw.c -- the raw-socket baseline of `make bench`: an 8-byte ping-pong and a
 * one-way bulk stream over the same transports cudarem uses (TCP with TCP_NODELAY,
 * Unix stream sockets), so the shim's figures can be set beside what the socket
 * itself carries in the same run.
 *
 *   bench_raw serve ADDR                    answer clients on ADDR until killed
 *   bench_raw ping ADDR N                   N timed 8-byte round trips -> JSON
 *   bench_raw stream ADDR BATCHES SIZE...   bulk write and read per size -> JSON
 *
 * ADDR is tcp:HOST:PORT or unix:PATH, as CUDAREM_SERVER spells it. A bulk write
 * is a 16-byte request, SIZE bytes, then an 8-byte answer once the server holds
 * them all (what a synchronous cudaMemcpy host-to-device waits for); a bulk read
 * is a request answered by SIZE bytes (device-to-host). Results go to stdout as
 * one JSON object; errors to stderr with exit status 1.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BR_OP_PING 1u   /* then 8-byte ping-pong for `len` rounds */
#define BR_OP_WRITE 2u  /* client sends len bytes, server answers 8 */
#define BR_OP_READ 3u   /* server sends len bytes */
#define BR_MAX_LEN (1ull << 31)
#define BR_MAX_SIZES 32
#define BR_BATCH_BYTES (32ull << 20) /* bytes one timed batch moves (bench_cuda.cu: same) */
#define BR_BATCH_MAX 256             /* messages in one batch at most */

/* What precedes every exchange on the wire (host byte order: same machine). */
typedef struct br_req {
    uint32_t op;   /* BR_OP_* */
    uint32_t pad;  /* zero */
    uint64_t len;  /* bytes, or rounds for BR_OP_PING */
} br_req;

static double br_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Fills *ss from "tcp:HOST:PORT" or "unix:PATH"; returns its length, or 0. */
static socklen_t br_addr(const char *text, struct sockaddr_storage *ss, int *is_tcp)
{
    memset(ss, 0, sizeof *ss);
    if (strncmp(text, "unix:", 5) == 0) {
        struct sockaddr_un *un = (struct sockaddr_un *)ss;
        if (strlen(text + 5) >= sizeof un->sun_path)
            return 0;
        un->sun_family = AF_UNIX;
        strcpy(un->sun_path, text + 5);
        *is_tcp = 0;
        return sizeof *un;
    }
    if (strncmp(text, "tcp:", 4) == 0)
        text += 4;
    char host[256];
    const char *colon = strrchr(text, ':');
    if (colon == NULL || (size_t)(colon - text) >= sizeof host)
        return 0;
    memcpy(host, text, (size_t)(colon - text));
    host[colon - text] = '\0';
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res;
    if (getaddrinfo(host, colon + 1, &hints, &res) != 0)
        return 0;
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    socklen_t len = res->ai_addrlen;
    freeaddrinfo(res);
    *is_tcp = 1;
    return len;
}

static void br_nodelay(int fd, int is_tcp)
{
    int one = 1;
    if (is_tcp)
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* Returns 0 when all n bytes moved, -1 on error or end of stream. */
static int br_full(int fd, void *buf, size_t n, int writing)
{
    char *p = buf;
    while (n > 0) {
        ssize_t k = writing ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* ---- server ----------------------------------------------------------------- */

/* Serves one connection until the client closes it. */
static void br_serve_conn(int fd)
{
    br_req rq;
    char *buf = NULL;
    size_t cap = 0;
    while (br_full(fd, &rq, sizeof rq, 0) == 0 && rq.len <= BR_MAX_LEN) {
        uint64_t word = 0;
        if (rq.op == BR_OP_PING) {
            for (uint64_t i = 0; i < rq.len; i++)
                if (br_full(fd, &word, 8, 0) != 0 || br_full(fd, &word, 8, 1) != 0)
                    goto out;
            continue;
        }
        if (rq.len > cap) {
            free(buf);
            cap = rq.len;
            if ((buf = malloc(cap)) == NULL)
                break;
            memset(buf, 0x5a, cap); /* touch the pages once, outside the timed part */
        }
        if (rq.op == BR_OP_WRITE) {
            if (br_full(fd, buf, rq.len, 0) != 0 || br_full(fd, &word, 8, 1) != 0)
                break;
        } else if (rq.op == BR_OP_READ) {
            if (br_full(fd, buf, rq.len, 1) != 0)
                break;
        } else {
            break;
        }
    }
out:
    free(buf);
    close(fd);
}

/* Listens on addr and serves each connection in a child process; never returns
 * unless listening fails. */
static int br_serve(const char *addr)
{
    struct sockaddr_storage ss;
    int is_tcp, one = 1;
    socklen_t len = br_addr(addr, &ss, &is_tcp);
    if (len == 0) {
        fprintf(stderr, "bench_raw: bad address %s\n", addr);
        return 1;
    }
    int lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (!is_tcp)
        unlink(((struct sockaddr_un *)&ss)->sun_path);
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&ss, len) != 0 || listen(lfd, 16) != 0) {
        fprintf(stderr, "bench_raw: cannot listen on %s: %s\n", addr, strerror(errno));
        return 1;
    }
    signal(SIGCHLD, SIG_IGN); /* children are reaped automatically */
    fprintf(stderr, "bench_raw: listening on %s\n", addr); /* the driver waits for this line */
    for (;;) {
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            return 1;
        }
        br_nodelay(fd, is_tcp);
        pid_t pid = fork();
        if (pid == 0) {
            close(lfd);
            br_serve_conn(fd);
            _exit(0);
        }
        close(fd);
    }
}

/* ---- clients ---------------------------------------------------------------- */

static int br_connect(const char *addr)
{
    struct sockaddr_storage ss;
    int is_tcp;
    socklen_t len = br_addr(addr, &ss, &is_tcp);
    int fd = len ? socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0) : -1;
    if (fd < 0 || connect(fd, (struct sockaddr *)&ss, len) != 0) {
        fprintf(stderr, "bench_raw: cannot connect to %s: %s\n", addr, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    br_nodelay(fd, is_tcp);
    return fd;
}

static int br_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Value at quantile q of sorted v[0..n). */
static double br_quantile(const double *v, size_t n, double q)
{
    size_t i = (size_t)(q * (double)(n - 1) + 0.5);
    return v[i < n ? i : n - 1];
}

/* N timed 8-byte round trips after N/10 untimed ones; prints p50/p99 in µs. */
static int br_ping(const char *addr, long n)
{
    int fd = br_connect(addr);
    if (fd < 0 || n < 1)
        return 1;
    long warm = n / 10 + 1;
    br_req rq = {.op = BR_OP_PING, .len = (uint64_t)(n + warm)};
    double *lat = malloc(sizeof *lat * (size_t)n);
    uint64_t word = 0x0123456789abcdefull;
    if (lat == NULL || br_full(fd, &rq, sizeof rq, 1) != 0)
        return 1;
    for (long i = 0; i < n + warm; i++) {
        double t0 = br_now();
        if (br_full(fd, &word, 8, 1) != 0 || br_full(fd, &word, 8, 0) != 0) {
            fprintf(stderr, "bench_raw: ping failed\n");
            return 1;
        }
        if (i >= warm)
            lat[i - warm] = (br_now() - t0) * 1e6;
    }
    qsort(lat, (size_t)n, sizeof *lat, br_cmp_double);
    printf("{\"n\": %ld, \"p50_us\": %.3f, \"p99_us\": %.3f, \"min_us\": %.3f}\n", n,
           br_quantile(lat, (size_t)n, 0.5), br_quantile(lat, (size_t)n, 0.99), lat[0]);
    free(lat);
    close(fd);
    return 0;
}

/* Seconds per message of one batch of k bulk exchanges of len bytes, or -1.
 * Writes are pipelined and their k answers collected at the end (queued copies
 * followed by a synchronise); reads wait for each answer (a synchronous copy). */
static double br_batch(int fd, uint32_t op, char *buf, uint64_t len, int k)
{
    br_req rq = {.op = op, .len = len};
    uint64_t word;
    double t0 = br_now();
    for (int i = 0; i < k; i++) {
        if (br_full(fd, &rq, sizeof rq, 1) != 0)
            return -1;
        if (br_full(fd, buf, len, op == BR_OP_WRITE) != 0)
            return -1;
    }
    for (int i = 0; op == BR_OP_WRITE && i < k; i++)
        if (br_full(fd, &word, 8, 0) != 0)
            return -1;
    return (br_now() - t0) / k;
}

/* Median over `batches` timed batches (after one untimed exchange), in GB/s; a
 * batch moves about BR_BATCH_BYTES, as bench_cuda's copy batches do. */
static double br_bulk(int fd, uint32_t op, char *buf, uint64_t len, int batches)
{
    double t[64];
    uint64_t k = BR_BATCH_BYTES / len;
    k = k < 1 ? 1 : k > BR_BATCH_MAX ? BR_BATCH_MAX : k;
    batches = batches > 64 ? 64 : batches;
    if (br_batch(fd, op, buf, len, 1) < 0)
        return -1;
    for (int i = 0; i < batches; i++)
        if ((t[i] = br_batch(fd, op, buf, len, (int)k)) < 0)
            return -1;
    qsort(t, (size_t)batches, sizeof *t, br_cmp_double);
    return (double)len / br_quantile(t, (size_t)batches, 0.5) / 1e9;
}

/* Prints {"sizes": [...], "write_GBps": [...], "read_GBps": [...]}. */
static int br_stream(const char *addr, int batches, int nsizes, char **sizes)
{
    uint64_t len[BR_MAX_SIZES], max = 0;
    double w[BR_MAX_SIZES], r[BR_MAX_SIZES];
    if (nsizes < 1 || nsizes > BR_MAX_SIZES || batches < 1)
        return 1;
    for (int i = 0; i < nsizes; i++) {
        len[i] = strtoull(sizes[i], NULL, 10);
        if (len[i] == 0 || len[i] > BR_MAX_LEN)
            return 1;
        max = len[i] > max ? len[i] : max;
    }
    int fd = br_connect(addr);
    char *buf = malloc(max);
    if (fd < 0 || buf == NULL)
        return 1;
    for (uint64_t i = 0; i < max; i++)
        buf[i] = (char)(i * 2654435761u >> 13);
    for (int i = 0; i < nsizes; i++) {
        w[i] = br_bulk(fd, BR_OP_WRITE, buf, len[i], batches);
        r[i] = br_bulk(fd, BR_OP_READ, buf, len[i], batches);
        if (w[i] < 0 || r[i] < 0) {
            fprintf(stderr, "bench_raw: stream of %llu bytes failed\n", (unsigned long long)len[i]);
            return 1;
        }
    }
    printf("{\"sizes\": [");
    for (int i = 0; i < nsizes; i++)
        printf("%s%llu", i ? ", " : "", (unsigned long long)len[i]);
    printf("], \"write_GBps\": [");
    for (int i = 0; i < nsizes; i++)
        printf("%s%.4f", i ? ", " : "", w[i]);
    printf("], \"read_GBps\": [");
    for (int i = 0; i < nsizes; i++)
        printf("%s%.4f", i ? ", " : "", r[i]);
    printf("]}\n");
    free(buf);
    close(fd);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "serve") == 0)
        return br_serve(argv[2]);
    if (argc == 4 && strcmp(argv[1], "ping") == 0)
        return br_ping(argv[2], strtol(argv[3], NULL, 10));
    if (argc >= 5 && strcmp(argv[1], "stream") == 0)
        return br_stream(argv[2], atoi(argv[3]), argc - 4, argv + 4);
    fprintf(stderr, "usage: bench_raw serve ADDR | ping ADDR N | stream ADDR BATCHES SIZE...\n");
    return 2;
}
