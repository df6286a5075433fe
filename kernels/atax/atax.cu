// atax -- y = A^T (A x) (PolyBench/GPU ATAX), as two kernels.
// Mirrors: Locality Descriptor / ICC "ATAX".
//
// Entry atax_kernel1(A, x, tmp, nx, ny): tmp = A x, one thread per row i.
//   0 A : const float*, nx x ny row-major;  1 x : const float*, ny;  2 tmp : float*, nx (output)
//   3 nx, 4 ny : int
//   i = blockIdx.x * blockDim.x + threadIdx.x; guard i < nx
//   loads A[i*ny + j], x[j] for j in [0, ny); store tmp[i]
//
// Entry atax_kernel2(A, tmp, y, nx, ny): y = A^T tmp, one thread per column j.
//   0 A : const float*, nx x ny;  1 tmp : const float*, nx;  2 y : float*, ny (output)
//   3 nx, 4 ny : int
//   j = blockIdx.x * blockDim.x + threadIdx.x; guard j < ny
//   loads A[i*ny + j], tmp[i] for i in [0, nx); store y[j]
//
// Mapping (both): 1D grid, 1D block (e.g. 256).
// Data-dependent loads: none.

extern "C" __global__ void atax_kernel1(const float* A, const float* x, float* tmp, int nx, int ny)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < nx) {
        float acc = 0.0f;
        for (int j = 0; j < ny; ++j) {
            acc += A[i * ny + j] * x[j];
        }
        tmp[i] = acc;
    }
}

extern "C" __global__ void atax_kernel2(const float* A, const float* tmp, float* y, int nx, int ny)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < ny) {
        float acc = 0.0f;
        for (int i = 0; i < nx; ++i) {
            acc += A[i * ny + j] * tmp[i];
        }
        y[j] = acc;
    }
}
