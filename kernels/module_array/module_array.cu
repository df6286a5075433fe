// module_array -- a 1D filter whose taps live in module-level arrays, not in parameters.
// Pattern: module `.global` / `.const` symbols (`mov.u64 %rd, symbol`).
//
// Parameters:
//   0 in  : const float*, n + 16 elements
//   1 out : float*, n elements (output)
//   2 n   : int
//
// Module variables:
//   taps   : __constant__ float[16]   (initialised)
//   weight : __device__ float[256]    (initialised to zeros)
//
// Mapping: 1D grid, 1D block. i = blockIdx.x * blockDim.x + threadIdx.x; guard i < n.
//   loads: in[i + k] and taps[k] for k in 0..16; weight[i % 256]; store out[i].
// Data-dependent loads: none.

__constant__ float taps[16] = {1, 2, 3, 4, 5, 6, 7, 8, 8, 7, 6, 5, 4, 3, 2, 1};
__device__ float weight[256];

extern "C" __global__ void module_array(const float* in, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float s = 0.0f;
        for (int k = 0; k < 16; k++) {
            s += in[i + k] * taps[k];
        }
        out[i] = s * weight[i % 256];
    }
}
