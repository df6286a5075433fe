__device__ __noinline__ int fact(int n) { return n <= 1 ? 1 : n * fact(n - 1); }
__device__ __noinline__ float pick(const float* a, int i, int n) {
    float s = 0.0f;
    for (int k = 0; k < n; k++) s += a[i + k];
    return s;
}
extern "C" __global__ void r(const float* a, float* out, int n, int d) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = pick(a, i, 4) + (float)fact(d);
        if (d > 20) printf("deep %d\n", i);
    }
}
