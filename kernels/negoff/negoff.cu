// negoff -- reads 8 KB behind a pointer: a constant negative offset in the PTX address
// (`[%rd + -8192]`) whose effective address still lies inside the parameter's buffer.
// Pattern: negative offsets (the load belongs to the buffer its addresses fall in, not to
// the parameter whose base lies just below `base - 8192`).
//
// Parameters:
//   0 lo  : const float*, n elements (read at i)
//   1 out : float*, n elements (output)
//   2 mid : const float*, n elements (read at i - 2048 for i >= 2048)
//   3 n   : int
//
// Mapping: 1D grid, 1D block. i = blockIdx.x * blockDim.x + threadIdx.x; guard i < n.
//   loads lo[i]; back[i] = mid[i - 2048] (back = mid - 2048) when i >= 2048; store out[i].
// Data-dependent loads: none.

extern "C" __global__ void negoff(const float* lo, float* out, const float* mid, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float* back = mid - 2048;  // 8 KB before mid: below mid's buffer
    if (i < n) {
        float v = lo[i];
        if (i >= 2048) {
            v += back[i];
        }
        out[i] = v;
    }
}
