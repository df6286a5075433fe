// fdtd3d -- radius-2 3D finite-difference stencil (CUDA samples FDTD3d style): a 2D grid of
// 32x8 blocks covers the x-y plane and every thread marches along z; each x-y plane is
// staged in a shared-memory tile with a 2-cell halo, z neighbours come from global memory.
// Mirrors: Locality Descriptor / ICC "FDTD3D".
//
// Volume layout: padded by FD_R = 2 cells on every side:
//   sx = dimx + 4, sy = dimy + 4, sz = dimz + 4; element (x, y, z) of the padded volume is
//   at (z*sy + y)*sx + x; interior point (gx, gy, z) is padded (gx+2, gy+2, z+2).
//
// Parameters:
//   0 out   : float*, sx*sy*sz (output; only interior points written)
//   1 in    : const float*, sx*sy*sz
//   2 coeff : const float*, FD_R+1 = 3 stencil coefficients
//   3 dimx  : int (multiple of 32)
//   4 dimy  : int (multiple of 8)
//   5 dimz  : int
//
// Mapping: 2D grid (dimx/32, dimy/8), block MUST be 32x8 (FD_BX x FD_BY).
//   gx = blockIdx.x*32 + tx, gy = blockIdx.y*8 + ty
//   for z in [0, dimz): c = ((z+2)*sy + gy+2)*sx + gx+2
//     load in[c]; tx < 2: in[c-2], in[c+32]; ty < 2: in[c-2*sx], in[c+8*sx]   (into shared)
//     load coeff[0..2], in[c - r*sx*sy], in[c + r*sx*sy] for r in {1, 2}; store out[c]
// Data-dependent loads: none.
#define FD_R 2
#define FD_BX 32
#define FD_BY 8

extern "C" __global__ void fdtd3d(float* out, const float* in, const float* coeff, int dimx, int dimy, int dimz)
{
    __shared__ float tile[FD_BY + 2 * FD_R][FD_BX + 2 * FD_R];
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int gx = blockIdx.x * FD_BX + tx;
    int gy = blockIdx.y * FD_BY + ty;
    int sx = dimx + 2 * FD_R;
    int sy = dimy + 2 * FD_R;
    int stride_z = sx * sy;
    for (int z = 0; z < dimz; ++z) {
        int c = ((z + FD_R) * sy + gy + FD_R) * sx + gx + FD_R;
        tile[ty + FD_R][tx + FD_R] = in[c];
        if (tx < FD_R) {
            tile[ty + FD_R][tx] = in[c - FD_R];
            tile[ty + FD_R][tx + FD_BX + FD_R] = in[c + FD_BX];
        }
        if (ty < FD_R) {
            tile[ty][tx + FD_R] = in[c - FD_R * sx];
            tile[ty + FD_BY + FD_R][tx + FD_R] = in[c + FD_BY * sx];
        }
        __syncthreads();
        float v = coeff[0] * tile[ty + FD_R][tx + FD_R];
        for (int r = 1; r <= FD_R; ++r) {
            v += coeff[r] * (tile[ty + FD_R][tx + FD_R - r] + tile[ty + FD_R][tx + FD_R + r]
                             + tile[ty + FD_R - r][tx + FD_R] + tile[ty + FD_R + r][tx + FD_R]
                             + in[c - r * stride_z] + in[c + r * stride_z]);
        }
        out[c] = v;
        __syncthreads();
    }
}
