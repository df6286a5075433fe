// srad -- speckle reducing anisotropic diffusion, one iteration as two kernels
// (Rodinia srad_v2 style; neighbour indices clamped at the image border).
// Mirrors: PAVER Table 2 "SRAD".
//
// Entry srad_diffusion_coeff(J, C, dN, dS, dW, dE, rows, cols, q0sqr):
//   0 J      : const float*, rows x cols image (values must be > 0)
//   1 C      : float*, rows x cols diffusion coefficient (output)
//   2..5 dN, dS, dW, dE : float*, rows x cols directional derivatives (output)
//   6 rows, 7 cols : int
//   8 q0sqr  : float
//   loads : J[r*cols+c], J[rn*cols+c], J[rs*cols+c], J[r*cols+cw], J[r*cols+ce]
//   stores: C, dN, dS, dW, dE at [r*cols+c]
//
// Entry srad_update(J, C, dN, dS, dW, dE, rows, cols, lambda):
//   0 J : float*, rows x cols (read and written)
//   1 C : const float*;  2..5 dN, dS, dW, dE : const float*
//   6 rows, 7 cols : int;  8 lambda : float
//   loads : C[r*cols+c], C[rs*cols+c], C[r*cols+ce], dN/dS/dW/dE[r*cols+c], J[r*cols+c]
//   store : J[r*cols+c]
//
// Mapping (both): 2D grid, 2D block (e.g. 16x16).
//   c = blockIdx.x * blockDim.x + threadIdx.x,  r = blockIdx.y * blockDim.y + threadIdx.y
//   guard: r < rows && c < cols
//   rn = max(r-1, 0), rs = min(r+1, rows-1), cw = max(c-1, 0), ce = min(c+1, cols-1)
// Data-dependent loads: none.

extern "C" __global__ void srad_diffusion_coeff(const float* J, float* C, float* dN, float* dS,
                                                float* dW, float* dE, int rows, int cols, float q0sqr)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) {
        int idx = r * cols + c;
        int rn = r > 0 ? r - 1 : 0;
        int rs = r < rows - 1 ? r + 1 : rows - 1;
        int cw = c > 0 ? c - 1 : 0;
        int ce = c < cols - 1 ? c + 1 : cols - 1;
        float jc = J[idx];
        float n = J[rn * cols + c] - jc;
        float s = J[rs * cols + c] - jc;
        float w = J[r * cols + cw] - jc;
        float e = J[r * cols + ce] - jc;
        float g2 = (n * n + s * s + w * w + e * e) / (jc * jc);
        float l = (n + s + w + e) / jc;
        float num = 0.5f * g2 - (1.0f / 16.0f) * (l * l);
        float den = 1.0f + 0.25f * l;
        float qsqr = num / (den * den);
        den = (qsqr - q0sqr) / (q0sqr * (1.0f + q0sqr));
        float coeff = 1.0f / (1.0f + den);
        coeff = coeff < 0.0f ? 0.0f : (coeff > 1.0f ? 1.0f : coeff);
        C[idx] = coeff;
        dN[idx] = n;
        dS[idx] = s;
        dW[idx] = w;
        dE[idx] = e;
    }
}

extern "C" __global__ void srad_update(float* J, const float* C, const float* dN, const float* dS,
                                       const float* dW, const float* dE, int rows, int cols, float lambda)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) {
        int idx = r * cols + c;
        int rs = r < rows - 1 ? r + 1 : rows - 1;
        int ce = c < cols - 1 ? c + 1 : cols - 1;
        float c_n = C[idx];
        float c_s = C[rs * cols + c];
        float c_w = C[idx];
        float c_e = C[r * cols + ce];
        float d = c_n * dN[idx] + c_s * dS[idx] + c_w * dW[idx] + c_e * dE[idx];
        J[idx] = J[idx] + 0.25f * lambda * d;
    }
}
