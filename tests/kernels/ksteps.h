// ksteps.h -- the little kernels the step test programs share (step.cu,
// graphstep.cu, graphs.cu): scale x by a factor, add x into y.
#ifndef KSTEPS_H
#define KSTEPS_H

__global__ void scale(float *x, int n, float by)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= by;
}

__global__ void add(float *y, const float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] += x[i];
}
#endif
