// Microbenchmarks of the paver timing model (sim/tests/microbench.rs): the classic GPU
// memory-hierarchy probes. Compiled to PTX by ./regenerate (NVRTC 12.9, compute_70); the PTX
// is committed so the tests never need a compiler. The tests build the inputs (the pointer
// chain of ubench_chase) and compute every expected value from the GPU configuration.
//
// Plain (not const __restrict__) pointers so the loads are ld.global, not ld.global.nc.

// Pointer chase: one thread follows j = next[j] `steps` times and stores the last index, so
// every load depends on the one before: cycles per step = the load-to-use latency of
// whatever level holds the chain (plus the loop's few integer instructions).
extern "C" __global__ void ubench_chase(unsigned *next, unsigned steps, unsigned *out)
{
    unsigned j = 0;
    for (unsigned i = 0; i < steps; ++i) {
        j = next[j];
    }
    out[0] = j;
}

// Reads a[0], a[step], a[2 step], ... below n, `passes` times, grid-stride, pass p as if it
// were TB (blockIdx.x + p * shift) mod gridDim.x: shift = 0 re-reads the TB's own words (L1
// reuse), shift = 1 the next TB's (read by another SM under round-robin placement: L2
// reuse). With step = 8
// words every 32 B sector of the array is read once per pass by one thread, so a warp load
// touches 32 sectors. The sum is stored only if it equals 0xffffffff (never, with the zero
// or small inputs of the tests), so the kernel makes no DRAM writes.
extern "C" __global__ void ubench_read(unsigned *a, unsigned n, unsigned step, unsigned passes,
                                       unsigned shift, unsigned *out)
{
    unsigned acc = 0;
    unsigned stride = gridDim.x * blockDim.x * step;
    for (unsigned p = 0; p < passes; ++p) {
        unsigned b = (blockIdx.x + p * shift) % gridDim.x;
        for (unsigned i = (b * blockDim.x + threadIdx.x) * step; i < n; i += stride) {
            acc += a[i];
        }
    }
    if (acc == 0xffffffffu) {
        out[0] = acc;
    }
}

// ubench_read with a dynamic shared-memory allocation (the launch's dynamic_shared_bytes):
// on Volta and later the shared memory in use shrinks the L1 (the carveout).
extern "C" __global__ void ubench_read_shared(unsigned *a, unsigned n, unsigned step,
                                              unsigned passes, unsigned shift, unsigned *out)
{
    extern __shared__ unsigned scratch[];
    scratch[threadIdx.x] = threadIdx.x;
    __syncthreads();
    unsigned acc = scratch[(threadIdx.x + 1) % blockDim.x];
    unsigned stride = gridDim.x * blockDim.x * step;
    for (unsigned p = 0; p < passes; ++p) {
        unsigned b = (blockIdx.x + p * shift) % gridDim.x;
        for (unsigned i = (b * blockDim.x + threadIdx.x) * step; i < n; i += stride) {
            acc += a[i];
        }
    }
    if (acc == 0xffffffffu) {
        out[0] = acc;
    }
}

// Every TB reads the same 128 B line (lane k reads word k): the L2 hit rate of one line read
// by every TB.
extern "C" __global__ void ubench_one_line(unsigned *a, unsigned *out)
{
    unsigned v = a[threadIdx.x & 31];
    if (v == 0xffffffffu) {
        out[blockIdx.x] = v;
    }
}

// Random-access bandwidth: each thread reads `per_thread` words at pseudo-random 32 B
// sectors of a (a power of two `mask + 1` of sectors; word 8 s is sector s's first), from a
// xorshift32 sequence (Marsaglia 2003) seeded with its global index times an odd constant
// (never 0), so a warp's 32 loads touch 32 unrelated sectors and the DRAM sees rows at
// random. The sum is stored only if it equals 0xffffffff (never, with zero inputs).
extern "C" __global__ void ubench_random(unsigned *a, unsigned mask, unsigned per_thread,
                                         unsigned *out)
{
    unsigned x = (blockIdx.x * blockDim.x + threadIdx.x + 1u) * 2654435761u;
    unsigned acc = 0;
    for (unsigned i = 0; i < per_thread; ++i) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        acc += a[(x & mask) * 8u];
    }
    if (acc == 0xffffffffu) {
        out[0] = acc;
    }
}
