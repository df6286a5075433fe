// noret -- a row sum whose kernel ends in `exit`, never in `ret`.
// Pattern: a kernel without `ret` (the PTX ends with `exit;` after `asm("exit;")` and
// `__builtin_unreachable()`), so the last block ends the thread without returning.
//
// Parameters:
//   0 a    : const float*, rows x cols, row-major
//   1 out  : float*, rows elements (output)
//   2 rows : int
//   3 cols : int
//
// Mapping: 1D grid, 1D block. r = blockIdx.x * blockDim.x + threadIdx.x; guard r < rows.
//   loads a[r * cols + c] for c in 0..cols; store out[r].
// Data-dependent loads: none.

extern "C" __global__ void noret(const float* a, float* out, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float s = 0.0f;
        for (int c = 0; c < cols; c++) {
            s += a[r * cols + c];
        }
        out[r] = s;
    }
    asm volatile("exit;");
    __builtin_unreachable();
}
