// libor -- LIBOR market model Monte Carlo, the Locality Descriptor paper's LIB (seed 004,
// Table 2: INTRA-THREAD), after the shape of M. Giles' LIBOR code in the GPGPU-Sim benchmark
// suite: each thread simulates one path of N forward rates over Nmat time steps, then
// values a portfolio of swaptions on its path. The forward rates are the thread's private
// working set, re-read (and rewritten) in every time step: reuse by the same thread only,
// with a long reuse distance because every other resident warp walks its own rates in
// between. The original keeps them in a local array `float L[N]`; here they are a global
// buffer laid out the way CUDA lays out local memory (element i of every thread in one
// contiguous row, so a warp's access to element i is one 128 B line), so that the analysis,
// which describes pointer parameters, sees them as a data structure. The normal draws are
// streamed (each read once). The original reads its volatilities from a `__constant__`
// array that its host code fills with 0.2 throughout; here the volatility is a scalar
// parameter, because the simulator sends loads of module `.const` arrays through the L1 (as
// global data), where the original's come from the constant cache, and a shared array
// there would be a second data structure competing with the forward rates.
//
// Parameters:
//   0 L      : float*, N * nthreads forward rates: element i of thread t at L[i * nthreads + t]
//              (the launch initialises them); read and rewritten in every time step
//   1 z      : const float*, Nmat * nthreads normal draws: z[n * nthreads + t], read once
//   2 v      : float*, nthreads: the discounted portfolio value of each path
//   3 N      : int, forward rates per path
//   4 Nmat   : int, time steps (Nmat < N)
//   5 delta  : float, year fraction of one period (0.25)
//   6 lambda : float, volatility of every forward rate (0.2)
// Mapping: 1D grid, 1D block; t = blockIdx.x * blockDim.x + threadIdx.x, nthreads =
//   gridDim.x * blockDim.x.
//   Path (n = 0..Nmat-1): z[n * nthreads + t] read; for i = n+1..N-1: L[i * nthreads + t]
//     read, then written (a triangle: step n walks the rates n+1..N-1).
//   Portfolio: L[n * nthreads + t] for n = Nmat..N-1, then for n = 0..Nmat-1 (discount);
//     v[t] written.
// Data-dependent loads: none.

extern "C" __global__ void libor_path(float* L, const float* z, float* v, int N, int Nmat,
                                        float delta, float lambda)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int nthreads = gridDim.x * blockDim.x;
    float sqdelta = sqrtf(delta);

    // Path: one time step per maturity; step n moves every rate after it.
    for (int n = 0; n < Nmat; ++n) {
        float sqez = sqdelta * z[n * nthreads + t];
        float drift = 0.0f;
        for (int i = n + 1; i < N; ++i) {
            float con1 = delta * lambda;
            float li = L[i * nthreads + t];
            drift += con1 * li / (1.0f + delta * li);
            float vrat = expf(con1 * drift + lambda * (sqez - 0.5f * con1));
            L[i * nthreads + t] = li * vrat;
        }
    }

    // Portfolio: swaptions maturing after Nmat, valued on the bond prices and annuity of
    // the path, then discounted back over the first Nmat periods.
    float b = 1.0f;
    float s = 0.0f;
    float value = 0.0f;
    for (int n = Nmat; n < N; ++n) {
        b = b / (1.0f + delta * L[n * nthreads + t]);
        s = s + delta * b;
        float swapval = b + 0.05f * s - 1.0f;
        value += fmaxf(-100.0f * swapval, 0.0f);
    }
    for (int n = 0; n < Nmat; ++n) {
        value = value / (1.0f + delta * L[n * nthreads + t]);
    }
    v[t] = value;
}
