/* blas_legacy.cu -- self-checking program of the legacy cuBLAS API (cublas.h: no
 * handle, scalars by value, operations as characters, errors read with
 * cublasGetError), against references computed here in double precision: the
 * helpers (cublasInit before any call, cublasAlloc/cublasFree, cublasSetKernelStream,
 * cublasGetVersion, cublasShutdown), level 1 with results returned by value (dot,
 * complex dotc, nrm2, asum, amax) and updates (axpy, scal, rot, rotg in host
 * memory), level 2 (gemv with a lower-case operation, syr, trmv), level 3 (gemm with
 * transposes, conjugate-transposed Zgemm, in-place trmm, trsm, syrk), and the
 * errors: a call before cublasInit, an unknown operation character, and
 * cublasGetError resetting what it read. Prints `PASS blas_legacy`. */
#include <cublas.h>
#include <vector>
#include "blas_compare.h"

/* The last legacy call's status, as cublasGetError reads (and resets) it. */
#define LAST(expected) CT_EQ((int)cublasGetError(), (int)(expected))

/* n random values, and a device copy through cublasAlloc and cublasSetVector. */
template <typename T> static std::vector<T> rand_of(size_t n)
{
    std::vector<T> v(n);
    for (auto &x : v)
        x = (T)rnd();
    return v;
}
template <typename T> static T *dev_of(const std::vector<T> &h)
{
    void *d = nullptr;
    CT_EQ((int)cublasAlloc((int)h.size(), sizeof(T), &d), (int)CUBLAS_STATUS_SUCCESS);
    CT_EQ((int)cublasSetVector((int)h.size(), sizeof(T), h.data(), 1, d, 1), (int)CUBLAS_STATUS_SUCCESS);
    return (T *)d;
}
template <typename T> static std::vector<T> host_of(const T *d, size_t n)
{
    std::vector<T> h(n);
    CT_EQ((int)cublasGetVector((int)n, sizeof(T), d, 1, h.data(), 1), (int)CUBLAS_STATUS_SUCCESS);
    return h;
}

static void level1()
{
    const int n = 7;
    std::vector<float> x = rand_of<float>(n), y = rand_of<float>(n);
    float *dx = dev_of(x), *dy = dev_of(y);
    double dot = 0, nrm = 0, asum = 0;
    int amax = 1;
    for (int i = 0; i < n; i++) {
        dot += (double)x[i] * y[i];
        nrm += (double)x[i] * x[i];
        asum += std::fabs((double)y[i]);
        if (std::fabs(x[i]) > std::fabs(x[amax - 1]))
            amax = i + 1;
    }
    NEAR(cublasSdot(n, dx, 1, dy, 1), dot, 1e-5);
    NEAR(cublasSnrm2(n, dx, 1), std::sqrt(nrm), 1e-5);
    NEAR(cublasSasum(n, dy, 1), asum, 1e-5);
    CT_EQ(cublasIsamax(n, dx, 1), amax);
    cublasSaxpy(n, 2.5f, dx, 1, dy, 1);
    cublasSscal(n, -0.5f, dx, 1);
    LAST(CUBLAS_STATUS_SUCCESS);
    std::vector<float> gx = host_of(dx, n), gy = host_of(dy, n);
    for (int i = 0; i < n; i++) {
        NEAR(gy[i], 2.5 * x[i] + y[i], 1e-5);
        NEAR(gx[i], -0.5 * x[i], 1e-5);
    }
    cublasSrot(n, dx, 1, dy, 1, 0.6f, 0.8f);
    std::vector<float> rx = host_of(dx, n), ry = host_of(dy, n);
    for (int i = 0; i < n; i++) {
        NEAR(rx[i], 0.6 * gx[i] + 0.8 * gy[i], 1e-5);
        NEAR(ry[i], 0.6 * gy[i] - 0.8 * gx[i], 1e-5);
    }
    float a = 3, b = 4, c = 0, s = 0;
    cublasSrotg(&a, &b, &c, &s); /* host memory: r = 5, c = 0.6, s = 0.8 */
    NEAR(a, 5.0, 1e-6);
    NEAR(c, 0.6, 1e-6);
    NEAR(s, 0.8, 1e-6);
    std::vector<cuComplex> cx(n), cy(n);
    cd cdot = 0;
    for (int i = 0; i < n; i++) {
        cx[i] = make_cuComplex((float)rnd(), (float)rnd());
        cy[i] = make_cuComplex((float)rnd(), (float)rnd());
        cdot += std::conj(cd(cx[i].x, cx[i].y)) * cd(cy[i].x, cy[i].y);
    }
    cuComplex *dcx = dev_of(cx), *dcy = dev_of(cy);
    cuComplex got = cublasCdotc(n, dcx, 1, dcy, 1);
    NEAR(cd(got.x, got.y), cdot, 1e-5);
    LAST(CUBLAS_STATUS_SUCCESS);
    for (void *p : {(void *)dx, (void *)dy, (void *)dcx, (void *)dcy})
        CT_EQ((int)cublasFree(p), (int)CUBLAS_STATUS_SUCCESS);
}

