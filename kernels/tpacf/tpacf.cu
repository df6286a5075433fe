// tpacf -- two-point angular correlation histogram (Parboil TPACF style): for every pair
// (i, j > i) of points on the unit sphere, bin the dot product by binary search over the
// bin boundaries, histogramming into shared memory, then flushing with global atomics.
// Mirrors: PAVER Table 2 "TPACF".
//
// Parameters:
//   0 x, 1 y, 2 z : const float*, n point coordinates
//   3 n           : int
//   4 bounds      : const float*, TP_BINS+1 = 33 dot-product boundaries, descending
//                   (bounds[0] = 1, bounds[32] = -1; made by make_bins.py)
//   5 hist        : unsigned int*, TP_BINS = 32 bins (accumulated with atomicAdd)
//
// Mapping: 1D grid, 1D block (e.g. 256).
//   shared sh[32] cleared by threads b = threadIdx.x, b += blockDim.x; __syncthreads
//   i = blockIdx.x * blockDim.x + threadIdx.x; if i < n:
//     load x[i], y[i], z[i]; for j in [i+1, n): load x[j], y[j], z[j];
//     binary search: probes bounds[mid], mid in [1, 31]; shared atomicAdd
//   __syncthreads; global atomicAdd hist[b] for b = threadIdx.x, b += blockDim.x, b < 32
// DATA-DEPENDENT: the bounds[mid] probes (mid depends on the loaded coordinates).
#define TP_BINS 32

extern "C" __global__ void tpacf(const float* x, const float* y, const float* z, int n,
                                 const float* bounds, unsigned int* hist)
{
    __shared__ unsigned int sh[TP_BINS];
    for (int b = threadIdx.x; b < TP_BINS; b += blockDim.x) {
        sh[b] = 0u;
    }
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float xi = x[i];
        float yi = y[i];
        float zi = z[i];
        for (int j = i + 1; j < n; ++j) {
            float d = xi * x[j] + yi * y[j] + zi * z[j];
            int lo = 0;
            int hi = TP_BINS;
            while (hi - lo > 1) {
                int mid = (lo + hi) / 2;
                if (d < bounds[mid]) lo = mid; else hi = mid;
            }
            atomicAdd(&sh[lo], 1u);
        }
    }
    __syncthreads();
    for (int b = threadIdx.x; b < TP_BINS; b += blockDim.x) {
        atomicAdd(&hist[b], sh[b]);
    }
}
