// sad -- block-matching motion estimation: sum of absolute differences between a 4x4
// macroblock of the current frame and every candidate 4x4 block of the reference frame in
// a +-8 pixel search window (candidates clamped to the frame).
// Mirrors: PAVER Table 2 "SAD" (Parboil sad, simplified to one block size).
//
// Parameters:
//   0 cur    : const unsigned short*, height x width current frame, row-major
//   1 ref    : const unsigned short*, height x width reference frame
//   2 sads   : unsigned int*, (width/4)*(height/4)*256 results (output)
//   3 width  : int (multiple of 4)
//   4 height : int (multiple of 4)
//
// Mapping: 2D grid (width/4, height/4): block (blockIdx.x, blockIdx.y) = macroblock.
// Block MUST be 16x16: thread (tx, ty) = search offset (dx, dy) = (tx - 8, ty - 8).
//   x0 = blockIdx.x*4, y0 = blockIdx.y*4
//   threads with t = ty*16+tx < 16 load cur[(y0 + t/4)*width + x0 + t%4] into shared; sync
//   for r, c in [0,4): load ref[clamp(y0+r+dy, 0, height-1)*width + clamp(x0+c+dx, 0, width-1)]
//   store sads[(blockIdx.y*gridDim.x + blockIdx.x)*256 + ty*16 + tx]
// Data-dependent loads: none.
#define SAD_MB 4
#define SAD_RANGE 8

extern "C" __global__ void sad_4x4(const unsigned short* cur, const unsigned short* ref,
                                   unsigned int* sads, int width, int height)
{
    __shared__ unsigned short cb[SAD_MB * SAD_MB];
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int t = ty * (2 * SAD_RANGE) + tx;
    int x0 = blockIdx.x * SAD_MB;
    int y0 = blockIdx.y * SAD_MB;
    if (t < SAD_MB * SAD_MB) {
        cb[t] = cur[(y0 + t / SAD_MB) * width + x0 + t % SAD_MB];
    }
    __syncthreads();
    int dx = tx - SAD_RANGE;
    int dy = ty - SAD_RANGE;
    unsigned int s = 0;
    for (int r = 0; r < SAD_MB; ++r) {
        int ry = min(max(y0 + r + dy, 0), height - 1);
        for (int c = 0; c < SAD_MB; ++c) {
            int rx = min(max(x0 + c + dx, 0), width - 1);
            int a = cb[r * SAD_MB + c];
            int b = ref[ry * width + rx];
            s += (unsigned int)abs(a - b);
        }
    }
    int mb = blockIdx.y * gridDim.x + blockIdx.x;
    sads[mb * (4 * SAD_RANGE * SAD_RANGE) + t] = s;
}