/* Element (i, j) of op(M), M column-major with leading dimension ld. */
template <typename T> static cd op_at(const std::vector<T> &M, int ld, char op, int i, int j);
template <> cd op_at(const std::vector<float> &M, int ld, char op, int i, int j)
{
    return op == 'N' || op == 'n' ? M[i + (size_t)j * ld] : M[j + (size_t)i * ld];
}
template <> cd op_at(const std::vector<cuDoubleComplex> &M, int ld, char op, int i, int j)
{
    cuDoubleComplex v = op == 'N' ? M[i + (size_t)j * ld] : M[j + (size_t)i * ld];
    return op == 'C' ? cd(v.x, -v.y) : cd(v.x, v.y);
}

static void level2()
{
    const int m = 4, n = 3, lda = 5;
    std::vector<float> A = rand_of<float>((size_t)lda * n), x = rand_of<float>(m), y = rand_of<float>(n);
    float *dA = dev_of(A), *dx = dev_of(x), *dy = dev_of(y);
    cublasSgemv('t', m, n, 0.5f, dA, lda, dx, 1, 2.0f, dy, 1); /* y = 0.5 A^T x + 2 y */
    std::vector<float> gy = host_of(dy, n);
    for (int j = 0; j < n; j++) {
        double acc = 0;
        for (int i = 0; i < m; i++)
            acc += op_at(A, lda, 't', j, i).real() * x[i];
        NEAR(gy[j], 0.5 * acc + 2.0 * y[j], 1e-5);
    }
    std::vector<double> S = rand_of<double>(9), v = rand_of<double>(3);
    double *dS = dev_of(S), *dv = dev_of(v);
    cublasDsyr('L', 3, -1.5, dv, 1, dS, 3); /* the lower triangle gets -1.5 v v^T */
    std::vector<double> gS = host_of(dS, 9);
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++)
            NEAR(gS[i + 3 * j], S[i + 3 * j] + (i >= j ? -1.5 * v[i] * v[j] : 0.0), 1e-12);
    cublasDtrmv('U', 'N', 'U', 3, dS, 3, dv, 1); /* v = T v, T upper with unit diagonal */
    std::vector<double> gv = host_of(dv, 3);
    for (int i = 0; i < 3; i++) {
        double acc = v[i];
        for (int j = i + 1; j < 3; j++)
            acc += gS[i + 3 * j] * v[j];
        NEAR(gv[i], acc, 1e-12);
    }
    LAST(CUBLAS_STATUS_SUCCESS);
    for (void *p : {(void *)dA, (void *)dx, (void *)dy, (void *)dS, (void *)dv})
        CT_EQ((int)cublasFree(p), (int)CUBLAS_STATUS_SUCCESS);
}

