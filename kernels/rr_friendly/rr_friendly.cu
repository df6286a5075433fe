// rr_friendly -- two kernels written to favour a fair, round-robin warp scheduler over a
// greedy one (iPAWS §2.2: inter-warp locality, warps that meet at barriers): the data a
// warp loads is mostly loaded by its neighbouring warps too, so warps that progress
// together share L1 lines, while warps that drift apart (a greedy scheduler running the
// oldest warps ahead) fetch them again.
//
// rr_friendly_window: a sliding window over a stream of 128 B rows.
// Parameters:
//   0 in    : const float*, (steps + warps_per_tb + 3) * 32 * gridDim.x floats
//   1 out   : float*, one per thread
//   2 steps : int, rows each warp walks
// Mapping: 1D grid, 1D block (a multiple of 32). w = threadIdx.x / 32, lane =
//   threadIdx.x % 32, nw = blockDim.x / 32; TB b owns the stream starting at row
//   b * (steps + nw + 3). At step k, warp w reads rows base + k + w + j, j = 0..3, at
//   column lane: in[(base + k + w + j) * 32 + lane]; neighbouring warps share 3 of 4 rows.
//   Stores out[blockIdx.x * blockDim.x + threadIdx.x].
// Data-dependent loads: none.
//
// rr_friendly_sync: the same window, every step ends at a __syncthreads() after the warps
//   exchange one value through shared memory (many warps meeting at barriers, a short
//   loop body).
// Parameters: as rr_friendly_window.
// Mapping: as rr_friendly_window; shared s[threadIdx.x] is written, then after the barrier
//   s[(threadIdx.x + 32) % blockDim.x] is read; a second barrier guards the next write.
// Data-dependent loads: none.
//
// rr_friendly_table: every warp walks the same table of 512 B rows (streamcluster's
//   shared cluster centres, iPAWS §4.1: "all threads should access the same center point
//   data"), doing `work` rounds of four independent multiply-add chains per row. Warps that
//   walk together fetch each row once per SM; a warp running ahead of the others (a greedy
//   scheduler favouring the oldest warps) pushes rows out of the L1 before the younger
//   warps read them, when the table is larger than the L1.
// Parameters:
//   0 table : const float4*, rows * 32 float4 (512 B per row)
//   1 out   : float*, one per thread
//   2 rows  : int
//   3 work  : int
// Mapping: 1D grid, 1D block. Every thread reads table[r * 32 + threadIdx.x % 32] for
//   r = 0..rows-1 (all warps of all TBs read the same rows). Stores
//   out[blockIdx.x * blockDim.x + threadIdx.x].
// Data-dependent loads: none.

extern "C" __global__ void rr_friendly_table(const float4* table, float* out, int rows, int work)
{
    int lane = threadIdx.x & 31;
    float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
    for (int r = 0; r < rows; ++r) {
        float4 c = table[r * 32 + lane];
        for (int t = 0; t < work; ++t) {
            a0 = fmaf(a0, c.x, 1.0f);
            a1 = fmaf(a1, c.y, 2.0f);
            a2 = fmaf(a2, c.z, 3.0f);
            a3 = fmaf(a3, c.w, 4.0f);
        }
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = (a0 + a1) + (a2 + a3);
}

extern "C" __global__ void rr_friendly_window(const float* in, float* out, int steps)
{
    int nw = blockDim.x >> 5;
    int w = threadIdx.x >> 5;
    int lane = threadIdx.x & 31;
    long base = (long)blockIdx.x * (steps + nw + 3);
    float acc = 0.0f;
    for (int k = 0; k < steps; ++k) {
        long row = base + k + w;
        float a = in[(row + 0) * 32 + lane];
        float b = in[(row + 1) * 32 + lane];
        float c = in[(row + 2) * 32 + lane];
        float d = in[(row + 3) * 32 + lane];
        acc = acc * 0.5f + (a + b) * (c - d);
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

extern "C" __global__ void rr_friendly_sync(const float* in, float* out, int steps)
{
    __shared__ float s[1024];
    int nw = blockDim.x >> 5;
    int w = threadIdx.x >> 5;
    int lane = threadIdx.x & 31;
    long base = (long)blockIdx.x * (steps + nw + 3);
    float acc = 0.0f;
    for (int k = 0; k < steps; ++k) {
        long row = base + k + w;
        float a = in[(row + 0) * 32 + lane];
        float b = in[(row + 1) * 32 + lane];
        float c = in[(row + 2) * 32 + lane];
        float d = in[(row + 3) * 32 + lane];
        s[threadIdx.x] = (a + b) * (c - d);
        __syncthreads();
        acc = acc * 0.5f + s[(threadIdx.x + 32) % blockDim.x];
        __syncthreads();
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
