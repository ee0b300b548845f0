// dnn_st.cu -- self-checking program of cuDNN's spatial transformer: the affine grid
// generator and the bilinear sampler, forward and backward, against host reference
// code with cuDNN's conventions (pixel centres at -1 and 1 of the normalised range,
// neighbours outside the image count 0): grid from theta, y sampled from x (plain,
// then blended with alpha and beta), dx and the grid's gradient (the latter
// against central differences of the host sampler), dtheta from that gradient. Some
// sampling points fall outside the image. Then the refusals: a descriptor of five
// dimensions, an output of another shape than the descriptor's, a grid larger than
// its allocation. Prints `PASS dnn_st`.
#include "dnn_check.h"

static const int N = 2, C = 3, HIN = 5, WIN = 6, H = 4, W = 7;

static double coord(int i, int n)
{
    return n > 1 ? -1.0 + 2.0 * i / (n - 1) : 0.0;
}

static vec host_grid(const vec &theta)
{
    vec g((size_t)N * H * W * 2);
    for (int n = 0; n < N; n++)
        for (int h = 0; h < H; h++)
            for (int w = 0; w < W; w++) {
                const double *t = &theta[n * 6];
                size_t o = (((size_t)n * H + h) * W + w) * 2;
                g[o] = t[0] * coord(w, W) + t[1] * coord(h, H) + t[2];
                g[o + 1] = t[3] * coord(w, W) + t[4] * coord(h, H) + t[5];
            }
    return g;
}

static double pixel(const tensor &x, int n, int c, int r, int q)
{
    return r >= 0 && r < x.h && q >= 0 && q < x.w ? x.host[x.at(n, c, r, q)] : 0.0;
}

// Bilinear sample of plane (n, c) of x at normalised (gx, gy).
static double sample(const tensor &x, int n, int c, double gx, double gy)
{
    double ix = (gx + 1) * (x.w - 1) / 2, iy = (gy + 1) * (x.h - 1) / 2;
    int q = (int)std::floor(ix), r = (int)std::floor(iy);
    double fx = ix - q, fy = iy - r;
    return pixel(x, n, c, r, q) * (1 - fx) * (1 - fy) + pixel(x, n, c, r, q + 1) * fx * (1 - fy) +
           pixel(x, n, c, r + 1, q) * (1 - fx) * fy + pixel(x, n, c, r + 1, q + 1) * fx * fy;
}

static vec host_sample(const tensor &x, const vec &g)
{
    vec y((size_t)N * C * H * W);
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++)
            for (int h = 0; h < H; h++)
                for (int w = 0; w < W; w++) {
                    size_t o = (((size_t)n * H + h) * W + w) * 2;
                    y[((n * C + c) * H + h) * W + w] = sample(x, n, c, g[o], g[o + 1]);
                }
    return y;
}

// dx: dy scattered with the bilinear weights.
static vec host_dx(const tensor &x, const tensor &dy, const vec &g)
{
    vec dx(x.size(), 0.0);
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++)
            for (int h = 0; h < H; h++)
                for (int w = 0; w < W; w++) {
                    size_t o = (((size_t)n * H + h) * W + w) * 2;
                    double ix = (g[o] + 1) * (x.w - 1) / 2, iy = (g[o + 1] + 1) * (x.h - 1) / 2;
                    int q = (int)std::floor(ix), r = (int)std::floor(iy);
                    double fx = ix - q, fy = iy - r, d = dy.host[dy.at(n, c, h, w)];
                    double wt[4] = {(1 - fx) * (1 - fy), fx * (1 - fy), (1 - fx) * fy, fx * fy};
                    for (int k = 0; k < 4; k++) {
                        int rr = r + (k >> 1), qq = q + (k & 1);
                        if (rr >= 0 && rr < x.h && qq >= 0 && qq < x.w)
                            dx[x.at(n, c, rr, qq)] += d * wt[k];
                    }
                }
    return dx;
}

// The grid's gradient by central differences of the host sampler.
static vec host_dgrid(const tensor &x, const tensor &dy, const vec &g)
{
    const double e = 1e-6;
    vec dg(g.size(), 0.0);
    for (int n = 0; n < N; n++)
        for (int h = 0; h < H; h++)
            for (int w = 0; w < W; w++) {
                size_t o = (((size_t)n * H + h) * W + w) * 2;
                for (int c = 0; c < C; c++) {
                    double d = dy.host[dy.at(n, c, h, w)], gx = g[o], gy = g[o + 1];
                    dg[o] += d * (sample(x, n, c, gx + e, gy) - sample(x, n, c, gx - e, gy)) / (2 * e);
                    dg[o + 1] += d * (sample(x, n, c, gx, gy + e) - sample(x, n, c, gx, gy - e)) / (2 * e);
                }
            }
    return dg;
}

static vec host_dtheta(const vec &dg)
{
    vec dt((size_t)N * 6, 0.0);
    for (int n = 0; n < N; n++)
        for (int h = 0; h < H; h++)
            for (int w = 0; w < W; w++) {
                size_t o = (((size_t)n * H + h) * W + w) * 2;
                double in[3] = {coord(w, W), coord(h, H), 1.0};
                for (int k = 0; k < 3; k++) {
                    dt[n * 6 + k] += dg[o] * in[k];
                    dt[n * 6 + 3 + k] += dg[o + 1] * in[k];
                }
            }
    return dt;
}

