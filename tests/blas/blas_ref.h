/* blas_ref.h -- what the self-checking cuBLAS programs of every precision share
 * (blas_l1.cu, blas_l2.cu): elements of S, D, C and Z as complex doubles, random
 * data, strided vectors in the reference BLAS's order, device copies, scalars and
 * results placed by pointer mode, and tolerances by precision (the comparison
 * itself: blas_compare.h). */
#ifndef BLAS_REF_H
#define BLAS_REF_H

#include <cublas_v2.h>
#include <cmath>
#include <complex>
#include <vector>
#include "blas_check.h"
#include "blas_compare.h"

/* Element access of every precision as a complex double. */
static cd get(float v) { return cd(v, 0); }
static cd get(double v) { return cd(v, 0); }
static cd get(cuComplex v) { return cd(v.x, v.y); }
static cd get(cuDoubleComplex v) { return cd(v.x, v.y); }
template <typename T> static T put(cd v);
template <> float put<float>(cd v) { return (float)v.real(); }
template <> double put<double>(cd v) { return v.real(); }
template <> cuComplex put<cuComplex>(cd v) { return make_cuComplex((float)v.real(), (float)v.imag()); }
template <> cuDoubleComplex put<cuDoubleComplex>(cd v) { return make_cuDoubleComplex(v.real(), v.imag()); }

/* The real type of a precision (what nrm2, asum and the Cs/Zd scalars use). */
template <typename T> struct real_of { typedef T type; };
template <> struct real_of<cuComplex> { typedef float type; };
template <> struct real_of<cuDoubleComplex> { typedef double type; };

template <typename T> static bool is_complex() { return sizeof(T) == 2 * sizeof(typename real_of<T>::type); }
template <typename T> static double tol() { return sizeof(typename real_of<T>::type) == 4 ? 2e-4 : 1e-11; }


/* A strided vector: n elements inc apart, in storage of (n-1)|inc|+1 elements. */
struct strided {
    int n, inc;
    size_t len() const { return (size_t)(n - 1) * (size_t)std::abs(inc) + 1; }
    size_t at(int i) const { return inc > 0 ? (size_t)i * inc : (size_t)(n - 1 - i) * (size_t)(-inc); }
};

template <typename T> static std::vector<T> rand_vec(size_t len)
{
    std::vector<T> v(len);
    for (auto &x : v)
        x = put<T>(cd(rnd(), is_complex<T>() ? rnd() : 0.0));
    return v;
}

template <typename T> static T *to_dev(const std::vector<T> &h)
{
    T *d = nullptr;
    CT_OK(cudaMalloc(&d, h.size() * sizeof(T)));
    CT_OK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}

/* A scalar by pointer mode: host memory, or a copy in device memory. */
template <typename T> struct scalar {
    T host;
    T *dev = nullptr;
    explicit scalar(T v) : host(v) { dev = to_dev(std::vector<T>(1, v)); }
    ~scalar() { cudaFree(dev); }
    const T *at(cublasPointerMode_t pm) const { return pm == CUBLAS_POINTER_MODE_HOST ? &host : dev; }
};

/* A result by pointer mode: host memory, or device memory read back after. */
template <typename R> struct result {
    R host{};
    R *dev = nullptr;
    result() { CT_OK(cudaMalloc(&dev, sizeof(R))); CT_OK(cudaMemset(dev, 0x7f, sizeof(R))); }
    ~result() { cudaFree(dev); }
    R *at(cublasPointerMode_t pm) { return pm == CUBLAS_POINTER_MODE_HOST ? &host : dev; }
    R value(cublasPointerMode_t pm)
    {
        if (pm == CUBLAS_POINTER_MODE_DEVICE)
            CT_OK(cudaMemcpy(&host, dev, sizeof(R), cudaMemcpyDeviceToHost));
        return host;
    }
};

/* A program's `64` argument: the wrappers then call the calls' _64 twins (64-bit
 * integers), V64 picks the one to call; V32 always calls the 32-bit form (a call
 * without a generated twin). */
static bool blas_use64 = false;
#define V64(fn, ...) (blas_use64 ? fn##_64(__VA_ARGS__) : fn(__VA_ARGS__))
#define V32(fn, ...) fn(__VA_ARGS__)

/* An index result (amax, amin) through a _64 twin, whose result is an int64_t: call
 * gets where to write it (host or device memory by h's pointer mode), and the value
 * lands in r as the 32-bit form leaves it. */
template <typename Call> static cublasStatus_t index64(cublasHandle_t h, int *r, Call call)
{
    cublasPointerMode_t pm;
    CB_OK(cublasGetPointerMode(h, &pm));
    if (pm == CUBLAS_POINTER_MODE_HOST) {
        int64_t v = 0;
        cublasStatus_t st = call(r != nullptr ? &v : nullptr);
        if (r != nullptr)
            *r = (int)v;
        return st;
    }
    int64_t *d = nullptr, v = 0;
    CT_OK(cudaMalloc(&d, sizeof *d));
    cublasStatus_t st = call(d);
    CT_OK(cudaMemcpy(&v, d, sizeof v, cudaMemcpyDeviceToHost));
    int narrow = (int)v;
    CT_OK(cudaMemcpy(r, &narrow, sizeof narrow, cudaMemcpyHostToDevice));
    CT_OK(cudaFree(d));
    return st;
}

/* The level programs' main: one handle, run(h, type_tag<T>()) for T of S, D, C and
 * Z, then the verdict under name. */
template <typename T> struct type_tag {
    typedef T type;
};

template <typename Run> static int blas_main(const char *name, Run run)
{
    cublasHandle_t h;
    CB_OK(cublasCreate(&h));
    run(h, type_tag<float>());
    run(h, type_tag<double>());
    run(h, type_tag<cuComplex>());
    run(h, type_tag<cuDoubleComplex>());
    CB_OK(cublasDestroy(h));
    CT_OK(cudaDeviceSynchronize());
    return ct_finish(name);
}

#endif
