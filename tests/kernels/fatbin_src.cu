// fatbin_src.cu -- kernels with known parameter layouts and globals, compiled to
// fatbinaries (plain, compressed, several archs, PTX only) that check_fatbin parses.
struct Pair { float a; double b; int c; };      // 24 bytes, align 8
struct Big { char x[4000]; };
struct Huge { int x[5000]; };                   // 20000 bytes: KPARAM_INFO_V2 records

__constant__ float ktable[16] = {1, 2, 3};
__device__ int kcounter = 7;
__device__ double kzeros[100];

__global__ void k_ptrs(const float *a, const float *b, float *c, int n) { if (n) c[0] = a[0] + b[0] + ktable[0] + kcounter + kzeros[0]; }
__global__ void k_scalars(char c, short s, int i, long long l, float f, double d, Pair p) { }
__global__ void k_big(Big b, int *out) { out[0] = b.x[3999]; }
__global__ void k_huge(int a, Huge h, int *out) { out[0] = h.x[4999] + a; }
__global__ void k_none() { }
template <typename T> __global__ void k_tmpl(T *p, T v) { p[0] = v; }
template __global__ void k_tmpl<double>(double *, double);
namespace { __global__ void k_internal(int *p) { p[0] = 1; } }
void use_internal(int *p) { k_internal<<<1, 1>>>(p); }
