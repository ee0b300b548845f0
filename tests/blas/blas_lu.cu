/* blas_lu.cu -- self-checking program of cuBLAS's batched LU calls in all four
 * precisions (S, D, C, Z): getrfBatched with and without pivoting, getrsBatched
 * with every operation, getriBatched and matinvBatched, each item checked by
 * multiplying back here in double precision (P A = L U, op(A) X = B, A C = I), the
 * info a singular item reports, batch 0, and argument errors (with the host info
 * getrs sets). Prints `PASS blas_lu`. Through the shim it checks the calls
 * generated from protocol/cublas.api; on a GPU, NVIDIA's cuBLAS. With `footprint`
 * (through the shim only) it checks that the shim refuses a pointer array shorter
 * than the batch and an item smaller than its matrix, and prints
 * `PASS blas_lu_footprint`. */
#include <cstring>
#include <string>
#include "blas_ref.h"

typedef cublasOperation_t op_t;

/* The cuBLAS functions of one precision. */
template <typename T> struct fns_lu;
#define FNS_LU(T, P)                                                                                             \
    template <> struct fns_lu<T> {                                                                               \
        static cublasStatus_t getrf(cublasHandle_t h, int n, T *const A[], int lda, int *piv, int *info, int b)  \
        { return cublas##P##getrfBatched(h, n, A, lda, piv, info, b); }                                          \
        static cublasStatus_t getrs(cublasHandle_t h, op_t t, int n, int nrhs, const T *const A[], int lda,      \
                                    const int *piv, T *const B[], int ldb, int *info, int b)                     \
        { return cublas##P##getrsBatched(h, t, n, nrhs, A, lda, piv, B, ldb, info, b); }                         \
        static cublasStatus_t getri(cublasHandle_t h, int n, const T *const A[], int lda, const int *piv,       \
                                    T *const C[], int ldc, int *info, int b)                                     \
        { return cublas##P##getriBatched(h, n, A, lda, piv, C, ldc, info, b); }                                  \
        static cublasStatus_t matinv(cublasHandle_t h, int n, const T *const A[], int lda, T *const C[], int ldc, \
                                     int *info, int b)                                                           \
        { return cublas##P##matinvBatched(h, n, A, lda, C, ldc, info, b); }                                      \
    };
FNS_LU(float, S)
FNS_LU(double, D)
FNS_LU(cuComplex, C)
FNS_LU(cuDoubleComplex, Z)

enum { BATCH = 3, N = 6, LDA = N + 2 };

/* A batch of column-major matrices in device memory, with the device array of
 * their pointers that the batched calls take. */
template <typename T> struct dbatch {
    int rows, cols, ld, count;
    std::vector<T *> items;
    T **array = nullptr;
    dbatch(const std::vector<std::vector<T>> &host, int r, int c, int l)
        : rows(r), cols(c), ld(l), count((int)host.size())
    {
        for (auto &h : host)
            items.push_back(to_dev(h));
        array = to_dev(std::vector<T *>(items));
    }
    ~dbatch()
    {
        for (T *p : items)
            cudaFree(p);
        cudaFree(array);
    }
    std::vector<T> get(int b) const { return from_dev(items[b], (size_t)ld * cols); }
};

/* A random n x n matrix (leading dimension LDA); dominant: its diagonal outweighs
 * each row, so that elimination without pivoting is stable. */
template <typename T> static std::vector<T> square(bool dominant)
{
    std::vector<T> a = rand_vec<T>((size_t)LDA * N);
    for (int i = 0; i < N && dominant; i++)
        a[i + (size_t)i * LDA] = put<T>(get(a[i + (size_t)i * LDA]) + cd(2.0 * N, 0));
    return a;
}

static cd at(const std::vector<cd> &m, int ld, int i, int j) { return m[i + (size_t)j * ld]; }

template <typename T> static std::vector<cd> widen(const std::vector<T> &v)
{
    std::vector<cd> w;
    for (auto &x : v)
        w.push_back(get(x));
    return w;
}

/* P A == L U, with the LU factors in lu and LAPACK's 1-based row interchanges in piv
 * (NULL: none). */
template <typename T>
static void check_lu(const std::vector<T> &a0, const std::vector<T> &lu0, const int *piv, int line)
{
    std::vector<cd> pa = widen(a0), lu = widen(lu0);
    for (int i = 0; piv != nullptr && i < N; i++)
        for (int j = 0; j < N; j++)
            std::swap(pa[i + (size_t)j * LDA], pa[piv[i] - 1 + (size_t)j * LDA]);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            cd s = 0;
            for (int k = 0; k <= std::min(i, j); k++)
                s += (k == i ? cd(1) : at(lu, LDA, i, k)) * at(lu, LDA, k, j);
            near(s, at(pa, LDA, i, j), 20 * tol<T>(), "(L U)(i,j)", line);
        }
}

/* A C == I for n x n A (leading dimension lda) and C (ldc). */
template <typename T> static void check_inverse(const std::vector<T> &a0, int lda, const std::vector<T> &c0, int ldc,
                                                int line)
{
    std::vector<cd> a = widen(a0), c = widen(c0);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            cd s = 0;
            for (int k = 0; k < N; k++)
                s += at(a, lda, i, k) * at(c, ldc, k, j);
            near(s, cd(i == j ? 1 : 0), 50 * tol<T>(), "(A inv(A))(i,j)", line);
        }
}

/* op(A) X == B for the n x n A and n x nrhs X, B (leading dimension ldb). */
template <typename T> static void check_solve(const std::vector<T> &a0, op_t op, const std::vector<T> &x0,
                                              const std::vector<T> &b0, int nrhs, int ldb, int line)
{
    std::vector<cd> a = widen(a0), x = widen(x0), b = widen(b0);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < nrhs; j++) {
            cd s = 0;
            for (int k = 0; k < N; k++) {
                cd e = op == CUBLAS_OP_N ? at(a, LDA, i, k) : at(a, LDA, k, i);
                s += (op == CUBLAS_OP_C ? std::conj(e) : e) * at(x, ldb, k, j);
            }
            near(s, at(b, ldb, i, j), 50 * tol<T>(), "(op(A) X)(i,j)", line);
        }
}

/* Every item's info is 0 and inv holds the inverse of a's item (leading dimension ld). */
template <typename T>
static void expect_inverses(const std::vector<std::vector<T>> &a, const int *info, const dbatch<T> &inv, int line)
{
    std::vector<int> hi = from_dev(info, BATCH);
    for (int b = 0; b < BATCH; b++) {
        if (hi[b] != 0)
            ct_fail(__FILE__, line, "info", "0", std::to_string(hi[b]).c_str());
        check_inverse(a[b], LDA, inv.get(b), inv.ld, line);
    }
}

/* Factorises a batch with pivoting, then solves, inverts (getri) and inverts
 * directly (matinv) with those factors and matrices. */
template <typename T> static void pivoted(cublasHandle_t h)
{
    std::vector<std::vector<T>> a;
    for (int b = 0; b < BATCH; b++)
        a.push_back(square<T>(false));
    dbatch<T> lu(a, N, N, LDA);
    int *piv, *info;
    CT_OK(cudaMalloc(&piv, sizeof(int) * N * BATCH));
    CT_OK(cudaMalloc(&info, sizeof(int) * BATCH));
    CT_OK(cudaMemset(info, 0x7f, sizeof(int) * BATCH));
    CB_OK(fns_lu<T>::getrf(h, N, lu.array, LDA, piv, info, BATCH));
    std::vector<int> hp = from_dev(piv, (size_t)N * BATCH), hi = from_dev(info, BATCH);
    for (int b = 0; b < BATCH; b++) {
        CT_EQ(hi[b], 0);
        check_lu(a[b], lu.get(b), hp.data() + b * N, __LINE__);
    }
    const int nrhs = 2, ldb = N + 1;
    for (op_t op : {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C}) {
        std::vector<std::vector<T>> rhs;
        for (int b = 0; b < BATCH; b++)
            rhs.push_back(rand_vec<T>((size_t)ldb * nrhs));
        dbatch<T> x(rhs, N, nrhs, ldb);
        int hinfo = 99;
        CB_OK(fns_lu<T>::getrs(h, op, N, nrhs, lu.array, LDA, piv, x.array, ldb, &hinfo, BATCH));
        CT_EQ(hinfo, 0);
        for (int b = 0; b < BATCH; b++)
            check_solve(a[b], op, x.get(b), rhs[b], nrhs, ldb, __LINE__);
    }
    const int ldc = N + 3;
    dbatch<T> inv(std::vector<std::vector<T>>(BATCH, std::vector<T>((size_t)ldc * N)), N, N, ldc);
    CB_OK(fns_lu<T>::getri(h, N, lu.array, LDA, piv, inv.array, ldc, info, BATCH));
    expect_inverses(a, info, inv, __LINE__);
    dbatch<T> orig(a, N, N, LDA);
    dbatch<T> direct(std::vector<std::vector<T>>(BATCH, std::vector<T>((size_t)ldc * N)), N, N, ldc);
    CB_OK(fns_lu<T>::matinv(h, N, orig.array, LDA, direct.array, ldc, info, BATCH));
    expect_inverses(a, info, direct, __LINE__);
    cudaFree(piv);
    cudaFree(info);
}

/* Without a pivot array: A = L U directly, then solve and invert with no pivots. */
template <typename T> static void unpivoted(cublasHandle_t h)
{
    std::vector<std::vector<T>> a;
    for (int b = 0; b < BATCH; b++)
        a.push_back(square<T>(true));
    dbatch<T> lu(a, N, N, LDA);
    int *info;
    CT_OK(cudaMalloc(&info, sizeof(int) * BATCH));
    CB_OK(fns_lu<T>::getrf(h, N, lu.array, LDA, nullptr, info, BATCH));
    std::vector<int> hi = from_dev(info, BATCH);
    for (int b = 0; b < BATCH; b++) {
        CT_EQ(hi[b], 0);
        check_lu(a[b], lu.get(b), nullptr, __LINE__);
    }
    std::vector<std::vector<T>> rhs(BATCH, rand_vec<T>((size_t)N));
    dbatch<T> x(rhs, N, 1, N);
    int hinfo = 99;
    CB_OK(fns_lu<T>::getrs(h, CUBLAS_OP_N, N, 1, lu.array, LDA, nullptr, x.array, N, &hinfo, BATCH));
    CT_EQ(hinfo, 0);
    for (int b = 0; b < BATCH; b++)
        check_solve(a[b], CUBLAS_OP_N, x.get(b), rhs[b], 1, N, __LINE__);
    dbatch<T> inv(std::vector<std::vector<T>>(BATCH, std::vector<T>((size_t)N * N)), N, N, N);
    CB_OK(fns_lu<T>::getri(h, N, lu.array, LDA, nullptr, inv.array, N, info, BATCH));
    expect_inverses(a, info, inv, __LINE__);
    cudaFree(info);
}

/* Item 1 has a zero third column: its info is 3 (U(3,3) is zero), the others 0;
 * matinv reports it singular too. */
template <typename T> static void singular(cublasHandle_t h)
{
    std::vector<std::vector<T>> a;
    for (int b = 0; b < BATCH; b++)
        a.push_back(square<T>(false));
    for (int i = 0; i < N; i++)
        a[1][i + (size_t)2 * LDA] = put<T>(cd(0));
    dbatch<T> lu(a, N, N, LDA), orig(a, N, N, LDA), inv(a, N, N, LDA);
    int *piv, *info;
    CT_OK(cudaMalloc(&piv, sizeof(int) * N * BATCH));
    CT_OK(cudaMalloc(&info, sizeof(int) * BATCH));
    CB_OK(fns_lu<T>::getrf(h, N, lu.array, LDA, piv, info, BATCH));
    std::vector<int> hi = from_dev(info, BATCH);
    CT_EQ(hi[0], 0);
    CT_EQ(hi[1], 3);
    CT_EQ(hi[2], 0);
    CB_OK(fns_lu<T>::matinv(h, N, orig.array, LDA, inv.array, LDA, info, BATCH));
    hi = from_dev(info, BATCH);
    CT_EQ(hi[0], 0);
    CT_TRUE(hi[1] > 0);
    CT_EQ(hi[2], 0);
    cudaFree(piv);
    cudaFree(info);
}

/* cuBLAS's argument rules, and getrs's host info: minus the bad parameter's position
 * (LAPACK's numbering). A batch of 0 does nothing. */
template <typename T> static void arguments(cublasHandle_t h)
{
    std::vector<std::vector<T>> a(1, square<T>(false));
    dbatch<T> m(a, N, N, LDA);
    int *piv, *info, hinfo = 0;
    CT_OK(cudaMalloc(&piv, sizeof(int) * N));
    CT_OK(cudaMalloc(&info, sizeof(int)));
    CB_ST(fns_lu<T>::getrf(h, -1, m.array, LDA, piv, info, 1), CUBLAS_STATUS_INVALID_VALUE);
    CB_ST(fns_lu<T>::getrf(h, N, m.array, N - 1, piv, info, 1), CUBLAS_STATUS_INVALID_VALUE);
    CB_ST(fns_lu<T>::getrf(h, N, m.array, LDA, piv, info, -1), CUBLAS_STATUS_INVALID_VALUE);
    CB_OK(fns_lu<T>::getrf(h, N, m.array, LDA, piv, info, 0));
    CB_ST(fns_lu<T>::getrs(h, (op_t)7, N, 1, m.array, LDA, piv, m.array, LDA, &hinfo, 1), CUBLAS_STATUS_INVALID_VALUE);
    CT_EQ(hinfo, -1);
    CB_ST(fns_lu<T>::getrs(h, CUBLAS_OP_N, -2, 1, m.array, LDA, piv, m.array, LDA, &hinfo, 1),
          CUBLAS_STATUS_INVALID_VALUE);
    CT_EQ(hinfo, -2);
    CB_ST(fns_lu<T>::getrs(h, CUBLAS_OP_N, N, -1, m.array, LDA, piv, m.array, LDA, &hinfo, 1),
          CUBLAS_STATUS_INVALID_VALUE);
    CT_EQ(hinfo, -3);
    CB_ST(fns_lu<T>::getrs(h, CUBLAS_OP_N, N, 1, m.array, N - 1, piv, m.array, LDA, &hinfo, 1),
          CUBLAS_STATUS_INVALID_VALUE);
    CT_EQ(hinfo, -5);
    CB_ST(fns_lu<T>::getrs(h, CUBLAS_OP_N, N, 1, m.array, LDA, piv, m.array, N - 1, &hinfo, 1),
          CUBLAS_STATUS_INVALID_VALUE);
    CT_EQ(hinfo, -8);
    CB_ST(fns_lu<T>::getrs(h, CUBLAS_OP_N, N, 1, m.array, LDA, piv, m.array, LDA, &hinfo, -1),
          CUBLAS_STATUS_INVALID_VALUE);
    CT_EQ(hinfo, -10);
    CB_ST(fns_lu<T>::getri(h, N, m.array, LDA, piv, m.array, N - 1, info, 1), CUBLAS_STATUS_INVALID_VALUE);
    CB_ST(fns_lu<T>::matinv(h, 33, m.array, 33, m.array, 33, info, 1), CUBLAS_STATUS_INVALID_VALUE);
    CB_ST(fns_lu<T>::matinv(h, N, m.array, N - 1, m.array, LDA, info, 1), CUBLAS_STATUS_INVALID_VALUE);
    CT_OK(cudaDeviceSynchronize());
    cudaFree(piv);
    cudaFree(info);
}

template <typename T> static void precision(cublasHandle_t h)
{
    pivoted<T>(h);
    unpivoted<T>(h);
    singular<T>(h);
    arguments<T>(h);
}

/* Through the shim: an array of 2 pointers for a batch of 3, and an item of 8
 * elements for an n x n matrix, are refused; the session goes on working. */
template <typename T> static void footprint(cublasHandle_t h)
{
    std::vector<std::vector<T>> a(2, square<T>(false));
    dbatch<T> m(a, N, N, LDA);
    int *piv, *info;
    CT_OK(cudaMalloc(&piv, sizeof(int) * N * 3));
    CT_OK(cudaMalloc(&info, sizeof(int) * 3));
    REFUSED(fns_lu<T>::getrf(h, N, m.array, LDA, piv, info, 3));
    T *small;
    CT_OK(cudaMalloc(&small, sizeof(T) * 8));
    CT_OK(cudaMemcpy(m.array + 1, &small, sizeof small, cudaMemcpyHostToDevice));
    REFUSED(fns_lu<T>::getrf(h, N, m.array, LDA, piv, info, 2));
    int hinfo = 1;
    REFUSED(fns_lu<T>::getrs(h, CUBLAS_OP_N, N, 1, m.array, LDA, piv, m.array, LDA, &hinfo, 2));
    REFUSED(fns_lu<T>::matinv(h, N, m.array, LDA, m.array, LDA, info, 2));
    REFUSED(fns_lu<T>::getrf(h, N, m.array, LDA, piv, info + 2, 2)); /* info past its allocation */
    CB_OK(fns_lu<T>::getrf(h, N, m.array, LDA, piv, info, 1));
    CT_OK(cudaDeviceSynchronize());
    cudaFree(small);
    cudaFree(piv);
    cudaFree(info);
}

int main(int argc, char **argv)
{
    if (argc > 1 && std::strcmp(argv[1], "footprint") == 0)
        return blas_main("blas_lu_footprint",
                         [](cublasHandle_t h, auto t) { footprint<typename decltype(t)::type>(h); });
    return blas_main("blas_lu", [](cublasHandle_t h, auto t) { precision<typename decltype(t)::type>(h); });
}
