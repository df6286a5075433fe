// gemv_unroll -- y = A x with a leading dimension, the inner loop explicitly unrolled by 4
// with `#pragma unroll 4` over a runtime trip count (NVRTC emits a 4x unrolled main loop
// with strength-reduced pointers plus a remainder loop).
// Extra kernel (compiler stress: unrolled runtime loop + remainder).
//
// Parameters:
//   0 A   : const float*, m rows of lda floats (row-major, lda >= n)
//   1 x   : const float*, n
//   2 y   : float*, m (output)
//   3 m   : int, rows
//   4 n   : int, columns used
//   5 lda : int, leading dimension (row pitch in elements)
//
// Mapping: 1D grid, 1D block (e.g. 128).
//   row = blockIdx.x * blockDim.x + threadIdx.x; guard row < m
//   loads A[row*lda + j], x[j] for j in [0, n); store y[row]
// Data-dependent loads: none.

extern "C" __global__ void gemv_unroll4(const float* A, const float* x, float* y, int m, int n, int lda)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < m) {
        float acc = 0.0f;
#pragma unroll 4
        for (int j = 0; j < n; ++j) {
            acc += A[row * lda + j] * x[j];
        }
        y[row] = acc;
    }
}
