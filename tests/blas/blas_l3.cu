/* blas_l3.cu -- self-checking program of cuBLAS level 3 in all four precisions
 * (S, D, C, Z), against references computed here in double precision: gemm and
 * gemm3m, symm/hemm, syrk/herk, syr2k/her2k, syrkx/herkx (the triangle not named
 * left as it was), trsm, trmm (out of place), geam, dgmm, the pointer-array batches of
 * gemm and trsm (each item against its own reference; Cgemm3mBatched too), the grouped batches of S
 * and D gemm and GemmEx (two groups of different shapes), tpttr and trttp, with every
 * operation, side, triangle and diagonal, beta 0 over a NaN-filled C, padded
 * leading dimensions and both pointer modes, plus argument errors. Prints `PASS
 * blas_l3`. Through the shim it checks the calls generated from
 * protocol/cublas.api; on a GPU, the same semantics on NVIDIA's cuBLAS. For real
 * data the Hermitian calls are checked as the symmetric ones (hemm as symm, herk
 * as syrk, her2k as syr2k, herkx as syrkx), gemm3m as gemm. With `64` it runs the
 * same checks through the _64 twins of the generated calls (`PASS blas_l3_64`). */
#include <limits>
#include <cstring>
#include <type_traits>
#include "blas_ref.h"

typedef cublasOperation_t op_t;
typedef cublasFillMode_t fill_t;
typedef cublasSideMode_t side_t;

/* The cuBLAS functions of one precision; with `64`, their _64 forms. */
template <typename T> struct fns3;
#define L3_GEMM(T) cublasHandle_t h, op_t ta, op_t tb, int m, int n, int k, const T *a, const T *A, int lda, \
                   const T *B, int ldb, const T *b, T *C, int ldc
#define L3_SYMM(T) cublasHandle_t h, side_t s, fill_t u, int m, int n, const T *a, const T *A, int lda, const T *B, \
                   int ldb, const T *b, T *C, int ldc
#define L3_SYRK(T, S) cublasHandle_t h, fill_t u, op_t t, int n, int k, const S *a, const T *A, int lda, const S *b, \
                      T *C, int ldc
#define L3_SYR2K(T, S) cublasHandle_t h, fill_t u, op_t t, int n, int k, const T *a, const T *A, int lda, const T *B, \
                       int ldb, const S *b, T *C, int ldc
#define L3_TRI(T) cublasHandle_t h, side_t s, fill_t u, op_t t, cublasDiagType_t d, int m, int n, const T *a, \
                  const T *A, int lda
