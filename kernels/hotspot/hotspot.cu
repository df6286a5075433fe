// hotspot -- one time step of a Rodinia-like 2D thermal simulation.
// Mirrors: PAVER Table 2 "HS" (Rodinia hotspot, pyramid height 1).
//
// Parameters:
//   0 power     : const float*, rows x cols, row-major (power dissipated per cell)
//   1 temp_src  : const float*, rows x cols (temperature in)
//   2 temp_dst  : float*,       rows x cols (temperature out)
//   3 cols      : int
//   4 rows      : int
//   5 cap       : float, thermal capacitance
//   6 rx, 7 ry, 8 rz : float, thermal resistances
//   9 step      : float, time step
//   10 amb_temp : float, ambient temperature
//
// Mapping: 2D grid, block MUST be 16x16 (HS_BS). Blocks overlap by a 1-cell halo:
// each block computes a 14x14 (HS_BS-2) output tile.
//   gx = blockIdx.x * 14 + threadIdx.x - 1,  gy = blockIdx.y * 14 + threadIdx.y - 1
//   cx = clamp(gx, 0, cols-1),  cy = clamp(gy, 0, rows-1)
//   every thread loads temp_src[cy*cols + cx] and power[cy*cols + cx] into shared memory
//   __syncthreads
//   threads with 1 <= threadIdx.x <= 14, 1 <= threadIdx.y <= 14, gx < cols, gy < rows
//   store temp_dst[gy*cols + gx] (5-point stencil from shared memory; at the border the
//   clamped halo cell equals the centre cell).
//   Grid: ceil(cols/14) x ceil(rows/14).
// Data-dependent loads: none.
#define HS_BS 16

extern "C" __global__ void hotspot(const float* power, const float* temp_src, float* temp_dst,
                                   int cols, int rows, float cap, float rx, float ry, float rz,
                                   float step, float amb_temp)
{
    __shared__ float t_s[HS_BS][HS_BS];
    __shared__ float p_s[HS_BS][HS_BS];
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int gx = blockIdx.x * (HS_BS - 2) + tx - 1;
    int gy = blockIdx.y * (HS_BS - 2) + ty - 1;
    int cx = min(max(gx, 0), cols - 1);
    int cy = min(max(gy, 0), rows - 1);
    t_s[ty][tx] = temp_src[cy * cols + cx];
    p_s[ty][tx] = power[cy * cols + cx];
    __syncthreads();

    bool inner = tx >= 1 && tx <= HS_BS - 2 && ty >= 1 && ty <= HS_BS - 2;
    if (inner && gx < cols && gy < rows) {
        float c = t_s[ty][tx];
        float north = t_s[ty - 1][tx];
        float south = t_s[ty + 1][tx];
        float west = t_s[ty][tx - 1];
        float east = t_s[ty][tx + 1];
        float step_div_cap = step / cap;
        float v = c + step_div_cap * (p_s[ty][tx]
                                      + (south + north - 2.0f * c) / ry
                                      + (east + west - 2.0f * c) / rx
                                      + (amb_temp - c) / rz);
        temp_dst[gy * cols + gx] = v;
    }
}
