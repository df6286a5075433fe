// spmv_csr -- sparse matrix-vector product y = A * x, A in CSR format. Data-dependent.
// Mirrors: PAVER Table 2 "SPMV" (Parboil/SHOC-style scalar and vector CSR kernels).
//
// Entry spmv_csr_scalar(num_rows, row_ptr, col_idx, vals, x, y): one thread per row.
//   0 num_rows : int
//   1 row_ptr  : const int*, num_rows+1
//   2 col_idx  : const int*, nnz (0 <= col < num_cols)
//   3 vals     : const float*, nnz
//   4 x        : const float*, num_cols
//   5 y        : float*, num_rows (output)
//   row = blockIdx.x * blockDim.x + threadIdx.x; guard row < num_rows
//   loads row_ptr[row], row_ptr[row+1]; for j in [row_ptr[row], row_ptr[row+1]):
//   vals[j], col_idx[j], x[col_idx[j]]; store y[row].
//
// Entry spmv_csr_vector(num_rows, row_ptr, col_idx, vals, x, y): one warp (32 lanes) per row,
//   partial sums combined with __shfl_down_sync. Same parameters as above.
//   gtid = blockIdx.x * blockDim.x + threadIdx.x (unsigned); row = gtid / 32; lane = gtid % 32
//   guard row < num_rows (uniform per warp; blockDim.x must be a multiple of 32)
//   for j = row_ptr[row] + lane; j < row_ptr[row+1]; j += 32: vals[j], col_idx[j], x[col_idx[j]]
//   lane 0 stores y[row].
//
// DATA-DEPENDENT (both): the j range comes from row_ptr; x[col_idx[j]].
// Mapping: 1D grid, 1D block (e.g. 256).

extern "C" __global__ void spmv_csr_scalar(int num_rows, const int* row_ptr, const int* col_idx,
                                           const float* vals, const float* x, float* y)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < num_rows) {
        float sum = 0.0f;
        int begin = row_ptr[row];
        int end = row_ptr[row + 1];
        for (int j = begin; j < end; ++j) {
            sum += vals[j] * x[col_idx[j]];
        }
        y[row] = sum;
    }
}

extern "C" __global__ void spmv_csr_vector(int num_rows, const int* row_ptr, const int* col_idx,
                                           const float* vals, const float* x, float* y)
{
    unsigned gtid = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned lane = gtid & 31u;
    int row = (int)(gtid >> 5);
    if (row < num_rows) {
        int begin = row_ptr[row];
        int end = row_ptr[row + 1];
        float sum = 0.0f;
        for (int j = begin + (int)lane; j < end; j += 32) {
            sum += vals[j] * x[col_idx[j]];
        }
        for (int offset = 16; offset > 0; offset >>= 1) {
            sum += __shfl_down_sync(0xffffffffu, sum, offset);
        }
        if (lane == 0) {
            y[row] = sum;
        }
    }
}
