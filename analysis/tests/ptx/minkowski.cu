// HeCBench-style Minkowski distance (issue 41): powf inside the loop branches on the loaded
// values (its special cases); every branch reconverges before the pointers step, so the
// loads are affine and resolved.
extern "C" __global__ void minkowski(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int m, int n, int k, float p)
{
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < m && col < k) {
    float sum = 0.f;
    for (int i = 0; i < n; i++)
      sum += powf(fabsf(a[row * n + i] - b[i * k + col]), p);
    c[row * k + col] = powf(sum, 1.f / p);
  }
}
