// transpose -- naive out-of-place matrix transpose (coalesced reads, strided writes).
// Mirrors: Locality Descriptor / ICC "TRA" (CUDA samples transposeNaive).
//
// Parameters:
//   0 in   : const float*, rows x cols, row-major
//   1 out  : float*, cols x rows, row-major (output)
//   2 rows : int
//   3 cols : int
//
// Mapping: 2D grid, 2D block (e.g. 16x16).
//   x = blockIdx.x * blockDim.x + threadIdx.x (column of in), y = blockIdx.y * blockDim.y + threadIdx.y
//   guard: x < cols && y < rows
//   load in[y*cols + x]; store out[x*rows + y]
// Data-dependent loads: none.

extern "C" __global__ void transpose_naive(const float* in, float* out, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows) {
        out[x * rows + y] = in[y * cols + x];
    }
}
