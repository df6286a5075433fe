// mm_naive -- naive dense matrix multiply C = A * B (single precision).
// Mirrors: PAVER Table 2 "MM" (naive, one thread per output element).
//
// Parameters:
//   0 A : const float*, n x n, row-major
//   1 B : const float*, n x n, row-major
//   2 C : float*,       n x n, row-major (output)
//   3 n : int, matrix dimension
//
// Mapping: 2D grid, 2D block (e.g. 16x16).
//   col = blockIdx.x * blockDim.x + threadIdx.x
//   row = blockIdx.y * blockDim.y + threadIdx.y
//   guard: row < n && col < n
//   loads : A[row * n + k], B[k * n + col] for k in [0, n)
//   store : C[row * n + col]
// Data-dependent loads: none.
extern "C" __global__ void mm_naive(const float* A, const float* B, float* C, int n)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < n && col < n) {
        float acc = 0.0f;
        for (int k = 0; k < n; ++k) {
            acc += A[row * n + k] * B[k * n + col];
        }
        C[row * n + col] = acc;
    }
}
