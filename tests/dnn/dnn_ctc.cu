// dnn_ctc.cu -- self-checking program of cuDNN's CTC loss (cudnnCTCLoss with labels
// in host memory, its workspace queries, the descriptor's Sets and Gets): the costs
// against a brute-force reference that sums the probability of every path of
// symbols spelling the labels, the gradients against central differences of that
// reference, for softmax-normalised activations and for probabilities given as
// they are; sequences shorter than the tensor (their gradient is 0 past their end),
// with repeated labels, with no label, and one that no path can spell (cost
// infinity, gradient zeroed or left alone as the grad mode says); costs alone.
// Then the refusals: a blank among the labels, an input longer than the tensor,
// costs smaller than the batch.
// Prints `PASS dnn_ctc`.
#include <cfloat>
#include "dnn_check.h"

static const int T = 5, N = 4, A = 4; // steps, sequences, alphabet (0 is the blank)
static const int LENGTHS[N] = {2, 2, 4, 0}, INPUTS[N] = {5, 4, 3, 2};
static const int LABELS[] = {1, 2, 3, 3, 1, 2, 1, 3}; // the fourth sequence has none

static size_t at(int t, int n, int k)
{
    return ((size_t)t * N + n) * A + k;
}

static vec softmax(const vec &x)
{
    vec y(x.size());
    for (int t = 0; t < T; t++)
        for (int n = 0; n < N; n++) {
            double s = 0;
            for (int k = 0; k < A; k++)
                s += std::exp(x[at(t, n, k)]);
            for (int k = 0; k < A; k++)
                y[at(t, n, k)] = std::exp(x[at(t, n, k)]) / s;
        }
    return y;
}

// -ln of the summed probability of every path of sequence n that spells its labels.
static double brute_cost(const vec &x, int n, const int *labels)
{
    vec y = softmax(x);
    int steps = INPUTS[n], paths = 1;
    for (int t = 0; t < steps; t++)
        paths *= A;
    double p = 0;
    for (int path = 0; path < paths; path++) {
        std::vector<int> spelled;
        double q = 1;
        int prev = -1;
        for (int t = 0, code = path; t < steps; t++, code /= A) {
            int k = code % A;
            q *= y[at(t, n, k)];
            if (k != 0 && k != prev)
                spelled.push_back(k);
            prev = k;
        }
        if (spelled == std::vector<int>(labels, labels + LENGTHS[n]))
            p += q;
    }
    return -std::log(p);
}

struct ctc_case {
    cudnnHandle_t h;
    cudnnTensorDescriptor_t pd;
    cudnnCTCLossDescriptor_t cd;
    float *probs, *grads, *costs;
    void *ws;
    size_t ws_bytes;
    vec x, cost, grad; // activations and the reference
};

static const int *labels_of(int n)
{
    int off = 0;
    for (int i = 0; i < n; i++)
        off += LENGTHS[i];
    return LABELS + off;
}

static void reference(ctc_case &c)
{
    const double e = 1e-5;
    c.cost.assign(N, 0.0);
    c.grad.assign(c.x.size(), 0.0);
    for (int n = 0; n < N; n++) {
        c.cost[n] = n == 2 ? INFINITY : brute_cost(c.x, n, labels_of(n)); // the third cannot be spelled
        for (int t = 0; n != 2 && t < INPUTS[n]; t++)
            for (int k = 0; k < A; k++) {
                vec up = c.x, down = c.x;
                up[at(t, n, k)] += e;
                down[at(t, n, k)] -= e;
                c.grad[at(t, n, k)] = (brute_cost(up, n, labels_of(n)) - brute_cost(down, n, labels_of(n))) / (2 * e);
            }
    }
}

static void put(float *dev, const vec &v)
{
    std::vector<float> f(v.begin(), v.end());
    CT_OK(cudaMemcpy(dev, f.data(), f.size() * sizeof(float), cudaMemcpyHostToDevice));
}

static vec get(const float *dev, size_t n)
{
    std::vector<float> f(n);
    CT_OK(cudaMemcpy(f.data(), dev, n * sizeof(float), cudaMemcpyDeviceToHost));
    return vec(f.begin(), f.end());
}

static void compare(const char *what, const vec &got, const vec &want, double tol)
{
    for (size_t i = 0; i < got.size(); i++) {
        bool same = std::isinf(want[i]) ? got[i] == want[i] : std::fabs(got[i] - want[i]) <= tol * (1 + std::fabs(want[i]));
        if (!same) {
            char g[64], e[64];
            snprintf(g, sizeof g, "%g at %zu", got[i], i);
            snprintf(e, sizeof e, "%g", want[i]);
            ct_fail(__FILE__, __LINE__, what, e, g);
            return;
        }
    }
}

static ctc_case setup()
{
    ctc_case c{};
    const int dims[3] = {T, N, A}, strides[3] = {N * A, A, 1};
    CT_DOK(cudnnCreate(&c.h));
    CT_DOK(cudnnCreateTensorDescriptor(&c.pd));
    CT_DOK(cudnnSetTensorNdDescriptor(c.pd, CUDNN_DATA_FLOAT, 3, dims, strides));
    CT_DOK(cudnnCreateCTCLossDescriptor(&c.cd));
    c.x.resize((size_t)T * N * A);
    for (auto &v : c.x)
        v = 2 * rnd();
    reference(c);
    CT_OK(cudaMalloc((void **)&c.probs, c.x.size() * sizeof(float)));
    CT_OK(cudaMalloc((void **)&c.grads, c.x.size() * sizeof(float)));
    CT_OK(cudaMalloc((void **)&c.costs, N * sizeof(float)));
    return c;
}

