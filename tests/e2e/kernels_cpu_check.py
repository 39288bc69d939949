"""Runs the kernels of a `lathe export` bundle on the CPU and compares them with PyTorch.

The generated CUDA sources are compiled as plain C++ against a small emulation of the CUDA names
they use (threads of a block run one after another; a reduction block has one thread, so its
block-wide reduction is the thread's own value). Inputs are drawn at random with the manifest's
shapes, each kernel's outputs are compared with its FX lines run by PyTorch in float64 on the same
inputs, by the GPU harness's measure (bench/device/kernels/verify_kernels.py: the relative error
under the bound of the lowest precision the kernel touches, or within 1.5x eager PyTorch's own
error where the inputs are ill-conditioned; integer outputs exactly). No GPU needed: this checks the generator's index math, types and semantics, not the GPU code path.

usage: kernels_cpu_check.py BUNDLE_DIR [--limit N]   (prints one line per kernel; exit 1 on a mismatch)
"""
import argparse
import ctypes
import json
import pathlib
import re
import subprocess
import sys
import tempfile

import torch

# The GPU harness's float64 reference and error measure: one definition of "agrees".
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / 'bench' / 'device' / 'kernels'))
import verify_kernels  # noqa: E402

EMULATION = r"""
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#define __CUDACC__
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(n)
#define __shared__ static
inline void __syncthreads() {}
#include "lathe_symbols.h"
struct Dim3 { unsigned x = 0; };
inline thread_local Dim3 threadIdx, blockIdx, blockDim;
typedef void* cudaStream_t;
enum { cudaSuccess = 0, cudaErrorInvalidValue = 1 };
inline int cudaGetLastError() { return 0; }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline float __expf(float x) { return std::exp(x); }
#define __shfl_xor_sync(mask, v, offset) lathe_emu::shfl_xor(v, offset)
// Column kernels whose rows are split over blocks: blocks run one after another, so the last
// block of a strip is the one that sees every other split's partial sums.
inline void __threadfence() {}
template <typename T> T atomicAdd(T* p, T v) { const T old = *p; *p += v; return old; }
template <typename T> T __ldcg(const T* p) { return *p; }
inline float __int_as_float(unsigned v) { float f; std::memcpy(&f, &v, 4); return f; }
struct __nv_bfloat16 { uint16_t bits; };
inline float __bfloat162float(__nv_bfloat16 x) { uint32_t u = uint32_t(x.bits) << 16; float f; std::memcpy(&f, &u, 4); return f; }
inline __nv_bfloat16 __float2bfloat16_rn(float f) {
  uint32_t u; std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return {uint16_t((u >> 16) | 0x40)};
  u += 0x7fffu + ((u >> 16) & 1u);
  return {uint16_t(u >> 16)};
}
struct __half { _Float16 v; };
inline float __half2float(__half x) { return float(x.v); }
inline __half __float2half_rn(float f) { return {static_cast<_Float16>(f)}; }
#include <barrier>
#include <thread>
#include <vector>
namespace lathe_emu {
// Kernels that combine lanes with shuffles run each block's threads at once, as std::threads, and
// a shuffle is a write of every lane's value, a barrier and a read of the partner's.
struct LaneBlock { std::barrier<>* sync; std::vector<unsigned long long>* slots; };
inline thread_local LaneBlock lane_block;
template <typename T>
T shfl_xor(T v, int offset) {
  unsigned long long bits = 0;
  std::memcpy(&bits, &v, sizeof v);
  (*lane_block.slots)[threadIdx.x] = bits;
  lane_block.sync->arrive_and_wait();
  bits = (*lane_block.slots)[threadIdx.x ^ unsigned(offset)];
  lane_block.sync->arrive_and_wait();
  std::memcpy(&v, &bits, sizeof v);
  return v;
}
// One std::thread per thread of a block, walking the blocks in turn: every lane makes the same
// shuffles in the same order, so the barrier's phases line up across blocks.
template <typename Body>
void launch_lanes(long long grid, long long block, Body body) {
  std::barrier<> sync(block);
  std::vector<unsigned long long> slots(block);
  std::vector<std::thread> threads;
  for (long long t = 0; t < block; ++t) {
    threads.emplace_back([&, t] {
      blockDim.x = unsigned(block);
      threadIdx.x = unsigned(t);
      lane_block = {&sync, &slots};
      for (long long b = 0; b < grid; ++b) {
        blockIdx.x = unsigned(b);
        body();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
}
template <typename Body>
void launch(long long grid, long long block, Body body) {
  blockDim.x = unsigned(block);
  for (long long b = 0; b < grid; ++b) {
    blockIdx.x = unsigned(b);
    for (long long t = 0; t < block; ++t) { threadIdx.x = unsigned(t); body(); }
  }
}
}
"""


