// syrk -- symmetric rank-k update C = alpha * A * A^T + beta * C (PolyBench/GPU SYRK).
// Mirrors: PAVER Table 2 "SYRK".
//
// Parameters:
//   0 A     : const float*, n x m, row-major
//   1 C     : float*, n x n, row-major (read and written)
//   2 alpha : float
//   3 beta  : float
//   4 n     : int, rows of A / order of C
//   5 m     : int, columns of A
//
// Mapping: 2D grid, 2D block (e.g. 32x8).
//   j = blockIdx.x * blockDim.x + threadIdx.x   (column of C)
//   i = blockIdx.y * blockDim.y + threadIdx.y   (row of C)
//   guard: i < n && j < n
//   loads : C[i * n + j], A[i * m + k], A[j * m + k] for k in [0, m)
//   store : C[i * n + j]
// Data-dependent loads: none.
extern "C" __global__ void syrk(const float* A, float* C, float alpha, float beta, int n, int m)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < n && j < n) {
        float acc = C[i * n + j] * beta;
        for (int k = 0; k < m; ++k) {
            acc += alpha * A[i * m + k] * A[j * m + k];
        }
        C[i * n + j] = acc;
    }
}
