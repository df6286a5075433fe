// colwalk -- column walks: a warp's lanes walk columns of a row-major matrix together, each
// lane down its own column with a large stride (PolyBench atax / bicg / mvt kernel 2
// style), with a pitch that is not a multiple of the cache line, and the row-walk twin.
// Mirrors: issue 13 evidence for "column walks as fast as row walks".
//
// Entry colwalk_col(A, x, y, rows, cols, ld): y[j] = sum_i A[i*ld + j] * x[i].
// Entry colwalk_row(A, x, y, rows, cols, ld): y[i] = sum_j A[i*ld + j] * x[j].
//   0 A : const float*, rows x ld;  1 x : const float*;  2 y : float* (output)
//   3 rows, 4 cols, 5 ld : int (ld >= cols)
//   col: j = blockIdx.x * blockDim.x + threadIdx.x, guard j < cols, loop i in [0, rows)
//   row: i = blockIdx.x * blockDim.x + threadIdx.x, guard i < rows, loop j in [0, cols)
// Mapping: 1D grid, 1D block.
// Data-dependent loads: none.

extern "C" __global__ void colwalk_col(const float* A, const float* x, float* y, int rows,
                                       int cols, int ld)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < cols) {
        float acc = 0.0f;
        for (int i = 0; i < rows; ++i) {
            acc += A[i * ld + j] * x[i];
        }
        y[j] = acc;
    }
}

extern "C" __global__ void colwalk_row(const float* A, const float* x, float* y, int rows,
                                       int cols, int ld)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows) {
        float acc = 0.0f;
        for (int j = 0; j < cols; ++j) {
            acc += A[i * ld + j] * x[j];
        }
        y[i] = acc;
    }
}
