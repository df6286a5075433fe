// conv2d -- 3x3 2D convolution with fixed coefficients (PolyBench/GPU 2DCONV).
// Mirrors: Locality Descriptor / ICC "2DCONV".
//
// Parameters:
//   0 A  : const float*, ni x nj, row-major
//   1 B  : float*, ni x nj (output; border untouched)
//   2 ni : int (rows)
//   3 nj : int (columns)
//
// Mapping: 2D grid, 2D block (e.g. 32x8).
//   j = blockIdx.x * blockDim.x + threadIdx.x (column), i = blockIdx.y * blockDim.y + threadIdx.y (row)
//   guard: i > 0 && j > 0 && i < ni-1 && j < nj-1
//   loads : A[(i+di)*nj + (j+dj)] for di, dj in {-1, 0, 1}
//   store : B[i*nj + j]
// Data-dependent loads: none.

extern "C" __global__ void conv2d(const float* A, float* B, int ni, int nj)
{
    const float c11 = 0.2f, c21 = 0.5f, c31 = -0.8f;
    const float c12 = -0.3f, c22 = 0.6f, c32 = -0.9f;
    const float c13 = 0.4f, c23 = 0.7f, c33 = 0.10f;
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i > 0 && j > 0 && i < ni - 1 && j < nj - 1) {
        B[i * nj + j] = c11 * A[(i - 1) * nj + (j - 1)] + c12 * A[(i + 0) * nj + (j - 1)] + c13 * A[(i + 1) * nj + (j - 1)]
                      + c21 * A[(i - 1) * nj + (j + 0)] + c22 * A[(i + 0) * nj + (j + 0)] + c23 * A[(i + 1) * nj + (j + 0)]
                      + c31 * A[(i - 1) * nj + (j + 1)] + c32 * A[(i + 0) * nj + (j + 1)] + c33 * A[(i + 1) * nj + (j + 1)];
    }
}
