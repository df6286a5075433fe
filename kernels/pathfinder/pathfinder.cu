// pathfinder -- Rodinia-like dynamic programming over a 2D grid of wall costs,
// computing `iters` rows per launch in shared memory (pyramid with halo).
// Mirrors: PAVER Table 2 "PF" (Rodinia pathfinder / dynproc_kernel).
//
// Parameters:
//   0 wall      : const int*, rows x cols, row-major cost grid
//   1 src       : const int*, cols, accumulated cost of row start_row-1
//   2 dst       : int*, cols, accumulated cost of row start_row+iters-1 (output)
//   3 cols      : int
//   4 start_row : int, first wall row consumed
//   5 iters     : int, rows processed per launch (pyramid height), 1 <= iters < 128
//
// Mapping: 1D grid, block MUST be 256 threads (PF_BS). Each block produces
// small = 256 - 2*iters consecutive outputs; grid = ceil(cols / small).
//   x  = blockIdx.x * small + threadIdx.x - iters   (global column of the thread)
//   xc = clamp(x, 0, cols-1)
//   load src[xc] into shared
//   for i in [0, iters): threads with i+1 <= threadIdx.x <= 254-i
//       load wall[(start_row + i) * cols + xc]  (min of 3 shared neighbours + wall)
//   store dst[x] for threads with iters <= threadIdx.x < 256-iters and x < cols
// Data-dependent loads: none.
#define PF_BS 256

extern "C" __global__ void pathfinder(const int* wall, const int* src, int* dst,
                                      int cols, int start_row, int iters)
{
    __shared__ int prev[PF_BS];
    __shared__ int result[PF_BS];
    int tx = threadIdx.x;
    int small = PF_BS - 2 * iters;
    int x = blockIdx.x * small + tx - iters;
    int xc = min(max(x, 0), cols - 1);
    prev[tx] = src[xc];
    __syncthreads();
    for (int i = 0; i < iters; ++i) {
        bool valid = tx >= i + 1 && tx <= PF_BS - 2 - i;
        if (valid) {
            int left = prev[tx - 1];
            int centre = prev[tx];
            int right = prev[tx + 1];
            result[tx] = min(left, min(centre, right)) + wall[(start_row + i) * cols + xc];
        }
        __syncthreads();
        if (valid) {
            prev[tx] = result[tx];
        }
        __syncthreads();
    }
    if (tx >= iters && tx < PF_BS - iters && x < cols) {
        dst[x] = prev[tx];
    }
}
