// A producer/consumer pair inside one TB (issue 41): warp 1 (the consumer) spins on a
// volatile shared flag that warp 0 (the producer) sets after filling a shared buffer; then
// both meet at named barrier 1 for 64 threads and the consumer writes what it received. A
// GPU schedules warps fairly, so the spin ends; an interpreter that runs a warp until it
// waits never runs the producer again once the consumer, the last to arrive at
// `__syncthreads()`, goes on from there into its spin.
extern "C" __global__ void prodcons(const float *in, float *out)
{
    __shared__ volatile int flag;
    __shared__ float buf[32];
    int lane = threadIdx.x & 31;
    int warp = threadIdx.x >> 5;
    if (threadIdx.x == 0)
        flag = 0;
    __syncthreads();
    if (warp == 0) {
        buf[lane] = in[blockIdx.x * 32 + lane] * 2.0f;
        __threadfence_block();
        if (lane == 0)
            flag = 1;
        asm volatile("bar.sync 1, 64;");
    } else {
        while (flag == 0) {
        }
        asm volatile("bar.sync 1, 64;");
        out[blockIdx.x * 32 + lane] = buf[lane] + 1.0f;
    }
}
