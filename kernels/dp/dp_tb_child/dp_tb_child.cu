// dp_tb_child: a parent that launches one child grid per parent TB over that TB's slice of the
// data (the parent-child pattern whose data reuse Tang et al., POMACS 2018, measure), a child
// that uses dynamic shared memory, and a tail launch that runs after the whole parent grid and
// its children.
//
// dp_tb_parent(in, flags, out, sums, total, scale, bias), 1D grid of 1D blocks, slice of TB b:
// elements [b * blockDim.x * 4, (b + 1) * blockDim.x * 4) of the f32 array `in` (4 per thread).
//   1. every thread t sets flags[i] = (in[i] > 0.5f) for its 4 elements i = base + t + k * blockDim.x;
//   2. __syncthreads(), so the child sees the flags (a parent's writes before a launch are
//      visible to the child);
//   3. thread 0 launches dp_tb_child over the slice: 4 blocks of blockDim.x threads, blockDim.x
//      * 4 bytes of dynamic shared memory, parameters (in, flags, out, sums + b, base, scale, bias);
//   4. thread 0 of TB 0 tail-launches dp_tb_total(sums, total, gridDim.x) (one block of 32),
//      which runs after the parent grid and every child.
// dp_tb_child: out[i] = flags[i] ? in[i] * scale + (float)bias : in[i]; each block sums its
// out values in dynamic shared memory (a tree reduction in f32) and thread 0 adds the block's
// sum to *sum (sums[b] of its parent TB) with a f64 atomicAdd.
// dp_tb_total: thread 0 writes total[0] = sum of sums[0 .. nparents).
// Data-dependent: only the flags' values; every address follows from the launch.

extern "C" __global__ void dp_tb_child(const float *in, const unsigned char *flags, float *out,
                                       double *sum, int base, float scale, double bias) {
    extern __shared__ float part[];
    int i = base + blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[i];
    float r = flags[i] ? v * scale + (float)bias : v;
    out[i] = r;
    part[threadIdx.x] = r;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(sum, (double)part[0]);
}

extern "C" __global__ void dp_tb_total(const double *sums, double *total, int nparents) {
    if (threadIdx.x == 0) {
        double t = 0.0;
        for (int b = 0; b < nparents; b++) t += sums[b];
        total[0] = t;
    }
}

extern "C" __global__ void dp_tb_parent(const float *in, unsigned char *flags, float *out,
                                        double *sums, double *total, float scale, double bias) {
    int base = blockIdx.x * blockDim.x * 4;
    for (int k = 0; k < 4; k++) {
        int i = base + threadIdx.x + k * blockDim.x;
        flags[i] = in[i] > 0.5f;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        dp_tb_child<<<4, blockDim.x, blockDim.x * sizeof(float)>>>(in, flags, out, sums + blockIdx.x,
                                                                   base, scale, bias);
        if (blockIdx.x == 0) {
            dp_tb_total<<<1, 32, 0, cudaStreamTailLaunch>>>(sums, total, gridDim.x);
        }
    }
}