static void level3()
{
    const int m = 3, n = 4, k = 2;
    std::vector<float> A = rand_of<float>(k * m), B = rand_of<float>(k * n), C = rand_of<float>(m * n);
    float *dA = dev_of(A), *dB = dev_of(B), *dC = dev_of(C);
    cublasSgemm('T', 'N', m, n, k, 1.5f, dA, k, dB, k, -1.0f, dC, m); /* C = 1.5 A^T B - C */
    std::vector<float> gC = host_of(dC, m * n);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double acc = 0;
            for (int l = 0; l < k; l++)
                acc += op_at(A, k, 'T', i, l).real() * op_at(B, k, 'N', l, j).real();
            NEAR(gC[i + m * j], 1.5 * acc - C[i + m * j], 1e-5);
        }
    std::vector<cuDoubleComplex> Z(4), W(4), V(4);
    for (int i = 0; i < 4; i++) {
        Z[i] = make_cuDoubleComplex(rnd(), rnd());
        W[i] = make_cuDoubleComplex(rnd(), rnd());
    }
    cuDoubleComplex *dZ = dev_of(Z), *dW = dev_of(W), *dV = dev_of(V);
    cublasZgemm('C', 'N', 2, 2, 2, make_cuDoubleComplex(0, 1), dZ, 2, dW, 2, make_cuDoubleComplex(0, 0), dV, 2);
    std::vector<cuDoubleComplex> gV = host_of(dV, 4);
    for (int j = 0; j < 2; j++)
        for (int i = 0; i < 2; i++) {
            cd acc = 0;
            for (int l = 0; l < 2; l++)
                acc += op_at(Z, 2, 'C', i, l) * op_at(W, 2, 'N', l, j);
            NEAR(cd(gV[i + 2 * j].x, gV[i + 2 * j].y), cd(0, 1) * acc, 1e-12);
        }
    std::vector<double> T = rand_of<double>(4), X = rand_of<double>(6);
    T[0] += 3;
    T[3] += 3;
    double *dT = dev_of(T), *dX = dev_of(X);
    cublasDtrmm('L', 'U', 'N', 'N', 2, 3, 2.0, dT, 2, dX, 2); /* X = 2 T X in place */
    std::vector<double> gX = host_of(dX, 6);
    for (int j = 0; j < 3; j++) {
        NEAR(gX[2 * j], 2.0 * (T[0] * X[2 * j] + T[2] * X[2 * j + 1]), 1e-12);
        NEAR(gX[2 * j + 1], 2.0 * T[3] * X[2 * j + 1], 1e-12);
    }
    cublasDtrsm('L', 'U', 'N', 'N', 2, 3, 0.5, dT, 2, dX, 2); /* back: X = 0.5 T^-1 (2 T X) = X */
    std::vector<double> bX = host_of(dX, 6);
    for (int i = 0; i < 6; i++)
        NEAR(bX[i], X[i], 1e-12);
    cublasSsyrk('U', 'T', 2, 3, 1.0f, dC, 3, 0.0f, dA, 2); /* upper of C^T C (C now 3 x 2 of gC) */
    std::vector<float> gA = host_of(dA, 4);
    for (int j = 0; j < 2; j++)
        for (int i = 0; i <= j; i++) {
            double acc = 0;
            for (int l = 0; l < 3; l++)
                acc += (double)gC[l + 3 * i] * gC[l + 3 * j];
            NEAR(gA[i + 2 * j], acc, 1e-4);
        }
    LAST(CUBLAS_STATUS_SUCCESS);
    cublasSgemm('X', 'N', m, n, k, 1.0f, dA, k, dB, k, 0.0f, dC, m);
    LAST(CUBLAS_STATUS_INVALID_VALUE);
    LAST(CUBLAS_STATUS_SUCCESS); /* read once, then reset */
    for (void *p : {(void *)dA, (void *)dB, (void *)dC, (void *)dZ, (void *)dW, (void *)dV, (void *)dT, (void *)dX})
        CT_EQ((int)cublasFree(p), (int)CUBLAS_STATUS_SUCCESS);
}

int main()
{
    float unused = 0;
    cublasSscal(1, 2.0f, &unused, 1); /* before cublasInit */
    LAST(CUBLAS_STATUS_NOT_INITIALIZED);
    CT_EQ((int)cublasInit(), (int)CUBLAS_STATUS_SUCCESS);
    int version = 0;
    CT_EQ((int)cublasGetVersion(&version), (int)CUBLAS_STATUS_SUCCESS);
    CT_TRUE(version > 0);
    cudaStream_t s;
    CT_OK(cudaStreamCreate(&s));
    CT_EQ((int)cublasSetKernelStream(s), (int)CUBLAS_STATUS_SUCCESS);
    level1();
    level2();
    level3();
    CT_OK(cudaStreamSynchronize(s));
    CT_EQ((int)cublasSetKernelStream(0), (int)CUBLAS_STATUS_SUCCESS);
    CT_OK(cudaStreamDestroy(s));
    void *p = nullptr;
    CT_EQ((int)cublasAlloc(0, 4, &p), (int)CUBLAS_STATUS_INVALID_VALUE);
    CT_EQ((int)cublasShutdown(), (int)CUBLAS_STATUS_SUCCESS);
    CT_EQ((int)cublasShutdown(), (int)CUBLAS_STATUS_NOT_INITIALIZED);
    return ct_finish("blas_legacy");
}
