// symbols.cu -- a __constant__ table set with cudaMemcpyToSymbol, a __device__
// counter (initialised in the cubin) read back with cudaMemcpyFromSymbol, and the
// symbol address and size calls.
#include "kcheck.h"

__constant__ int table[16];
__device__ int counter = 100;

__global__ void lookup(const int *idx, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = table[idx[i] & 15];
        atomicAdd(&counter, 1);
    }
}

int main()
{
    const int n = 64;
    int ht[16], hidx[n], hout[n], *idx, *out, cnt = 0;
    for (int k = 0; k < 16; k++)
        ht[k] = k * k + 1;
    for (int k = 0; k < n; k++)
        hidx[k] = (k * 7) % 16;
    KCUDA(cudaMemcpyFromSymbol(&cnt, counter, sizeof cnt));
    KCHECK(cnt == 100, "initial counter %d", cnt);
    KCUDA(cudaMemcpyToSymbol(table, ht, sizeof ht));
    KCUDA(cudaMalloc(&idx, sizeof hidx));
    KCUDA(cudaMalloc(&out, sizeof hout));
    KCUDA(cudaMemcpy(idx, hidx, sizeof hidx, cudaMemcpyHostToDevice));
    lookup<<<2, 32>>>(idx, out, n);
    KCUDA(cudaGetLastError());
    KCUDA(cudaMemcpy(hout, out, sizeof hout, cudaMemcpyDeviceToHost));
    for (int k = 0; k < n; k++)
        KCHECK(hout[k] == ht[hidx[k]], "out[%d] = %d", k, hout[k]);
    KCUDA(cudaMemcpyFromSymbol(&cnt, counter, sizeof cnt));
    KCHECK(cnt == 100 + n, "counter %d", cnt);

    size_t size = 0;
    int *addr = nullptr, two[2];
    KCUDA(cudaGetSymbolSize(&size, table));
    KCHECK(size == sizeof ht, "table size %zu", size);
    KCUDA(cudaGetSymbolAddress((void **)&addr, table));
    KCUDA(cudaMemcpy(two, addr + 3, sizeof two, cudaMemcpyDeviceToHost));
    KCHECK(two[0] == ht[3] && two[1] == ht[4], "table via its address: %d %d", two[0], two[1]);
    int zero = 0;
    KCUDA(cudaMemcpyToSymbolAsync(counter, &zero, sizeof zero, 0, cudaMemcpyHostToDevice, 0));
    KCUDA(cudaMemcpyFromSymbolAsync(&cnt, counter, sizeof cnt, 0, cudaMemcpyDeviceToHost, 0));
    KCUDA(cudaStreamSynchronize(0));
    KCHECK(cnt == 0, "counter after reset %d", cnt);
    KCHECK(cudaMemcpyToSymbol(table, ht, sizeof ht, 8) == cudaErrorInvalidValue, "overflowing copy accepted");
    KCHECK(cudaMemcpyToSymbol(&zero, ht, 4) == cudaErrorInvalidSymbol, "unknown symbol accepted");
    cudaGetLastError();
    cudaFree(idx), cudaFree(out);
    return kcheck_finish("symbols");
}
