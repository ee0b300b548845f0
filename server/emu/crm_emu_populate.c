/* crm_emu_populate.c -- backs emulated device memory with pages when it is
 * allocated, as a GPU's cudaMalloc hands out memory that is already there, so a
 * program's first copy into it runs at copy speed instead of faulting page by page
 * (make demo, 256 MiB: host-to-device 1.5 GB/s unbacked, about 4 backed).
 *
 * A background thread backs each new allocation from its start, a step at a time,
 * while cudaMalloc returns at once: a copy that follows at once trails the thread
 * and finds its pages there. Freeing an allocation drops what of it is still to
 * do, so a program that allocates and frees in a loop costs the thread at most a
 * step per allocation. Live allocations are backed up to a budget
 * (CUDAREM_EMU_POPULATE=SIZE, default 2 GiB; off: none), so a program that
 * allocates far more than it touches does not make the host hold it all; memory
 * past the budget is backed when first touched, as before.
 *
 * Backing is madvise(MADV_POPULATE_WRITE) (Linux 5.14): it never changes a byte
 * already written, so the thread may run beside copies into the same memory, and
 * on a range freed meanwhile (PROT_NONE again) it fails harmlessly. Without it
 * (an older kernel) nothing is backed ahead. */
#include "server/emu/crm_emu.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define CRM__POPULATE_STEP (4u << 20)             /* backed per madvise */
#define CRM__POPULATE_BUDGET (2ull << 30)          /* default budget of live backed bytes */
#define CRM__POPULATE_QUEUE 64                    /* allocations waiting for the thread */

typedef struct crm__range {
    char *base;
    size_t len;                /* still to back; 0 once done or freed */
} crm__range;

static pthread_mutex_t crm__lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t crm__more = PTHREAD_COND_INITIALIZER;
static crm__range crm__queue[CRM__POPULATE_QUEUE]; /* the first is being backed */
static unsigned crm__head, crm__count;
static int crm__thread;        /* 1 running, -1 none can be started */
static int crm__supported = 1; /* 0 once the kernel refused MADV_POPULATE_WRITE */
static size_t crm__budget;     /* bytes of live allocations that may be backed */
static size_t crm__backed;     /* bytes of live allocations taken on */
static pthread_once_t crm__once = PTHREAD_ONCE_INIT;

static void crm__load_budget(void)
{
    const char *v = getenv("CUDAREM_EMU_POPULATE");
    crm__budget = CRM__POPULATE_BUDGET;
    if (v != NULL && (strcmp(v, "off") == 0 || strcmp(v, "0") == 0))
        crm__budget = 0;
    else if (v != NULL && *v != '\0' && crm__emu_parse_size(v, &crm__budget) != 0)
        crm__budget = CRM__POPULATE_BUDGET;
}

/* The next step of the first queued range (lock held): its start and length, and
 * the range moves past it; 0 when the queue is empty. */
static size_t crm__next_step(char **base)
{
    while (crm__count > 0 && crm__queue[crm__head].len == 0) {
        crm__head = (crm__head + 1) % CRM__POPULATE_QUEUE;
        crm__count--;
    }
    if (crm__count == 0)
        return 0;
    crm__range *r = &crm__queue[crm__head];
    size_t len = r->len < CRM__POPULATE_STEP ? r->len : CRM__POPULATE_STEP;
    *base = r->base;
    r->base += len;
    r->len -= len;
    return len;
}

static void *crm__thread_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&crm__lock);
    for (;;) {
        char *base;
        size_t len = crm__next_step(&base);
        if (len == 0) {
            pthread_cond_wait(&crm__more, &crm__lock);
            continue;
        }
        pthread_mutex_unlock(&crm__lock);
        int refused = madvise(base, len, MADV_POPULATE_WRITE) != 0 && errno == EINVAL;
        pthread_mutex_lock(&crm__lock);
        if (refused) /* an older kernel: nothing can be backed ahead */
            crm__supported = 0;
    }
    return NULL;
}

/* Queues [base, base + len) for the thread (lock held); 0 when it cannot take it. */
static int crm__hand_over(char *base, size_t len)
{
    if (crm__thread == 0) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        crm__thread = pthread_create(&t, &attr, crm__thread_main, NULL) == 0 ? 1 : -1;
        pthread_attr_destroy(&attr);
    }
    if (crm__thread < 0 || crm__count == CRM__POPULATE_QUEUE)
        return 0;
    crm__queue[(crm__head + crm__count) % CRM__POPULATE_QUEUE] = (crm__range){base, len};
    crm__count++;
    pthread_cond_signal(&crm__more);
    return 1;
}

/* A forked child has no thread and no queue: it starts its own when it needs one. */
static void crm__forget(void)
{
    pthread_mutex_init(&crm__lock, NULL);
    pthread_cond_init(&crm__more, NULL);
    crm__thread = 0;
    crm__count = 0;
}

static void crm__init(void)
{
    crm__load_budget();
    pthread_atfork(NULL, NULL, crm__forget);
}

size_t crm__populate(void *base, size_t size)
{
    pthread_once(&crm__once, crm__init);
    pthread_mutex_lock(&crm__lock);
    size_t take = crm__supported && crm__backed < crm__budget ? crm__budget - crm__backed : 0;
    take = take < size ? take : size;
    if (take > 0 && !crm__hand_over(base, take))
        take = 0; /* the queue is full: first touch backs it */
    crm__backed += take;
    pthread_mutex_unlock(&crm__lock);
    return take;
}

void crm__populate_release(void *base, size_t size, size_t taken)
{
    char *lo = base, *hi = lo + size;
    pthread_mutex_lock(&crm__lock);
    for (unsigned i = 0; i < crm__count; i++) { /* what is left of it is not needed */
        crm__range *r = &crm__queue[(crm__head + i) % CRM__POPULATE_QUEUE];
        if (r->base >= lo && r->base < hi)
            r->len = 0;
    }
    crm__backed -= taken < crm__backed ? taken : crm__backed;
    pthread_mutex_unlock(&crm__lock);
}
