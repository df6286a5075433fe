// doitgen -- multi-resolution analysis kernel (PolyBench doitgen), double precision:
//   sum[r][q][p] = sum_s A[r][q][s] * C4[s][p]
// Mirrors: Locality Descriptor / ICC "DOITGEN". Uses a 3D grid (blockIdx.z = r).
//
// Parameters:
//   0 A   : const double*, nr x nq x np, row-major
//   1 C4  : const double*, np x np, row-major
//   2 sum : double*, nr x nq x np (output)
//   3 nr, 4 nq, 5 np : int
//
// Mapping: 3D grid (ceil(np/bx), ceil(nq/by), nr), 2D block (bx, by, 1), e.g. 16x8x1.
//   p = blockIdx.x * blockDim.x + threadIdx.x,  q = blockIdx.y * blockDim.y + threadIdx.y,
//   r = blockIdx.z;  guard p < np && q < nq && r < nr
//   loads : A[(r*nq + q)*np + s], C4[s*np + p] for s in [0, np)
//   store : sum[(r*nq + q)*np + p]
// Data-dependent loads: none.

extern "C" __global__ void doitgen(const double* A, const double* C4, double* sum, int nr, int nq, int np)
{
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    int q = blockIdx.y * blockDim.y + threadIdx.y;
    int r = blockIdx.z;
    if (p < np && q < nq && r < nr) {
        double acc = 0.0;
        for (int s = 0; s < np; ++s) {
            acc += A[(r * nq + q) * np + s] * C4[s * np + p];
        }
        sum[(r * nq + q) * np + p] = acc;
    }
}