def emulated_header(header: str) -> str:
    """The bundle's device helpers with the CUDA includes and the block reduction replaced."""
    header = re.sub(r'#include <cuda[^>]*>\n', '', header)
    header = header.replace('#pragma once', '#pragma once\n#include "emulation.h"')
    start = header.index('template <typename T, typename Op>\n__device__ T block_reduce')
    end = header.index('}  // namespace lathe')
    end_online = header.index('// online_merge over the whole block')
    single = ('template <typename T, typename Op>\nT block_reduce(T v, Op, T) { return v; }\n\n'
              'inline void block_reduce_online(float&, float&) {}\n\n')
    return header[:start] + header[header.index('// Softmax statistics'):end_online] + single + header[end:]


def emulated_source(source: str, reduction: bool) -> str:
    """A launch as a loop over blocks and threads; a kernel with a block-wide reduction (one block
    per row) runs one thread a block, a column kernel (`_cols`: a strip of columns, its thread
    groups over the rows; `_cols_vec`: the same with a chunk of columns per thread) one group a
    block, so that each thread reduces its whole columns before the block combines the groups'
    results. A kernel whose lanes combine by shuffles runs its blocks' threads concurrently."""
    strip = re.search(r'threadIdx\.x % (\d+)u;', source)
    lanes = re.search(r'lane = threadIdx\.x % (\d+)u', source)

    def launch(match):
        name, grid, block, args = match.groups()
        if 'lathe::lane_reduce' in source:
            return f'lathe_emu::launch_lanes({grid}, {block}, [&] {{ {name}({args}); }});'
        threads = (strip.group(1) if name.endswith('_cols') else lanes.group(1) if name.endswith('_cols_vec')
                   else 1 if reduction else block)
        return f'lathe_emu::launch({grid}, {threads}, [&] {{ {name}({args}); }});'
    return re.sub(r'LATHE_LAUNCH\((\w+), (.+?), (\d+), s, (.*)\);', launch, source)


def torch_dtype(name: str):
    return getattr(torch, name)


