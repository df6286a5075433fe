// dp_quicksort: recursive quicksort with dynamic parallelism (the Type II Quicksort of Tang et
// al., POMACS 2018, Fig. 1(c); the shape of the CUDA sample cdpSimpleQuicksort), plus a launch
// chain that recurses to a given depth.
//
// dp_quicksort(data, left, right, depth, max_depth), one thread (grid 1x1x1, block 1x1x1):
// sorts the i32 elements data[left..=right]. Below `max_depth` and for more than 16
// elements it partitions around the middle element (Hoare-style two-pointer sweep), then
// launches itself on the left part and on the right part, each into its own stream created
// with cudaStreamCreateWithFlags(cudaStreamNonBlocking) (the two parts are disjoint, so the
// children may run concurrently). At `max_depth` or for 16 elements or fewer it sorts by
// selection sort. Every address depends on loaded data through the partition.
//
// dp_chain(out, depth, max_depth), grid 1, block 32: thread 0 writes out[depth] = depth and,
// while depth + 1 < max_depth, launches dp_chain(out, depth + 1, max_depth) as a tail launch
// (cudaStreamTailLaunch): a nesting depth of max_depth - 1 below the host's launch.

#define SELECTION_SORT 16

__device__ void selection_sort(int *data, int left, int right) {
    for (int i = left; i <= right; i++) {
        int min_val = data[i];
        int min_idx = i;
        for (int j = i + 1; j <= right; j++) {
            int v = data[j];
            if (v < min_val) {
                min_idx = j;
                min_val = v;
            }
        }
        if (i != min_idx) {
            data[min_idx] = data[i];
            data[i] = min_val;
        }
    }
}

extern "C" __global__ void dp_quicksort(int *data, int left, int right, int depth, int max_depth) {
    if (depth >= max_depth || right - left <= SELECTION_SORT) {
        selection_sort(data, left, right);
        return;
    }
    int *lptr = data + left;
    int *rptr = data + right;
    int pivot = data[(left + right) / 2];
    while (lptr <= rptr) {
        int lval = *lptr;
        int rval = *rptr;
        while (lval < pivot) {
            lptr++;
            lval = *lptr;
        }
        while (rval > pivot) {
            rptr--;
            rval = *rptr;
        }
        if (lptr <= rptr) {
            *lptr++ = rval;
            *rptr-- = lval;
        }
    }
    int nright = rptr - data;
    int nleft = lptr - data;
    if (left < nright) {
        cudaStream_t s;
        cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
        dp_quicksort<<<1, 1, 0, s>>>(data, left, nright, depth + 1, max_depth);
        cudaStreamDestroy(s);
    }
    if (nleft < right) {
        cudaStream_t s1;
        cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
        dp_quicksort<<<1, 1, 0, s1>>>(data, nleft, right, depth + 1, max_depth);
        cudaStreamDestroy(s1);
    }
}

extern "C" __global__ void dp_chain(int *out, int depth, int max_depth) {
    if (threadIdx.x == 0) {
        out[depth] = depth;
        if (depth + 1 < max_depth) {
            dp_chain<<<1, 32, 0, cudaStreamTailLaunch>>>(out, depth + 1, max_depth);
        }
    }
}
