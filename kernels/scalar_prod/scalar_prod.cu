// scalar_prod -- batched dot products C[v] = sum_e A[v*element_n + e] * B[v*element_n + e]
// (CUDA samples scalarProd): block-stride loop over vectors, thread-stride accumulation,
// then a shared-memory tree reduction.
// Mirrors: Locality Descriptor / ICC "SCP".
//
// Parameters:
//   0 C         : float*, vector_n (output)
//   1 A         : const float*, vector_n * element_n
//   2 B         : const float*, vector_n * element_n
//   3 vector_n  : int
//   4 element_n : int
//
// Mapping: 1D grid, block MUST be 256 threads (SP_THREADS).
//   for v = blockIdx.x; v < vector_n; v += gridDim.x:
//     for e = threadIdx.x; e < element_n; e += 256: load A[v*element_n + e], B[v*element_n + e]
//     shared tree reduction (__syncthreads); thread 0 stores C[v]
// Data-dependent loads: none.
#define SP_THREADS 256

extern "C" __global__ void scalar_prod(float* C, const float* A, const float* B, int vector_n, int element_n)
{
    __shared__ float acc[SP_THREADS];
    int tid = threadIdx.x;
    for (int v = blockIdx.x; v < vector_n; v += gridDim.x) {
        int base = v * element_n;
        float sum = 0.0f;
        for (int e = tid; e < element_n; e += SP_THREADS) {
            sum += A[base + e] * B[base + e];
        }
        acc[tid] = sum;
        __syncthreads();
        for (int stride = SP_THREADS / 2; stride > 0; stride >>= 1) {
            if (tid < stride) {
                acc[tid] += acc[tid + stride];
            }
            __syncthreads();
        }
        if (tid == 0) {
            C[v] = acc[0];
        }
        __syncthreads();
    }
}
