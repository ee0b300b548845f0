/* blas_l2.cu -- self-checking program of cuBLAS level 2 in all four precisions
 * (S, D, C, Z), against references computed here in double precision from the
 * dense matrix each storage stands for: matrix-vector products (gemv, gbmv,
 * symv/hemv, sbmv/hbmv, spmv/hpmv; beta 0 over a NaN-filled y included), rank
 * updates (ger/geru/gerc, syr/her, syr2/her2, spr/hpr, spr2/hpr2) and triangular
 * products and solves (trmv, tbmv, tpmv, trsv, tbsv, tpsv), and in C and Z the
 * complex symmetric (unconjugated) symv, syr and syr2, with every operation
 * and triangle, unit and non-unit diagonals, mixed-sign increments and both pointer
 * modes. Prints `PASS blas_l2`. Through the shim it checks the calls generated
 * from protocol/cublas.api; on a GPU, the same semantics on NVIDIA's cuBLAS. With
 * `64` it runs the same checks through the calls' _64 twins (`PASS blas_l2_64`). */
#include <algorithm>
#include <limits>
#include <cstring>
#include <type_traits>
#include "blas_ref.h"

/* How a matrix is stored: general, general band (kl, ku), a triangle of a full
 * square, a band triangle (k) or a packed triangle; and what the other triangle
 * is: the mirror (symmetric), its conjugate (Hermitian) or zero (triangular). */
enum store { GE, GB, TR, TB, TP };
enum other { NONE, SYM, HERM, TRI };

struct shape {
    store st;
    other oth;
    int m, n, kl, ku, ld;
    bool upper, unit;

    size_t len() const
    {
        if (st == TP)
            return (size_t)n * (n + 1) / 2;
        return (size_t)ld * n;
    }
    /* Whether (i, j) is stored, and where. */
    bool index(int i, int j, size_t *at) const
    {
        switch (st) {
        case GE: *at = i + (size_t)j * ld; return true;
        case GB: *at = (ku + i - j) + (size_t)j * ld; return i - j <= kl && j - i <= ku;
        case TR: *at = i + (size_t)j * ld; return upper ? i <= j : i >= j;
        case TB:
            *at = upper ? (kl + i - j) + (size_t)j * ld : (i - j) + (size_t)j * ld;
            return upper ? (i <= j && j - i <= kl) : (i >= j && i - j <= kl);
        case TP:
            *at = upper ? i + (size_t)j * (j + 1) / 2 : i + (size_t)j * (2 * n - j - 1) / 2;
            return upper ? i <= j : i >= j;
        }
        return false;
    }
    /* Element (i, j) of the matrix the storage stands for. */
    template <typename T> cd at(const std::vector<T> &A, int i, int j) const
    {
        size_t k;
        if (i == j && unit)
            return 1.0;
        if (index(i, j, &k))
            return (i == j && oth == HERM) ? cd(get(A[k]).real(), 0) : get(A[k]);
        if (oth == SYM && index(j, i, &k))
            return get(A[k]);
        if (oth == HERM && index(j, i, &k))
            return std::conj(get(A[k]));
        return 0.0;
    }
};

/* Element (i, j) of op(M). */
template <typename T> static cd op_at(const shape &s, const std::vector<T> &A, cublasOperation_t op, int i, int j)
{
    if (op == CUBLAS_OP_N)
        return s.at(A, i, j);
    cd v = s.at(A, j, i);
    return op == CUBLAS_OP_C ? std::conj(v) : v;
}

/* A matrix for shape s: random, its diagonal made large so solves are well posed. */
template <typename T> static std::vector<T> rand_mat(const shape &s)
{
    std::vector<T> A = rand_vec<T>(s.len());
    size_t k;
    for (int i = 0; i < std::min(s.m, s.n); i++)
        if (s.index(i, i, &k))
            A[k] = put<T>(get(A[k]) + cd(4.0 + s.n, 0));
    return A;
}

