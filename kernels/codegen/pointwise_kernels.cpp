// GroupGenerator: pointwise kernels, one element per thread in the first output's memory order;
// where tensors are dense, a vector kernel of 16-byte accesses (chunks in one innermost row load
// shared operands once) and the launch that picks it.
#include <algorithm>
#include <utility>

#include "kernels/codegen/group_generator.h"

namespace lathe::kernels::codegen {

std::string GroupGenerator::pointwiseKernels() {
  const int64_t total = product(kernel_.outputs.front().sizes);
  for (const TensorSpec& out : kernel_.outputs) {
    if (product(out.sizes) != total) unsupported("outputs of different element counts in a pointwise group");
  }
  constexpr int kBlock = 256;
  std::string scalarBody;
  resetBody(&scalarBody, 2);
  storeOutputs("j", total);

  std::string vectorBody;
  vectorMode_ = true;
  resetBody(&vectorBody, 4);
  storeOutputs("j", total);
  vectorMode_ = false;
  size_t widest = 0;
  for (size_t k : directInputs_) widest = std::max<size_t>(widest, ir::dtypeSize(kernel_.inputs[k].dtype));
  for (size_t k : directOutputs_) widest = std::max<size_t>(widest, ir::dtypeSize(kernel_.outputs[k].dtype));
  int width = widest == 0 ? 1 : static_cast<int>(16 / widest);
  // Again with each chunk in one innermost row, where shapes allow: kept when it hoists a load.
  // A pack wider than 16 bytes (8 int64 of a mask builder's positions) is one thread's strided
  // run: chunks narrow until every pack is 16 bytes, the width the direct tensors allow or less.
  auto chunkPass = [&](int chunkWidth) -> std::optional<std::string> {
    chunk_ = ChunkWalk{.width = chunkWidth};
    vectorMode_ = true;
    std::string chunkBody;
    resetBody(&chunkBody, 4);
    storeOutputs("j", total);
    vectorMode_ = false;
    if (chunk_->usable && !chunk_->loads.empty()) return chunkBody;
    chunk_.reset();
    return std::nullopt;
  };
  if (width > 1) {
    std::optional<std::string> chunkBody = chunkPass(width);
    size_t widestPack = 0;
    if (chunk_) {
      for (size_t k : chunk_->packedInputs)
        widestPack = std::max<size_t>(widestPack, ir::dtypeSize(kernel_.inputs[k].dtype));
    }
    if (widestPack * static_cast<size_t>(width) > 16) {
      const int narrower = static_cast<int>(16 / widestPack);
      std::optional<std::string> narrowBody = narrower > 1 ? chunkPass(narrower) : std::nullopt;
      if (narrowBody) width = narrower;
      chunkBody = std::move(narrowBody);  // else the plain vector body, at the first width
    }
    if (chunkBody) vectorBody = std::move(*chunkBody);
  }
  kernel_.vectorWidth = width;

  std::string text;
  text += kKernelDeclaration + std::to_string(kBlock) + ") " + kernel_.name + "(" + params() +
          ", long long start, long long end) {\n";
  text += "  const long long j = start + static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;\n";
  text += "  if (j >= end) return;\n" + scalarBody + "}\n\n";
  if (width > 1) {
    const std::string w = std::to_string(width);
    text += kKernelDeclaration + std::to_string(kBlock) + ") " + kernel_.name + "_vec(" + params() +
            ", long long chunks) {\n";
    text += "  const long long chunk = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;\n";
    text += "  if (chunk >= chunks) return;\n  const long long base = chunk * " + w + "LL;\n";
    if (chunk_) text += chunk_->prologue;
    text += packDeclarations(w);
    text += "#pragma unroll\n  for (int e = 0; e < " + w + "; ++e) {\n    const long long j = base + e;\n" +
            vectorBody + "  }\n";
    text += packStores();
    text += "}\n\n";
  }

  launchBody_ += "  long long done = 0;\n";
  if (width > 1) {
    std::string aligned;
    for (size_t k : directInputs_)
      aligned += " && lathe::aligned(in" + std::to_string(k) + ", " + std::to_string(width) + ")";
    for (size_t k : directOutputs_)
      aligned += " && lathe::aligned(out" + std::to_string(k) + ", " + std::to_string(width) + ")";
    if (chunk_) {
      for (size_t k : chunk_->packedInputs) {
        if (!directInputs_.contains(k))
          aligned += " && lathe::aligned(in" + std::to_string(k) + ", " + std::to_string(width) + ")";
      }
    }
    const int64_t chunks = total / width;
    launchBody_ += "  if (" + std::to_string(chunks) + "LL > 0" + aligned + ") {\n";
    launchBody_ += "    LATHE_LAUNCH(" + kernel_.name + "_vec, " + std::to_string((chunks + kBlock - 1) / kBlock) +
                   ", " + std::to_string(kBlock) + ", s, " + arguments() + ", " + std::to_string(chunks) + "LL);\n";
    launchBody_ += "    done = " + std::to_string(chunks * width) + "LL;\n  }\n";
    kernel_.config = {(chunks + kBlock - 1) / kBlock, kBlock};
  } else {
    kernel_.config = {(total + kBlock - 1) / kBlock, kBlock};
  }
  launchBody_ += "  if (done < " + std::to_string(total) + "LL) {\n";
  launchBody_ += "    const long long rest = " + std::to_string(total) + "LL - done;\n";
  launchBody_ += "    LATHE_LAUNCH(" + kernel_.name + ", static_cast<unsigned>((rest + " + std::to_string(kBlock - 1) +
                 ") / " + std::to_string(kBlock) + "), " + std::to_string(kBlock) + ", s, " + arguments() + ", done, " +
                 std::to_string(total) + "LL);\n  }\n";
  return text;
}

}  // namespace lathe::kernels::codegen
