// blackscholes -- European option pricing with the Black-Scholes formula (CUDA samples
// style), grid-stride loop over options.
// Mirrors: PAVER Table 2 "BLK" (BlackScholes).
//
// Parameters:
//   0 call   : float*, n call prices (output)
//   1 put    : float*, n put prices (output)
//   2 S      : const float*, n stock prices
//   3 X      : const float*, n strike prices
//   4 T      : const float*, n years to expiry
//   5 R      : float, riskless rate
//   6 V      : float, volatility
//   7 n      : int, number of options
//
// Mapping: 1D grid, 1D block; grid-stride loop:
//   for i = blockIdx.x*blockDim.x + threadIdx.x; i < n; i += blockDim.x*gridDim.x
//     load S[i], X[i], T[i]; store call[i], put[i]
// Data-dependent loads: none.

__device__ __forceinline__ float bs_cnd(float d)
{
    const float a1 = 0.31938153f;
    const float a2 = -0.356563782f;
    const float a3 = 1.781477937f;
    const float a4 = -1.821255978f;
    const float a5 = 1.330274429f;
    const float rsqrt2pi = 0.39894228040143267794f;
    float k = 1.0f / (1.0f + 0.2316419f * fabsf(d));
    float cnd = rsqrt2pi * expf(-0.5f * d * d) * (k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5)))));
    return d > 0.0f ? 1.0f - cnd : cnd;
}

extern "C" __global__ void blackscholes(float* call, float* put, const float* S, const float* X,
                                        const float* T, float R, float V, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        float s = S[i];
        float x = X[i];
        float t = T[i];
        float sqrt_t = sqrtf(t);
        float d1 = (logf(s / x) + (R + 0.5f * V * V) * t) / (V * sqrt_t);
        float d2 = d1 - V * sqrt_t;
        float cnd1 = bs_cnd(d1);
        float cnd2 = bs_cnd(d2);
        float exp_rt = expf(-R * t);
        call[i] = s * cnd1 - x * exp_rt * cnd2;
        put[i] = x * exp_rt * (1.0f - cnd2) - s * (1.0f - cnd1);
    }
}
