// gto_friendly -- written to favour a greedy warp scheduler (GTO) over round robin
// (iPAWS §2.2, CCWS: intra-warp locality that the L1 holds for a few warps but not for
// all): every warp re-reads its own chunk of `chunk` floats `passes` times. The chunks of
// all resident warps together exceed the L1; a greedy scheduler keeps few warps running,
// whose chunks stay in the L1, while round robin makes every warp's chunk compete.
//
// Parameters:
//   0 a      : const float*, gridDim.x * (blockDim.x / 32) * chunk floats
//   1 out    : float*, one per thread
//   2 chunk  : int, floats per warp (a multiple of 32)
//   3 passes : int, times each warp reads its chunk
//   4 work   : int, rounds of the eight multiply-add chains per loaded value
// Mapping: 1D grid, 1D block (a multiple of 32). w = threadIdx.x / 32, lane =
//   threadIdx.x % 32; warp g = blockIdx.x * (blockDim.x / 32) + w reads
//   a[g * chunk + j * 32 + lane] for j = 0..chunk/32-1 in each pass (one 128 B line per
//   load), and feeds each value `work` times to eight independent multiply-add chains (enough
//   independent work that a warp whose loads hit keeps its scheduler busy, so a greedy
//   scheduler needs few warps). Stores out[blockIdx.x * blockDim.x + threadIdx.x].
// Data-dependent loads: none.

extern "C" __global__ void gto_friendly(const float* a, float* out, int chunk, int passes,
                                          int work)
{
    int nw = blockDim.x >> 5;
    int w = threadIdx.x >> 5;
    int lane = threadIdx.x & 31;
    const float* row = a + ((long)blockIdx.x * nw + w) * chunk;
    float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
    float a4 = 0.0f, a5 = 0.0f, a6 = 0.0f, a7 = 0.0f;
    for (int r = 0; r < passes; ++r) {
        for (int j = 0; j < chunk; j += 32) {
            float x = row[j + lane];
            for (int t = 0; t < work; ++t) {
                a0 = fmaf(a0, x, 1.0f);
                a1 = fmaf(a1, x, 2.0f);
                a2 = fmaf(a2, x, 3.0f);
                a3 = fmaf(a3, x, 4.0f);
                a4 = fmaf(a4, x, 5.0f);
                a5 = fmaf(a5, x, 6.0f);
                a6 = fmaf(a6, x, 7.0f);
                a7 = fmaf(a7, x, 8.0f);
            }
        }
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));
}
