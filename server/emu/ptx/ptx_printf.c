/* ptx_printf.c -- printf and assert inside kernels (see ptx_printf.h): the format
 * string and %s strings are read from the kernel's memory (a bad pointer faults
 * as it would on a GPU), each conversion takes its argument from the buffer the
 * compiler packed (integers 4 bytes unless l/ll/z/j/t, floating point as double,
 * strings and pointers 8, each aligned to its size), and the text is rendered
 * with the C library's own conversions. */
#include "ptx_printf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PTX__LINE_MAX 4096 /* one printf's text; longer is cut */
#define PTX__STR_MAX 1024  /* one %s or format string */

typedef struct ptx__line {
    char text[PTX__LINE_MAX];
    size_t len;
} ptx__line;

static void ptx__add(ptx__line *l, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(l->text + l->len, sizeof l->text - l->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        l->len = l->len + (size_t)n < sizeof l->text ? l->len + (size_t)n : sizeof l->text - 1;
}

/* The NUL-terminated string at generic address addr (cut at PTX__STR_MAX - 1
 * bytes); -1 after a fault. */
static int ptx__string(ptx_block *b, unsigned t, const ptx_insn *in, uint64_t addr, char *s)
{
    for (size_t i = 0; i < PTX__STR_MAX - 1; i++) {
        const unsigned char *p = ptx_mem(b, t, in, PTX_SP_GENERIC, addr + i, 1);
        if (p == NULL)
            return -1;
        s[i] = (char)*p;
        if (*p == 0)
            return 0;
    }
    s[PTX__STR_MAX - 1] = '\0';
    return 0;
}

/* One conversion: spec is "%[flags][width][.precision]" (its length modifier
 * dropped), conv its letter, longs the l/L/z/j/t it had. */
typedef struct ptx__conv {
    char spec[64];
    char conv;
    int longs;
} ptx__conv;

/* Reads the conversion at *pp (just past its '%'); 0 when it is not one we render. */
static int ptx__parse_conv(const char **pp, ptx__conv *c)
{
    const char *p = *pp;
    size_t n = 1;
    c->spec[0] = '%';
    c->longs = 0;
    while (*p != '\0' && strchr("-+ #0123456789.", *p) != NULL && n < sizeof c->spec - 4)
        c->spec[n++] = *p++;
    while (*p != '\0' && strchr("hlLqzjt", *p) != NULL) {
        c->longs += *p != 'h';
        p++;
    }
    c->spec[n] = '\0';
    c->conv = *p;
    if (*p != '\0')
        p++;
    *pp = p;
    return c->conv != '\0' && strchr("diouxXcfFeEgGaAsp", c->conv) != NULL;
}

/* Renders one conversion of value v; -1 after a fault reading a %s string. */
static int ptx__render(ptx_block *b, unsigned t, const ptx_insn *in, const ptx__conv *c, uint64_t v, int wide,
                       ptx__line *l)
{
    char fmt[80], str[PTX__STR_MAX];
    switch (c->conv) {
    case 'd':
    case 'i':
        snprintf(fmt, sizeof fmt, "%sll%c", c->spec, c->conv);
        ptx__add(l, fmt, wide ? (long long)v : (long long)(int32_t)v);
        return 0;
    case 'o': case 'u': case 'x': case 'X':
        snprintf(fmt, sizeof fmt, "%sll%c", c->spec, c->conv);
        ptx__add(l, fmt, wide ? (unsigned long long)v : (unsigned long long)(uint32_t)v);
        return 0;
    case 'c':
        snprintf(fmt, sizeof fmt, "%sc", c->spec);
        ptx__add(l, fmt, (int)(unsigned char)v);
        return 0;
    case 's':
        if (v != 0 && ptx__string(b, t, in, v, str) != 0)
            return -1;
        snprintf(fmt, sizeof fmt, "%ss", c->spec);
        ptx__add(l, fmt, v != 0 ? str : "(null)");
        return 0;
    case 'p':
        snprintf(fmt, sizeof fmt, "%sp", c->spec);
        ptx__add(l, fmt, (void *)(uintptr_t)v);
        return 0;
    default: {
        double d;
        memcpy(&d, &v, sizeof d);
        snprintf(fmt, sizeof fmt, "%s%c", c->spec, c->conv);
        ptx__add(l, fmt, d);
        return 0;
    }
    }
}

/* The size an argument of conversion c has in the buffer. */
static unsigned ptx__arg_size(const ptx__conv *c)
{
    if (strchr("diouxXc", c->conv) != NULL)
        return c->longs ? 8 : 4;
    return 8; /* double, string, pointer */
}

/* Formats thread t's printf into l; the number of arguments read, -1 for a NULL
 * format, or -2 after a fault. */
static int ptx__format(ptx_block *b, unsigned t, const ptx_insn *in, ptx__line *l)
{
    char fmt[PTX__STR_MAX];
    uint64_t at = ptx_call_arg_bits(b, t, in, 0), args = ptx_call_arg_bits(b, t, in, 1), off = 0;
    int nargs = 0;
    if (at == 0)
        return -1;
    if (ptx__string(b, t, in, at, fmt) != 0)
        return -2;
    for (const char *p = fmt; *p != '\0';) {
        if (*p != '%' || p[1] == '%') {
            ptx__add(l, "%c", *p);
            p += *p == '%' ? 2 : 1;
            continue;
        }
        const char *start = p++;
        ptx__conv c;
        if (!ptx__parse_conv(&p, &c)) { /* printed as written */
            ptx__add(l, "%.*s", (int)(p - start), start);
            continue;
        }
        unsigned size = ptx__arg_size(&c);
        off = (off + size - 1) / size * size;
        const unsigned char *q = ptx_mem(b, t, in, PTX_SP_GENERIC, args + off, size);
        if (q == NULL)
            return -2;
        uint64_t v = 0;
        memcpy(&v, q, size);
        off += size;
        nargs++;
        if (ptx__render(b, t, in, &c, v, size == 8, l) != 0)
            return -2;
    }
    return nargs;
}

/* Appends a thread's text to the launch's output, as far as the FIFO holds. */
static void ptx__emit(ptx_out *o, const ptx__line *l)
{
    if (o == NULL || l->len == 0)
        return;
    pthread_mutex_lock(&o->lock);
    if (o->len + l->len > o->max) {
        o->dropped += l->len;
    } else {
        if (o->len + l->len > o->cap) {
            size_t cap = o->cap ? o->cap * 2 : 4096;
            while (cap < o->len + l->len)
                cap *= 2;
            char *text = realloc(o->text, cap);
            if (text != NULL) {
                o->text = text;
                o->cap = cap;
            }
        }
        if (o->len + l->len <= o->cap) {
            memcpy(o->text + o->len, l->text, l->len);
            o->len += l->len;
        } else {
            o->dropped += l->len;
        }
    }
    pthread_mutex_unlock(&o->lock);
}

int ptx_vprintf(ptx_block *b, const ptx_insn *in, const unsigned *lanes, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        unsigned t = lanes[i];
        ptx__line l = {.len = 0};
        int r = ptx__format(b, t, in, &l);
        if (r == -2)
            return -1;
        ptx__emit(b->out, &l);
        uint64_t size = 0;
        unsigned char *res = ptx_call_arg(b, t, in, UINT32_MAX, &size);
        int32_t r32 = r;
        if (res != NULL && size >= 4)
            memcpy(res, &r32, 4);
    }
    return 0;
}

