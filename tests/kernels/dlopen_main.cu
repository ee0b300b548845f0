// dlopen_main.cu -- loads kernels from a shared library with dlopen, twice (the
// second time after dlclose, which unregisters and unloads the module).
#include <dlfcn.h>
#include <cstring>
#include <string>
#include "kcheck.h"

int main(int argc, char **argv)
{
    std::string lib = argc > 1 ? argv[1] : "./libktest_shlib.so";
    const int n = 100;
    float h[n], *p;
    KCUDA(cudaMalloc(&p, sizeof h));
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < n; i++)
            h[i] = (float)i;
        KCUDA(cudaMemcpy(p, h, sizeof h, cudaMemcpyHostToDevice));
        void *dl = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
        KCHECK(dl != nullptr, "dlopen %s: %s", lib.c_str(), dlerror());
        if (dl == nullptr)
            break;
        auto fn = (int (*)(float *, int))dlsym(dl, "shlib_square");
        KCHECK(fn != nullptr, "dlsym shlib_square");
        int calls = fn ? fn(p, n) : -1;
        KCHECK(calls == 1, "round %d: shlib_calls = %d", round, calls);
        KCUDA(cudaMemcpy(h, p, sizeof h, cudaMemcpyDeviceToHost));
        for (int i = 0; i < n; i++)
            KCHECK(h[i] == (float)i * i, "round %d: p[%d] = %g", round, i, h[i]);
        dlclose(dl);
    }
    cudaFree(p);
    return kcheck_finish("dlopen");
}
