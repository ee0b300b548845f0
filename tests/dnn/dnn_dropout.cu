// dnn_dropout.cu -- self-checking program of cuDNN's dropout: the state and
// reserve-space queries, Set (which seeds the generator's state on the device),
// Get and Restore, and both passes. Forward keeps each element or zeroes it, a
// kept one scaled by 1 / (1 - rate), about `rate` of them dropped; backward applies
// the same mask to the gradient; a second pass draws a new mask, seeding again with
// the same seed draws the first one again, a descriptor restored over the state
// goes on from where the state is; a rate of 0 without a state (PyTorch's "no
// dropout") copies. Then the refusals: a rate outside [0, 1], a state smaller than
// the query's answer or than its allocation, a reserve space too small, tensors of
// different shapes.
// Prints `PASS dnn_dropout`.
#include "dnn_check.h"

static const float RATE = 0.5f;

struct drop_case {
    cudnnHandle_t h;
    tensor x, y, dy, dx;
    void *states, *reserve;
    size_t state_bytes, reserve_bytes;
    cudnnDropoutDescriptor_t d;
};

static drop_case setup()
{
    drop_case c{nullptr, make(4, 3, 8, 8, true), make(4, 3, 8, 8, false), make(4, 3, 8, 8, true),
                make(4, 3, 8, 8, false), nullptr, nullptr, 0, 0, nullptr};
    CT_DOK(cudnnCreate(&c.h));
    for (auto &v : c.x.host) // no zero among the inputs: y == 0 means dropped
        v += 3.0;
    std::vector<float> f(c.x.host.begin(), c.x.host.end());
    CT_OK(cudaMemcpy(c.x.dev, f.data(), f.size() * sizeof(float), cudaMemcpyHostToDevice));
    CT_DOK(cudnnDropoutGetStatesSize(c.h, &c.state_bytes));
    CT_DOK(cudnnDropoutGetReserveSpaceSize(c.x.d, &c.reserve_bytes));
    if (c.state_bytes == 0 || c.reserve_bytes == 0)
        ct_fail(__FILE__, __LINE__, "size queries", "> 0", "0");
    CT_OK(cudaMalloc(&c.states, c.state_bytes));
    CT_OK(cudaMalloc(&c.reserve, c.reserve_bytes));
    CT_DOK(cudnnCreateDropoutDescriptor(&c.d));
    CT_DOK(cudnnSetDropoutDescriptor(c.d, c.h, RATE, c.states, c.state_bytes, 1234));
    return c;
}

// Runs forward; checks every y is 0 or x / (1 - rate) and that the share dropped
// is near the rate. Returns the mask (1: kept).
static std::vector<int> forward(drop_case &c, cudnnDropoutDescriptor_t d, const char *what)
{
    CT_DOK(cudnnDropoutForward(c.h, d, c.x.d, c.x.dev, c.y.d, c.y.dev, c.reserve, c.reserve_bytes));
    vec y = fetch(c.y);
    std::vector<int> keep(y.size());
    size_t dropped = 0;
    for (size_t i = 0; i < y.size(); i++) {
        keep[i] = y[i] != 0.0;
        dropped += !keep[i];
        if (keep[i] && std::fabs(y[i] - c.x.host[i] / (1 - RATE)) > 1e-5 * std::fabs(y[i])) {
            ct_fail(__FILE__, __LINE__, what, "0 or x / (1 - rate)", "another value");
            break;
        }
    }
    double share = (double)dropped / y.size();
    if (share < 0.4 || share > 0.6) {
        char got[32];
        snprintf(got, sizeof got, "%.3f", share);
        ct_fail(__FILE__, __LINE__, what, "about 0.5 dropped", got);
    }
    return keep;
}

static void backward(drop_case &c, const std::vector<int> &keep)
{
    CT_DOK(cudnnDropoutBackward(c.h, c.d, c.dy.d, c.dy.dev, c.dx.d, c.dx.dev, c.reserve, c.reserve_bytes));
    vec want(c.dy.host.size());
    for (size_t i = 0; i < want.size(); i++)
        want[i] = keep[i] ? c.dy.host[i] / (1 - RATE) : 0.0;
    check("backward: the forward's mask applied", c.dx, want);
}

