// syr2k -- symmetric rank-2k update, double precision (PolyBench/GPU SYR2K):
//   C = alpha * A * B^T + alpha * B * A^T + beta * C
// Mirrors: PAVER Table 2 "SYR2K".
//
// Parameters:
//   0 A     : const double*, n x m, row-major
//   1 B     : const double*, n x m, row-major
//   2 C     : double*, n x n, row-major (read and written)
//   3 alpha : double
//   4 beta  : double
//   5 n     : int
//   6 m     : int
//
// Mapping: 2D grid, 2D block (e.g. 16x16).
//   j = blockIdx.x * blockDim.x + threadIdx.x,  i = blockIdx.y * blockDim.y + threadIdx.y
//   guard: i < n && j < n
//   loads : C[i*n + j], A[i*m + k], B[j*m + k], B[i*m + k], A[j*m + k] for k in [0, m)
//   store : C[i*n + j]
// Data-dependent loads: none.
extern "C" __global__ void syr2k(const double* A, const double* B, double* C,
                                 double alpha, double beta, int n, int m)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < n && j < n) {
        double acc = C[i * n + j] * beta;
        for (int k = 0; k < m; ++k) {
            acc += alpha * A[i * m + k] * B[j * m + k] + alpha * B[i * m + k] * A[j * m + k];
        }
        C[i * n + j] = acc;
    }
}