#define FNS3(T, R, P, HEMM, HERK, HER2K, GEMM3M, HERKX)                                                                 \
    template <> struct fns3<T> {                                                                                  \
        static cublasStatus_t gemm(L3_GEMM(T)) { return V64(cublas##P##gemm_v2, h, ta, tb, m, n, k, a, A, lda, B, ldb, b, C, ldc); } \
        static cublasStatus_t gemm3m(L3_GEMM(T)) { return V64(GEMM3M, h, ta, tb, m, n, k, a, A, lda, B, ldb, b, C, ldc); } \
        static cublasStatus_t symm(L3_SYMM(T)) { return V64(cublas##P##symm_v2, h, s, u, m, n, a, A, lda, B, ldb, b, C, ldc); } \
        static cublasStatus_t hemm(L3_SYMM(T)) { return V64(HEMM, h, s, u, m, n, a, A, lda, B, ldb, b, C, ldc); }      \
        static cublasStatus_t syrk(L3_SYRK(T, T)) { return V64(cublas##P##syrk_v2, h, u, t, n, k, a, A, lda, b, C, ldc); } \
        static cublasStatus_t herk(L3_SYRK(T, R)) { return V64(HERK, h, u, t, n, k, a, A, lda, b, C, ldc); }           \
        static cublasStatus_t syr2k(L3_SYR2K(T, T))                                                               \
        { return V64(cublas##P##syr2k_v2, h, u, t, n, k, a, A, lda, B, ldb, b, C, ldc); }                              \
        static cublasStatus_t her2k(L3_SYR2K(T, R)) { return V64(HER2K, h, u, t, n, k, a, A, lda, B, ldb, b, C, ldc); } \
        static cublasStatus_t syrkx(L3_SYR2K(T, T)) { return V64(cublas##P##syrkx, h, u, t, n, k, a, A, lda, B, ldb, b, C, ldc); } \
        static cublasStatus_t herkx(L3_SYR2K(T, R)) { return V64(HERKX, h, u, t, n, k, a, A, lda, B, ldb, b, C, ldc); } \
        static cublasStatus_t trsm(L3_TRI(T), T *B, int ldb)                                                      \
        { return V64(cublas##P##trsm_v2, h, s, u, t, d, m, n, a, A, lda, B, ldb); }                                  \
        static cublasStatus_t geam(cublasHandle_t h, op_t ta, op_t tb, int m, int n, const T *a, const T *A,      \
                                   int lda, const T *b, const T *B, int ldb, T *C, int ldc)                      \
        { return V64(cublas##P##geam, h, ta, tb, m, n, a, A, lda, b, B, ldb, C, ldc); }                              \
        static cublasStatus_t trmm(L3_TRI(T), const T *B, int ldb, T *C, int ldc)                                 \
        { return V64(cublas##P##trmm_v2, h, s, u, t, d, m, n, a, A, lda, B, ldb, C, ldc); }                            \
        static cublasStatus_t dgmm(cublasHandle_t h, side_t s, int m, int n, const T *A, int lda, const T *x,     \
                                   int incx, T *C, int ldc)                                                      \
        { return V64(cublas##P##dgmm, h, s, m, n, A, lda, x, incx, C, ldc); }                                          \
        static cublasStatus_t tpttr(cublasHandle_t h, fill_t u, int n, const T *AP, T *A, int lda)                \
        { return V32(cublas##P##tpttr, h, u, n, AP, A, lda); }                                                         \
        static cublasStatus_t trttp(cublasHandle_t h, fill_t u, int n, const T *A, int lda, T *AP)                \
        { return V32(cublas##P##trttp, h, u, n, A, lda, AP); }                                                         \
        static cublasStatus_t gemm_batched(cublasHandle_t h, op_t ta, op_t tb, int m, int n, int k, const T *a,   \
                                           const T *const A[], int lda, const T *const B[], int ldb, const T *b,  \
                                           T *const C[], int ldc, int count)                                     \
        { return V64(cublas##P##gemmBatched, h, ta, tb, m, n, k, a, A, lda, B, ldb, b, C, ldc, count); }               \
        static cublasStatus_t trsm_batched(cublasHandle_t h, side_t s, fill_t u, op_t t, cublasDiagType_t d,     \
                                           int m, int n, const T *a, const T *const A[], int lda, T *const B[],   \
                                           int ldb, int count)                                                   \
        { return V64(cublas##P##trsmBatched, h, s, u, t, d, m, n, a, A, lda, B, ldb, count); }                         \
    };
FNS3(float, float, S, cublasSsymm_v2, cublasSsyrk_v2, cublasSsyr2k_v2, cublasSgemm_v2, cublasSsyrkx)
FNS3(double, double, D, cublasDsymm_v2, cublasDsyrk_v2, cublasDsyr2k_v2, cublasDgemm_v2, cublasDsyrkx)
FNS3(cuComplex, float, C, cublasChemm_v2, cublasCherk_v2, cublasCher2k_v2, cublasCgemm3m, cublasCherkx)
FNS3(cuDoubleComplex, double, Z, cublasZhemm_v2, cublasZherk_v2, cublasZher2k_v2, cublasZgemm3m, cublasZherkx)

/* A column-major matrix on the host: rows x cols in storage of leading dimension ld. */
template <typename T> struct hmat {
    int rows, cols, ld;
    std::vector<T> v;
    hmat(int r, int c, int pad = 2) : rows(r), cols(c), ld(r + pad), v(rand_vec<T>((size_t)(r + pad) * c)) {}
    cd operator()(int i, int j) const { return get(v[i + (size_t)j * ld]); }
};

/* Element (i, j) of op(M). */
template <typename T> static cd op_of(const hmat<T> &M, op_t op, int i, int j)
{
    if (op == CUBLAS_OP_N)
        return M(i, j);
    return op == CUBLAS_OP_C ? std::conj(M(j, i)) : M(j, i);
}

/* Element (i, j) of the square matrix the triangle `upper` of M stands for:
 * mirrored (herm: conjugated, diagonal real), or zero outside it (tri; unit: 1 on
 * the diagonal). */
enum tri_kind { SYM, HERM, TRI };
template <typename T> static cd tri_of(const hmat<T> &M, bool upper, tri_kind kind, bool unit, int i, int j)
{
    if (i == j)
        return unit ? cd(1) : kind == HERM ? cd(M(i, i).real(), 0) : M(i, i);
    bool stored = upper ? i < j : i > j;
    if (stored)
        return M(i, j);
    if (kind == TRI)
        return 0;
    return kind == HERM ? std::conj(M(j, i)) : M(j, i);
}


/* C before a call: random, or NaN when beta is 0 (cuBLAS must not read it then). */
template <typename T> static hmat<T> c_matrix(int m, int n, cd beta)
{
    hmat<T> C(m, n, 3);
    if (beta == 0.0)
        for (auto &e : C.v)
            e = put<T>(nan_cd());
    return C;
}

/* Compares C (m x n, leading dimension ld) with want(i, j), where keep(i, j) says
 * an element must be left exactly as it was. */
template <typename T, typename Want, typename Keep>
static void check_c(const hmat<T> &before, const std::vector<T> &got, Want want, Keep keep, double eps, int line)
{
    for (int j = 0; j < before.cols; j++)
        for (int i = 0; i < before.rows; i++) {
            cd g = get(got[i + (size_t)j * before.ld]);
            if (keep(i, j)) {
                cd b = before(i, j);
                if (!(g == b || (std::isnan(g.real()) && std::isnan(b.real()))))
                    near(g, b, 0.0, "untouched", line);
            } else {
                near(g, want(i, j), eps, "result", line);
            }
        }
}

template <typename T> static double eps3(int k) { return tol<T>() * (4 + k); }

/* Device copies of a call's three matrices, freed with it. */
template <typename T> struct dev3 {
    T *A, *B, *C;
    dev3(const hmat<T> &a, const hmat<T> &b, const hmat<T> &c) : A(to_dev(a.v)), B(to_dev(b.v)), C(to_dev(c.v)) {}
    ~dev3()
    {
        CT_OK(cudaFree(A));
        CT_OK(cudaFree(B));
        CT_OK(cudaFree(C));
    }
};

/* Compares all of C on the device with want(i, j). */
template <typename T, typename Want>
static void expect_c(const hmat<T> &C, const T *dC, Want want, double eps, int line)
{
    check_c(C, from_dev(dC, C.v.size()), want, [](int, int) { return false; }, eps, line);
}

/* ---- gemm and gemm3m ------------------------------------------------------------------ */

template <typename T> static void gemms(cublasHandle_t h, cublasPointerMode_t pm)
{
    typedef fns3<T> F;
    const int m = 5, n = 4, k = 3;
    const cd alpha(0.5, is_complex<T>() ? 0.25 : 0);
    for (op_t ta : {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C})
        for (op_t tb : {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C})
            for (cd beta : {cd(0), cd(-1, 0.5 * is_complex<T>())})
                for (bool three : {false, true}) {
                    hmat<T> A(ta == CUBLAS_OP_N ? m : k, ta == CUBLAS_OP_N ? k : m),
                        B(tb == CUBLAS_OP_N ? k : n, tb == CUBLAS_OP_N ? n : k), C = c_matrix<T>(m, n, beta);
                    dev3<T> d(A, B, C);
                    scalar<T> a(put<T>(alpha)), b(put<T>(beta));
                    CB_OK((three ? F::gemm3m : F::gemm)(h, ta, tb, m, n, k, a.at(pm), d.A, A.ld, d.B, B.ld, b.at(pm),
                                                        d.C, C.ld));
                    auto want = [&](int i, int j) {
                        cd s = beta == 0.0 ? cd(0) : beta * C(i, j);
                        for (int l = 0; l < k; l++)
                            s += alpha * op_of(A, ta, i, l) * op_of(B, tb, l, j);
                        return s;
                    };
                    expect_c(C, d.C, want, eps3<T>(k), __LINE__);
                }
}

/* ---- symm and hemm -------------------------------------------------------------------- */

template <typename T> static void symms(cublasHandle_t h, cublasPointerMode_t pm)
{
    typedef fns3<T> F;
    const int m = 5, n = 4;
    const cd alpha(0.75, is_complex<T>() ? -0.5 : 0);
    for (side_t side : {CUBLAS_SIDE_LEFT, CUBLAS_SIDE_RIGHT})
        for (bool upper : {false, true})
            for (bool herm : {false, true})
                for (cd beta : {cd(0), cd(0.5, 0)}) {
                    int ka = side == CUBLAS_SIDE_LEFT ? m : n;
                    fill_t u = upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
                    tri_kind kind = herm && is_complex<T>() ? HERM : SYM;
                    hmat<T> A(ka, ka), B(m, n), C = c_matrix<T>(m, n, beta);
                    dev3<T> d(A, B, C);
                    scalar<T> a(put<T>(alpha)), b(put<T>(beta));
                    CB_OK((herm ? F::hemm : F::symm)(h, side, u, m, n, a.at(pm), d.A, A.ld, d.B, B.ld, b.at(pm), d.C,
                                                     C.ld));
                    auto want = [&](int i, int j) {
                        cd s = beta == 0.0 ? cd(0) : beta * C(i, j);
                        for (int l = 0; l < ka; l++)
                            s += side == CUBLAS_SIDE_LEFT ? alpha * tri_of(A, upper, kind, false, i, l) * B(l, j)
                                                          : alpha * B(i, l) * tri_of(A, upper, kind, false, l, j);
                        return s;
                    };
                    expect_c(C, d.C, want, eps3<T>(ka), __LINE__);
                }
}

/* ---- syrk, herk, syr2k, her2k: one triangle of C ----------------------------------------- */

template <typename T> static void rank_k(cublasHandle_t h, cublasPointerMode_t pm)
{
    typedef fns3<T> F;
    typedef typename real_of<T>::type R;
    const int n = 5, k = 3;
    const bool cx = is_complex<T>();
    auto cj = [&](cd v) { return cx ? std::conj(v) : v; };
    for (int variant : {0, 1, 2}) /* rank k, rank 2k, and the kx forms (one product) */
        for (bool herm : {false, true})
            for (bool upper : {false, true})
                for (op_t t : {CUBLAS_OP_N, herm && cx ? CUBLAS_OP_C : CUBLAS_OP_T})
                    for (double beta : {0.0, 1.5}) {
                        fill_t u = upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
                        bool two = variant == 1, kx = variant == 2;
                        cd alpha = herm && variant == 0 ? cd(0.5) : cd(0.5, cx ? 0.25 : 0);
                        hmat<T> A(t == CUBLAS_OP_N ? n : k, t == CUBLAS_OP_N ? k : n), B = A,
                            C = c_matrix<T>(n, n, beta);
                        B.v = rand_vec<T>(B.v.size());
                        dev3<T> d(A, B, C);
                        scalar<T> a(put<T>(alpha)), bt(put<T>(beta));
                        scalar<R> ar((R)alpha.real()), br((R)beta);
                        cublasStatus_t st;
                        if (kx)
                            st = herm ? F::herkx(h, u, t, n, k, a.at(pm), d.A, A.ld, d.B, B.ld, br.at(pm), d.C, C.ld)
                                      : F::syrkx(h, u, t, n, k, a.at(pm), d.A, A.ld, d.B, B.ld, bt.at(pm), d.C, C.ld);
                        else if (two)
                            st = herm ? F::her2k(h, u, t, n, k, a.at(pm), d.A, A.ld, d.B, B.ld, br.at(pm), d.C, C.ld)
                                      : F::syr2k(h, u, t, n, k, a.at(pm), d.A, A.ld, d.B, B.ld, bt.at(pm), d.C, C.ld);
                        else
                            st = herm ? F::herk(h, u, t, n, k, ar.at(pm), d.A, A.ld, br.at(pm), d.C, C.ld)
                                      : F::syrk(h, u, t, n, k, a.at(pm), d.A, A.ld, bt.at(pm), d.C, C.ld);
                        CB_OK(st);
                        bool hc = herm && cx; /* conjugate transposes */
                        /* op(X)(i, l) of the product's left factor, and its partner (l, j) */
                        auto L = [&](const hmat<T> &X, int i, int l) {
                            return t == CUBLAS_OP_N ? X(i, l) : hc ? cj(X(l, i)) : X(l, i);
                        };
                        auto Rt = [&](const hmat<T> &X, int l, int j) {
                            return t == CUBLAS_OP_N ? (hc ? cj(X(j, l)) : X(j, l)) : X(l, j);
                        };
                        auto want = [&](int i, int j) {
                            cd s = beta == 0.0 ? cd(0) : beta * C(i, j);
                            for (int l = 0; l < k; l++)
                                s += two  ? alpha * L(A, i, l) * Rt(B, l, j) + (hc ? cj(alpha) : alpha) * L(B, i, l) * Rt(A, l, j)
                                     : kx ? alpha * L(A, i, l) * Rt(B, l, j)
                                          : alpha * L(A, i, l) * Rt(A, l, j);
                            if (hc && i == j)
                                s = cd(s.real(), 0); /* a Hermitian diagonal stays real */
                            return s;
                        };
                        auto keep = [&](int i, int j) { return upper ? i > j : i < j; };
                        check_c(C, from_dev(d.C, C.v.size()), want, keep, eps3<T>(2 * k), __LINE__);
                    }
}

/* ---- trsm, trmm ------------------------------------------------------------------------ */

template <typename T> static void triangular(cublasHandle_t h, cublasPointerMode_t pm)
{
    typedef fns3<T> F;
    const int m = 5, n = 4;
    const cd alpha(1.5, is_complex<T>() ? 0.5 : 0);
    for (side_t side : {CUBLAS_SIDE_LEFT, CUBLAS_SIDE_RIGHT})
        for (bool upper : {false, true})
            for (bool unit : {false, true})
                for (op_t t : {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C}) {
                    int ka = side == CUBLAS_SIDE_LEFT ? m : n;
                    fill_t u = upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
                    cublasDiagType_t d = unit ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT;
                    hmat<T> A(ka, ka), B(m, n), C(m, n, 1);
                    for (int i = 0; i < ka; i++) /* well conditioned */
                        A.v[i + (size_t)i * A.ld] = put<T>(A(i, i) + cd(4.0 + ka, 0));
                    auto opA = [&](int i, int j) {
                        cd v = t == CUBLAS_OP_N ? tri_of(A, upper, TRI, unit, i, j) : tri_of(A, upper, TRI, unit, j, i);
                        return t == CUBLAS_OP_C ? std::conj(v) : v;
                    };
                    /* product(X)(i, j): op(A) X or X op(A) */
                    auto product = [&](auto X, int i, int j) {
                        cd s = 0;
                        for (int l = 0; l < ka; l++)
                            s += side == CUBLAS_SIDE_LEFT ? opA(i, l) * X(l, j) : X(i, l) * opA(l, j);
                        return s;
                    };
                    dev3<T> dv(A, B, C);
                    scalar<T> a(put<T>(alpha));
                    CB_OK(F::trmm(h, side, u, t, d, m, n, a.at(pm), dv.A, A.ld, dv.B, B.ld, dv.C, C.ld));
                    std::vector<T> got = from_dev(dv.C, C.v.size()), b_after = from_dev(dv.B, B.v.size());
                    auto Bf = [&](int i, int j) { return B(i, j); };
                    for (int j = 0; j < n; j++)
                        for (int i = 0; i < m; i++) {
                            near(get(got[i + (size_t)j * C.ld]), alpha * product(Bf, i, j), eps3<T>(ka), "trmm",
                                 __LINE__);
                            near(get(b_after[i + (size_t)j * B.ld]), B(i, j), 0.0, "trmm B", __LINE__);
                        }
                    CB_OK(F::trsm(h, side, u, t, d, m, n, a.at(pm), dv.A, A.ld, dv.B, B.ld)); /* op(A) X = alpha B */
                    std::vector<T> x = from_dev(dv.B, B.v.size());
                    auto Xf = [&](int i, int j) { return get(x[i + (size_t)j * B.ld]); };
                    for (int j = 0; j < n; j++)
                        for (int i = 0; i < m; i++)
                            near(product(Xf, i, j), alpha * B(i, j), eps3<T>(4 * ka), "trsm", __LINE__);
                }
}

/* ---- geam ---------------------------------------------------------------------------- */

/* C = alpha op(A) + beta op(B) for every pair of operations, over a NaN-filled C
 * (never read); in host pointer mode also a zero alpha (beta) with A (B) NULL, in
 * place (C is A), and in place with a transposed A, which cuBLAS refuses. */
template <typename T> static void geams(cublasHandle_t h, cublasPointerMode_t pm)
{
    const int m = 3, n = 4;
    const cd alpha = is_complex<T>() ? cd(0.5, -1) : cd(0.5), beta = is_complex<T>() ? cd(-1.5, 0.25) : cd(-1.5);
    scalar<T> a(put<T>(alpha)), b(put<T>(beta)), zero(put<T>(0.0));
    for (op_t ta : {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C})
        for (op_t tb : {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C}) {
            hmat<T> A(ta == CUBLAS_OP_N ? m : n, ta == CUBLAS_OP_N ? n : m), B(tb == CUBLAS_OP_N ? m : n,
                                                                               tb == CUBLAS_OP_N ? n : m, 1);
            hmat<T> C = c_matrix<T>(m, n, 0.0);
            dev3<T> dv(A, B, C);
            CB_OK(fns3<T>::geam(h, ta, tb, m, n, a.at(pm), dv.A, A.ld, b.at(pm), dv.B, B.ld, dv.C, C.ld));
            expect_c(C, dv.C, [&](int i, int j) { return alpha * op_of(A, ta, i, j) + beta * op_of(B, tb, i, j); },
                     eps3<T>(2), __LINE__);
        }
    if (pm != CUBLAS_POINTER_MODE_HOST)
        return;
    hmat<T> A(m, n), B(n, m), C = c_matrix<T>(m, n, 0.0);
    dev3<T> dv(A, B, C);
    CB_OK(fns3<T>::geam(h, CUBLAS_OP_N, CUBLAS_OP_C, m, n, &zero.host, nullptr, A.ld, &b.host, dv.B, B.ld, dv.C, C.ld));
    expect_c(C, dv.C, [&](int i, int j) { return beta * op_of(B, CUBLAS_OP_C, i, j); }, eps3<T>(1), __LINE__);
    CB_OK(fns3<T>::geam(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, &a.host, dv.A, A.ld, &zero.host, nullptr, C.ld, dv.C, C.ld));
    expect_c(C, dv.C, [&](int i, int j) { return alpha * A(i, j); }, eps3<T>(1), __LINE__);
    hmat<T> D(m, n); /* in place: D = alpha D + beta B^T */
    T *dD = to_dev(D.v);
    CB_OK(fns3<T>::geam(h, CUBLAS_OP_N, CUBLAS_OP_T, m, n, &a.host, dD, D.ld, &b.host, dv.B, B.ld, dD, D.ld));
    expect_c(D, dD, [&](int i, int j) { return alpha * D(i, j) + beta * op_of(B, CUBLAS_OP_T, i, j); }, eps3<T>(2),
             __LINE__);
    hmat<T> S(n, n);
    T *dS = to_dev(S.v);
    CB_ST(fns3<T>::geam(h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, &a.host, dS, S.ld, &b.host, dS, S.ld, dS, S.ld),
          CUBLAS_STATUS_INVALID_VALUE); /* in place needs op N */
    CB_ST(fns3<T>::geam(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, &a.host, dv.A, m - 1, &b.host, dv.B, B.ld, dv.C, C.ld),
          CUBLAS_STATUS_INVALID_VALUE); /* lda < m */
    CT_OK(cudaFree(dD));
    CT_OK(cudaFree(dS));
}

/* ---- pointer-array batches of gemm and trsm --------------------------------------------- */

/* Device copies of a batch of host matrices, and the device array of their pointers. */
template <typename T> struct dev_batch {
    std::vector<T *> items;
    T **array;
    explicit dev_batch(const std::vector<hmat<T>> &ms)
    {
        for (auto &m : ms)
            items.push_back(to_dev(m.v));
        array = to_dev(items);
    }
    ~dev_batch()
    {
        for (T *p : items)
            CT_OK(cudaFree(p));
        CT_OK(cudaFree(array));
    }
};

/* gemmBatched, or (three_m, complex float only) Cgemm3mBatched. */
template <typename T>
static cublasStatus_t gemm_batched_as(bool three_m, cublasHandle_t h, op_t ta, op_t tb, int m, int n, int k,
                                      const T *a, const T *const A[], int lda, const T *const B[], int ldb, const T *b,
                                      T *const C[], int ldc, int count)
{
    if constexpr (std::is_same<T, cuComplex>::value)
        if (three_m)
            return V64(cublasCgemm3mBatched, h, ta, tb, m, n, k, a, A, lda, B, ldb, b, C, ldc, count);
    return fns3<T>::gemm_batched(h, ta, tb, m, n, k, a, A, lda, B, ldb, b, C, ldc, count);
}

template <typename T> static void gemm_batches(cublasHandle_t h, cublasPointerMode_t pm)
{
    const int m = 4, n = 3, k = 2, count = 3;
    const cd alpha(0.5, is_complex<T>() ? 0.25 : 0);
    for (int runs = std::is_same<T, cuComplex>::value ? 2 : 1, run = 0; run < runs; run++) /* run 1: 3m */
    for (op_t ta : {CUBLAS_OP_N, CUBLAS_OP_C})
        for (op_t tb : {CUBLAS_OP_N, CUBLAS_OP_T})
            for (cd beta : {cd(0), cd(-1, 0.5 * is_complex<T>())}) {
                std::vector<hmat<T>> A, B, C;
                for (int b = 0; b < count; b++) {
                    A.emplace_back(ta == CUBLAS_OP_N ? m : k, ta == CUBLAS_OP_N ? k : m);
                    B.emplace_back(tb == CUBLAS_OP_N ? k : n, tb == CUBLAS_OP_N ? n : k);
                    C.push_back(c_matrix<T>(m, n, beta));
                }
                dev_batch<T> dA(A), dB(B), dC(C);
                scalar<T> a(put<T>(alpha)), bt(put<T>(beta));
                CB_OK(gemm_batched_as<T>(run == 1, h, ta, tb, m, n, k, a.at(pm), dA.array, A[0].ld, dB.array, B[0].ld,
                                         bt.at(pm), dC.array, C[0].ld, count));
                for (int b = 0; b < count; b++) {
                    auto want = [&](int i, int j) {
                        cd s = beta == 0.0 ? cd(0) : beta * C[b](i, j);
                        for (int l = 0; l < k; l++)
                            s += alpha * op_of(A[b], ta, i, l) * op_of(B[b], tb, l, j);
                        return s;
                    };
                    expect_c(C[b], dC.items[b], want, eps3<T>(k), __LINE__);
                }
            }
}

/* ---- grouped batches (real types): two groups of different shapes ------------------ */

template <typename T> struct grouped_fns;
#define GROUPED_ARGS(A, B, C) h, ta, tb, m, n, k, a, A, lda, B, ldb, b, C, ldc, count, size
#define GROUPED_EX_ARGS(TYPE, COMPUTE)                                                                             \
    h, ta, tb, m, n, k, a, (const void *const *)A, TYPE, lda, (const void *const *)B, TYPE, ldb, b,              \
        (void *const *)C, TYPE, ldc, count, size, COMPUTE
#define GROUPED_FNS(T, P, TYPE, COMPUTE)                                                                            \
    template <> struct grouped_fns<T> {                                                                             \
        template <typename I>                                                                                       \
        static cublasStatus_t call(cublasHandle_t h, bool ex, const op_t *ta, const op_t *tb, const I *m,           \
                                   const I *n, const I *k, const T *a, T *const *A, const I *lda, T *const *B,      \
                                   const I *ldb, const T *b, T *const *C, const I *ldc, I count, const I *size)    \
        {                                                                                                           \
            if constexpr (sizeof(I) == 8)                                                                           \
                return ex ? cublasGemmGroupedBatchedEx_64(GROUPED_EX_ARGS(TYPE, COMPUTE))                           \
                          : cublas##P##gemmGroupedBatched_64(GROUPED_ARGS((const T *const *)A, (const T *const *)B, C)); \
            else                                                                                                    \
                return ex ? cublasGemmGroupedBatchedEx(GROUPED_EX_ARGS(TYPE, COMPUTE))                              \
                          : cublas##P##gemmGroupedBatched(GROUPED_ARGS((const T *const *)A, (const T *const *)B, C)); \
        }                                                                                                           \
    };
GROUPED_FNS(float, S, CUDA_R_32F, CUBLAS_COMPUTE_32F)
GROUPED_FNS(double, D, CUDA_R_64F, CUBLAS_COMPUTE_64F)

/* Runs the grouped call with int or (the `64` mode) int64_t per-group arrays. */
template <typename T, typename I>
static cublasStatus_t grouped_as(cublasHandle_t h, bool ex, const op_t *ta, const op_t *tb, const int *v, const T *a,
                                 T *const *A, T *const *B, const T *b, T *const *C, int count)
{
    std::vector<I> w(v, v + 7 * count); /* m, n, k, lda, ldb, ldc, size per group, in rows of `count` */
    const I *r = w.data();
    return grouped_fns<T>::template call<I>(h, ex, ta, tb, r, r + count, r + 2 * count, a, A, r + 3 * count, B,
                                            r + 4 * count, b, C, r + 5 * count, (I)count, r + 6 * count);
}

template <typename T> static void grouped(cublasHandle_t h, cublasPointerMode_t pm, bool ex)
{
    const op_t ta[2] = {CUBLAS_OP_N, CUBLAS_OP_T}, tb[2] = {CUBLAS_OP_T, CUBLAS_OP_N};
    const int m[2] = {3, 2}, n[2] = {2, 3}, k[2] = {4, 2}, size[2] = {2, 1};
    const T alpha[2] = {(T)0.5, (T)2}, beta[2] = {(T)-1, (T)0};
    std::vector<hmat<T>> A, B, C;
    std::vector<int> group;
    for (int g = 0; g < 2; g++)
        for (int b = 0; b < size[g]; b++) {
            A.emplace_back(ta[g] == CUBLAS_OP_N ? m[g] : k[g], ta[g] == CUBLAS_OP_N ? k[g] : m[g]);
            B.emplace_back(tb[g] == CUBLAS_OP_N ? k[g] : n[g], tb[g] == CUBLAS_OP_N ? n[g] : k[g]);
            C.push_back(c_matrix<T>(m[g], n[g], cd(beta[g])));
            group.push_back(g);
        }
    int v[14];
    for (int g = 0; g < 2; g++) {
        int first = g == 0 ? 0 : size[0];
        int row[7] = {m[g], n[g], k[g], A[first].ld, B[first].ld, C[first].ld, size[g]};
        for (int f = 0; f < 7; f++)
            v[f * 2 + g] = row[f];
    }
    dev_batch<T> dA(A), dB(B), dC(C);
    T *da = to_dev(std::vector<T>(alpha, alpha + 2)), *db = to_dev(std::vector<T>(beta, beta + 2));
    const T *al = pm == CUBLAS_POINTER_MODE_HOST ? alpha : da, *be = pm == CUBLAS_POINTER_MODE_HOST ? beta : db;
    auto run = [&](const int *args) {
        return blas_use64 ? grouped_as<T, int64_t>(h, ex, ta, tb, args, al, dA.array, dB.array, be, dC.array, 2)
                          : grouped_as<T, int>(h, ex, ta, tb, args, al, dA.array, dB.array, be, dC.array, 2);
    };
    CB_OK(run(v));
    for (size_t p = 0; p < C.size(); p++) {
        int g = group[p];
        auto want = [&](int i, int j) {
            cd s = beta[g] == (T)0 ? cd(0) : cd(beta[g]) * C[p](i, j);
            for (int l = 0; l < k[g]; l++)
                s += cd(alpha[g]) * op_of(A[p], ta[g], i, l) * op_of(B[p], tb[g], l, j);
            return s;
        };
        expect_c(C[p], dC.items[p], want, eps3<T>(k[g]), __LINE__);
    }
    /* a bad group refuses the whole call: nothing runs */
    int bad[14];
    std::memcpy(bad, v, sizeof bad);
    bad[3 * 2 + 1] = 0; /* group 1's lda */
    CB_ST(run(bad), CUBLAS_STATUS_INVALID_VALUE);
    CT_OK(cudaFree(da));
    CT_OK(cudaFree(db));
}

template <typename T> static void grouped_batches(cublasHandle_t, cublasPointerMode_t) {}
template <> void grouped_batches<float>(cublasHandle_t h, cublasPointerMode_t pm)
{
    grouped<float>(h, pm, false);
    grouped<float>(h, pm, true);
}
template <> void grouped_batches<double>(cublasHandle_t h, cublasPointerMode_t pm)
{
    grouped<double>(h, pm, false);
    grouped<double>(h, pm, true);
}

template <typename T> static void trsm_batches(cublasHandle_t h, cublasPointerMode_t pm)
{
    const int m = 4, n = 3, count = 3;
    const cd alpha(1.5, is_complex<T>() ? 0.5 : 0);
    for (side_t side : {CUBLAS_SIDE_LEFT, CUBLAS_SIDE_RIGHT})
        for (bool upper : {false, true})
            for (op_t t : {CUBLAS_OP_N, CUBLAS_OP_C}) {
                int ka = side == CUBLAS_SIDE_LEFT ? m : n;
                std::vector<hmat<T>> A, B;
                for (int b = 0; b < count; b++) {
                    A.emplace_back(ka, ka);
                    for (int i = 0; i < ka; i++) /* well conditioned */
                        A[b].v[i + (size_t)i * A[b].ld] = put<T>(A[b](i, i) + cd(4.0 + ka, 0));
                    B.emplace_back(m, n);
                }
                dev_batch<T> dA(A), dB(B);
                scalar<T> a(put<T>(alpha));
                CB_OK(fns3<T>::trsm_batched(h, side, upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER, t,
                                            CUBLAS_DIAG_NON_UNIT, m, n, a.at(pm), dA.array, A[0].ld, dB.array,
                                            B[0].ld, count));
                for (int b = 0; b < count; b++) {
                    std::vector<T> x = from_dev(dB.items[b], B[b].v.size());
                    auto opA = [&](int i, int j) {
                        cd v = t == CUBLAS_OP_N ? tri_of(A[b], upper, TRI, false, i, j)
                                                : tri_of(A[b], upper, TRI, false, j, i);
                        return t == CUBLAS_OP_C ? std::conj(v) : v;
                    };
                    for (int j = 0; j < n; j++)
                        for (int i = 0; i < m; i++) {
                            cd s = 0;
                            for (int l = 0; l < ka; l++)
                                s += side == CUBLAS_SIDE_LEFT ? opA(i, l) * get(x[l + (size_t)j * B[b].ld])
                                                              : get(x[i + (size_t)l * B[b].ld]) * opA(l, j);
                            near(s, alpha * B[b](i, j), eps3<T>(4 * ka), "trsm batch", __LINE__);
                        }
                }
            }
}

/* ---- dgmm ------------------------------------------------------------------------------- */

template <typename T> static void dgmms(cublasHandle_t h)
{
    typedef fns3<T> F;
    const int m = 5, n = 4;
    for (side_t side : {CUBLAS_SIDE_LEFT, CUBLAS_SIDE_RIGHT})
        for (int incx : {1, 2}) {
            int len = side == CUBLAS_SIDE_LEFT ? m : n;
            hmat<T> A(m, n), C(m, n, 1);
            std::vector<T> x = rand_vec<T>((size_t)(len - 1) * incx + 1);
            T *dA = to_dev(A.v), *dx = to_dev(x), *dC = to_dev(C.v);
            CB_OK(F::dgmm(h, side, m, n, dA, A.ld, dx, incx, dC, C.ld));
            std::vector<T> got = from_dev(dC, C.v.size());
            for (int j = 0; j < n; j++)
                for (int i = 0; i < m; i++)
                    near(get(got[i + (size_t)j * C.ld]),
                         A(i, j) * get(x[(size_t)(side == CUBLAS_SIDE_LEFT ? i : j) * incx]), tol<T>(), "dgmm",
                         __LINE__);
            CT_OK(cudaFree(dA));
            CT_OK(cudaFree(dx));
            CT_OK(cudaFree(dC));
        }
}

/* ---- tpttr, trttp: a packed triangle to full format and back ---------------------------- */

/* Index in a packed triangle (column-major) of element (i, j) of the triangle. */
static size_t packed_at(bool upper, int n, int i, int j)
{
    return upper ? (size_t)i + (size_t)j * (j + 1) / 2 : (size_t)i + (size_t)j * (2 * n - j - 1) / 2;
}

template <typename T> static void packs(cublasHandle_t h)
{
    typedef fns3<T> F;
    const int n = 5;
    for (bool upper : {false, true}) {
        fill_t u = upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
        hmat<T> A(n, n);
        std::vector<T> ap = rand_vec<T>((size_t)n * (n + 1) / 2);
        T *dA = to_dev(A.v), *dAP = to_dev(ap);
        CB_OK(F::tpttr(h, u, n, dAP, dA, A.ld));
        std::vector<T> full = from_dev(dA, A.v.size());
        for (int j = 0; j < n; j++)
            for (int i = 0; i < A.ld; i++) {
                bool in = i < n && (upper ? i <= j : i >= j);
                cd want = in ? get(ap[packed_at(upper, n, i, j)]) : get(A.v[i + (size_t)j * A.ld]);
                near(get(full[i + (size_t)j * A.ld]), want, 0.0, "tpttr", __LINE__);
            }
        hmat<T> B(n, n);
        T *dB = to_dev(B.v);
        CB_OK(F::trttp(h, u, n, dB, B.ld, dAP));
        std::vector<T> packed = from_dev(dAP, ap.size());
        for (int j = 0; j < n; j++)
            for (int i = upper ? 0 : j; i <= (upper ? j : n - 1); i++)
                near(get(packed[packed_at(upper, n, i, j)]), B(i, j), 0.0, "trttp", __LINE__);
        CB_ST(F::tpttr(h, u, n, dAP, dA, n - 1), CUBLAS_STATUS_INVALID_VALUE);
        CB_ST(F::trttp(h, (fill_t)9, n, dB, B.ld, dAP), CUBLAS_STATUS_INVALID_VALUE);
        CT_OK(cudaFree(dA));
        CT_OK(cudaFree(dAP));
        CT_OK(cudaFree(dB));
    }
}

/* Arguments cuBLAS refuses at once. */
template <typename T> static void bad_arguments(cublasHandle_t h)
{
    typedef fns3<T> F;
    typedef typename real_of<T>::type R;
    T one = put<T>(1.0), *d = to_dev(rand_vec<T>(64));
    R rone = 1;
    CB_ST(F::symm(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, 4, 5, &one, d, 4, d, 4, &one, d, 4),
          CUBLAS_STATUS_INVALID_VALUE); /* A is 5 x 5: lda 4 is short */
    CB_ST(F::syrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, 4, 2, &one, d, 3, &one, d, 4), CUBLAS_STATUS_INVALID_VALUE);
    CB_ST(F::trmm(h, (side_t)3, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT, 2, 2, &one, d, 2, d, 2, d, 2),
          CUBLAS_STATUS_INVALID_VALUE);
    CB_ST(F::dgmm(h, CUBLAS_SIDE_LEFT, 4, 4, d, 4, d, 1, d, 3), CUBLAS_STATUS_INVALID_VALUE);
    if (is_complex<T>()) {
        CB_ST(F::herk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, 2, 2, &rone, d, 2, &rone, d, 2),
              CUBLAS_STATUS_INVALID_VALUE); /* herk takes N or C */
        CB_ST(F::syrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_C, 2, 2, &one, d, 2, &one, d, 2),
              CUBLAS_STATUS_INVALID_VALUE); /* complex syrk takes N or T */
    }
    CB_OK(F::gemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 0, 4, 4, &one, d, 1, d, 4, &one, d, 1)); /* nothing to do */
    T **arr = to_dev(std::vector<T *>(2, d));
    CB_ST(F::gemm_batched(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, arr, 2, arr, 2, &one, arr, 2, -1),
          CUBLAS_STATUS_INVALID_VALUE);
    CB_ST(F::gemm_batched(h, CUBLAS_OP_T, CUBLAS_OP_N, 2, 2, 3, &one, arr, 2, arr, 3, &one, arr, 2, 2),
          CUBLAS_STATUS_INVALID_VALUE); /* op(A) is 2 x 3 stored 3 x 2: lda 2 is short */
    CB_ST(F::trsm_batched(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT, 3, 2, &one, arr,
                          2, arr, 3, 2),
          CUBLAS_STATUS_INVALID_VALUE); /* A is 3 x 3: lda 2 is short */
    CB_OK(F::trsm_batched(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT, 2, 2, &one, arr,
                          2, arr, 2, 0)); /* an empty batch */
    CT_OK(cudaFree(arr));
    CT_OK(cudaFree(d));
}

template <typename T> static void precision(cublasHandle_t h)
{
    for (cublasPointerMode_t pm : {CUBLAS_POINTER_MODE_HOST, CUBLAS_POINTER_MODE_DEVICE}) {
        CB_OK(cublasSetPointerMode(h, pm));
        gemms<T>(h, pm);
        symms<T>(h, pm);
        rank_k<T>(h, pm);
        triangular<T>(h, pm);
        geams<T>(h, pm);
        gemm_batches<T>(h, pm);
        grouped_batches<T>(h, pm);
        trsm_batches<T>(h, pm);
    }
    CB_OK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
    dgmms<T>(h);
    packs<T>(h);
    bad_arguments<T>(h);
}

int main(int argc, char **argv)
{
    blas_use64 = argc > 1 && std::strcmp(argv[1], "64") == 0;
    return blas_main(blas_use64 ? "blas_l3_64" : "blas_l3",
                     [](cublasHandle_t h, auto t) { precision<typename decltype(t)::type>(h); });
}
