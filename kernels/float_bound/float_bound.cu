// float_bound -- loop bounds and offsets computed in floating point from launch constants:
// `ceil((double)n / 512)` chunks per thread (a Rodinia-style work split) and a float scale.
// Mirrors: issue 13 evidence for "floating-point arithmetic on launch constants".
//
// Entry float_chunks(in, out, n, frac): each thread sums its chunk of `in`.
//   0 in   : const float*, n
//   1 out  : float*, gridDim.x * blockDim.x (output)
//   2 n    : int
//   3 frac : float (a fraction in [0, 1])
//   chunks = (int)ceil((double)n / 512); skip = (int)(frac * 4.0f);
//   tid = blockIdx.x * blockDim.x + threadIdx.x;
//   for c in [skip, chunks): i = c * 512 + tid; reads in[i] when i < n.
// Mapping: 1D grid, 1D block (blockDim.x * gridDim.x <= 512).
// Data-dependent loads: none.

extern "C" __global__ void float_chunks(const float* in, float* out, int n, float frac)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    int chunks = (int)ceil((double)n / 512.0);
    int skip = (int)(frac * 4.0f);
    float acc = 0.0f;
    for (int c = skip; c < chunks; ++c) {
        int i = c * 512 + tid;
        if (i < n) {
            acc += in[i];
        }
    }
    out[tid] = acc;
}