static void sequence(drop_case &c)
{
    float rate;
    void *states;
    unsigned long long seed;
    CT_DOK(cudnnGetDropoutDescriptor(c.d, c.h, &rate, &states, &seed));
    if (rate != RATE || states != c.states || seed != 1234)
        ct_fail(__FILE__, __LINE__, "Get", "what Set gave", "other values");
    std::vector<int> first = forward(c, c.d, "first forward");
    backward(c, first);
    std::vector<int> second = forward(c, c.d, "second forward");
    if (second == first)
        ct_fail(__FILE__, __LINE__, "second forward", "a new mask", "the same mask");
    CT_DOK(cudnnSetDropoutDescriptor(c.d, c.h, RATE, c.states, c.state_bytes, 1234));
    if (forward(c, c.d, "forward after seeding again") != first)
        ct_fail(__FILE__, __LINE__, "seeding again", "the first mask", "another");
    cudnnDropoutDescriptor_t r;
    CT_DOK(cudnnCreateDropoutDescriptor(&r));
    CT_DOK(cudnnRestoreDropoutDescriptor(r, c.h, RATE, c.states, c.state_bytes, 1234));
    if (forward(c, r, "forward of a restored descriptor") == first)
        ct_fail(__FILE__, __LINE__, "Restore", "the state as it is (no seeding)", "seeded again");
    CT_DOK(cudnnDestroyDropoutDescriptor(r));
}

static void no_dropout(drop_case &c)
{
    cudnnDropoutDescriptor_t z;
    CT_DOK(cudnnCreateDropoutDescriptor(&z));
    CT_DOK(cudnnSetDropoutDescriptor(z, c.h, 0.0f, nullptr, 0, 0));
    CT_DOK(cudnnDropoutForward(c.h, z, c.x.d, c.x.dev, c.y.d, c.y.dev, c.reserve, c.reserve_bytes));
    check("rate 0 without a state", c.y, c.x.host);
    CT_DOK(cudnnDestroyDropoutDescriptor(z));
}

static void refusals(drop_case &c)
{
    tensor other = make(4, 3, 8, 4, false);
    CT_DNN(cudnnSetDropoutDescriptor(c.d, c.h, 1.5f, c.states, c.state_bytes, 1), CUDNN_STATUS_BAD_PARAM);
    CT_DNN(cudnnSetDropoutDescriptor(c.d, c.h, -0.1f, c.states, c.state_bytes, 1), CUDNN_STATUS_BAD_PARAM);
    CT_DNN(cudnnSetDropoutDescriptor(c.d, c.h, RATE, c.states, 1, 1), CUDNN_STATUS_BAD_PARAM);
    void *small; // a state said to be larger than its allocation: refused by the server's check
    CT_OK(cudaMalloc(&small, 8));
    CT_DNN(cudnnSetDropoutDescriptor(c.d, c.h, RATE, small, c.state_bytes, 1), CUDNN_STATUS_BAD_PARAM);
    CT_OK(cudaFree(small));
    expect_refused("reserve space too small",
                   cudnnDropoutForward(c.h, c.d, c.x.d, c.x.dev, c.y.d, c.y.dev, c.reserve, 1),
                   CUDNN_STATUS_BAD_PARAM);
    expect_refused("tensors of different shapes",
                   cudnnDropoutForward(c.h, c.d, c.x.d, c.x.dev, other.d, other.dev, c.reserve, c.reserve_bytes),
                   CUDNN_STATUS_BAD_PARAM);
    release(other);
}

int main()
{
    drop_case c = setup();
    sequence(c);
    no_dropout(c);
    refusals(c);
    for (tensor *t : {&c.x, &c.y, &c.dy, &c.dx})
        release(*t);
    CT_DOK(cudnnDestroyDropoutDescriptor(c.d));
    CT_OK(cudaFree(c.states));
    CT_OK(cudaFree(c.reserve));
    CT_DOK(cudnnDestroy(c.h));
    CT_OK(cudaDeviceSynchronize());
    return ct_finish("dnn_dropout");
}
