// Device helpers shared by the kernels lathe export generates (one file per fusion group).
// Read by nvcc (kernels and launch functions, with the CUDA runtime), by NVRTC (the kernels) and,
// on the NVRTC path, by a host C++ compiler (the launch functions, through the driver API).
#pragma once
#if defined(__CUDACC_RTC__)
// NVRTC has no cuda_bf16.h / cuda_fp16.h built in: the storage types and their conversions, as
// those headers make them on sm_80 and later.
struct __align__(2) __nv_bfloat16 { unsigned short x; };
struct __align__(2) __half { unsigned short x; };
__device__ __forceinline__ float __bfloat162float(__nv_bfloat16 v) {
  return __uint_as_float(static_cast<unsigned>(v.x) << 16);
}
__device__ __forceinline__ __nv_bfloat16 __float2bfloat16_rn(float f) {
  __nv_bfloat16 r;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r.x) : "f"(f));
  return r;
}
__device__ __forceinline__ float __half2float(__half v) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v.x));
  return f;
}
__device__ __forceinline__ __half __float2half_rn(float f) {
  __half r;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r.x) : "f"(f));
  return r;
}
#elif defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
namespace lathe { using Stream = cudaStream_t; }
// A kernel launch in a launch function, which returns the launch's error when it fails.
#define LATHE_LAUNCH(kernel, grid, block, stream, ...)                          \
  do {                                                                          \
    kernel<<<grid, block, 0, stream>>>(__VA_ARGS__);                            \
    const cudaError_t lathe_status = cudaGetLastError();                        \
    if (lathe_status != cudaSuccess) return static_cast<int>(lathe_status);     \
  } while (0)
