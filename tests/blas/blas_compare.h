/* blas_compare.h -- what every self-checking cuBLAS program compares with, free of
 * cuBLAS's headers (blas_legacy.cu includes the legacy cublas.h, which cannot meet
 * cublas_v2.h): complex doubles, random data, a NaN, and the comparison with a
 * tolerance that reports the caller's file:line. */
#ifndef BLAS_COMPARE_H
#define BLAS_COMPARE_H

#include <cmath>
#include <complex>
#include <limits>
#include "../cuda/cuda_check.h"

typedef std::complex<double> cd;

static unsigned rng = 777;
static inline double rnd() { rng = rng * 1103515245u + 12345u; return ((rng >> 8) & 0xffff) / 32768.0 - 1.0; }

static inline cd nan_cd() { return cd(std::numeric_limits<double>::quiet_NaN(), 0); }

/* Fails (reporting file:line, the caller's) when got is not want within eps. */
static inline void near_at(cd got, cd want, double eps, const char *what, const char *file, int line)
{
    if (std::abs(got - want) > eps * (1.0 + std::abs(want))) {
        char e[96], g[96];
        snprintf(e, sizeof e, "(%.9g,%.9g)", want.real(), want.imag());
        snprintf(g, sizeof g, "(%.9g,%.9g)", got.real(), got.imag());
        ct_fail(file, line, what, e, g);
    }
}
#define near(got, want, eps, what, line) near_at((got), (want), (eps), (what), __FILE__, (line))
#define NEAR(got, want, eps) near((got), (want), (eps), #got, __LINE__)

#endif
