/* blas_ex.cu -- self-checking program of cuBLAS's level-1 Ex calls (AxpyEx,
 * ScalEx, DotEx, DotcEx, Nrm2Ex, AsumEx, IamaxEx, IaminEx, CopyEx, SwapEx, RotEx,
 * RotgEx, RotmEx, RotmgEx), and of CherkEx, Cherk3mEx, CsyrkEx, Csyrk3mEx, CgemmEx and Cgemm3mEx (inputs complex
 * 8-bit or float), for each
 * data type cuBLAS computes them in (half, bfloat16, float, double, complex float
 * and double, with their execution types), against references computed here in
 * double precision from the rounded inputs, with mixed-sign increments and both
 * pointer modes; plus combinations of types cuBLAS does not compute, an unknown
 * type among them (CUBLAS_STATUS_NOT_SUPPORTED). Prints `PASS
 * blas_ex`; with `64` it runs the same checks through the _64 twins (`PASS
 * blas_ex_64`). Through the shim it checks the calls generated from
 * protocol/cublas.api; on a GPU, NVIDIA's cuBLAS. */
#include <cstring>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include "blas_ref.h"

/* One data type: its cudaDataType, element bytes, execution type, and how close a
 * result computed through it must be. */
struct dtype {
    cudaDataType t;
    size_t size;
    bool complex;
    cudaDataType exec, real;
    double eps;
};
static const dtype TYPES[] = {
    {CUDA_R_16F, 2, false, CUDA_R_32F, CUDA_R_16F, 4e-3},
    {CUDA_R_16BF, 2, false, CUDA_R_32F, CUDA_R_16BF, 3e-2},
    {CUDA_R_32F, 4, false, CUDA_R_32F, CUDA_R_32F, 2e-5},
    {CUDA_R_64F, 8, false, CUDA_R_64F, CUDA_R_64F, 1e-12},
    {CUDA_C_32F, 8, true, CUDA_C_32F, CUDA_R_32F, 2e-5},
    {CUDA_C_64F, 16, true, CUDA_C_64F, CUDA_R_64F, 1e-12},
};

static const dtype &type_of(cudaDataType t)
{
    for (const dtype &d : TYPES)
        if (d.t == t)
            return d;
    return TYPES[2];
}

/* Values in the bytes of a type, and back. */
static void store(cudaDataType t, void *p, size_t i, cd v)
{
    switch (t) {
    case CUDA_R_16F: ((__half *)p)[i] = __float2half((float)v.real()); break;
    case CUDA_R_16BF: ((__nv_bfloat16 *)p)[i] = __float2bfloat16((float)v.real()); break;
    case CUDA_R_32F: ((float *)p)[i] = (float)v.real(); break;
    case CUDA_R_64F: ((double *)p)[i] = v.real(); break;
    case CUDA_C_32F: ((cuComplex *)p)[i] = make_cuComplex((float)v.real(), (float)v.imag()); break;
    default: ((cuDoubleComplex *)p)[i] = make_cuDoubleComplex(v.real(), v.imag());
    }
}

static cd load(cudaDataType t, const void *p, size_t i)
{
    switch (t) {
    case CUDA_R_16F: return __half2float(((const __half *)p)[i]);
    case CUDA_R_16BF: return __bfloat162float(((const __nv_bfloat16 *)p)[i]);
    case CUDA_R_32F: return ((const float *)p)[i];
    case CUDA_R_64F: return ((const double *)p)[i];
    case CUDA_C_32F: return get(((const cuComplex *)p)[i]);
    default: return get(((const cuDoubleComplex *)p)[i]);
    }
}

