// GroupGenerator: column reductions (over leading dimensions): a block per strip of columns, the
// groups' partial results combined in a fixed order; a vector variant of 16-byte columns whose
// rows may be split over blocks, the last to finish adding the partial sums.
#include <algorithm>

#include "kernels/codegen/group_generator.h"

namespace lathe::kernels::codegen {

namespace {

// Multiprocessors of an H100 / H200, which grids of column kernels are sized to fill.
constexpr int64_t kSMs = 132;

// A column kernel's block: few strips get more threads each, so that enough loads are in flight.
int64_t columnBlock(int64_t strips) {
  return strips >= 2 * kSMs ? 256 : strips >= kSMs ? 512 : 1024;
}

}  // namespace

std::string GroupGenerator::columnKernel() {
  const ReductionOp& reduce = rows_.reduce;
  const int64_t rows = rows_.rows, rowSize = rows_.rowSize;
  // Strips of 32 columns where that gives a block to every SM of an H100 / H200 (132), else
  // narrower ones (8 columns: still a whole 32-byte sector of fp32) for more blocks.
  int64_t width = 8;
  for (int64_t candidate : {32, 16}) {
    if ((rows + candidate - 1) / candidate >= kSMs) {
      width = candidate;
      break;
    }
  }
  const int64_t strips = (rows + width - 1) / width;
  const int64_t block = columnBlock(strips);
  const int64_t groups = block / width;
  const std::string strip = std::to_string(width);
  const std::string acc(cTypeName(reduce.accumulator));
  std::string body;
  resetBody(&body, 2);
  line("__shared__ " + acc + " partial[" + std::to_string(groups) + "][" + strip + "];");
  line("const long long row = static_cast<long long>(blockIdx.x) * " + strip + " + threadIdx.x % " + strip + "u;");
  line("const unsigned group = threadIdx.x / " + strip + "u, groups = blockDim.x / " + strip + "u;");
  line(acc + " acc = " + reduce.identity + ";");
  const Shape& sourceShape = shape(rows_.source);
  line("if (row < " + std::to_string(rows) + "LL) {");
  indent_ += 2;
  line("#pragma unroll 4");  // several rows' loads in flight per thread
  line("for (long long k = group; k < " + std::to_string(rowSize) + "LL; k += groups) {");
  const auto saved = memo_;
  indent_ += 2;
  line("const long long j = k * " + std::to_string(rows) + "LL + row;");
  // Split from j (not from k and row), so that outputs of the operand's shape share its loads.
  const Val x = cast(evaluate(rows_.source, split("j", sourceShape)), reduce.accumulator);
  line("acc = " + reduce.combine + "()(acc, " + x.expr + ");");
  storeOutputs("j", rows_.total);
  indent_ -= 2;
  memo_ = saved;
  line("}");
  indent_ -= 2;
  line("}");
  line("partial[group][threadIdx.x % " + strip + "u] = acc;");
  combineGroups("threadIdx.x % " + strip + "u", 1);
  line("if (group != 0 || row >= " + std::to_string(rows) + "LL) return;");
  line("acc = partial[0][threadIdx.x];");
  declareReduced("acc");
  storeOutputs("row", rows);
  const std::string name = kernel_.name + "_cols";
  kernel_.config = {strips, block};
  std::string text =
      kKernelDeclaration + std::to_string(block) + ") " + name + "(" + params() + ") {\n" + body + "}\n\n";
  const std::string scalarLaunch = "  LATHE_LAUNCH(" + name + ", " + std::to_string(strips) + ", " +
                                   std::to_string(block) + ", s, " + arguments() + ");\n";
  const std::optional<VectorColumns> vector = columnVectorKernel();
  if (!vector) {
    launchBody_ += scalarLaunch;
    return text;
  }
  kernel_.config = vector->config;
  kernel_.vectorWidth = vector->width;
  launchBody_ += "  if (" + vector->aligned + ") {\n  " + vector->launch + "  } else {\n  " + scalarLaunch + "  }\n";
  return text + vector->text;
}

void GroupGenerator::combineGroups(const std::string& firstColumn, int columns) {
  const ReductionOp& reduce = rows_.reduce;
  line("for (unsigned half = groups / 2; half > 0; half /= 2) {");
  line("  __syncthreads();");
  line("  if (group < half) {");
  line("    #pragma unroll");
  line("    for (int e = 0; e < " + std::to_string(columns) + "; ++e) {");
  line("      const unsigned c = " + firstColumn + " + e;");
  line("      partial[group][c] = " + reduce.combine + "()(partial[group][c], partial[group + half][c]);");
  line("    }");
  line("  }");
  line("}");
  line("__syncthreads();");
}

std::optional<GroupGenerator::VectorColumns> GroupGenerator::columnVectorKernel() {
  const ReductionOp& reduce = rows_.reduce;
  const int64_t rows = rows_.rows, rowSize = rows_.rowSize;
  // 16 bytes of the narrowest tensor (two 16-byte accesses of a 4-byte one beside 2-byte ones): a
  // strip's row then covers whole 32-byte sectors of every tensor; narrower ones leave half
  // sectors to other blocks, and DRAM moves the sector twice.
  size_t narrowest = 8;
  for (const TensorSpec& t : kernel_.inputs) narrowest = std::min<size_t>(narrowest, ir::dtypeSize(t.dtype));
  for (const TensorSpec& t : kernel_.outputs) narrowest = std::min<size_t>(narrowest, ir::dtypeSize(t.dtype));
  const int width = static_cast<int>(std::min<size_t>(8, 16 / narrowest));
  if (width < 2 || rows % width != 0) return std::nullopt;
  int64_t lanes = 2;
  for (int64_t candidate : {8, 4}) {
    if (rows / (candidate * width) >= kSMs) {
      lanes = candidate;
      break;
    }
  }
  int64_t strips = (rows + lanes * width - 1) / (lanes * width);
  // Few strips (a few thousand columns): the rows are split over blocks too, 256 threads each,
  // strips of 8 threads (a 128-byte line of a bf16 row), until there are blocks for every SM
  // twice; the last block of a strip to finish combines the splits' partial sums (module
  // memory) in split order, so the result does not depend on which finished first.
  int64_t splits = 1;
  int64_t block = columnBlock(strips);
  if (strips < 2 * kSMs) {
    constexpr int64_t kSplitBlock = 256, kRowsPerGroup = 4;  // at least: a group's loads overlap
    int64_t splitLanes = 8;
    while (splitLanes > 2 && splitLanes * width > rows) splitLanes /= 2;
    const int64_t splitStrips = (rows + splitLanes * width - 1) / (splitLanes * width);
    const int64_t wanted = (2 * kSMs + splitStrips - 1) / splitStrips;
    const int64_t most = rowSize / (kSplitBlock / splitLanes * kRowsPerGroup);
    if (std::min(wanted, most) > 1) {
      splits = std::min(wanted, most);
      lanes = splitLanes;
      strips = splitStrips;
      block = kSplitBlock;
    }
  }
  const int64_t rowsPerSplit = (rowSize + splits - 1) / splits;
  const std::string w = std::to_string(width), l = std::to_string(lanes);
  const std::string acc(cTypeName(reduce.accumulator));
  const std::string partials = kernel_.name + "_partials", arrivals = kernel_.name + "_arrivals";

  directInputs_.clear();
  directOutputs_.clear();
  chunk_ = ChunkWalk{.width = width};
  vectorMode_ = true;
  std::string element;
  resetBody(&element, 8);
  const Val x = cast(evaluate(rows_.source, split("j", shape(rows_.source))), reduce.accumulator);
  line("acc[e] = " + reduce.combine + "()(acc[e], " + x.expr + ");");
  storeOutputs("j", rows_.total);
  vectorMode_ = false;
  const ChunkWalk walk = *chunk_;
  chunk_.reset();
  if (!walk.usable) return std::nullopt;

  std::string body;
  resetBody(&body, 2);
  line("__shared__ " + acc + " partial[" + std::to_string(block / lanes) + "][" + std::to_string(lanes * width) + "];");
  line("const unsigned lane = threadIdx.x % " + l + "u, group = threadIdx.x / " + l + "u, groups = blockDim.x / " + l +
       "u;");
  std::string rowStart = "0LL", rowEnd = std::to_string(rowSize) + "LL";
  if (splits > 1) {
    line("const long long strip = blockIdx.x % " + std::to_string(strips) + "u, split = blockIdx.x / " +
         std::to_string(strips) + "u;");
    line("const long long col0 = (strip * " + l + " + lane) * " + w + ";");
    line("const long long row_end = split * " + std::to_string(rowsPerSplit) + "LL + " + std::to_string(rowsPerSplit) +
         "LL < " + rowEnd + " ? split * " + std::to_string(rowsPerSplit) + "LL + " + std::to_string(rowsPerSplit) +
         "LL : " + rowEnd + ";");
    rowStart = "split * " + std::to_string(rowsPerSplit) + "LL";
    rowEnd = "row_end";
  } else {
    line("const long long col0 = (static_cast<long long>(blockIdx.x) * " + l + " + lane) * " + w + ";");
  }
  line(acc + " acc[" + w + "];");
  line("#pragma unroll");
  line("for (int e = 0; e < " + w + "; ++e) acc[e] = " + reduce.identity + ";");
  line("if (col0 < " + std::to_string(rows) + "LL) {");
  line("  #pragma unroll 2");
  line("  for (long long k = " + rowStart + " + group; k < " + rowEnd + "; k += groups) {");
  line("    const long long base = k * " + std::to_string(rows) + "LL + col0;");
  lines(walk.prologue + packDeclarations(w), 2);
  line("    #pragma unroll");
  line("    for (int e = 0; e < " + w + "; ++e) {");
  line("      const long long j = base + e;");
  body += element;
  line("    }");
  lines(packStores(), 2);
  line("  }");
  line("}");
  line("#pragma unroll");
  line("for (int e = 0; e < " + w + "; ++e) partial[group][lane * " + w + " + e] = acc[e];");
  combineGroups("lane * " + w, width);
  line("if (group != 0 || col0 >= " + std::to_string(rows) + "LL) return;");
  line("#pragma unroll");
  line("for (int e = 0; e < " + w + "; ++e) acc[e] = partial[0][lane * " + w + " + e];");
  if (splits > 1) {
    // The threadFenceReduction pattern, per lane: publish, count, and the last one reads all.
    const std::string arrival = arrivals + "[strip * " + l + " + lane]";
    line("#pragma unroll");
    line("for (int e = 0; e < " + w + "; ++e) " + partials + "[split * " + std::to_string(rows) +
         "LL + col0 + e] = acc[e];");
    line("__threadfence();");
    line("if (atomicAdd(&" + arrival + ", 1u) != " + std::to_string(splits - 1) + "u) return;");
    line("__threadfence();");
    line("#pragma unroll");
    line("for (int e = 0; e < " + w + "; ++e) acc[e] = " + reduce.identity + ";");
    line("for (long long from = 0; from < " + std::to_string(splits) + "LL; ++from) {");
    line("  #pragma unroll");
    line("  for (int e = 0; e < " + w + "; ++e) acc[e] = " + reduce.combine + "()(acc[e], __ldcg(&" + partials +
         "[from * " + std::to_string(rows) + "LL + col0 + e]));");
    line("}");
    line(arrival + " = 0u;  // ready for the next launch");
  }
  line("#pragma unroll");
  line("for (int e = 0; e < " + w + "; ++e) {");
  indent_ += 2;
  line("const long long row = col0 + e;");
  declareReduced("acc[e]");
  storeOutputs("row", rows);
  indent_ -= 2;
  line("}");

  VectorColumns out;
  out.width = width;
  out.config = {strips * splits, block};
  const std::string name = kernel_.name + "_cols_vec";
  out.text = kKernelDeclaration + std::to_string(block) + ") " + name + "(" + params() + ") {\n" + body + "}\n\n";
  if (splits > 1) {
    // Module memory: one launch of this kernel at a time per device (see docs/kernels.md).
    out.text = "__device__ " + acc + " " + partials + "[" + std::to_string(splits * rows) + "];\n__device__ unsigned " +
               arrivals + "[" + std::to_string(strips * lanes) + "];\n\n" + out.text;
  }
  out.launch = "  LATHE_LAUNCH(" + name + ", " + std::to_string(strips * splits) + ", " + std::to_string(block) +
               ", s, " + arguments() + ");\n";
  out.aligned = "true";
  std::set<size_t> packedInputs = walk.packedInputs;
  packedInputs.insert(directInputs_.begin(), directInputs_.end());
  for (size_t k : packedInputs) out.aligned += " && lathe::aligned(in" + std::to_string(k) + ", " + w + ")";
  for (size_t k : directOutputs_) out.aligned += " && lathe::aligned(out" + std::to_string(k) + ", " + w + ")";
  return out;
}

}  // namespace lathe::kernels::codegen
