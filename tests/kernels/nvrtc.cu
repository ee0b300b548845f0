// nvrtc.cu -- kernels the program compiles itself with NVRTC to machine code
// (nvrtcGetCUBIN for sm_90) and loads with the driver: a template instantiated
// through a name expression and a plain kernel, each result checked. On the
// emulated device they run from the PTX cudarem keeps beside each cubin
// (interpose/crm_nvrtc.c). Prints "PASS nvrtc".
#include "kcheck.h"
#include <cuda.h>
#include <nvrtc.h>
#include <cstring>
#include <string>
#include <vector>

static const char *source = R"(
template <typename T> __global__ void scale(T *x, int n, T by)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= by;
}
extern "C" __global__ void iota(int *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = i;
}
)";

#define KNVRTC(call)                                                                \
    do {                                                                            \
        nvrtcResult kn_rc = (call);                                                 \
        KCHECK(kn_rc == NVRTC_SUCCESS, "%s: %s", #call, nvrtcGetErrorString(kn_rc)); \
    } while (0)

typedef CUresult (*load_fn)(CUmodule *, const void *);
typedef CUresult (*get_fn)(CUfunction *, CUmodule, const char *);
typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                              CUstream, void **, void **);
typedef CUresult (*unload_fn)(CUmodule);

/* Compiles source with one architecture option; the cubin and scale<float>'s lowered name. */
static std::vector<char> compile(const char *arch_option, std::string *lowered)
{
    nvrtcProgram prog;
    std::vector<char> cubin;
    KNVRTC(nvrtcCreateProgram(&prog, source, "nvrtc_test.cu", 0, nullptr, nullptr));
    KNVRTC(nvrtcAddNameExpression(prog, "scale<float>"));
    const char *opts[] = {arch_option, "--std=c++17"};
    nvrtcResult rc = nvrtcCompileProgram(prog, 2, opts);
    if (rc != NVRTC_SUCCESS) {
        size_t n = 0;
        nvrtcGetProgramLogSize(prog, &n);
        std::vector<char> log(n + 1);
        nvrtcGetProgramLog(prog, log.data());
        KCHECK(false, "compile %s: %s", arch_option, log.data());
        return cubin;
    }
    const char *name = nullptr;
    KNVRTC(nvrtcGetLoweredName(prog, "scale<float>", &name));
    *lowered = name != nullptr ? name : "";
    size_t size = 0;
    KNVRTC(nvrtcGetCUBINSize(prog, &size));
    cubin.resize(size);
    KNVRTC(nvrtcGetCUBIN(prog, cubin.data()));
    KNVRTC(nvrtcDestroyProgram(&prog));
    return cubin;
}

static void run(const char *arch_option)
{
    load_fn load = (load_fn)kcheck_driver_fn("cuModuleLoadData", 2000);
    get_fn get = (get_fn)kcheck_driver_fn("cuModuleGetFunction", 2000);
    launch_fn launch = (launch_fn)kcheck_driver_fn("cuLaunchKernel", 4000);
    unload_fn unload = (unload_fn)kcheck_driver_fn("cuModuleUnload", 2000);
    std::string lowered;
    std::vector<char> cubin = compile(arch_option, &lowered);
    if (cubin.empty() || load == nullptr || get == nullptr || launch == nullptr || unload == nullptr)
        return;
    KCHECK(cubin.size() > 4 && std::memcmp(cubin.data(), "\177ELF", 4) == 0, "%s: not a cubin", arch_option);
    CUmodule mod = nullptr;
    CUfunction iota = nullptr, scale = nullptr;
    KCHECK(load(&mod, cubin.data()) == CUDA_SUCCESS, "%s: cuModuleLoadData", arch_option);
    KCHECK(get(&iota, mod, "iota") == CUDA_SUCCESS, "iota");
    KCHECK(get(&scale, mod, lowered.c_str()) == CUDA_SUCCESS, "%s", lowered.c_str());
    const int n = 1000;
    int *xi = nullptr;
    KCUDA(cudaMalloc(&xi, n * sizeof(int)));
    int count = n;
    void *iota_args[] = {&xi, &count};
    KCHECK(launch(iota, 4, 1, 1, 256, 1, 1, 0, nullptr, iota_args, nullptr) == CUDA_SUCCESS, "launch iota");
    std::vector<int> back(n);
    KCUDA(cudaMemcpy(back.data(), xi, n * sizeof(int), cudaMemcpyDeviceToHost));
    KCHECK(back[0] == 0 && back[n - 1] == n - 1, "%s: iota gave %d %d", arch_option, back[0], back[n - 1]);
    std::vector<float> f(n);
    for (int i = 0; i < n; i++)
        f[i] = (float)i;
    float *xf = nullptr, by = 2.5f;
    KCUDA(cudaMalloc(&xf, n * sizeof(float)));
    KCUDA(cudaMemcpy(xf, f.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    void *scale_args[] = {&xf, &count, &by};
    KCHECK(launch(scale, 4, 1, 1, 256, 1, 1, 0, nullptr, scale_args, nullptr) == CUDA_SUCCESS, "launch scale");
    KCUDA(cudaMemcpy(f.data(), xf, n * sizeof(float), cudaMemcpyDeviceToHost));
    KCHECK(f[2] == 5.0f && f[n - 1] == 2.5f * (n - 1), "%s: scale<float> gave %g %g", arch_option, f[2], f[n - 1]);
    KCUDA(cudaFree(xi));
    KCUDA(cudaFree(xf));
    KCHECK(unload(mod) == CUDA_SUCCESS, "cuModuleUnload");
}

int main()
{
    KCUDA(cudaFree(nullptr)); /* the primary context, which the driver calls use */
    run("--gpu-architecture=sm_90");
    run("-arch=sm_90");
    return kcheck_finish("nvrtc");
}
