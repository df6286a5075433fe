// dwt2d -- one level of a 2D Haar discrete wavelet transform. Each thread transforms one
// 2x2 input block and writes one coefficient into each of the four sub-bands, which are
// stored as quadrants of the output image (LL top-left, HL top-right, LH bottom-left,
// HH bottom-right).
// Mirrors: PAVER Table 2 "DWT" (Rodinia dwt2d, Haar instead of 5/3 / 9/7).
//
// Parameters:
//   0 in   : const float*, rows x cols, row-major (rows and cols even)
//   1 out  : float*, rows x cols (output)
//   2 rows : int
//   3 cols : int
//
// Mapping: 2D grid, 2D block (e.g. 16x16).
//   x = blockIdx.x * blockDim.x + threadIdx.x,  y = blockIdx.y * blockDim.y + threadIdx.y
//   hc = cols/2, hr = rows/2; guard x < hc && y < hr
//   loads : in[(2y)*cols + 2x], in[(2y)*cols + 2x+1], in[(2y+1)*cols + 2x], in[(2y+1)*cols + 2x+1]
//   stores: out[y*cols + x], out[y*cols + x+hc], out[(y+hr)*cols + x], out[(y+hr)*cols + x+hc]
// Data-dependent loads: none.

extern "C" __global__ void dwt2d_haar(const float* in, float* out, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int hc = cols / 2;
    int hr = rows / 2;
    if (x < hc && y < hr) {
        float a = in[(2 * y) * cols + 2 * x];
        float b = in[(2 * y) * cols + 2 * x + 1];
        float c = in[(2 * y + 1) * cols + 2 * x];
        float d = in[(2 * y + 1) * cols + 2 * x + 1];
        out[y * cols + x] = (a + b + c + d) * 0.5f;
        out[y * cols + x + hc] = (a - b + c - d) * 0.5f;
        out[(y + hr) * cols + x] = (a + b - c - d) * 0.5f;
        out[(y + hr) * cols + x + hc] = (a - b - c + d) * 0.5f;
    }
}
