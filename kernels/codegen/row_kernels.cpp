// GroupGenerator: row reductions and normalizations (softmax, log_softmax, layer_norm, var_mean):
// a block per row, lanes of a warp per short consecutive row or a thread per row; the chunked
// variant of 16-byte accesses where rows are consecutive.
#include <algorithm>

#include "io/fx/fx_python.h"
#include "kernels/codegen/group_generator.h"

namespace lathe::kernels::codegen {

namespace {

// Stands for the chunk width in a row kernel's text until the widest chunked tensor is known.
constexpr std::string_view kVectorToken = "LATHE_VECTOR_WIDTH";

}  // namespace

void GroupGenerator::rowLoop(const std::function<void()>& element, bool backwards) {
  const std::string rowSize = std::to_string(rows_.rowSize) + "LL";
  const auto saved = memo_;
  backwards = backwards && laneRows_ == 0 && !threadRows_;
  if (!vectorMode_) {
    line(laneRows_ != 0 ? std::string("if (active) {")
         : threadRows_  ? "for (long long k = 0; k < " + rowSize + "; ++k) {"
         : backwards    ? "for (long long k = " + rowSize + " - 1 - threadIdx.x; k >= 0; k -= blockDim.x) {"
                        : "for (long long k = threadIdx.x; k < " + rowSize + "; k += blockDim.x) {");
    indent_ += 2;
    line("const long long j = row * " + rowSize + " + k;");
    element();
    indent_ -= 2;
    memo_ = saved;
    line("}");
    return;
  }
  directInputs_.clear();
  directOutputs_.clear();
  std::string inner;
  std::string* outer = body_;
  body_ = &inner;
  indent_ += 4;
  element();
  indent_ -= 4;
  body_ = outer;
  memo_ = saved;
  const std::string width(kVectorToken);
  line(backwards ? "for (long long c = " + rowSize + " / " + width + " - 1 - threadIdx.x; c >= 0; c -= blockDim.x) {"
                 : "for (long long c = threadIdx.x; c < " + rowSize + " / " + width + "; c += blockDim.x) {");
  line("  const long long base = row * " + rowSize + " + c * " + width + ";");
  lines(packDeclarations(width), 0);
  line("#pragma unroll");
  line("  for (int e = 0; e < " + width + "; ++e) {");
  line("    const long long j = base + e;");
  *body_ += inner;
  line("  }");
  lines(packStores(), 0);
  line("}");
  rowDirectInputs_.insert(directInputs_.begin(), directInputs_.end());
  rowDirectOutputs_.insert(directOutputs_.begin(), directOutputs_.end());
}

std::string GroupGenerator::reductionBody() {
  const ReductionOp& reduce = rows_.reduce;
  const NodeId source = rows_.source;
  const Shape& sourceShape = shape(source);
  const int64_t rows = rows_.rows, rowSize = rows_.rowSize, total = rows_.total;
  std::string body;
  resetBody(&body, 2);
  const std::string acc = std::string(cTypeName(reduce.accumulator));
  if (laneRows_ != 0) {
    // No early return: every lane of a warp takes part in the shuffles.
    const std::string lanes = std::to_string(laneRows_);
    line("const long long lane_at = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;");
    line("const long long row = lane_at / " + lanes + ", k = lane_at % " + lanes + ";");
    line("const bool active = row < " + std::to_string(rows) + "LL && k < " + std::to_string(rowSize) + "LL;");
  } else if (threadRows_) {
    line("const long long row = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;");
    line("if (row >= " + std::to_string(rows) + "LL) return;");
  } else {
    line("const long long row = blockIdx.x;");
  }
  // The element of the operand the loop is at: split from `j` where rows are trailing, else from
  // the row and `k`.
  auto rowElement = [&]() {
    if (vectorMode_) return split("j", sourceShape);
    const Index rowIndex = split("row", rows_.kept);
    const Index within = split("k", rows_.reducedSizes);
    Index at{std::vector<std::string>(sourceShape.size()), ""};
    size_t keptAt = 0, reducedAt = 0;
    for (size_t d = 0; d < sourceShape.size(); ++d) {
      at.dims[d] = rows_.reducedDim[d] ? within.dims[reducedAt++] : rowIndex.dims[keptAt++];
    }
    return at;
  };
  // One pass over the row; `center` subtracts the mean in the second pass of var_mean.
  auto pass = [&](const std::string& accumulator, const std::string& center) {
    line(acc + " " + accumulator + " = " + reduce.identity + ";");
    rowLoop([&] {
      const Val x = cast(evaluate(source, rowElement()), reduce.accumulator);
      if (center.empty()) {
        line(accumulator + " = " + reduce.combine + "()(" + accumulator + ", " + x.expr + ");");
      } else {
        line("{ const float d = " + x.expr + " - " + center + "; " + accumulator + " += d * d; }");
      }
    });
    if (laneRows_ != 0) {
      line(accumulator + " = lathe::lane_reduce<" + std::to_string(laneRows_) + ">(" + accumulator + ", " +
           reduce.combine + "());");
    } else if (!threadRows_) {
      line(accumulator + " = lathe::block_reduce(" + accumulator + ", " + reduce.combine + "(), " + reduce.identity +
           ");");
    }
  };
  const std::string count = std::to_string(rowSize) + ".0f";
  if (reduce.online) {
    // Softmax statistics in one pass: the running maximum and the sum of exp(x - maximum).
    line("float red_max = lathe::Identity<float>::lowest(), red_sum = 0.0f;");
    rowLoop([&] {
      line("lathe::online_add(red_max, red_sum, " + cast(evaluate(source, rowElement()), CType::Float).expr + ");");
    });
    if (laneRows_ != 0) {
      line("lathe::lane_reduce_online<" + std::to_string(laneRows_) + ">(red_max, red_sum);");
    } else if (!threadRows_) {
      line("lathe::block_reduce_online(red_max, red_sum);");
    }
    // Once per row, not per element: the normalization multiplies by 1 / sum or subtracts log(sum).
    const std::string_view name = rows_.op.name;
    if (name == "softmax" || name == "_softmax") line("const float red_inverse = 1.0f / red_sum;");
    if (name == "log_softmax" || name == "_log_softmax") line("const float red_log_sum = logf(red_sum);");
    reduced_ = {{"red_max", CType::Float}, {"red_sum", CType::Float}};
  } else {
    pass("acc", "");
  }
  if (reduce.layerNorm) {
    line("const float red_mean = acc / " + count + ";");
    pass("acc2", "red_mean");
    line("const float red_rstd = rsqrtf(acc2 / " + count + " + " + floatLiteral(reduce.epsilon) + ");");
    reduced_ = {{"red_mean", CType::Float}, {"red_rstd", CType::Float}};
  } else if (reduce.variance) {
    line("const float mean_full = acc / " + count + ";");
    pass("acc2", "mean_full");
    std::vector<ir::DType> itemTypes(2, tensorMeta(source).dtype);
    for (NodeId user : graph_.users(reduction_)) {
      const Arg* item = argument(graph_, user, 1, "");
      if (graph_.target(user) == io::fx::kGetItemTarget && item != nullptr && item->kind == Arg::Kind::Int &&
          item->i >= 0 && item->i < 2) {
        itemTypes[static_cast<size_t>(item->i)] = tensorMeta(user).dtype;
      }
    }
    const std::string divisor = std::to_string(std::max<int64_t>(rowSize - reduce.correction, 0)) + ".0f";
    line("const float red_var = " + rounded("acc2 / " + divisor, itemTypes[0]) + ";");
    line("const float red_mean = " + rounded("mean_full", itemTypes[1]) + ";");
    reduced_ = {{"red_var", CType::Float}, {"red_mean", CType::Float}};
  } else if (!reduce.online) {
    declareReduced("acc");
  }
  // Row-sized outputs, once per row (scalar stores: one element).
  bool rowOutputs = false;
  for (const TensorSpec& out : kernel_.outputs) rowOutputs = rowOutputs || product(out.sizes) == rows;
  if (rowOutputs) {
    line(threadRows_      ? std::string("{")
         : laneRows_ != 0 ? "if (row < " + std::to_string(rows) + "LL && k == 0) {"
                          : std::string("if (threadIdx.x == 0) {"));
    const auto saved = memo_;
    const bool vector = vectorMode_;
    vectorMode_ = false;
    indent_ += 2;
    storeOutputs("row", rows);
    indent_ -= 2;
    vectorMode_ = vector;
    memo_ = saved;
    line("}");
  }
  // Element-sized outputs: the row's elements again, in each output's own order.
  bool elementOutputs = false;
  for (const TensorSpec& out : kernel_.outputs) elementOutputs = elementOutputs || product(out.sizes) == total;
  if (rows != total && elementOutputs) rowLoop([&] { storeOutputs("j", total); }, true);
  return body;
}

std::string GroupGenerator::reductionKernel() {
  const int64_t rows = rows_.rows, rowSize = rows_.rowSize, total = rows_.total;
  for (const TensorSpec& out : kernel_.outputs) {
    const int64_t count = product(out.sizes);
    if (count != rows && count != total) unsupported("output " + out.name + " is neither row- nor element-sized");
  }
  // Short rows: lanes or a thread per row (see kShortRowLimit in reductions.cpp); else a block per row.
  const int64_t block = threadRows_ || laneRows_ != 0 ? 256
                        : rowSize >= 2048             ? 512
                        : rowSize >= 256              ? 256
                                                      : std::max<int64_t>(32, (rowSize + 31) / 32 * 32);
  const int64_t grid = laneRows_ != 0 ? (rows * laneRows_ + block - 1) / block
                       : threadRows_  ? (rows + block - 1) / block
                                      : rows;
  const std::string scalarBody = reductionBody();
  // The chunked variant, where rows are trailing and some tensor is read or written along them.
  std::string vectorBody;
  int width = 1;
  if (trailingRows() && !threadRows_ && laneRows_ == 0) {
    vectorMode_ = true;
    vectorBody = reductionBody();
    vectorMode_ = false;
    size_t widest = 0;
    for (size_t k : rowDirectInputs_) widest = std::max<size_t>(widest, ir::dtypeSize(kernel_.inputs[k].dtype));
    for (size_t k : rowDirectOutputs_) widest = std::max<size_t>(widest, ir::dtypeSize(kernel_.outputs[k].dtype));
    width = widest == 0 ? 1 : static_cast<int>(16 / widest);
    if (width > 1 && rowSize % width != 0) width = 1;
  }
  const std::string launchBounds = kKernelDeclaration + std::to_string(block) + ") ";
  const std::string launch =
      ", " + std::to_string(grid) + ", " + std::to_string(block) + ", s, " + arguments() + ");\n";
  std::string text = launchBounds + kernel_.name + "(" + params() + ") {\n" + scalarBody + "}\n\n";
  kernel_.config = {grid, block};
  if (width == 1) {
    launchBody_ += "  LATHE_LAUNCH(" + kernel_.name + launch;
    return text;
  }
  const std::string w = std::to_string(width);
  for (size_t at = vectorBody.find(kVectorToken); at != std::string::npos; at = vectorBody.find(kVectorToken, at)) {
    vectorBody.replace(at, kVectorToken.size(), w);
  }
  text += launchBounds + kernel_.name + "_vec(" + params() + ") {\n" + vectorBody + "}\n\n";
  kernel_.vectorWidth = width;
  std::string aligned;
  for (size_t k : rowDirectInputs_)
    aligned += (aligned.empty() ? "" : " && ") + std::string("lathe::aligned(in") + std::to_string(k) + ", " + w + ")";
  for (size_t k : rowDirectOutputs_)
    aligned += (aligned.empty() ? "" : " && ") + std::string("lathe::aligned(out") + std::to_string(k) + ", " + w + ")";
  launchBody_ += "  if (" + aligned + ") {\n    LATHE_LAUNCH(" + kernel_.name + "_vec" + launch +
                 "  } else {\n    LATHE_LAUNCH(" + kernel_.name + launch + "  }\n";
  return text;
}

}  // namespace lathe::kernels::codegen
