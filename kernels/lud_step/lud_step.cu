// lud_step -- internal (trailing sub-matrix) update of one block step of blocked LU
// decomposition (Rodinia lud_internal): every 16x16 tile below/right of the current
// diagonal block subtracts (its perimeter column tile) x (its perimeter row tile).
// Mirrors: Locality Descriptor / ICC "LUD".
//
// Parameters:
//   0 m          : float*, matrix_dim x matrix_dim, row-major (updated in place)
//   1 matrix_dim : int (multiple of 16)
//   2 offset     : int, index of the current diagonal block's first row/column (multiple of 16)
//
// Mapping: 2D grid (k, k) with k = (matrix_dim - offset)/16 - 1; block MUST be 16x16 (LUD_BS).
//   grow = offset + (blockIdx.y + 1)*16,  gcol = offset + (blockIdx.x + 1)*16
//   loads : m[(offset + ty)*matrix_dim + gcol + tx]   (perimeter row tile -> shared)
//           m[(grow + ty)*matrix_dim + offset + tx]   (perimeter column tile -> shared)
//           m[(grow + ty)*matrix_dim + gcol + tx]
//   store : m[(grow + ty)*matrix_dim + gcol + tx]
// Data-dependent loads: none.
#define LUD_BS 16

extern "C" __global__ void lud_internal(float* m, int matrix_dim, int offset)
{
    __shared__ float peri_row[LUD_BS][LUD_BS];
    __shared__ float peri_col[LUD_BS][LUD_BS];
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int grow = offset + (blockIdx.y + 1) * LUD_BS;
    int gcol = offset + (blockIdx.x + 1) * LUD_BS;
    peri_row[ty][tx] = m[(offset + ty) * matrix_dim + gcol + tx];
    peri_col[ty][tx] = m[(grow + ty) * matrix_dim + offset + tx];
    __syncthreads();
    float sum = 0.0f;
    for (int k = 0; k < LUD_BS; ++k) {
        sum += peri_col[ty][k] * peri_row[k][tx];
    }
    m[(grow + ty) * matrix_dim + gcol + tx] -= sum;
}
