// mvt -- matrix-vector product and transpose (PolyBench/GPU MVT), as two kernels:
//   x1 += A y1,  x2 += A^T y2
// Mirrors: Locality Descriptor / ICC "MVT".
//
// Entry mvt_kernel1(a, x1, y1, n): one thread per row i.
//   0 a : const float*, n x n row-major;  1 x1 : float*, n (read and written)
//   2 y1 : const float*, n;  3 n : int
//   i = blockIdx.x * blockDim.x + threadIdx.x; guard i < n
//   loads x1[i], a[i*n + j], y1[j] for j in [0, n); store x1[i]
//
// Entry mvt_kernel2(a, x2, y2, n): one thread per column i.
//   0 a : const float*, n x n;  1 x2 : float*, n;  2 y2 : const float*, n;  3 n : int
//   loads x2[i], a[j*n + i], y2[j] for j in [0, n); store x2[i]
//
// Mapping (both): 1D grid, 1D block (e.g. 256).
// Data-dependent loads: none.

extern "C" __global__ void mvt_kernel1(const float* a, float* x1, const float* y1, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float acc = x1[i];
        for (int j = 0; j < n; ++j) {
            acc += a[i * n + j] * y1[j];
        }
        x1[i] = acc;
    }
}

extern "C" __global__ void mvt_kernel2(const float* a, float* x2, const float* y2, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float acc = x2[i];
        for (int j = 0; j < n; ++j) {
            acc += a[j * n + i] * y2[j];
        }
        x2[i] = acc;
    }
}
