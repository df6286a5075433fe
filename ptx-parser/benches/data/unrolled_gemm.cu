// Register-blocked GEMM kernels whose whole inner-product loop is unrolled: the kind of large,
// straight-line PTX that tuned libraries and autotuners emit, several tile variants in one
// module. It is the multi-megabyte input of the ptx-parser throughput benchmark
// (benches/parse.rs, examples/ptx_parse_loop.rs); regenerate the PTX with
// `benches/data/regenerate`.
//
// Each thread computes an RB x RB block of C = alpha * A * B + beta * C for an inner dimension
// fixed at KDIM; the K loop (KDIM iterations of 2*RB loads and RB*RB FMAs) and the register
// loops are fully unrolled by the compiler.

template <typename T, int RB, int KDIM>
__device__ void gemm_tile(const T *__restrict__ A, const T *__restrict__ B, T *__restrict__ C,
                          int n, T alpha, T beta)
{
    const int tx = threadIdx.x % RB, ty = threadIdx.x / RB;
    const int row0 = blockIdx.y * RB * RB + ty * RB, col0 = blockIdx.x * RB * RB + tx * RB;
    T acc[RB][RB];
#pragma unroll
    for (int i = 0; i < RB; ++i)
#pragma unroll
        for (int j = 0; j < RB; ++j)
            acc[i][j] = T(0);
#pragma unroll
    for (int k = 0; k < KDIM; ++k) {
        T a[RB], b[RB];
#pragma unroll
        for (int i = 0; i < RB; ++i) {
            a[i] = A[(row0 + i) * n + k];
            b[i] = B[k * n + col0 + i];
        }
#pragma unroll
        for (int i = 0; i < RB; ++i)
#pragma unroll
            for (int j = 0; j < RB; ++j)
                acc[i][j] = fma(a[i], b[j], acc[i][j]);
    }
#pragma unroll
    for (int i = 0; i < RB; ++i)
#pragma unroll
        for (int j = 0; j < RB; ++j) {
            T *c = &C[(row0 + i) * n + col0 + j];
            *c = alpha * acc[i][j] + beta * *c;
        }
}

#define VARIANT(name, T, RB, KDIM)                                                             \
    extern "C" __global__ void __launch_bounds__(RB * RB)                                      \
        name(const T *__restrict__ A, const T *__restrict__ B, T *__restrict__ C, int n,        \
             T alpha, T beta)                                                                   \
    {                                                                                           \
        gemm_tile<T, RB, KDIM>(A, B, C, n, alpha, beta);                                        \
    }

VARIANT(sgemm_8x8_k128, float, 8, 128)
VARIANT(sgemm_6x6_k224, float, 6, 224)
VARIANT(sgemm_4x4_k512, float, 4, 512)
VARIANT(dgemm_8x8_k128, double, 8, 128)
VARIANT(dgemm_6x6_k224, double, 6, 224)
VARIANT(dgemm_4x4_k512, double, 4, 512)
