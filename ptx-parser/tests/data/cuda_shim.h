// Minimal CUDA device environment for `clang -x cuda -nocudainc -nocudalib`: just what the
// corpus kernels compiled by tests/data/regenerate use, mapped onto clang's NVVM builtins.
#pragma once
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __forceinline__ __inline__ __attribute__((always_inline))

#define __PAVER_DIM3(NAME, SREG)                                                         \
  struct NAME##_t {                                                                      \
    __declspec(property(get = __x)) unsigned x;                                          \
    __declspec(property(get = __y)) unsigned y;                                          \
    __declspec(property(get = __z)) unsigned z;                                          \
    static __device__ __forceinline__ unsigned __x() { return __nvvm_read_ptx_sreg_##SREG##_x(); } \
    static __device__ __forceinline__ unsigned __y() { return __nvvm_read_ptx_sreg_##SREG##_y(); } \
    static __device__ __forceinline__ unsigned __z() { return __nvvm_read_ptx_sreg_##SREG##_z(); } \
  };                                                                                     \
  extern const __device__ NAME##_t NAME;
__PAVER_DIM3(threadIdx, tid)
__PAVER_DIM3(blockIdx, ctaid)
__PAVER_DIM3(blockDim, ntid)
__PAVER_DIM3(gridDim, nctaid)

static __device__ __forceinline__ unsigned atomicAdd(unsigned *p, unsigned v) {
  return __nvvm_atom_add_gen_i((int *)p, (int)v);
}
static __device__ __forceinline__ int atomicAdd(int *p, int v) { return __nvvm_atom_add_gen_i(p, v); }
static __device__ __forceinline__ float atomicAdd(float *p, float v) { return __nvvm_atom_add_gen_f(p, v); }
static __device__ __forceinline__ float __shfl_down_sync(unsigned mask, float v, unsigned d) {
  return __nvvm_shfl_sync_down_f32(mask, v, d, 0x1f);
}
static __device__ __forceinline__ int __shfl_down_sync(unsigned mask, int v, unsigned d) {
  return __nvvm_shfl_sync_down_i32(mask, v, d, 0x1f);
}
static __device__ __forceinline__ int min(int a, int b) { return a < b ? a : b; }
static __device__ __forceinline__ int max(int a, int b) { return a > b ? a : b; }
