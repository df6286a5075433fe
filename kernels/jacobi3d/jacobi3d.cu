// jacobi3d -- 7-point Jacobi stencil on a 3D volume with a 3D grid and 3D blocks
// (blockIdx.z / threadIdx.z in the index arithmetic).
// Extra kernel (compiler stress: 3D grid).
//
// Parameters:
//   0 in  : const float*, nz x ny x nx, element (x, y, z) at (z*ny + y)*nx + x
//   1 out : float*, same shape (output; boundary untouched)
//   2 nx, 3 ny, 4 nz : int
//
// Mapping: 3D grid, 3D block (e.g. 8x8x4).
//   x = blockIdx.x*blockDim.x + threadIdx.x, y = blockIdx.y*blockDim.y + threadIdx.y,
//   z = blockIdx.z*blockDim.z + threadIdx.z
//   guard: 1 <= x < nx-1 && 1 <= y < ny-1 && 1 <= z < nz-1
//   loads : in[c], in[c +- 1], in[c +- nx], in[c +- nx*ny] with c = (z*ny + y)*nx + x
//   store : out[c]
// Data-dependent loads: none.

extern "C" __global__ void jacobi3d_7pt(const float* in, float* out, int nx, int ny, int nz)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x >= 1 && x < nx - 1 && y >= 1 && y < ny - 1 && z >= 1 && z < nz - 1) {
        int plane = nx * ny;
        int c = (z * ny + y) * nx + x;
        out[c] = (1.0f / 7.0f) * (in[c] + in[c - 1] + in[c + 1] + in[c - nx] + in[c + nx]
                                  + in[c - plane] + in[c + plane]);
    }
}