#else
#include <stdint.h>
// The storage types, only pointed to on the host.
struct __nv_bfloat16 { unsigned short x; };
struct __half { unsigned short x; };
namespace lathe {
using Stream = struct CUstream_st*;
// Launches a kernel of the bundle's fatbin by name in the current context (the driver runtime the
// NVRTC path builds into the library); returns the CUresult.
int driver_launch(const char* kernel, unsigned grid, unsigned block, Stream stream, void** args);
// Each argument must have its kernel parameter's type: the driver copies it by that size.
template <typename... Args>
int launch(const char* kernel, unsigned grid, unsigned block, Stream stream, Args... args) {
  void* pointers[] = {static_cast<void*>(&args)..., nullptr};
  return driver_launch(kernel, grid, block, stream, pointers);
}
}
#define LATHE_LAUNCH(kernel, grid, block, stream, ...)                                \
  do {                                                                                \
    const int lathe_status = lathe::launch(#kernel, grid, block, stream, __VA_ARGS__); \
    if (lathe_status != 0) return lathe_status;                                       \
  } while (0)
#endif
#ifndef __CUDACC_RTC__
namespace lathe {
// What a launch function returns for symbol values it was not generated for: cudaErrorInvalidValue
// and CUDA_ERROR_INVALID_VALUE.
constexpr int kInvalidValue = 1;
template <typename T>
inline bool aligned(const T* p, int n) { return reinterpret_cast<uintptr_t>(p) % (sizeof(T) * n) == 0; }
}
#endif

#include "lathe_symbols.h"

#ifdef __CUDACC__
namespace lathe {

__device__ __forceinline__ float up(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float up(__half x) { return __half2float(x); }
__device__ __forceinline__ float up(float x) { return x; }
__device__ __forceinline__ long long up(long long x) { return x; }
__device__ __forceinline__ long long up(int x) { return x; }
__device__ __forceinline__ long long up(short x) { return x; }
__device__ __forceinline__ long long up(signed char x) { return x; }
__device__ __forceinline__ long long up(unsigned char x) { return x; }
__device__ __forceinline__ bool up(bool x) { return x; }

template <typename T>
__device__ __forceinline__ auto ld(const T* p, long long offset) { return up(p[offset]); }

template <typename T> struct Down { template <typename V> __device__ static T from(V v) { return static_cast<T>(v); } };
template <> struct Down<__nv_bfloat16> { __device__ static __nv_bfloat16 from(float v) { return __float2bfloat16_rn(v); } };
template <> struct Down<__half> { __device__ static __half from(float v) { return __float2half_rn(v); } };
template <typename T, typename V>
__device__ __forceinline__ T down(V v) { return Down<T>::from(v); }

__device__ __forceinline__ float round_bf16(float x) { return __bfloat162float(__float2bfloat16_rn(x)); }
__device__ __forceinline__ float round_f16(float x) { return __half2float(__float2half_rn(x)); }

// NaN-propagating, as torch's maximum / minimum / amax / amin.
__device__ __forceinline__ float maximum(float a, float b) { return (a != a || a > b) ? a : b; }
__device__ __forceinline__ float minimum(float a, float b) { return (a != a || a < b) ? a : b; }
__device__ __forceinline__ long long maximum(long long a, long long b) { return a > b ? a : b; }
__device__ __forceinline__ long long minimum(long long a, long long b) { return a < b ? a : b; }
__device__ __forceinline__ bool maximum(bool a, bool b) { return a || b; }
__device__ __forceinline__ bool minimum(bool a, bool b) { return a && b; }
__device__ __forceinline__ float absolute(float a) { return fabsf(a); }
__device__ __forceinline__ long long absolute(long long a) { return a < 0 ? -a : a; }
__device__ __forceinline__ float sign(float a) { return a != a ? a : static_cast<float>((a > 0.0f) - (a < 0.0f)); }
__device__ __forceinline__ long long sign(long long a) { return (a > 0) - (a < 0); }
__device__ __forceinline__ bool is_nan(float a) { return a != a; }
__device__ __forceinline__ long long floor_div(long long a, long long b) {
  const long long q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
__device__ __forceinline__ long long trunc_div(long long a, long long b) { return a / b; }
// exp through the multifunction unit (ex2.approx of x * log2(e)), as Triton's exp: a few ulp,
// where expf's accurate sequence would make a long softmax row compute-bound.
__device__ __forceinline__ float fast_exp(float x) { return __expf(x); }

__device__ __forceinline__ float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
__device__ __forceinline__ float silu(float x) { return x / (1.0f + expf(-x)); }
__device__ __forceinline__ float silu_backward(float g, float x) {
  const float s = sigmoid(x);
  return g * s * (1.0f + x * (1.0f - s));
}
__device__ __forceinline__ float gelu(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }
__device__ __forceinline__ float gelu_backward(float g, float x) {
  const float cdf = 0.5f * (1.0f + erff(x * 0.70710678118654752f));
  const float pdf = 0.39894228040143268f * expf(-0.5f * x * x);
  return g * (cdf + x * pdf);
}
__device__ __forceinline__ float gelu_tanh(float x) {
  const float inner = 0.79788456080286536f * (x + 0.044715f * x * x * x);
  return 0.5f * x * (1.0f + tanhf(inner));
}
__device__ __forceinline__ float gelu_tanh_backward(float g, float x) {
  const float inner = 0.79788456080286536f * (x + 0.044715f * x * x * x);
  const float t = tanhf(inner);
  const float dinner = 0.79788456080286536f * (1.0f + 3.0f * 0.044715f * x * x);
  return g * (0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * dinner);
}

// N elements of T in one aligned access (16 bytes or less).
template <typename T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

struct Sum { template <typename T> __device__ T operator()(T a, T b) const { return a + b; } };
struct Max { template <typename T> __device__ T operator()(T a, T b) const { return maximum(a, b); } };
struct Min { template <typename T> __device__ T operator()(T a, T b) const { return minimum(a, b); } };
template <typename T> struct Identity;
template <> struct Identity<float> {
  __device__ static float lowest() { return -__int_as_float(0x7f800000); }
  __device__ static float highest() { return __int_as_float(0x7f800000); }
};
template <> struct Identity<long long> {
  __device__ static long long lowest() { return -0x7fffffffffffffffLL - 1; }
  __device__ static long long highest() { return 0x7fffffffffffffffLL; }
};

// The reduction over the whole block, in every thread: warp shuffles, then one value per warp
// through shared memory. Every thread of the block must call it.
template <typename T, typename Op>
__device__ T block_reduce(T v, Op op, T identity) {
  __shared__ T partial[32];
  for (int offset = 16; offset > 0; offset >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  const int warps = (blockDim.x + 31) >> 5;
  v = threadIdx.x < warps ? partial[threadIdx.x] : identity;
  if (warp == 0) {
    for (int offset = 16; offset > 0; offset >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
    if (lane == 0) partial[0] = v;
  }
  __syncthreads();
  v = partial[0];
  __syncthreads();
  return v;
}

// Softmax statistics: adds x to a running maximum m and sum s of exp(value - m). One exp per
// element and no branch: exp(-|x - m|) is exp(x - m) when x is not above m (added), else
// exp(m - x) (the old sum rescaled to the new maximum, plus 1). A NaN reaches s either way, and
// so does a +inf (its own term is exp(inf - inf) in torch), through x - x.
__device__ __forceinline__ void online_add(float& m, float& s, float x) {
  const float e = fast_exp(-fabsf(x - m));
  s = x > m ? fmaf(s, e, 1.0f + (x - x)) : s + e;
  m = maximum(m, x);
}
__device__ __forceinline__ void online_merge(float& m, float& s, float m2, float s2) {
  const float next = maximum(m, m2);
  s = next == Identity<float>::lowest() ? s + s2 : s * fast_exp(m - next) + s2 * fast_exp(m2 - next);
  m = next;
}
// The reduction over each aligned group of `Lanes` lanes (a power of two up to 32), in every lane
// of the group. Every lane of the warp must call it. a + b is b + a, so all lanes agree bit for bit.
template <int Lanes, typename T, typename Op>
__device__ __forceinline__ T lane_reduce(T v, Op op) {
#pragma unroll
  for (int offset = Lanes / 2; offset > 0; offset >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// online_merge over each group of `Lanes` lanes, as lane_reduce.
template <int Lanes>
__device__ __forceinline__ void lane_reduce_online(float& m, float& s) {
#pragma unroll
  for (int offset = Lanes / 2; offset > 0; offset >>= 1) {
    online_merge(m, s, __shfl_xor_sync(0xffffffffu, m, offset), __shfl_xor_sync(0xffffffffu, s, offset));
  }
}

// online_merge over the whole block, in every thread, as block_reduce.
__device__ inline void block_reduce_online(float& m, float& s) {
  __shared__ float partial[2][32];
  for (int offset = 16; offset > 0; offset >>= 1) {
    online_merge(m, s, __shfl_xor_sync(0xffffffffu, m, offset), __shfl_xor_sync(0xffffffffu, s, offset));
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) {
    partial[0][warp] = m;
    partial[1][warp] = s;
  }
  __syncthreads();
  const int warps = (blockDim.x + 31) >> 5;
  m = threadIdx.x < warps ? partial[0][threadIdx.x] : Identity<float>::lowest();
  s = threadIdx.x < warps ? partial[1][threadIdx.x] : 0.0f;
  if (warp == 0) {
    for (int offset = 16; offset > 0; offset >>= 1) {
      online_merge(m, s, __shfl_xor_sync(0xffffffffu, m, offset), __shfl_xor_sync(0xffffffffu, s, offset));
    }
    if (lane == 0) {
      partial[0][0] = m;
      partial[1][0] = s;
    }
  }
  __syncthreads();
  m = partial[0][0];
  s = partial[1][0];
  __syncthreads();
}

}  // namespace lathe
#endif