/* ---- the cuBLAS functions of one precision ------------------------------------------ */

template <typename T> struct fns2;
#define MV_ARGS(T) cublasHandle_t h, cublasFillMode_t u, int n, const T *a
#define FNS2(T, R, P, SY, SB, SP, SYR, SYR2, SPR, SPR2, GER, GERC)                                                \
    template <> struct fns2<T> {                                                                                 \
        static cublasStatus_t gemv(cublasHandle_t h, cublasOperation_t op, int m, int n, const T *a, const T *A,  \
                                   int lda, const T *x, int ix, const T *b, T *y, int iy)                       \
        { return V64(cublas##P##gemv_v2, h, op, m, n, a, A, lda, x, ix, b, y, iy); }                                \
        static cublasStatus_t gbmv(cublasHandle_t h, cublasOperation_t op, int m, int n, int kl, int ku,        \
                                   const T *a, const T *A, int lda, const T *x, int ix, const T *b, T *y, int iy) \
        { return V64(cublas##P##gbmv_v2, h, op, m, n, kl, ku, a, A, lda, x, ix, b, y, iy); }                        \
        static cublasStatus_t symv(MV_ARGS(T), const T *A, int lda, const T *x, int ix, const T *b, T *y, int iy) \
        { return V64(cublas##P##SY##mv_v2, h, u, n, a, A, lda, x, ix, b, y, iy); }                                  \
        static cublasStatus_t sbmv(cublasHandle_t h, cublasFillMode_t u, int n, int k, const T *a, const T *A,    \
                                   int lda, const T *x, int ix, const T *b, T *y, int iy)                       \
        { return V64(cublas##P##SB##mv_v2, h, u, n, k, a, A, lda, x, ix, b, y, iy); }                              \
        static cublasStatus_t spmv(MV_ARGS(T), const T *AP, const T *x, int ix, const T *b, T *y, int iy)       \
        { return V64(cublas##P##SP##mv_v2, h, u, n, a, AP, x, ix, b, y, iy); }                                      \
        static cublasStatus_t syr(cublasHandle_t h, cublasFillMode_t u, int n, const R *a, const T *x, int ix,   \
                                  T *A, int lda)                                                               \
        { return V64(SYR, h, u, n, a, x, ix, A, lda); }                                                             \
        static cublasStatus_t syr2(MV_ARGS(T), const T *x, int ix, const T *y, int iy, T *A, int lda)           \
        { return V64(SYR2, h, u, n, a, x, ix, y, iy, A, lda); }                                                     \
        static cublasStatus_t spr(cublasHandle_t h, cublasFillMode_t u, int n, const R *a, const T *x, int ix,   \
                                  T *AP)                                                                       \
        { return V64(SPR, h, u, n, a, x, ix, AP); }                                                                 \
        static cublasStatus_t spr2(MV_ARGS(T), const T *x, int ix, const T *y, int iy, T *AP)                   \
        { return V64(SPR2, h, u, n, a, x, ix, y, iy, AP); }                                                         \
        static cublasStatus_t ger(cublasHandle_t h, int m, int n, const T *a, const T *x, int ix, const T *y,    \
                                  int iy, T *A, int lda, bool conj)                                             \
        { return conj ? V64(GERC, h, m, n, a, x, ix, y, iy, A, lda) : V64(GER, h, m, n, a, x, ix, y, iy, A, lda); }      \
        static cublasStatus_t trmv(cublasHandle_t h, cublasFillMode_t u, cublasOperation_t op, cublasDiagType_t d, \
                                   int n, const T *A, int lda, T *x, int ix, bool solve)                        \
        { return solve ? V64(cublas##P##trsv_v2, h, u, op, d, n, A, lda, x, ix)                                     \
                       : V64(cublas##P##trmv_v2, h, u, op, d, n, A, lda, x, ix); }                                  \
        static cublasStatus_t tbmv(cublasHandle_t h, cublasFillMode_t u, cublasOperation_t op, cublasDiagType_t d, \
                                   int n, int k, const T *A, int lda, T *x, int ix, bool solve)                 \
        { return solve ? V64(cublas##P##tbsv_v2, h, u, op, d, n, k, A, lda, x, ix)                                  \
                       : V64(cublas##P##tbmv_v2, h, u, op, d, n, k, A, lda, x, ix); }                               \
        static cublasStatus_t tpmv(cublasHandle_t h, cublasFillMode_t u, cublasOperation_t op, cublasDiagType_t d, \
                                   int n, const T *AP, T *x, int ix, bool solve)                                \
        { return solve ? V64(cublas##P##tpsv_v2, h, u, op, d, n, AP, x, ix)                                         \
                       : V64(cublas##P##tpmv_v2, h, u, op, d, n, AP, x, ix); }                                      \
    };
FNS2(float, float, S, sy, sb, sp, cublasSsyr_v2, cublasSsyr2_v2, cublasSspr_v2, cublasSspr2_v2, cublasSger_v2,
     cublasSger_v2)
FNS2(double, double, D, sy, sb, sp, cublasDsyr_v2, cublasDsyr2_v2, cublasDspr_v2, cublasDspr2_v2, cublasDger_v2,
     cublasDger_v2)
FNS2(cuComplex, float, C, he, hb, hp, cublasCher_v2, cublasCher2_v2, cublasChpr_v2, cublasChpr2_v2, cublasCgeru_v2,
     cublasCgerc_v2)
FNS2(cuDoubleComplex, double, Z, he, hb, hp, cublasZher_v2, cublasZher2_v2, cublasZhpr_v2, cublasZhpr2_v2,
     cublasZgeru_v2, cublasZgerc_v2)

/* ---- products: y = alpha op(M) x + beta y ------------------------------------------- */

/* One product call on device data: the case's shape and the call itself. */
template <typename T> struct mv_case {
    shape s;
    cublasOperation_t op;
    strided sx, sy;
};

template <typename T, typename Call>
static void check_mv(const mv_case<T> &c, cublasPointerMode_t pm, cd alpha, cd beta, Call call, int line)
{
    std::vector<T> A = rand_mat<T>(c.s), x = rand_vec<T>(c.sx.len()), y = rand_vec<T>(c.sy.len());
    if (beta == 0.0) /* beta 0: y is not read, NaN or not */
        for (auto &v : y)
            v = put<T>(cd(std::numeric_limits<double>::quiet_NaN(), 0));
    T *dA = to_dev(A), *dx = to_dev(x), *dy = to_dev(y);
    scalar<T> a(put<T>(alpha)), b(put<T>(beta));
    CB_OK(call(dA, dx, dy, a.at(pm), b.at(pm)));
    std::vector<T> got = from_dev(dy, y.size());
    for (int i = 0; i < c.sy.n; i++) {
        cd want = beta == 0.0 ? cd(0) : beta * get(y[c.sy.at(i)]);
        for (int j = 0; j < c.sx.n; j++)
            want += alpha * op_at(c.s, A, c.op, i, j) * get(x[c.sx.at(j)]);
        near(get(got[c.sy.at(i)]), want, tol<T>() * (1 + c.sx.n), "product", line);
    }
    CT_OK(cudaFree(dA));
    CT_OK(cudaFree(dx));
    CT_OK(cudaFree(dy));
}

template <typename T> static void products(cublasHandle_t h, cublasPointerMode_t pm)
{
    typedef fns2<T> F;
    const cd alpha(0.5, is_complex<T>() ? 0.25 : 0.0);
    const other sym = is_complex<T>() ? HERM : SYM;
    for (cublasOperation_t op : {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C}) {
        for (cd beta : {cd(0), cd(-1.5, 0)}) {
            int m = 7, n = 5, rows = op == CUBLAS_OP_N ? m : n, cols = op == CUBLAS_OP_N ? n : m;
            mv_case<T> ge{{GE, NONE, m, n, 0, 0, 9, false, false}, op, {cols, 2}, {rows, -1}};
            check_mv(ge, pm, alpha, beta, [&](T *A, T *x, T *y, const T *a, const T *b) {
                return F::gemv(h, op, m, n, a, A, 9, x, 2, b, y, -1); }, __LINE__);
            mv_case<T> gb{{GB, NONE, m, n, 2, 1, 5, false, false}, op, {cols, -3}, {rows, 1}};
            check_mv(gb, pm, alpha, beta, [&](T *A, T *x, T *y, const T *a, const T *b) {
                return F::gbmv(h, op, m, n, 2, 1, a, A, 5, x, -3, b, y, 1); }, __LINE__);
        }
    }
    for (bool upper : {false, true}) {
        cublasFillMode_t u = upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
        int n = 6;
        for (cd beta : {cd(0), cd(0.75, 0)}) {
            mv_case<T> sy{{TR, sym, n, n, 0, 0, 8, upper, false}, CUBLAS_OP_N, {n, 1}, {n, 2}};
            check_mv(sy, pm, alpha, beta, [&](T *A, T *x, T *y, const T *a, const T *b) {
                return F::symv(h, u, n, a, A, 8, x, 1, b, y, 2); }, __LINE__);
            mv_case<T> sb{{TB, sym, n, n, 2, 2, 4, upper, false}, CUBLAS_OP_N, {n, -2}, {n, 1}};
            check_mv(sb, pm, alpha, beta, [&](T *A, T *x, T *y, const T *a, const T *b) {
                return F::sbmv(h, u, n, 2, a, A, 4, x, -2, b, y, 1); }, __LINE__);
            mv_case<T> sp{{TP, sym, n, n, 0, 0, 0, upper, false}, CUBLAS_OP_N, {n, 1}, {n, -1}};
            check_mv(sp, pm, alpha, beta, [&](T *A, T *x, T *y, const T *a, const T *b) {
                return F::spmv(h, u, n, a, A, x, 1, b, y, -1); }, __LINE__);
        }
    }
}

/* ---- rank updates: only the stored elements change ----------------------------------- */

/* Checks storage A after an update whose dense change is upd(i, j). */
template <typename T, typename Upd>
static void check_update(const shape &s, const std::vector<T> &A, const std::vector<T> &got, Upd upd, int line)
{
    size_t k;
    for (int j = 0; j < s.n; j++)
        for (int i = 0; i < s.m; i++) {
            if (!s.index(i, j, &k))
                continue;
            cd want = get(A[k]) + upd(i, j);
            if (i == j && s.oth == HERM)
                want = cd(want.real(), 0); /* a Hermitian diagonal stays real */
            near(get(got[k]), want, tol<T>() * 8, "update", line);
        }
}

template <typename T> static void updates(cublasHandle_t h, cublasPointerMode_t pm)
{
    typedef fns2<T> F;
    typedef typename real_of<T>::type R;
    const cd alpha(0.5, is_complex<T>() ? -0.25 : 0.0);
    const bool cx = is_complex<T>();
    const other sym = cx ? HERM : SYM;
    scalar<T> a(put<T>(alpha));
    scalar<R> ar((R)0.5);
    int m = 6, n = 5;
    strided sx{m, -2}, sy{n, 1};
    std::vector<T> x = rand_vec<T>(sx.len()), y = rand_vec<T>(sy.len());
    T *dx = to_dev(x), *dy = to_dev(y);
    auto X = [&](int i) { return get(x[sx.at(i)]); };
    auto Y = [&](int i) { return get(y[sy.at(i)]); };
    auto cj = [&](cd v) { return cx ? std::conj(v) : v; };
    for (bool conj : {false, true}) { /* ger (geru), and gerc */
        shape ge{GE, NONE, m, n, 0, 0, 7, false, false};
        std::vector<T> A = rand_mat<T>(ge);
        T *dA = to_dev(A);
        CB_OK(F::ger(h, m, n, a.at(pm), dx, sx.inc, dy, sy.inc, dA, 7, conj));
        check_update(ge, A, from_dev(dA, A.size()), [&](int i, int j) {
            return alpha * X(i) * (conj ? cj(Y(j)) : Y(j)); }, __LINE__);
        CT_OK(cudaFree(dA));
    }
    strided s2{n, 2};
    std::vector<T> x2 = rand_vec<T>(s2.len());
    T *dx2 = to_dev(x2);
    auto X2 = [&](int i) { return get(x2[s2.at(i)]); };
    for (bool upper : {false, true}) {
        cublasFillMode_t u = upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
        shape full{TR, sym, n, n, 0, 0, 6, upper, false}, packed{TP, sym, n, n, 0, 0, 0, upper, false};
        auto rank1 = [&](int i, int j) { return 0.5 * X2(i) * cj(X2(j)); };
        auto rank2 = [&](int i, int j) { return alpha * X2(i) * cj(Y(j)) + cj(alpha) * Y(i) * cj(X2(j)); };
        std::vector<T> A = rand_mat<T>(full), P = rand_mat<T>(packed);
        T *dA = to_dev(A), *dP = to_dev(P);
        CB_OK(F::syr(h, u, n, ar.at(pm), dx2, s2.inc, dA, 6));
        check_update(full, A, from_dev(dA, A.size()), rank1, __LINE__);
        CB_OK(F::spr(h, u, n, ar.at(pm), dx2, s2.inc, dP));
        check_update(packed, P, from_dev(dP, P.size()), rank1, __LINE__);
        CT_OK(cudaMemcpy(dA, A.data(), A.size() * sizeof(T), cudaMemcpyHostToDevice));
        CT_OK(cudaMemcpy(dP, P.data(), P.size() * sizeof(T), cudaMemcpyHostToDevice));
        CB_OK(F::syr2(h, u, n, a.at(pm), dx2, s2.inc, dy, sy.inc, dA, 6));
        check_update(full, A, from_dev(dA, A.size()), rank2, __LINE__);
        CB_OK(F::spr2(h, u, n, a.at(pm), dx2, s2.inc, dy, sy.inc, dP));
        check_update(packed, P, from_dev(dP, P.size()), rank2, __LINE__);
        CT_OK(cudaFree(dA));
        CT_OK(cudaFree(dP));
    }
    CT_OK(cudaFree(dx));
    CT_OK(cudaFree(dx2));
    CT_OK(cudaFree(dy));
}

/* ---- complex symmetric (not Hermitian): symv, syr, syr2 in C and Z ------------------- */

template <typename T> struct csym;
#define CSYM(T, P)                                                                                               \
    template <> struct csym<T> {                                                                                 \
        static cublasStatus_t symv(MV_ARGS(T), const T *A, int lda, const T *x, int ix, const T *b, T *y, int iy) \
        { return V64(cublas##P##symv_v2, h, u, n, a, A, lda, x, ix, b, y, iy); }                                    \
        static cublasStatus_t syr(MV_ARGS(T), const T *x, int ix, T *A, int lda)                                 \
        { return V64(cublas##P##syr_v2, h, u, n, a, x, ix, A, lda); }                                               \
        static cublasStatus_t syr2(MV_ARGS(T), const T *x, int ix, const T *y, int iy, T *A, int lda)           \
        { return V64(cublas##P##syr2_v2, h, u, n, a, x, ix, y, iy, A, lda); }                                       \
    };
CSYM(cuComplex, C)
CSYM(cuDoubleComplex, Z)

/* The other triangle mirrors the stored one unconjugated; the updates add x x^T and
 * x y^T + y x^T, no conjugate either. */
template <typename T> static void complex_symmetric(cublasHandle_t h, cublasPointerMode_t pm)
{
    typedef csym<T> F;
    const cd alpha(0.5, -0.75);
    const int n = 5;
    scalar<T> a(put<T>(alpha));
    strided sx{n, -2}, sy{n, 3};
    std::vector<T> x = rand_vec<T>(sx.len()), y = rand_vec<T>(sy.len());
    T *dx = to_dev(x), *dy = to_dev(y);
    auto X = [&](int i) { return get(x[sx.at(i)]); };
    auto Y = [&](int i) { return get(y[sy.at(i)]); };
    for (bool upper : {false, true}) {
        cublasFillMode_t u = upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
        for (cd beta : {cd(0), cd(0.75, 0.5)}) {
            mv_case<T> sym{{TR, SYM, n, n, 0, 0, 7, upper, false}, CUBLAS_OP_N, {n, -1}, {n, 2}};
            check_mv(sym, pm, alpha, beta, [&](T *A, T *xv, T *yv, const T *al, const T *b) {
                return F::symv(h, u, n, al, A, 7, xv, -1, b, yv, 2); }, __LINE__);
        }
        shape full{TR, SYM, n, n, 0, 0, 6, upper, false};
        std::vector<T> A = rand_mat<T>(full);
        T *dA = to_dev(A);
        CB_OK(F::syr(h, u, n, a.at(pm), dx, sx.inc, dA, 6));
        check_update(full, A, from_dev(dA, A.size()), [&](int i, int j) { return alpha * X(i) * X(j); }, __LINE__);
        CT_OK(cudaMemcpy(dA, A.data(), A.size() * sizeof(T), cudaMemcpyHostToDevice));
        CB_OK(F::syr2(h, u, n, a.at(pm), dx, sx.inc, dy, sy.inc, dA, 6));
        check_update(full, A, from_dev(dA, A.size()),
                     [&](int i, int j) { return alpha * (X(i) * Y(j) + Y(i) * X(j)); }, __LINE__);
        CT_OK(cudaFree(dA));
    }
    T one = put<T>(1.0);
    CB_ST(F::symv(h, CUBLAS_FILL_MODE_LOWER, 4, &one, dx, 3, dx, 1, &one, dy, 1), CUBLAS_STATUS_INVALID_VALUE);
    CB_ST(F::syr2(h, CUBLAS_FILL_MODE_LOWER, 2, &one, dx, 0, dy, 1, dx, 2), CUBLAS_STATUS_INVALID_VALUE);
    CB_ST(F::syr(h, (cublasFillMode_t)5, 2, &one, dx, 1, dx, 2), CUBLAS_STATUS_INVALID_VALUE);
    CT_OK(cudaFree(dx));
    CT_OK(cudaFree(dy));
}

/* ---- triangular: x = op(T) x, and op(T) x = b solved ---------------------------------- */

template <typename T, typename Call>
static void check_tri(const shape &s, cublasOperation_t op, strided sx, bool solve, Call call, int line)
{
    std::vector<T> A = rand_mat<T>(s), x = rand_vec<T>(sx.len());
    T *dA = to_dev(A), *dx = to_dev(x);
    CB_OK(call(dA, dx));
    std::vector<T> got = from_dev(dx, x.size());
    for (int i = 0; i < s.n; i++) {
        cd lhs = 0;
        for (int j = 0; j < s.n; j++) /* product: op(T) x_old; solve: op(T) x_new */
            lhs += op_at(s, A, op, i, j) * get((solve ? got : x)[sx.at(j)]);
        near(solve ? lhs : get(got[sx.at(i)]), solve ? get(x[sx.at(i)]) : lhs, tol<T>() * 16, "triangular", line);
    }
    CT_OK(cudaFree(dA));
    CT_OK(cudaFree(dx));
}

template <typename T> static void triangular(cublasHandle_t h)
{
    typedef fns2<T> F;
    int n = 6, k = 2;
    for (bool solve : {false, true})
        for (bool upper : {false, true})
            for (bool unit : {false, true})
                for (cublasOperation_t op : {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C}) {
                    cublasFillMode_t u = upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
                    cublasDiagType_t d = unit ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT;
                    shape tr{TR, TRI, n, n, 0, 0, 7, upper, unit}, tb{TB, TRI, n, n, k, k, 3, upper, unit},
                        tp{TP, TRI, n, n, 0, 0, 0, upper, unit};
                    check_tri<T>(tr, op, {n, 1}, solve, [&](T *A, T *x) {
                        return F::trmv(h, u, op, d, n, A, 7, x, 1, solve); }, __LINE__);
                    check_tri<T>(tb, op, {n, -2}, solve, [&](T *A, T *x) {
                        return F::tbmv(h, u, op, d, n, k, A, 3, x, -2, solve); }, __LINE__);
                    check_tri<T>(tp, op, {n, 3}, solve, [&](T *A, T *x) {
                        return F::tpmv(h, u, op, d, n, A, x, 3, solve); }, __LINE__);
                }
}

/* Arguments cuBLAS refuses at once, for each family. */
template <typename T> static void bad_arguments(cublasHandle_t h)
{
    typedef fns2<T> F;
    T one = put<T>(1.0), *d = to_dev(rand_vec<T>(64));
    CB_ST(F::gemv(h, CUBLAS_OP_N, 4, 4, &one, d, 3, d, 1, &one, d, 1), CUBLAS_STATUS_INVALID_VALUE); /* lda < m */
    CB_ST(F::gemv(h, (cublasOperation_t)7, 4, 4, &one, d, 4, d, 1, &one, d, 1), CUBLAS_STATUS_INVALID_VALUE);
    CB_ST(F::gbmv(h, CUBLAS_OP_N, 4, 4, 1, 1, &one, d, 2, d, 1, &one, d, 1), CUBLAS_STATUS_INVALID_VALUE);
    CB_ST(F::symv(h, (cublasFillMode_t)5, 4, &one, d, 4, d, 1, &one, d, 1), CUBLAS_STATUS_INVALID_VALUE);
    CB_ST(F::spmv(h, CUBLAS_FILL_MODE_LOWER, 4, &one, d, d, 0, &one, d, 1), CUBLAS_STATUS_INVALID_VALUE);
    CB_ST(F::ger(h, -1, 4, &one, d, 1, d, 1, d, 4, false), CUBLAS_STATUS_INVALID_VALUE);
    CB_ST(F::trmv(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, (cublasDiagType_t)9, 4, d, 4, d, 1, false),
          CUBLAS_STATUS_INVALID_VALUE);
    CB_ST(F::tbmv(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT, 4, 3, d, 3, d, 1, true),
          CUBLAS_STATUS_INVALID_VALUE); /* lda < k + 1 */
    CB_OK(F::gemv(h, CUBLAS_OP_N, 0, 4, &one, d, 1, d, 1, &one, d, 1)); /* nothing to do */
    CT_OK(cudaFree(d));
}

template <typename T> static void precision(cublasHandle_t h)
{
    for (cublasPointerMode_t pm : {CUBLAS_POINTER_MODE_HOST, CUBLAS_POINTER_MODE_DEVICE}) {
        CB_OK(cublasSetPointerMode(h, pm));
        products<T>(h, pm);
        updates<T>(h, pm);
        if constexpr (std::is_same<T, cuComplex>::value || std::is_same<T, cuDoubleComplex>::value)
            complex_symmetric<T>(h, pm);
    }
    CB_OK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
    triangular<T>(h);
    bad_arguments<T>(h);
}

int main(int argc, char **argv)
{
    blas_use64 = argc > 1 && std::strcmp(argv[1], "64") == 0;
    return blas_main(blas_use64 ? "blas_l2_64" : "blas_l2",
                     [](cublasHandle_t h, auto t) { precision<typename decltype(t)::type>(h); });
}
