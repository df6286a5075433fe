// Three warps of one TB (issue 41): warp 0 goes straight to the final __syncthreads(), warp 1
// spins on a volatile shared flag, warp 2 computes for `n` steps, then fills a shared buffer
// and sets the flag. The timing model traces warps on demand; when warp 0 waits at the
// barrier it runs the others until they wait too: in time slices, or the spinning warp 1
// never lets warp 2 (whose trace window ended mid-computation) set the flag.
extern "C" __global__ void spin3(const float *in, float *out, int n)
{
    __shared__ volatile int flag;
    __shared__ float buf[32];
    int lane = threadIdx.x & 31;
    int warp = threadIdx.x >> 5;
    if (threadIdx.x == 0)
        flag = 0;
    __syncthreads();
    if (warp == 1) {
        while (flag == 0) {
        }
        out[blockIdx.x * 32 + lane] = buf[lane] + 1.0f;
    } else if (warp == 2) {
        float v = in[blockIdx.x * 32 + lane];
        for (int i = 0; i < n; i++)
            v = v * 0.5f + 1.0f;
        buf[lane] = v;
        __threadfence_block();
        if (lane == 0)
            flag = 1;
    }
    __syncthreads();
}
