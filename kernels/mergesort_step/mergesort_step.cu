// mergesort_step -- one pass of a bottom-up merge sort: merges adjacent sorted runs of
// width `width` into runs of width 2*width. One thread per input element, which finds its
// output position by binary search in the partner run. Data-dependent.
// Mirrors: PAVER Table 2 "MS" (merge sort).
//
// Parameters:
//   0 in    : const float*, n (runs of `width` sorted elements; any data is memory-safe)
//   1 out   : float*, n (output)
//   2 n     : int
//   3 width : int, run width (>= 1)
//
// Mapping: 1D grid, 1D block (e.g. 256).
//   i = blockIdx.x * blockDim.x + threadIdx.x; guard i < n
//   pair  = (i / (2*width)) * (2*width)
//   right = min(pair + width, n),  end = min(pair + 2*width, n)
//   load in[i]; if i < right: binary search in [right, end) else in [pair, right)
//   store out[pair + pos], pair <= pair + pos < end
// DATA-DEPENDENT: the binary-search probes in[mid] (mid depends on loaded values) and the
// store position.

extern "C" __global__ void mergesort_step(const float* in, float* out, int n, int width)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    int pair = (i / (2 * width)) * (2 * width);
    int right = min(pair + width, n);
    int end = min(pair + 2 * width, n);
    float v = in[i];
    int pos;
    if (i < right) {
        // element of the left run: count right-run elements strictly smaller
        int lo = right, hi = end;
        while (lo < hi) {
            int mid = (lo + hi) >> 1;
            if (in[mid] < v) lo = mid + 1; else hi = mid;
        }
        pos = (i - pair) + (lo - right);
    } else {
        // element of the right run: count left-run elements smaller or equal (stable)
        int lo = pair, hi = right;
        while (lo < hi) {
            int mid = (lo + hi) >> 1;
            if (in[mid] <= v) lo = mid + 1; else hi = mid;
        }
        pos = (i - right) + (lo - pair);
    }
    out[pair + pos] = v;
}
