/* cuda_check.h -- check macros shared by the self-checking CUDA test programs.
 *
 * Each failed check prints one line, `FAIL file:line what expected got`, and
 * bumps a failure counter; ct_finish() prints `PASS <name>` and returns the
 * exit status (0 only when nothing failed). The counter is atomic so the
 * multi-threaded programs can check from any thread.
 */
#ifndef CUDA_CHECK_H
#define CUDA_CHECK_H

#include <cuda_runtime.h>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <cstdint>

static std::atomic<int> ct_failures(0);

/* Records one failed check; safe from any thread (one fprintf per line). */
static inline void ct_fail(const char *file, int line, const char *what,
                           const char *expected, const char *got)
{
    ct_failures++;
    fprintf(stdout, "FAIL %s:%d %s expected %s got %s\n", file, line, what, expected, got);
    fflush(stdout);
}

/* Prints the verdict; returns the process exit status. */
static inline int ct_finish(const char *name)
{
    if (ct_failures.load() == 0) {
        printf("PASS %s\n", name);
        return 0;
    }
    printf("FAILED %s: %d check(s)\n", name, ct_failures.load());
    return 1;
}

/* CALL must return exactly EXPECTED (a cudaError_t). */
#define CT_ERR(call, expected)                                                  \
    do {                                                                        \
        cudaError_t ct_e_ = (call);                                             \
        cudaError_t ct_x_ = (expected);                                         \
        if (ct_e_ != ct_x_)                                                     \
            ct_fail(__FILE__, __LINE__, #call, cudaGetErrorName(ct_x_),         \
                    cudaGetErrorName(ct_e_));                                   \
    } while (0)

#define CT_OK(call) CT_ERR(call, cudaSuccess)

/* A boolean condition; the values are printed as integers. */
#define CT_TRUE(cond)                                                           \
    do {                                                                        \
        if (!(cond))                                                            \
            ct_fail(__FILE__, __LINE__, #cond, "true", "false");                \
    } while (0)

/* Two integer expressions must be equal. */
#define CT_EQ(a, b)                                                             \
    do {                                                                        \
        long long ct_a_ = (long long)(a), ct_b_ = (long long)(b);               \
        if (ct_a_ != ct_b_) {                                                   \
            char ct_sa_[32], ct_sb_[32];                                        \
            snprintf(ct_sa_, sizeof ct_sa_, "%lld", ct_b_);                     \
            snprintf(ct_sb_, sizeof ct_sb_, "%lld", ct_a_);                     \
            ct_fail(__FILE__, __LINE__, #a " == " #b, ct_sa_, ct_sb_);          \
        }                                                                       \
    } while (0)

/* Two C strings must be equal (NULL never equals anything). */
#define CT_STREQ(a, b)                                                          \
    do {                                                                        \
        const char *ct_a_ = (a), *ct_b_ = (b);                                  \
        if (ct_a_ == NULL || ct_b_ == NULL || strcmp(ct_a_, ct_b_) != 0)        \
            ct_fail(__FILE__, __LINE__, #a, ct_b_ ? ct_b_ : "(null)",           \
                    ct_a_ ? ct_a_ : "(null)");                                  \
    } while (0)

/* Deterministic byte pattern: byte i of buffer `seed`. */
static inline unsigned char ct_pattern(size_t i, unsigned seed)
{
    uint32_t x = (uint32_t)i * 2654435761u + seed * 40503u + 17u;
    return (unsigned char)(x ^ (x >> 13) ^ (x >> 24));
}

static inline void ct_fill(void *buf, size_t n, unsigned seed)
{
    unsigned char *p = (unsigned char *)buf;
    for (size_t i = 0; i < n; i++)
        p[i] = ct_pattern(i, seed);
}

/* Returns the index of the first byte differing from the pattern, or -1. */
static inline long long ct_mismatch(const void *buf, size_t n, unsigned seed)
{
    const unsigned char *p = (const unsigned char *)buf;
    for (size_t i = 0; i < n; i++)
        if (p[i] != ct_pattern(i, seed))
            return (long long)i;
    return -1;
}

/* BUF[0..N) must hold pattern SEED. */
#define CT_PATTERN(buf, n, seed)                                                \
    do {                                                                        \
        long long ct_m_ = ct_mismatch((buf), (n), (seed));                      \
        if (ct_m_ >= 0) {                                                       \
            char ct_s_[48];                                                     \
            snprintf(ct_s_, sizeof ct_s_, "mismatch at byte %lld", ct_m_);      \
            ct_fail(__FILE__, __LINE__, "pattern " #buf, "match", ct_s_);       \
        }                                                                       \
    } while (0)

/* Returns the index of the first byte of BUF[0..N) not equal to V, or -1. */
static inline long long ct_not_byte(const void *buf, size_t n, unsigned char v)
{
    const unsigned char *p = (const unsigned char *)buf;
    for (size_t i = 0; i < n; i++)
        if (p[i] != v)
            return (long long)i;
    return -1;
}

#define CT_BYTES(buf, n, v)                                                     \
    do {                                                                        \
        long long ct_m_ = ct_not_byte((buf), (n), (unsigned char)(v));          \
        if (ct_m_ >= 0) {                                                       \
            char ct_s_[48];                                                     \
            snprintf(ct_s_, sizeof ct_s_, "other byte at %lld", ct_m_);         \
            ct_fail(__FILE__, __LINE__, "bytes " #buf " == " #v, "all equal",   \
                    ct_s_);                                                     \
        }                                                                       \
    } while (0)

#endif