// One loss with the descriptor as it is; the gradient buffer first holds `fill`.
static void loss(ctc_case &c, const vec &input, bool with_grads, float fill)
{
    CT_DOK(cudnnGetCTCLossWorkspaceSize(c.h, c.pd, c.pd, LABELS, LENGTHS, INPUTS, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC,
                                        c.cd, &c.ws_bytes));
    CT_OK(cudaMalloc(&c.ws, c.ws_bytes > 0 ? c.ws_bytes : 1));
    put(c.probs, input);
    put(c.grads, vec(input.size(), fill));
    CT_DOK(cudnnCTCLoss(c.h, c.pd, c.probs, LABELS, LENGTHS, INPUTS, c.costs, c.pd, with_grads ? c.grads : nullptr,
                        CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, c.cd, c.ws, c.ws_bytes));
    CT_OK(cudaFree(c.ws));
}

static void descriptor(ctc_case &c)
{
    cudnnDataType_t dt;
    cudnnLossNormalizationMode_t norm;
    cudnnNanPropagation_t nan;
    cudnnCTCGradMode_t gm;
    int maxl;
    CT_DOK(cudnnSetCTCLossDescriptor_v9(c.cd, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_SOFTMAX,
                                        CUDNN_CTC_SKIP_OOB_GRADIENTS, 64));
    CT_DOK(cudnnGetCTCLossDescriptor_v8(c.cd, &dt, &norm, &nan, &maxl));
    if (dt != CUDNN_DATA_FLOAT || norm != CUDNN_LOSS_NORMALIZATION_SOFTMAX || nan != CUDNN_PROPAGATE_NAN || maxl != 64)
        ct_fail(__FILE__, __LINE__, "Get_v8 after Set_v9", "the values set", "others");
    CT_DOK(cudnnSetCTCLossDescriptorEx(c.cd, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_SOFTMAX, CUDNN_NOT_PROPAGATE_NAN));
    CT_DOK(cudnnGetCTCLossDescriptor_v9(c.cd, &dt, &norm, &gm, &maxl));
    if (gm != CUDNN_CTC_ZERO_OOB_GRADIENTS)
        ct_fail(__FILE__, __LINE__, "Get_v9 after SetEx", "ZERO_OOB", "SKIP_OOB");
}

int main()
{
    CT_DOK(cudnnAdvVersionCheck()); // the CTC loss is the adv sub-library's
    ctc_case c = setup();
    descriptor(c); // leaves softmax, zeroed out-of-bound gradients
    loss(c, c.x, true, 7.0f);
    compare("costs, softmax", get(c.costs, N), c.cost, 1e-4);
    compare("gradients, softmax", get(c.grads, c.x.size()), c.grad, 2e-3);

    CT_DOK(cudnnSetCTCLossDescriptorEx(c.cd, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_NONE, CUDNN_NOT_PROPAGATE_NAN));
    loss(c, softmax(c.x), true, 7.0f);
    compare("costs, probabilities", get(c.costs, N), c.cost, 1e-4);
    compare("gradients, probabilities", get(c.grads, c.x.size()), c.grad, 2e-3);

    // Skip: the out-of-bound sequence's gradient keeps what the buffer held.
    CT_DOK(cudnnSetCTCLossDescriptor_v9(c.cd, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_SOFTMAX,
                                        CUDNN_CTC_SKIP_OOB_GRADIENTS, 256));
    loss(c, c.x, true, 7.0f);
    vec skipped = c.grad;
    for (int t = 0; t < T; t++)
        for (int k = 0; k < A; k++)
            skipped[at(t, 2, k)] = 7.0;
    compare("gradients, out of bound skipped", get(c.grads, c.x.size()), skipped, 2e-3);
    loss(c, c.x, false, 7.0f);
    compare("costs alone", get(c.costs, N), c.cost, 1e-4);
    compare("costs alone: gradients untouched", get(c.grads, c.x.size()), vec(c.x.size(), 7.0), 0);

    const int blank_label[] = {1, 0, 3, 3, 1, 2, 1, 3}, too_long[N] = {5, 4, 3, T + 1};
    CT_DNN(cudnnCTCLoss(c.h, c.pd, c.probs, blank_label, LENGTHS, INPUTS, c.costs, c.pd, c.grads,
                        CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, c.cd, nullptr, 0),
           CUDNN_STATUS_BAD_PARAM);
    CT_DNN(cudnnCTCLoss(c.h, c.pd, c.probs, LABELS, LENGTHS, too_long, c.costs, c.pd, c.grads,
                        CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, c.cd, nullptr, 0),
           CUDNN_STATUS_BAD_PARAM);
    float *few; // costs for fewer sequences than N: refused by the server's check
    CT_OK(cudaMalloc((void **)&few, (N - 1) * sizeof(float)));
    expect_refused("costs smaller than N",
                   cudnnCTCLoss(c.h, c.pd, c.probs, LABELS, LENGTHS, INPUTS, few, c.pd, c.grads,
                                CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, c.cd, nullptr, 0),
                   CUDNN_STATUS_BAD_PARAM);
    CT_OK(cudaFree(few));
    CT_OK(cudaFree(c.probs));
    CT_OK(cudaFree(c.grads));
    CT_OK(cudaFree(c.costs));
    CT_DOK(cudnnDestroyCTCLossDescriptor(c.cd));
    CT_DOK(cudnnDestroyTensorDescriptor(c.pd));
    CT_DOK(cudnnDestroy(c.h));
    CT_OK(cudaDeviceSynchronize());
    return ct_finish("dnn_ctc");
}