struct farray {
    float *dev;
    size_t n;
};

static farray to_device(const vec &v)
{
    farray a{nullptr, v.size()};
    std::vector<float> f(v.begin(), v.end());
    CT_OK(cudaMalloc((void **)&a.dev, f.size() * sizeof(float)));
    CT_OK(cudaMemcpy(a.dev, f.data(), f.size() * sizeof(float), cudaMemcpyHostToDevice));
    return a;
}

static void check_array(const char *what, const farray &a, const vec &want, double tol)
{
    std::vector<float> f(a.n);
    CT_OK(cudaMemcpy(f.data(), a.dev, f.size() * sizeof(float), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < f.size(); i++)
        if (std::fabs(f[i] - want[i]) > tol * (1 + std::fabs(want[i]))) {
            char g[64], e[64];
            snprintf(g, sizeof g, "%g at %zu", (double)f[i], i);
            snprintf(e, sizeof e, "%g", want[i]);
            ct_fail(__FILE__, __LINE__, what, e, g);
            return;
        }
}

int main()
{
    cudnnHandle_t h;
    cudnnSpatialTransformerDescriptor_t sd;
    const int dims[4] = {N, C, H, W}, five[5] = {N, C, H, W, 1};
    CT_DOK(cudnnCreate(&h));
    CT_DOK(cudnnCreateSpatialTransformerDescriptor(&sd));
    CT_DOK(cudnnSetSpatialTransformerNdDescriptor(sd, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 4, dims));
    // Rotation, scale and shift; the second reaches past the image's edges. No
    // sampling point lands on a pixel (where the difference quotients would straddle
    // a kink of the bilinear interpolation).
    vec theta = {0.91, 0.23, 0.117, -0.31, 1.07, -0.193, 1.21, -0.13, 0.31, 0.11, 0.83, 0.251};
    farray th = to_device(theta), grid = to_device(vec((size_t)N * H * W * 2)), dgrid = to_device(vec(grid.n));
    farray dth = to_device(vec(theta.size()));
    tensor x = make(N, C, HIN, WIN, true), dx = make(N, C, HIN, WIN, false);
    tensor y = make(N, C, H, W, true), dy = make(N, C, H, W, true), wrong = make(N, C, H, W + 1, false);

    CT_DOK(cudnnSpatialTfGridGeneratorForward(h, sd, th.dev, grid.dev));
    vec g = host_grid(theta);
    check_array("grid", grid, g, 1e-5);
    vec ys = host_sample(x, g), blended(ys.size());
    for (size_t i = 0; i < ys.size(); i++)
        blended[i] = 2 * ys[i] + 0.5 * y.host[i];
    const float one = 1, zero = 0, two = 2, half = 0.5f;
    CT_DOK(cudnnSpatialTfSamplerForward(h, sd, &two, x.d, x.dev, grid.dev, &half, y.d, y.dev));
    check("sampler, alpha 2 beta 0.5", y, blended);
    CT_DOK(cudnnSpatialTfSamplerForward(h, sd, &one, x.d, x.dev, grid.dev, &zero, y.d, y.dev));
    check("sampler", y, ys);

    CT_DOK(cudnnSpatialTfSamplerBackward(h, sd, &one, x.d, x.dev, &zero, dx.d, dx.dev, &one, dy.d, dy.dev, grid.dev,
                                         &zero, dgrid.dev));
    check("sampler backward dx", dx, host_dx(x, dy, g));
    vec dg = host_dgrid(x, dy, g);
    check_array("sampler backward dgrid", dgrid, dg, 1e-3);
    CT_DOK(cudnnSpatialTfGridGeneratorBackward(h, sd, dgrid.dev, dth.dev));
    check_array("grid generator backward", dth, host_dtheta(dg), 1e-3);

    CT_DNN(cudnnSetSpatialTransformerNdDescriptor(sd, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 5, five),
           CUDNN_STATUS_BAD_PARAM);
    expect_refused("output of another shape",
                   cudnnSpatialTfSamplerForward(h, sd, &one, x.d, x.dev, grid.dev, &zero, wrong.d, wrong.dev),
                   CUDNN_STATUS_BAD_PARAM);
    float *tiny; // a grid larger than its allocation: refused by the server's check
    CT_OK(cudaMalloc((void **)&tiny, 8));
    expect_refused("grid outside its allocation", cudnnSpatialTfGridGeneratorForward(h, sd, th.dev, tiny),
                   CUDNN_STATUS_BAD_PARAM);
    CT_OK(cudaFree(tiny));
    for (tensor *t : {&x, &dx, &y, &dy, &wrong})
        release(*t);
    for (farray *a : {&th, &grid, &dgrid, &dth})
        CT_OK(cudaFree(a->dev));
    CT_DOK(cudnnDestroySpatialTransformerDescriptor(sd));
    CT_DOK(cudnnDestroy(h));
    CT_OK(cudaDeviceSynchronize());
    return ct_finish("dnn_st");
}