/* A vector of a type on the host (its bytes) and in device memory. */
struct tvec {
    const dtype &d;
    strided s;
    std::vector<unsigned char> bytes;
    void *dev = nullptr;
    tvec(const dtype &type, strided shape) : d(type), s(shape), bytes(shape.len() * type.size)
    {
        for (size_t i = 0; i < s.len(); i++)
            store(d.t, bytes.data(), i, cd(rnd(), d.complex ? rnd() : 0.0));
        CT_OK(cudaMalloc(&dev, bytes.size()));
        CT_OK(cudaMemcpy(dev, bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
    }
    ~tvec() { cudaFree(dev); }
    cd at(int i) const { return load(d.t, bytes.data(), s.at(i)); } /* element i as sent */
    cd got(const std::vector<unsigned char> &after, int i) const { return load(d.t, after.data(), s.at(i)); }
    std::vector<unsigned char> back() const
    {
        std::vector<unsigned char> h(bytes.size());
        CT_OK(cudaMemcpy(h.data(), dev, h.size(), cudaMemcpyDeviceToHost));
        return h;
    }
};

/* A scalar or result of a type by pointer mode (host bytes, or a device copy). */
struct tscalar {
    cudaDataType t;
    alignas(16) unsigned char host[16] = {0};
    void *dev = nullptr;
    tscalar(cudaDataType type, cd v) : t(type)
    {
        store(t, host, 0, v);
        CT_OK(cudaMalloc(&dev, 16));
        CT_OK(cudaMemcpy(dev, host, 16, cudaMemcpyHostToDevice));
    }
    ~tscalar() { cudaFree(dev); }
    void *at(cublasPointerMode_t pm) { return pm == CUBLAS_POINTER_MODE_HOST ? (void *)host : dev; }
    cd value(cublasPointerMode_t pm)
    {
        if (pm == CUBLAS_POINTER_MODE_DEVICE)
            CT_OK(cudaMemcpy(host, dev, 16, cudaMemcpyDeviceToHost));
        return load(t, host, 0);
    }
};

/* Rounds v as the type stores it. */
static cd rounded(cudaDataType t, cd v)
{
    alignas(16) unsigned char b[16];
    store(t, b, 0, v);
    return load(t, b, 0);
}

static void updates(cublasHandle_t h, const dtype &d, cublasPointerMode_t pm)
{
    const strided sx{6, 2}, sy{6, -1};
    const cd alpha = rounded(d.exec, cd(0.75, d.complex ? -0.5 : 0));
    {
        tvec x(d, sx), y(d, sy);
        tscalar a(d.exec, alpha);
        CB_OK(V64(cublasAxpyEx, h, sx.n, a.at(pm), d.exec, x.dev, d.t, sx.inc, y.dev, d.t, sy.inc, d.exec));
        std::vector<unsigned char> after = y.back();
        for (int i = 0; i < sx.n; i++)
            near(y.got(after, i), alpha * x.at(i) + y.at(i), d.eps, "AxpyEx", __LINE__);
    }
    for (cudaDataType at : {d.exec, d.real == d.exec ? d.exec : (cudaDataType)type_of(d.exec).real}) {
        tvec x(d, sx);
        cd av = rounded(at, alpha);
        tscalar a(at, av);
        CB_OK(V64(cublasScalEx, h, sx.n, a.at(pm), at, x.dev, d.t, sx.inc, d.exec));
        std::vector<unsigned char> after = x.back();
        for (int i = 0; i < sx.n; i++)
            near(x.got(after, i), av * x.at(i), d.eps, "ScalEx", __LINE__);
    }
    {
        tvec x(d, sx), y(d, sy);
        CB_OK(V64(cublasCopyEx, h, sx.n, x.dev, d.t, sx.inc, y.dev, d.t, sy.inc));
        std::vector<unsigned char> after = y.back();
        for (int i = 0; i < sx.n; i++)
            near(y.got(after, i), x.at(i), 0.0, "CopyEx", __LINE__);
        tvec u(d, sx), v(d, sy);
        CB_OK(V64(cublasSwapEx, h, sx.n, u.dev, d.t, sx.inc, v.dev, d.t, sy.inc));
        std::vector<unsigned char> ua = u.back(), va = v.back();
        for (int i = 0; i < sx.n; i++) {
            near(u.got(ua, i), v.at(i), 0.0, "SwapEx x", __LINE__);
            near(v.got(va, i), u.at(i), 0.0, "SwapEx y", __LINE__);
        }
    }
}

/* RotEx with c and s of the data's type and (complex data) of its real type. */
static void rotations(cublasHandle_t h, const dtype &d, cublasPointerMode_t pm)
{
    const strided sx{5, -1}, sy{5, 2};
    for (cudaDataType cs : {d.t, d.real}) {
        tvec x(d, sx), y(d, sy);
        cd c = rounded(cs, cd(0.6, 0)), s = rounded(cs, cd(0.8, cs == d.t && d.complex ? -0.25 : 0));
        tscalar tc(cs, c), ts(cs, s);
        CB_OK(V64(cublasRotEx, h, sx.n, x.dev, d.t, sx.inc, y.dev, d.t, sy.inc, tc.at(pm), ts.at(pm), cs, d.exec));
        std::vector<unsigned char> xa = x.back(), ya = y.back();
        for (int i = 0; i < sx.n; i++) {
            near(x.got(xa, i), c * x.at(i) + s * y.at(i), d.eps, "RotEx x", __LINE__);
            near(y.got(ya, i), c * y.at(i) - std::conj(s) * x.at(i), d.eps, "RotEx y", __LINE__);
        }
        if (d.real == d.t)
            break;
    }
}

/* Reference rotg (BLAS's definition): a <- r, b <- z for real data; complex data
 * keeps b. */
static void ref_rotg(cd &a, cd &b, double &c, cd &s, bool complex)
{
    if (!complex) {
        double ar = a.real(), br = b.real(), roe = std::fabs(ar) > std::fabs(br) ? ar : br;
        double r = std::copysign(std::hypot(ar, br), roe);
        c = ar / r, s = br / r;
        b = std::fabs(ar) > std::fabs(br) ? s : c != 0 ? cd(1 / c) : cd(1);
        a = r;
        return;
    }
    double norm = std::hypot(std::abs(a), std::abs(b));
    cd alpha = a / std::abs(a);
    c = std::abs(a) / norm;
    s = alpha * std::conj(b) / norm;
    a = alpha * norm;
}

/* RotgEx in every type against BLAS's definition; RotmEx (real types, each flag,
 * parameters of the data's and of the execution type) against rotm's matrix;
 * RotmgEx against Srotmg/Drotmg given the same (rounded) values. */
static void rotation_ex_family(cublasHandle_t h, const dtype &d, cublasPointerMode_t pm)
{
    cd a = rounded(d.t, cd(3, d.complex ? 1 : 0)), b = rounded(d.t, cd(4, d.complex ? -2 : 0)), s;
    double c;
    tscalar ta(d.t, a), tb(d.t, b), tc(d.real, 0), ts(d.t, 0);
    CB_OK(cublasRotgEx(h, ta.at(pm), tb.at(pm), d.t, tc.at(pm), ts.at(pm), d.real, d.exec));
    cd got_a = ta.value(pm), got_b = tb.value(pm), got_c = tc.value(pm), got_s = ts.value(pm);
    ref_rotg(a, b, c, s, d.complex);
    near(got_a, a, 4 * d.eps, "RotgEx a", __LINE__);
    near(got_b, b, 4 * d.eps, "RotgEx b", __LINE__);
    near(got_c, cd(c), 4 * d.eps, "RotgEx c", __LINE__);
    near(got_s, s, 4 * d.eps, "RotgEx s", __LINE__);
    if (d.complex)
        return;
    const strided sx{5, 2}, sy{5, -1};
    for (double flag : {-1.0, 0.0, 1.0, -2.0})
        for (cudaDataType pt : {d.t, d.exec}) {
            tvec x(d, sx), y(d, sy);
            double p[5] = {flag, 0.5, -0.25, 0.75, 1.5}, m[4];
            alignas(16) unsigned char ph[5 * 8];
            for (int i = 0; i < 5; i++)
                store(pt, ph, i, p[i]);
            void *pd;
            CT_OK(cudaMalloc(&pd, sizeof ph));
            CT_OK(cudaMemcpy(pd, ph, sizeof ph, cudaMemcpyHostToDevice));
            CB_OK(V64(cublasRotmEx, h, sx.n, x.dev, d.t, sx.inc, y.dev, d.t, sy.inc,
                      pm == CUBLAS_POINTER_MODE_HOST ? (void *)ph : pd, pt, d.exec));
            m[0] = flag == 0 || flag == -2 ? 1 : p[1], m[3] = flag == 0 || flag == -2 ? 1 : p[4];
            m[1] = flag == 1 ? 1 : flag == -2 ? 0 : p[3], m[2] = flag == 1 ? -1 : flag == -2 ? 0 : p[2];
            std::vector<unsigned char> xa = x.back(), ya = y.back();
            for (int i = 0; i < sx.n; i++) {
                near(x.got(xa, i), m[0] * x.at(i) + m[1] * y.at(i), d.eps, "RotmEx x", __LINE__);
                near(y.got(ya, i), m[2] * x.at(i) + m[3] * y.at(i), d.eps, "RotmEx y", __LINE__);
            }
            CT_OK(cudaFree(pd));
        }
    /* RotmgEx against the S or D call on the same values (rotmg's own test is blas_l1's) */
    double v[4] = {rounded(d.t, 2.0).real(), rounded(d.t, 3.0).real(), rounded(d.t, 1.5).real(),
                   rounded(d.t, -0.5).real()};
    tscalar d1(d.t, v[0]), d2(d.t, v[1]), x1(d.t, v[2]), y1(d.t, v[3]);
    std::vector<unsigned char> param(5 * d.size);
    void *pd;
    CT_OK(cudaMalloc(&pd, param.size()));
    CB_OK(cublasRotmgEx(h, d1.at(pm), d.t, d2.at(pm), d.t, x1.at(pm), d.t, y1.at(pm), d.t,
                        pm == CUBLAS_POINTER_MODE_HOST ? (void *)param.data() : pd, d.t, d.exec));
    if (pm == CUBLAS_POINTER_MODE_DEVICE)
        CT_OK(cudaMemcpy(param.data(), pd, param.size(), cudaMemcpyDeviceToHost));
    double r[4] = {v[0], v[1], v[2], v[3]}, rp[5] = {0};
    CB_OK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
    CB_OK(cublasDrotmg_v2(h, &r[0], &r[1], &r[2], &r[3], rp));
    CB_OK(cublasSetPointerMode(h, pm));
    near(d1.value(pm), cd(r[0]), 4 * d.eps, "RotmgEx d1", __LINE__);
    near(d2.value(pm), cd(r[1]), 4 * d.eps, "RotmgEx d2", __LINE__);
    near(x1.value(pm), cd(r[2]), 4 * d.eps, "RotmgEx x1", __LINE__);
    for (int i = 0; i < 5; i++) { /* the flag says which of h11, h21, h12, h22 it set */
        bool set = i == 0 || rp[0] == -1.0 || (rp[0] == 0.0 && (i == 2 || i == 3)) ||
                   (rp[0] == 1.0 && (i == 1 || i == 4));
        if (set)
            near(load(d.t, param.data(), i), cd(rp[i]), 4 * d.eps, "RotmgEx param", __LINE__);
    }
    CT_OK(cudaFree(pd));
}

static void reductions(cublasHandle_t h, const dtype &d, cublasPointerMode_t pm)
{
    const strided sx{7, -2}, sy{7, 1};
    tvec x(d, sx), y(d, sy);
    for (bool conj : {false, true}) {
        tscalar r(d.t, 0);
        CB_OK(conj ? V64(cublasDotcEx, h, sx.n, x.dev, d.t, sx.inc, y.dev, d.t, sy.inc, r.at(pm), d.t, d.exec)
                   : V64(cublasDotEx, h, sx.n, x.dev, d.t, sx.inc, y.dev, d.t, sy.inc, r.at(pm), d.t, d.exec));
        cd want = 0;
        for (int i = 0; i < sx.n; i++)
            want += (conj ? std::conj(x.at(i)) : x.at(i)) * y.at(i);
        near(r.value(pm), want, 4 * d.eps, conj ? "DotcEx" : "DotEx", __LINE__);
    }
    const strided sp{7, 2};
    tvec xp(d, sp);
    double ss = 0, s1 = 0;
    for (int i = 0; i < sp.n; i++)
        ss += std::norm(xp.at(i)), s1 += std::fabs(xp.at(i).real()) + std::fabs(xp.at(i).imag());
    tscalar nrm(d.real, 0), sum(d.real, 0);
    CB_OK(V64(cublasNrm2Ex, h, sp.n, xp.dev, d.t, sp.inc, nrm.at(pm), d.real, d.real == d.t ? d.exec : d.real));
    CB_OK(V64(cublasAsumEx, h, sp.n, xp.dev, d.t, sp.inc, sum.at(pm), d.real, d.real == d.t ? d.exec : d.real));
    near(nrm.value(pm), std::sqrt(ss), 2 * d.eps, "Nrm2Ex", __LINE__);
    near(sum.value(pm), s1, 2 * d.eps, "AsumEx", __LINE__);
}

/* Magnitudes far apart (no rounding ties): the largest at 4, the smallest at 2
 * (1-based indices 5 and 3), signs mixed. */
static void extremes(cublasHandle_t h, const dtype &d, cublasPointerMode_t pm)
{
    const double mags[6] = {3, -4, 0.5, 2, -7, 1.5};
    std::vector<unsigned char> b(6 * d.size);
    for (int i = 0; i < 6; i++)
        store(d.t, b.data(), (size_t)i, cd(mags[i], d.complex ? 0.25 : 0));
    void *dx;
    CT_OK(cudaMalloc(&dx, b.size()));
    CT_OK(cudaMemcpy(dx, b.data(), b.size(), cudaMemcpyHostToDevice));
    int *dr, got[2] = {0, 0};
    CT_OK(cudaMalloc(&dr, 2 * sizeof(int)));
    int *r = pm == CUBLAS_POINTER_MODE_HOST ? got : dr; /* where the results go */
    CB_OK(blas_use64 ? index64(h, r, [&](int64_t *r64) { return cublasIamaxEx_64(h, 6, dx, d.t, 1, r64); })
                     : cublasIamaxEx(h, 6, dx, d.t, 1, r));
    CB_OK(blas_use64 ? index64(h, r + 1, [&](int64_t *r64) { return cublasIaminEx_64(h, 6, dx, d.t, 1, r64); })
                     : cublasIaminEx(h, 6, dx, d.t, 1, r + 1));
    if (pm == CUBLAS_POINTER_MODE_DEVICE)
        CT_OK(cudaMemcpy(got, dr, sizeof got, cudaMemcpyDeviceToHost));
    CT_EQ(got[0], 5);
    CT_EQ(got[1], 3);
    CT_OK(cudaFree(dr));
    CT_OK(cudaFree(dx));
}

/* Types cuBLAS does not combine, and a type it does not know. */
/* n values of type at (complex 8-bit integers or complex float): their bytes for
 * the device and the values themselves. */
static void complex_input(cudaDataType at, size_t n, std::vector<unsigned char> &bytes, std::vector<cd> &vals)
{
    bytes.assign(n * (at == CUDA_C_8I ? 2 : 8), 0);
    vals.resize(n);
    for (size_t i = 0; i < n; i++) {
        if (at == CUDA_C_8I) {
            signed char re = (signed char)(rnd() * 5), im = (signed char)(rnd() * 5);
            bytes[2 * i] = (unsigned char)re, bytes[2 * i + 1] = (unsigned char)im;
            vals[i] = cd(re, im);
        } else {
            cuComplex v = make_cuComplex((float)rnd(), (float)rnd());
            std::memcpy(&bytes[8 * i], &v, 8);
            vals[i] = get(v);
        }
    }
}

/* Cherk/Csyrk Ex and 3mEx: A of complex 8-bit integers or complex float, C complex
 * float; C = alpha op(A) op(A)^H (herk) or op(A) op(A)^T (syrk) + beta C on the
 * uplo triangle, the other triangle untouched, herk's diagonal real. */
enum rank_k_call { HERK_EX, HERK_3M, SYRK_EX, SYRK_3M };

static cublasStatus_t rank_k(cublasHandle_t h, rank_k_call c, cublasFillMode_t uplo, cublasOperation_t trans, int n,
                             int k, const void *alpha, const void *A, cudaDataType at, int lda, const void *beta,
                             void *C, int ldc)
{
    const float *ra = (const float *)alpha, *rb = (const float *)beta;
    const cuComplex *ca = (const cuComplex *)alpha, *cb = (const cuComplex *)beta;
    switch (c) {
    case HERK_EX: return V64(cublasCherkEx, h, uplo, trans, n, k, ra, A, at, lda, rb, C, CUDA_C_32F, ldc);
    case HERK_3M: return V64(cublasCherk3mEx, h, uplo, trans, n, k, ra, A, at, lda, rb, C, CUDA_C_32F, ldc);
    case SYRK_EX: return V64(cublasCsyrkEx, h, uplo, trans, n, k, ca, A, at, lda, cb, C, CUDA_C_32F, ldc);
    default: return V64(cublasCsyrk3mEx, h, uplo, trans, n, k, ca, A, at, lda, cb, C, CUDA_C_32F, ldc);
    }
}

static void rank_k_case(cublasHandle_t h, cublasPointerMode_t pm, rank_k_call c, cudaDataType at,
                        cublasFillMode_t uplo, cublasOperation_t trans)
{
    const int n = 4, k = 3, lda = 6, ldc = 5;
    const bool herk = c == HERK_EX || c == HERK_3M, notrans = trans == CUBLAS_OP_N;
    const int cols = notrans ? k : n; /* of the stored A */
    std::vector<unsigned char> A;
    std::vector<cd> a;
    complex_input(at, (size_t)lda * cols, A, a);
    std::vector<cuComplex> C(ldc * n);
    for (auto &v : C)
        v = make_cuComplex((float)rnd(), (float)rnd());
    const cd alpha = herk ? cd(0.5, 0) : cd(0.5, -0.25), beta = herk ? cd(-1, 0) : cd(-1, 0.5);
    float ra = 0.5f, rb = -1.0f;
    cuComplex ca = make_cuComplex(0.5f, -0.25f), cb = make_cuComplex(-1.0f, 0.5f);
    void *dA, *dC, *dal, *dbe;
    CT_OK(cudaMalloc(&dA, A.size()));
    CT_OK(cudaMemcpy(dA, A.data(), A.size(), cudaMemcpyHostToDevice));
    cuComplex *Cd = to_dev(C);
    dC = Cd;
    const void *hal = herk ? (const void *)&ra : (const void *)&ca, *hbe = herk ? (const void *)&rb : (const void *)&cb;
    CT_OK(cudaMalloc(&dal, 8));
    CT_OK(cudaMalloc(&dbe, 8));
    CT_OK(cudaMemcpy(dal, hal, 8, cudaMemcpyHostToDevice));
    CT_OK(cudaMemcpy(dbe, hbe, 8, cudaMemcpyHostToDevice));
    bool host = pm == CUBLAS_POINTER_MODE_HOST;
    CB_OK(rank_k(h, c, uplo, trans, n, k, host ? hal : dal, dA, at, lda, host ? hbe : dbe, dC, ldc));
    std::vector<cuComplex> got(C.size());
    CT_OK(cudaMemcpy(got.data(), Cd, got.size() * sizeof(cuComplex), cudaMemcpyDeviceToHost));
    char what[64];
    snprintf(what, sizeof what, "rank-k call %d, A type %d, fill %d, op %d", (int)c, (int)at, (int)uplo, (int)trans);
    auto op = [&](int i, int l) { /* op(A)(i, l) */
        return notrans ? a[(size_t)l * lda + i]
                       : trans == CUBLAS_OP_C ? std::conj(a[(size_t)i * lda + l]) : a[(size_t)i * lda + l];
    };
    for (int j = 0; j < n; j++)
        for (int i = 0; i < ldc; i++) {
            cd before = get(C[(size_t)j * ldc + i]), want = before;
            bool in = i < n && (uplo == CUBLAS_FILL_MODE_UPPER ? i <= j : i >= j);
            if (in) {
                cd sum = 0;
                for (int l = 0; l < k; l++)
                    sum += op(i, l) * (herk ? std::conj(op(j, l)) : op(j, l));
                want = alpha * sum + beta * before;
                if (herk && i == j)
                    want = cd(want.real(), 0);
            }
            near(get(got[(size_t)j * ldc + i]), want, 2e-5, what, __LINE__);
        }
    for (void *p : {dA, dal, dbe})
        CT_OK(cudaFree(p));
    CT_OK(cudaFree(Cd));
}

static void rank_k_updates(cublasHandle_t h, cublasPointerMode_t pm)
{
    for (rank_k_call c : {HERK_EX, HERK_3M, SYRK_EX, SYRK_3M})
        for (cudaDataType at : {CUDA_C_8I, CUDA_C_32F})
            for (cublasFillMode_t uplo : {CUBLAS_FILL_MODE_UPPER, CUBLAS_FILL_MODE_LOWER}) {
                bool herk = c == HERK_EX || c == HERK_3M;
                rank_k_case(h, pm, c, at, uplo, CUBLAS_OP_N);
                rank_k_case(h, pm, c, at, uplo, herk ? CUBLAS_OP_C : CUBLAS_OP_T);
            }
}

/* CgemmEx and Cgemm3mEx: A and B complex 8-bit integers or complex float, C complex
 * float; C = alpha op(A) op(B) + beta C over a padded C whose padding stays. */
static void gemm_ex_case(cublasHandle_t h, cublasPointerMode_t pm, bool three_m, cudaDataType t, cublasOperation_t ta,
                         cublasOperation_t tb)
{
    const int m = 3, n = 2, k = 4, lda = 5, ldb = 6, ldc = 4;
    const int acols = ta == CUBLAS_OP_N ? k : m, bcols = tb == CUBLAS_OP_N ? n : k;
    std::vector<unsigned char> A, B;
    std::vector<cd> a, b;
    complex_input(t, (size_t)lda * acols, A, a);
    complex_input(t, (size_t)ldb * bcols, B, b);
    std::vector<cuComplex> C(ldc * n);
    for (auto &v : C)
        v = make_cuComplex((float)rnd(), (float)rnd());
    const cuComplex al = make_cuComplex(0.5f, -0.25f), be = make_cuComplex(-1.0f, 0.5f);
    void *dA, *dB;
    CT_OK(cudaMalloc(&dA, A.size()));
    CT_OK(cudaMalloc(&dB, B.size()));
    CT_OK(cudaMemcpy(dA, A.data(), A.size(), cudaMemcpyHostToDevice));
    CT_OK(cudaMemcpy(dB, B.data(), B.size(), cudaMemcpyHostToDevice));
    cuComplex *dC = to_dev(C);
    scalar<cuComplex> alpha(al), beta(be);
    cublasStatus_t st = three_m ? V64(cublasCgemm3mEx, h, ta, tb, m, n, k, alpha.at(pm), dA, t, lda, dB, t, ldb,
                                      beta.at(pm), dC, CUDA_C_32F, ldc)
                                : V64(cublasCgemmEx, h, ta, tb, m, n, k, alpha.at(pm), dA, t, lda, dB, t, ldb,
                                      beta.at(pm), dC, CUDA_C_32F, ldc);
    CB_OK(st);
    std::vector<cuComplex> got = from_dev(dC, C.size());
    auto op = [](const std::vector<cd> &x, int ld, cublasOperation_t o, int i, int j) {
        return o == CUBLAS_OP_N ? x[(size_t)j * ld + i]
                                : o == CUBLAS_OP_C ? std::conj(x[(size_t)i * ld + j]) : x[(size_t)i * ld + j];
    };
    for (int j = 0; j < n; j++)
        for (int i = 0; i < ldc; i++) {
            cd want = get(C[(size_t)j * ldc + i]);
            if (i < m) {
                cd sum = 0;
                for (int l = 0; l < k; l++)
                    sum += op(a, lda, ta, i, l) * op(b, ldb, tb, l, j);
                want = get(al) * sum + get(be) * want;
            }
            near(get(got[(size_t)j * ldc + i]), want, 2e-5, three_m ? "Cgemm3mEx" : "CgemmEx", __LINE__);
        }
    CT_OK(cudaFree(dA));
    CT_OK(cudaFree(dB));
    CT_OK(cudaFree(dC));
}

static void gemm_ex(cublasHandle_t h, cublasPointerMode_t pm)
{
    for (bool three_m : {false, true})
        for (cudaDataType t : {CUDA_C_8I, CUDA_C_32F})
            for (cublasOperation_t ta : {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C})
                for (cublasOperation_t tb : {CUBLAS_OP_N, CUBLAS_OP_C})
                    gemm_ex_case(h, pm, three_m, t, ta, tb);
}

static void refusals(cublasHandle_t h)
{
    float one = 1, r[4] = {0};
    void *d;
    CT_OK(cudaMalloc(&d, 256));
    CB_ST(V64(cublasAxpyEx, h, 4, &one, CUDA_R_32F, d, CUDA_R_32F, 1, d, CUDA_R_64F, 1, CUDA_R_32F),
          CUBLAS_STATUS_NOT_SUPPORTED);
    CB_ST(V64(cublasDotEx, h, 4, d, CUDA_R_32F, 1, d, CUDA_R_32F, 1, r, CUDA_R_32F, CUDA_R_64F),
          CUBLAS_STATUS_NOT_SUPPORTED);
    CB_ST(V64(cublasNrm2Ex, h, 4, d, CUDA_C_32F, 1, r, CUDA_C_32F, CUDA_R_32F), CUBLAS_STATUS_NOT_SUPPORTED);
    CB_ST(V64(cublasCopyEx, h, 4, d, CUDA_R_32F, 1, d, CUDA_R_16F, 1), CUBLAS_STATUS_NOT_SUPPORTED);
    CB_ST(V64(cublasScalEx, h, 4, &one, (cudaDataType)999, d, CUDA_R_32F, 1, CUDA_R_32F), CUBLAS_STATUS_NOT_SUPPORTED);
    /* rank-k Ex: C must be complex float, A complex 8-bit or float; herk takes no
     * plain transpose, syrk no conjugate one */
    CB_ST(V64(cublasCherkEx, h, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, 2, 2, &one, d, CUDA_C_32F, 2, &one, d, CUDA_C_64F,
              2), CUBLAS_STATUS_NOT_SUPPORTED);
    CB_ST(V64(cublasCherk3mEx, h, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, 2, 2, &one, d, CUDA_R_32F, 2, &one, d,
              CUDA_C_32F, 2), CUBLAS_STATUS_NOT_SUPPORTED);
    CB_ST(V64(cublasCherkEx, h, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T, 2, 2, &one, d, CUDA_C_32F, 2, &one, d, CUDA_C_32F,
              2), CUBLAS_STATUS_INVALID_VALUE);
    CB_ST(V64(cublasRotEx, h, 4, d, CUDA_R_32F, 1, d, CUDA_R_32F, 1, &one, &one, CUDA_R_64F, CUDA_R_32F),
          CUBLAS_STATUS_NOT_SUPPORTED);
    CB_ST(V64(cublasRotEx, h, 4, d, CUDA_R_16F, 1, d, CUDA_R_16F, 1, &one, &one, CUDA_R_16F, CUDA_R_16F),
          CUBLAS_STATUS_NOT_SUPPORTED);
    CB_ST(V64(cublasRotmEx, h, 4, d, CUDA_C_32F, 1, d, CUDA_C_32F, 1, r, CUDA_R_32F, CUDA_C_32F),
          CUBLAS_STATUS_NOT_SUPPORTED); /* rotm is real */
    CB_ST(cublasRotgEx(h, r, r + 1, CUDA_C_32F, r + 2, r + 3, CUDA_C_32F, CUDA_C_32F), CUBLAS_STATUS_NOT_SUPPORTED);
    CB_ST(cublasRotmgEx(h, r, CUDA_R_32F, r + 1, CUDA_R_64F, r + 2, CUDA_R_32F, r + 3, CUDA_R_32F, d, CUDA_R_32F,
                        CUDA_R_32F), CUBLAS_STATUS_NOT_SUPPORTED);
    const cuComplex cone = make_cuComplex(1, 0);
    CB_ST(V64(cublasCsyrkEx, h, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_C, 2, 2, &cone, d, CUDA_C_32F, 2, &cone, d,
              CUDA_C_32F, 2), CUBLAS_STATUS_INVALID_VALUE);
    CB_ST(V64(cublasCsyrk3mEx, h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, 2, 2, &cone, d, CUDA_C_32F, 1, &cone, d,
              CUDA_C_32F, 2), CUBLAS_STATUS_INVALID_VALUE);
    /* gemm Ex: A and B alike, complex 8-bit or float; C complex float */
    CB_ST(V64(cublasCgemmEx, h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &cone, d, CUDA_C_8I, 2, d, CUDA_C_32F, 2, &cone, d,
              CUDA_C_32F, 2), CUBLAS_STATUS_NOT_SUPPORTED);
    CB_ST(V64(cublasCgemm3mEx, h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &cone, d, CUDA_C_32F, 2, d, CUDA_C_32F, 2, &cone,
              d, CUDA_C_64F, 2), CUBLAS_STATUS_NOT_SUPPORTED);
    CB_ST(V64(cublasCgemmEx, h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &cone, d, CUDA_C_32F, 1, d, CUDA_C_32F, 2, &cone, d,
              CUDA_C_32F, 2), CUBLAS_STATUS_INVALID_VALUE); /* lda < m */
    CT_OK(cudaDeviceSynchronize());
    CT_OK(cudaFree(d));
}

int main(int argc, char **argv)
{
    blas_use64 = argc > 1 && std::strcmp(argv[1], "64") == 0;
    cublasHandle_t h;
    CB_OK(cublasCreate(&h));
    for (cublasPointerMode_t pm : {CUBLAS_POINTER_MODE_HOST, CUBLAS_POINTER_MODE_DEVICE}) {
        CB_OK(cublasSetPointerMode(h, pm));
        for (const dtype &d : TYPES) {
            updates(h, d, pm);
            rotations(h, d, pm);
            rotation_ex_family(h, d, pm);
            reductions(h, d, pm);
            extremes(h, d, pm);
        }
        rank_k_updates(h, pm);
        gemm_ex(h, pm);
    }
    CB_OK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
    refusals(h);
    CB_OK(cublasDestroy(h));
    CT_OK(cudaDeviceSynchronize());
    return ct_finish(blas_use64 ? "blas_ex_64" : "blas_ex");
}