int ptx_assertfail(ptx_block *b, const ptx_insn *in, const unsigned *lanes, unsigned n)
{
    const unsigned *bd = b->l->block;
    for (unsigned i = 0; i < n; i++) {
        unsigned t = lanes[i];
        char msg[PTX__STR_MAX], file[PTX__STR_MAX], func[PTX__STR_MAX];
        if (ptx__string(b, t, in, ptx_call_arg_bits(b, t, in, 0), msg) != 0 ||
            ptx__string(b, t, in, ptx_call_arg_bits(b, t, in, 1), file) != 0 ||
            ptx__string(b, t, in, ptx_call_arg_bits(b, t, in, 3), func) != 0)
            return -1;
        ptx__line l = {.len = 0};
        ptx__add(&l, "%s:%u: %s: block: [%u,%u,%u], thread: [%u,%u,%u] Assertion `%s` failed.\n", file,
                 (unsigned)ptx_call_arg_bits(b, t, in, 2), func, b->ctaid[0], b->ctaid[1], b->ctaid[2], t % bd[0],
                 t / bd[0] % bd[1], t / (bd[0] * bd[1]), msg);
        ptx__emit(b->out, &l);
    }
    return ptx_fault(b, cudaErrorAssert, in, "device-side assertion failed");
}

void ptx_out_free(ptx_out *o)
{
    free(o->text);
    pthread_mutex_destroy(&o->lock);
}