def random_tensor(spec, generator):
    dtype = torch_dtype(spec['dtype'])
    sizes, strides = spec['sizes'], spec['strides']
    extent = 1 + sum((s - 1) * st for s, st in zip(sizes, strides) if s > 0)
    if dtype == torch.bool:
        storage = torch.rand(extent, generator=generator) > 0.5
    elif dtype.is_floating_point:
        storage = torch.randn(extent, generator=generator).to(dtype)
    else:
        storage = torch.randint(0, 4, (extent,), generator=generator).to(dtype)
    return storage.as_strided(sizes, strides)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('bundle')
    parser.add_argument('--limit', type=int, default=0, help='check only the first N kernels')
    options = parser.parse_args()
    bundle = pathlib.Path(options.bundle)
    manifest = json.loads((bundle / 'manifest.json').read_text())
    kernels = manifest['kernels'][: options.limit or None]
    with tempfile.TemporaryDirectory() as work:
        work = pathlib.Path(work)
        (work / 'emulation.h').write_text(EMULATION)
        (work / 'lathe_kernels.cuh').write_text(emulated_header((bundle / 'src' / 'lathe_kernels.cuh').read_text()))
        (work / 'lathe_symbols.h').write_text((bundle / 'src' / 'lathe_symbols.h').read_text())
        units = []
        for k in kernels:
            text = (bundle / k['source']).read_text()
            path = work / (k['name'] + '.cpp')
            path.write_text(emulated_source(text, 'lathe::block_reduce' in text))
            units.append(str(path))
        library = work / 'libemulated.so'
        subprocess.run(['c++', '-std=c++20', '-O1', '-shared', '-fPIC', '-pthread', '-w', '-I', str(work), *units, '-o', str(library)],
                       check=True)
        lib = ctypes.CDLL(str(library))
        hints = manifest['symbol_hints']
        symbols = (ctypes.c_int64 * max(1, len(hints)))(*hints)
        failures = 0
        for k in kernels:
            generator = torch.Generator().manual_seed(k['group'])
            inputs = [random_tensor(spec, generator) for spec in k['inputs']]
            base = {'torch': torch}
            code = '\n'.join(k['fx']).replace("torch.device(type='cuda', index=0)", "torch.device('cpu')")
            # prims that a newer PyTorch than the capture's no longer has, as their definitions.
            if not hasattr(torch.ops.prims, 'fma'):
                code = code.replace('torch.ops.prims.fma.default(', 'fma(')
                base['fma'] = lambda a, b, c: a * b + c
            env = {**base, **{spec['name']: x for spec, x in zip(k['inputs'], inputs)}}
            exec(code, env)
            # The reference: the same lines in float64 on float64 copies of the inputs.
            reference = {**base, **{spec['name']: x.double() if x.is_floating_point() else x
                                    for spec, x in zip(k['inputs'], inputs)}}
            with verify_kernels.reference_mode(torch, 'cpu'):
                exec(code, reference)
            outputs = [torch.full_like(torch.empty_strided(s['sizes'], s['strides'], dtype=torch_dtype(s['dtype'])), 0)
                       .as_strided(s['sizes'], s['strides']) for s in k['outputs']]
            for out in outputs:
                if out.dtype.is_floating_point:
                    out.fill_(float('nan'))
            pointers = lambda ts: (ctypes.c_void_p * max(1, len(ts)))(*[t.data_ptr() for t in ts])
            status = getattr(lib, k['launch'])(pointers(outputs), pointers(inputs), symbols, None)
            worst = ''
            # As the GPU harness judges: ||out - ref|| / ||ref|| under the bound of the lowest precision
            # the kernel touches, or within 1.5x eager's own error where the inputs are ill-conditioned.
            precision = verify_kernels.lowest_precision(k)
            bound = verify_kernels.ERROR_BOUNDS[precision]
            for spec, out in zip(k['outputs'], outputs):
                want = env[spec['name']]
                if out.dtype.is_floating_point:
                    ref = reference[spec['name']]
                    ours = verify_kernels.compare(out, ref, torch, bound)
                    eager = verify_kernels.compare(want.to(out.dtype), ref, torch, bound)
                    conditioned = (ours['rel_err'] <= 1.5 * eager['rel_err']
                                   and ours['rel_err'] <= verify_kernels.CONDITIONING_CAP[precision])
                    if not (ours['rel_err'] <= bound or conditioned) or ours['outliers'] > eager['outliers']:
                        worst = (f"{spec['name']}: relative error {ours['rel_err']:.2e} over {bound:.0e} "
                                 f"(eager {eager['rel_err']:.2e}), {ours['outliers']} outliers")
                elif not torch.equal(out, want.to(out.dtype)):
                    worst = f"{spec['name']}: {int((out != want).sum())} elements differ"
                if worst:
                    break
            if status != 0 or worst:
                failures += 1
                print(f"FAIL {k['name']}: {worst or f'status {status}'}")
            else:
                print(f"ok   {k['name']}")
        print(f'{len(kernels) - failures} of {len(kernels)} kernels agree with PyTorch')
        return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
