// stencil2d -- 5-point Jacobi stencil on a 2D grid, double precision.
// Extra kernel (compiler stress: 2D grid, double, strength-reduced neighbour addressing).
//
// Parameters:
//   0 in  : const double*, ny x nx, row-major
//   1 out : double*, ny x nx (output; border untouched)
//   2 nx  : int (columns)
//   3 ny  : int (rows)
//
// Mapping: 2D grid, 2D block (e.g. 32x4).
//   i = blockIdx.x * blockDim.x + threadIdx.x (column), j = blockIdx.y * blockDim.y + threadIdx.y (row)
//   guard: i >= 1 && i < nx-1 && j >= 1 && j < ny-1
//   loads : in[j*nx + i], in[j*nx + i-1], in[j*nx + i+1], in[(j-1)*nx + i], in[(j+1)*nx + i]
//   store : out[j*nx + i]
// Data-dependent loads: none.

extern "C" __global__ void stencil2d_5pt(const double* in, double* out, int nx, int ny)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= 1 && i < nx - 1 && j >= 1 && j < ny - 1) {
        int c = j * nx + i;
        out[c] = 0.2 * (in[c] + in[c - 1] + in[c + 1] + in[c - nx] + in[c + nx]);
    }
}
