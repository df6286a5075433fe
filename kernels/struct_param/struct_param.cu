// struct_param -- a strided 2D copy whose geometry comes in a by-value struct parameter.
// Pattern: by-value struct parameters (`.param .align 8 .b8 p[N]`, `ld.param` at offsets).
//
// Parameters:
//   0 g : struct Geom by value (40 bytes, align 8):
//         offset  0: const float* src      offset  8: float* dst
//         offset 16: int rows              offset 20: int cols
//         offset 24: int pitch (elements)  offset 28: int shift
//         offset 32: long long unused
//
// Mapping: 2D grid, 2D block. x = blockIdx.x*blockDim.x + threadIdx.x (column),
//   y = blockIdx.y*blockDim.y + threadIdx.y (row); guard x < cols && y < rows.
//   load src[y * pitch + x + shift]; store dst[y * cols + x].
// Data-dependent loads: none (src and dst are pointers inside the struct).

struct Geom {
    const float* src;
    float* dst;
    int rows;
    int cols;
    int pitch;
    int shift;
    long long unused;
};

extern "C" __global__ void struct_param(Geom g)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < g.cols && y < g.rows) {
        g.dst[y * g.cols + x] = g.src[y * g.pitch + x + g.shift];
    }
}
