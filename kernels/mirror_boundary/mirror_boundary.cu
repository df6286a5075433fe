// mirror_boundary -- loop-carried indices that do not depend on data but are not affine
// induction variables: Rodinia dwt2d's mirrored boundary stepping (an index walks right,
// reflects at the row's end and walks back) and a counter derived with `~` (`not.b32`).
// Mirrors: issue 13 evidence for "non-affine loop-carried values evaluated concretely".
//
// Entry mirror_walk(in, taps, out, w, len): one thread per output column of one row.
//   0 in   : const float*, rows x w row-major, rows = gridDim.y
//   1 taps : const float*, 64
//   2 out  : float*, rows x w (output)
//   3 w    : int (row width, > 1)
//   4 len  : int (steps per thread)
//   row = blockIdx.y; x starts at blockIdx.x * blockDim.x + threadIdx.x, guard x < w;
//   each step reads in[row * w + x], then x += d; past either end x reflects
//   (x = 2(w - 1) - x, or x = -x) and d flips sign.
//   The tap index t starts at threadIdx.x and steps t = ~t + 3 (alternating sign);
//   each step reads taps[t & 63].
// Mapping: 2D grid (columns, rows), 1D block.
// Data-dependent loads: none.

extern "C" __global__ void mirror_walk(const float* in, const float* taps, float* out, int w,
                                       int len)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y;
    if (x >= w) {
        return;
    }
    int start = x;
    int d = 1 + (threadIdx.x & 1);
    int t = threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < len; ++k) {
        acc += in[row * w + x] * taps[t & 63];
        x += d;
        if (x >= w) {
            x = 2 * (w - 1) - x;
            d = -d;
        } else if (x < 0) {
            x = -x;
            d = -d;
        }
        t = ~t + 3;
    }
    out[row * w + start] = acc;
}
