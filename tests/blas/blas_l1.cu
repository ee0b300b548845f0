/* blas_l1.cu -- self-checking program of cuBLAS level 1 in all four precisions
 * (S, D, C, Z): axpy, scal (and the real-scaled Cs/Zd forms), copy, swap, dot
 * (dotu, dotc), nrm2, asum, amax, amin, rot (with a real sine, and Crot and Zrot with a
 * complex one), rotg, and rotm and rotmg (S, D), each
 * against a reference computed
 * here in double precision, with positive, negative and mixed increments, in both
 * pointer modes. Prints `PASS blas_l1`. Through the shim it checks the calls
 * generated from protocol/cublas.api; on a GPU, the same semantics on NVIDIA's
 * cuBLAS. With `footprint` (through the shim only) it checks what the shim refuses
 * and prints `PASS blas_l1_footprint`; with `64` it runs the same checks through
 * the calls' _64 twins (rotg and rotmg have none) and prints `PASS blas_l1_64`. */
#include "blas_ref.h"


/* The cuBLAS functions of one precision. */
template <typename T> struct fns;
#define FNS(T, P, RP, AMIN, AMAX, NRM2, ASUM, DOT, DOTC, ROT, SCALR)                                                 \
    template <> struct fns<T> {                                                                                  \
        static cublasStatus_t axpy(cublasHandle_t h, int n, const T *a, const T *x, int ix, T *y, int iy)       \
        { return V64(cublas##P##axpy_v2, h, n, a, x, ix, y, iy); }                                                  \
        static cublasStatus_t scal(cublasHandle_t h, int n, const T *a, T *x, int ix)                            \
        { return V64(cublas##P##scal_v2, h, n, a, x, ix); }                                                          \
        static cublasStatus_t scalr(cublasHandle_t h, int n, const RP *a, T *x, int ix)                          \
        { return V64(SCALR, h, n, a, x, ix); }                                                                       \
        static cublasStatus_t copy(cublasHandle_t h, int n, const T *x, int ix, T *y, int iy)                   \
        { return V64(cublas##P##copy_v2, h, n, x, ix, y, iy); }                                                      \
        static cublasStatus_t swap(cublasHandle_t h, int n, T *x, int ix, T *y, int iy)                         \
        { return V64(cublas##P##swap_v2, h, n, x, ix, y, iy); }                                                      \
        static cublasStatus_t dot(cublasHandle_t h, int n, const T *x, int ix, const T *y, int iy, T *r)        \
        { return V64(DOT, h, n, x, ix, y, iy, r); }                                                                  \
        static cublasStatus_t dotc(cublasHandle_t h, int n, const T *x, int ix, const T *y, int iy, T *r)       \
        { return V64(DOTC, h, n, x, ix, y, iy, r); }                                                                 \
        static cublasStatus_t nrm2(cublasHandle_t h, int n, const T *x, int ix, RP *r)                           \
        { return V64(NRM2, h, n, x, ix, r); }                                                                        \
        static cublasStatus_t asum(cublasHandle_t h, int n, const T *x, int ix, RP *r)                           \
        { return V64(ASUM, h, n, x, ix, r); }                                                                        \
        static cublasStatus_t amax(cublasHandle_t h, int n, const T *x, int ix, int *r)                         \
        { return blas_use64 ? index64(h, r, [&](int64_t *r64) { return AMAX##_64(h, n, x, ix, r64); }) : AMAX(h, n, x, ix, r); }                                                                        \
        static cublasStatus_t amin(cublasHandle_t h, int n, const T *x, int ix, int *r)                         \
        { return blas_use64 ? index64(h, r, [&](int64_t *r64) { return AMIN##_64(h, n, x, ix, r64); }) : AMIN(h, n, x, ix, r); }                                                                        \
        static cublasStatus_t rot(cublasHandle_t h, int n, T *x, int ix, T *y, int iy, const RP *c, const RP *s) \
        { return V64(ROT, h, n, x, ix, y, iy, c, s); }                                                               \
    };
FNS(float, S, float, cublasIsamin_v2, cublasIsamax_v2, cublasSnrm2_v2, cublasSasum_v2, cublasSdot_v2, cublasSdot_v2,
    cublasSrot_v2, cublasSscal_v2)
FNS(double, D, double, cublasIdamin_v2, cublasIdamax_v2, cublasDnrm2_v2, cublasDasum_v2, cublasDdot_v2,
    cublasDdot_v2, cublasDrot_v2, cublasDscal_v2)
FNS(cuComplex, C, float, cublasIcamin_v2, cublasIcamax_v2, cublasScnrm2_v2, cublasScasum_v2, cublasCdotu_v2,
    cublasCdotc_v2, cublasCsrot_v2, cublasCsscal_v2)
FNS(cuDoubleComplex, Z, double, cublasIzamin_v2, cublasIzamax_v2, cublasDznrm2_v2, cublasDzasum_v2, cublasZdotu_v2,
    cublasZdotc_v2, cublasZdrot_v2, cublasZdscal_v2)

/* |re| + |im|: the magnitude amax and amin compare, as the reference BLAS does. */
static double mag1(cd v) { return std::fabs(v.real()) + std::fabs(v.imag()); }

static cublasStatus_t crot(cublasHandle_t h, int n, cuComplex *x, int ix, cuComplex *y, int iy, const float *c,
                           const cuComplex *s)
{ return V64(cublasCrot_v2, h, n, x, ix, y, iy, c, s); }
static cublasStatus_t crot(cublasHandle_t h, int n, cuDoubleComplex *x, int ix, cuDoubleComplex *y, int iy,
                           const double *c, const cuDoubleComplex *s)
{ return V64(cublasZrot_v2, h, n, x, ix, y, iy, c, s); }

/* crot and zrot from x and y (host copies) on dx and dy. */
template <typename T>
static void crot_check(cublasHandle_t h, cublasPointerMode_t pm, strided sx, strided sy, const std::vector<T> &x,
                       const std::vector<T> &y, T *dx, T *dy)
{
    typedef typename real_of<T>::type R;
    const cd sine(0.48, 0.64);
    scalar<R> c((R)0.6);
    scalar<T> s(put<T>(sine));
    CT_OK(cudaMemcpy(dx, x.data(), x.size() * sizeof(T), cudaMemcpyHostToDevice));
    CT_OK(cudaMemcpy(dy, y.data(), y.size() * sizeof(T), cudaMemcpyHostToDevice));
    CB_OK(crot(h, sx.n, dx, sx.inc, dy, sy.inc, c.at(pm), s.at(pm)));
    std::vector<T> rx = from_dev(dx, x.size()), ry = from_dev(dy, y.size());
    for (int i = 0; i < sx.n; i++) {
        cd xi = get(x[sx.at(i)]), yi = get(y[sy.at(i)]);
        NEAR(get(rx[sx.at(i)]), 0.6 * xi + sine * yi, tol<T>());
        NEAR(get(ry[sy.at(i)]), 0.6 * yi - std::conj(sine) * xi, tol<T>());
    }
    for (size_t i = 0; i < x.size(); i++) /* elements between the strided ones stay */
        if (i % (size_t)std::abs(sx.inc) != 0)
            NEAR(get(rx[i]), get(x[i]), 0.0);
}

/* The updating calls (axpy, scal, copy, swap, rot) on x and y of one shape. */
template <typename T> static void updates(cublasHandle_t h, cublasPointerMode_t pm, strided sx, strided sy)
{
    typedef typename real_of<T>::type R;
    int n = sx.n;
    std::vector<T> x = rand_vec<T>(sx.len()), y = rand_vec<T>(sy.len());
    cd a(0.75, is_complex<T>() ? -0.5 : 0.0);
    scalar<T> alpha(put<T>(a));
    scalar<R> ralpha((R)1.25), c((R)0.6), s((R)0.8);
    T *dx = to_dev(x), *dy = to_dev(y);

    CB_OK(fns<T>::axpy(h, n, alpha.at(pm), dx, sx.inc, dy, sy.inc)); /* y += a x */
    std::vector<T> gy = from_dev(dy, y.size());
    for (int i = 0; i < n; i++)
        NEAR(get(gy[sy.at(i)]), get(y[sy.at(i)]) + a * get(x[sx.at(i)]), tol<T>());
    if (sx.inc > 0) { /* scal ignores non-positive increments */
        CB_OK(fns<T>::scal(h, n, alpha.at(pm), dx, sx.inc));
        CB_OK(fns<T>::scalr(h, n, ralpha.at(pm), dx, sx.inc));
        std::vector<T> gx = from_dev(dx, x.size());
        for (int i = 0; i < n; i++)
            NEAR(get(gx[sx.at(i)]), get(x[sx.at(i)]) * a * 1.25, tol<T>());
        CT_OK(cudaMemcpy(dx, x.data(), x.size() * sizeof(T), cudaMemcpyHostToDevice));
    }
    CB_OK(fns<T>::swap(h, n, dx, sx.inc, dy, sy.inc)); /* x <-> y (y as after axpy) */
    std::vector<T> sx_after = from_dev(dx, x.size()), sy_after = from_dev(dy, y.size());
    for (int i = 0; i < n; i++) {
        NEAR(get(sx_after[sx.at(i)]), get(gy[sy.at(i)]), 0.0);
        NEAR(get(sy_after[sy.at(i)]), get(x[sx.at(i)]), 0.0);
    }
    CB_OK(fns<T>::copy(h, n, dy, sy.inc, dx, sx.inc)); /* x = y = the original x */
    std::vector<T> cx = from_dev(dx, x.size());
    for (int i = 0; i < n; i++)
        NEAR(get(cx[sx.at(i)]), get(x[sx.at(i)]), 0.0);
    CT_OK(cudaMemcpy(dy, y.data(), y.size() * sizeof(T), cudaMemcpyHostToDevice));
    CB_OK(fns<T>::rot(h, n, dx, sx.inc, dy, sy.inc, c.at(pm), s.at(pm)));
    std::vector<T> rx = from_dev(dx, x.size()), ry = from_dev(dy, y.size());
    for (int i = 0; i < n; i++) {
        cd xi = get(x[sx.at(i)]), yi = get(y[sy.at(i)]);
        NEAR(get(rx[sx.at(i)]), 0.6 * xi + 0.8 * yi, tol<T>());
        NEAR(get(ry[sy.at(i)]), 0.6 * yi - 0.8 * xi, tol<T>());
    }
    if constexpr (sizeof(T) != sizeof(R)) /* a complex sine: x = c x + s y, y = c y - conj(s) x */
        crot_check(h, pm, sx, sy, x, y, dx, dy);
    CT_OK(cudaFree(dx));
    CT_OK(cudaFree(dy));
}

/* The reductions (dot, dotc, nrm2, asum, amax, amin) of x and y of one shape. */
template <typename T> static void reductions(cublasHandle_t h, cublasPointerMode_t pm, strided sx, strided sy)
{
    typedef typename real_of<T>::type R;
    int n = sx.n;
    std::vector<T> x = rand_vec<T>(sx.len()), y = rand_vec<T>(sy.len());
    T *dx = to_dev(x), *dy = to_dev(y);
    cd dot = 0, dotc = 0;
    double nrm = 0, asum = 0;
    int imax = 1, imin = 1;
    for (int i = 0; i < n; i++) {
        cd xi = get(x[sx.at(i)]), yi = get(y[sy.at(i)]);
        dot += xi * yi;
        dotc += std::conj(xi) * yi;
        nrm += std::norm(xi);
        asum += mag1(xi);
        if (mag1(xi) > mag1(get(x[sx.at(imax - 1)])))
            imax = i + 1;
        if (mag1(xi) < mag1(get(x[sx.at(imin - 1)])))
            imin = i + 1;
    }
    result<T> r, rc;
    result<R> rn, ra;
    result<int> ix, in;
    CB_OK(fns<T>::dot(h, n, dx, sx.inc, dy, sy.inc, r.at(pm)));
    CB_OK(fns<T>::dotc(h, n, dx, sx.inc, dy, sy.inc, rc.at(pm)));
    NEAR(get(r.value(pm)), dot, tol<T>());
    NEAR(get(rc.value(pm)), is_complex<T>() ? dotc : dot, tol<T>());
    if (sx.inc > 0) { /* these take no negative increment: they give 0 then */
        CB_OK(fns<T>::nrm2(h, n, dx, sx.inc, rn.at(pm)));
        CB_OK(fns<T>::asum(h, n, dx, sx.inc, ra.at(pm)));
        CB_OK(fns<T>::amax(h, n, dx, sx.inc, ix.at(pm)));
        CB_OK(fns<T>::amin(h, n, dx, sx.inc, in.at(pm)));
        NEAR(get(rn.value(pm)), std::sqrt(nrm), tol<T>());
        NEAR(get(ra.value(pm)), asum, tol<T>());
        NEAR(cd(ix.value(pm)), cd(imax), 0.0);
        NEAR(cd(in.value(pm)), cd(imin), 0.0);
    } else {
        CB_OK(fns<T>::amax(h, n, dx, sx.inc, ix.at(pm)));
        CB_OK(fns<T>::nrm2(h, n, dx, sx.inc, rn.at(pm)));
        NEAR(cd(ix.value(pm)), cd(0), 0.0);
        NEAR(get(rn.value(pm)), cd(0), 0.0);
    }
    CB_OK(fns<T>::dot(h, 0, dx, sx.inc, dy, sy.inc, r.at(pm))); /* nothing to add: 0 */
    NEAR(get(r.value(pm)), cd(0), 0.0);
    CT_OK(cudaFree(dx));
    CT_OK(cudaFree(dy));
}

/* Through the shim only: what it refuses (on a GPU, crashes or out-of-bounds
 * accesses): a missing result, a result or scalar on the wrong side of the pointer
 * mode, operands outside their allocations, an unknown handle. */
template <typename T> static void errors(cublasHandle_t h)
{
    typedef typename real_of<T>::type R;
    std::vector<T> x = rand_vec<T>(8);
    T *dx = to_dev(x), r;
    R rr;
    CB_ST(fns<T>::dot(h, 8, dx, 1, dx, 1, nullptr), CUBLAS_STATUS_INVALID_VALUE);
    CB_ST(fns<T>::nrm2(h, 8, dx, 1, nullptr), CUBLAS_STATUS_INVALID_VALUE);
    CB_ST(fns<T>::dot(h, 8, dx, 1, dx, 1, dx), CUBLAS_STATUS_INVALID_VALUE); /* host mode, device result */
    CB_ST(fns<T>::axpy(h, 8, dx, dx, 1, dx, 1), CUBLAS_STATUS_INVALID_VALUE); /* host mode, device scalar */
    CB_ST(fns<T>::dot(h, 8, dx, 1, dx + 4, 1, &r), CUBLAS_STATUS_INVALID_VALUE); /* y runs past its allocation */
    CB_ST(fns<T>::asum(h, 8, dx + 2, 1, &rr), CUBLAS_STATUS_INVALID_VALUE);
    REFUSED(fns<T>::swap(h, 8, dx, 2, dx, 1));
    REFUSED(fns<T>::copy(h, 8, dx, -1, dx + 1, 1));
    if constexpr (sizeof(T) != sizeof(R)) { /* crot, zrot: y past the allocation */
        const R c = (R)0.6;
        const T s = put<T>(cd(0.48, 0.64));
        REFUSED(crot(h, 8, dx, 1, dx + 1, 1, &c, &s));
    }
    CB_ST(fns<T>::asum((cublasHandle_t)nullptr, 8, dx, 1, &rr), CUBLAS_STATUS_NOT_INITIALIZED);
    CB_OK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE));
    REFUSED(fns<T>::dot(h, 8, dx, 1, dx, 1, dx + 8)); /* device result past the allocation */
    REFUSED(fns<T>::scal(h, 8, dx + 8, dx, 1));       /* device scalar past it */
    CB_OK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
    CB_OK(fns<T>::asum(h, 8, dx, 1, &rr)); /* still working */
    CT_OK(cudaFree(dx));
}

/* ---- rotg, rotm, rotmg: scalars read and written by pointer mode ------------------ */

static cublasStatus_t rotg(cublasHandle_t h, float *a, float *b, float *c, float *s) { return cublasSrotg(h, a, b, c, s); }
static cublasStatus_t rotg(cublasHandle_t h, double *a, double *b, double *c, double *s) { return cublasDrotg(h, a, b, c, s); }
static cublasStatus_t rotg(cublasHandle_t h, cuComplex *a, cuComplex *b, float *c, cuComplex *s)
{ return cublasCrotg(h, a, b, c, s); }
static cublasStatus_t rotg(cublasHandle_t h, cuDoubleComplex *a, cuDoubleComplex *b, double *c, cuDoubleComplex *s)
{ return cublasZrotg(h, a, b, c, s); }
static cublasStatus_t rotm(cublasHandle_t h, int n, float *x, int ix, float *y, int iy, const float *p)
{ return V64(cublasSrotm, h, n, x, ix, y, iy, p); }
static cublasStatus_t rotm(cublasHandle_t h, int n, double *x, int ix, double *y, int iy, const double *p)
{ return V64(cublasDrotm, h, n, x, ix, y, iy, p); }
static cublasStatus_t rotmg(cublasHandle_t h, float *d1, float *d2, float *x1, const float *y1, float *p)
{ return cublasSrotmg(h, d1, d2, x1, y1, p); }
static cublasStatus_t rotmg(cublasHandle_t h, double *d1, double *d2, double *x1, const double *y1, double *p)
{ return cublasDrotmg(h, d1, d2, x1, y1, p); }

/* Host scalars, or device copies read back after the call. */
template <typename T> struct slots {
    std::vector<T> host;
    T *dev = nullptr;
    cublasPointerMode_t pm;
    slots(const std::vector<T> &v, cublasPointerMode_t m) : host(v), pm(m) { dev = to_dev(v); }
    ~slots() { cudaFree(dev); }
    T *at(size_t i) { return pm == CUBLAS_POINTER_MODE_HOST ? &host[i] : dev + i; }
    void sync() { if (pm == CUBLAS_POINTER_MODE_DEVICE) host = from_dev(dev, host.size()); }
};

/* rotg: [c s; -conj(s) c] [a; b] = [r; 0], r replacing a. */
template <typename T> static void check_rotg(cublasHandle_t h, cublasPointerMode_t pm)
{
    typedef typename real_of<T>::type R;
    cd a0(3, is_complex<T>() ? 1 : 0), b0(-4, is_complex<T>() ? -2 : 0);
    slots<T> ab({put<T>(a0), put<T>(b0), put<T>(0.0)}, pm);
    slots<R> c({(R)0}, pm);
    CB_OK(rotg(h, ab.at(0), ab.at(1), c.at(0), ab.at(2)));
    ab.sync();
    c.sync();
    cd r = get(ab.host[0]), s = get(ab.host[2]);
    double cv = c.host[0];
    NEAR(cv * a0 + s * b0, r, tol<T>());
    NEAR(-std::conj(s) * a0 + cv * b0, cd(0), tol<T>());
    NEAR(cd(cv * cv + std::norm(s)), cd(1), tol<T>());
}

/* rotm with each flag of its parameter array, and rotmg whose H zeroes y1. */
template <typename T> static void check_rotm(cublasHandle_t h, cublasPointerMode_t pm)
{
    const int n = 6;
    strided sx{n, 1}, sy{n, -2};
    for (T flag : {(T)-1, (T)0, (T)1, (T)-2}) {
        std::vector<T> x = rand_vec<T>(sx.len()), y = rand_vec<T>(sy.len());
        T *dx = to_dev(x), *dy = to_dev(y);
        slots<T> param({flag, (T)0.5, (T)-0.25, (T)0.75, (T)1.5}, pm); /* flag, h11, h21, h12, h22 */
        CB_OK(rotm(h, n, dx, sx.inc, dy, sy.inc, param.at(0)));
        double h11 = 0.5, h21 = -0.25, h12 = 0.75, h22 = 1.5;
        if (flag == 0)
            h11 = h22 = 1;
        else if (flag == 1)
            h21 = -1, h12 = 1;
        else if (flag == -2)
            h11 = h22 = 1, h21 = h12 = 0;
        std::vector<T> gx = from_dev(dx, x.size()), gy = from_dev(dy, y.size());
        for (int i = 0; i < n; i++) {
            double xi = x[sx.at(i)], yi = y[sy.at(i)];
            NEAR(cd(gx[sx.at(i)]), cd(h11 * xi + h12 * yi), tol<T>());
            NEAR(cd(gy[sy.at(i)]), cd(h21 * xi + h22 * yi), tol<T>());
        }
        CT_OK(cudaFree(dx));
        CT_OK(cudaFree(dy));
    }
    slots<T> v({(T)2, (T)3, (T)1.5, (T)0.7}, pm), param({0, 0, 0, 0, 0}, pm); /* d1, d2, x1, y1 */
    CB_OK(rotmg(h, v.at(0), v.at(1), v.at(2), v.at(3), param.at(0)));
    v.sync();
    param.sync();
    double f = param.host[0], h11 = param.host[1], h21 = param.host[2], h12 = param.host[3], h22 = param.host[4];
    if (f == 0)
        h11 = h22 = 1;
    else if (f == 1)
        h21 = -1, h12 = 1;
    NEAR(cd(h21 * 1.5 + h22 * 0.7), cd(0), tol<T>());      /* the second component is zeroed */
    NEAR(cd(h11 * 1.5 + h12 * 0.7), cd(v.host[2]), tol<T>()); /* and the first is the new x1 */
}

template <typename T> static void precision(cublasHandle_t h)
{
    const strided shapes[][2] = {{{37, 1}, {37, 1}}, {{37, 2}, {37, -3}}, {{37, -1}, {37, 2}}, {{1, 1}, {1, 1}}};
    for (cublasPointerMode_t pm : {CUBLAS_POINTER_MODE_HOST, CUBLAS_POINTER_MODE_DEVICE}) {
        CB_OK(cublasSetPointerMode(h, pm));
        for (auto &s : shapes) {
            updates<T>(h, pm, s[0], s[1]);
            reductions<T>(h, pm, s[0], s[1]);
        }
        check_rotg<T>(h, pm);
        if constexpr (sizeof(T) == sizeof(typename real_of<T>::type))
            check_rotm<T>(h, pm);
    }
    CB_OK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
}

int main(int argc, char **argv)
{
    if (argc > 1 && std::strcmp(argv[1], "footprint") == 0)
        return blas_main("blas_l1_footprint", [](cublasHandle_t h, auto t) { errors<typename decltype(t)::type>(h); });
    blas_use64 = argc > 1 && std::strcmp(argv[1], "64") == 0;
    return blas_main(blas_use64 ? "blas_l1_64" : "blas_l1",
                     [](cublasHandle_t h, auto t) { precision<typename decltype(t)::type>(h); });
}
