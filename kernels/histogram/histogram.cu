// histogram -- 256-bin byte histogram, two entries. Data-dependent (atomic addresses).
// Mirrors: Locality Descriptor / ICC "HISTO" (CUDA samples histogram256).
//
// Entry histogram_global(data, bins, n): every byte does a global atomicAdd.
// Entry histogram_shared(data, bins, n): per-block privatised histogram in shared memory,
//   flushed to global memory with one atomicAdd per bin per block.
//   0 data : const unsigned char*, n bytes
//   1 bins : unsigned int*, 256 (accumulated)
//   2 n    : int
//
// Mapping (both): 1D grid, 1D block (e.g. 256); grid-stride loop:
//   for i = blockIdx.x*blockDim.x + threadIdx.x; i < n; i += blockDim.x*gridDim.x: load data[i]
//   global: atomicAdd bins[data[i]]           (DATA-DEPENDENT address)
//   shared: shared atomicAdd s[data[i]]; after __syncthreads, threads b = threadIdx.x,
//           b += blockDim.x, b < 256 atomicAdd bins[b]
#define HIST_BINS 256

extern "C" __global__ void histogram_global(const unsigned char* data, unsigned int* bins, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        atomicAdd(&bins[data[i]], 1u);
    }
}

extern "C" __global__ void histogram_shared(const unsigned char* data, unsigned int* bins, int n)
{
    __shared__ unsigned int s[HIST_BINS];
    for (int b = threadIdx.x; b < HIST_BINS; b += blockDim.x) {
        s[b] = 0u;
    }
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        atomicAdd(&s[data[i]], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < HIST_BINS; b += blockDim.x) {
        atomicAdd(&bins[b], s[b]);
    }
}
