// mm_tiled -- shared-memory tiled matrix multiply C = A * B (single precision).
// Mirrors: PAVER Table 2 "MM" (tiled, CUDA-samples style).
//
// Parameters:
//   0 A : const float*, n x n, row-major
//   1 B : const float*, n x n, row-major
//   2 C : float*,       n x n, row-major (output)
//   3 n : int, matrix dimension (need not be a multiple of the tile)
//
// Mapping: 2D grid of ceil(n/16) x ceil(n/16) blocks, block MUST be 16x16 (MMT_TILE).
//   row = blockIdx.y * 16 + threadIdx.y,  col = blockIdx.x * 16 + threadIdx.x
//   for t in [0, ceil(n/16)):
//     load A[row * n + (t*16 + threadIdx.x)]  if row < n && t*16+threadIdx.x < n
//     load B[(t*16 + threadIdx.y) * n + col]  if t*16+threadIdx.y < n && col < n
//     (into shared tiles, __syncthreads, 16 FMAs from shared, __syncthreads)
//   store C[row * n + col] if row < n && col < n
// Data-dependent loads: none.
#define MMT_TILE 16

extern "C" __global__ void mm_tiled(const float* A, const float* B, float* C, int n)
{
    __shared__ float As[MMT_TILE][MMT_TILE];
    __shared__ float Bs[MMT_TILE][MMT_TILE];
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int row = blockIdx.y * MMT_TILE + ty;
    int col = blockIdx.x * MMT_TILE + tx;
    int tiles = (n + MMT_TILE - 1) / MMT_TILE;
    float acc = 0.0f;
    for (int t = 0; t < tiles; ++t) {
        int a_col = t * MMT_TILE + tx;
        int b_row = t * MMT_TILE + ty;
        As[ty][tx] = (row < n && a_col < n) ? A[row * n + a_col] : 0.0f;
        Bs[ty][tx] = (b_row < n && col < n) ? B[b_row * n + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < MMT_TILE; ++k) {
            acc += As[ty][k] * Bs[k][tx];
        }
        __syncthreads();
    }
    if (row < n && col < n) {
        C[row * n + col] = acc;
    }
}
