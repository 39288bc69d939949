#include "ir/op_info.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <mutex>
#include <nlohmann/json.hpp>

#include "ir/op_table.h"
#include "util/input.h"
#include "util/json_limits.h"

namespace lathe::ir {
namespace {

constexpr std::array<std::string_view, kOpCategoryCount> kCategoryNames{
    "unknown", "matmul",   "attention", "convolution", "pointwise", "reduction", "normalization", "data_movement",
    "view",    "creation", "random",    "collective",  "getitem",   "host",      "higher_order",  "custom",
};

// canonicalOpName without a copy unless "::" must be rewritten (lookups run once per node).
std::string_view canonicalView(std::string_view target, std::string& buffer) {
  if (target.starts_with("torch.ops.")) target.remove_prefix(10);
  const size_t colons = target.find("::");
  if (colons == std::string_view::npos) return target;
  buffer.assign(target);
  buffer.replace(colons, 2, ".");
  return buffer;
}

bool fusibleByDefault(OpCategory c) {
  switch (c) {
    case OpCategory::Pointwise:
    case OpCategory::Reduction:
    case OpCategory::Normalization:
    case OpCategory::DataMovement:
    case OpCategory::View:
    case OpCategory::Creation:
    case OpCategory::Random: return true;
    default: return false;
  }
}

// The name without its last dotted component: "aten.max.other" -> "aten.max"; "" when there is
// no component to drop ("aten.mm" keeps its namespace, "view" has none).
std::string_view packetOf(std::string_view name) {
  const size_t dot = name.rfind('.');
  if (dot == std::string_view::npos) return {};
  const std::string_view head = name.substr(0, dot);
  return head.find('.') == std::string_view::npos ? std::string_view{} : head;
}

bool endsWithSingleUnderscore(std::string_view s) {
  return s.ends_with('_') && !s.ends_with("__");
}

// The functional op of an in-place variant: "aten.add_.Tensor" -> "aten.add.Tensor", "mul_" -> "mul".
std::optional<std::string> functionalVariant(std::string_view name) {
  if (endsWithSingleUnderscore(name)) return std::string(name.substr(0, name.size() - 1));
  const size_t dot = name.rfind('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const std::string_view head = name.substr(0, dot);
  if (!endsWithSingleUnderscore(head) || head.find('.') == std::string_view::npos) return std::nullopt;
  std::string out(head.substr(0, head.size() - 1));
  out.append(name.substr(dot));
  return out;
}

// Exact name, then its packet, then the same for the functional variant of an in-place op.
template <typename Find>
const OpInfo* resolveName(std::string_view name, const Find& find) {
  if (const OpInfo* hit = find(name)) return hit;
  if (const std::string_view packet = packetOf(name); !packet.empty())
    if (const OpInfo* hit = find(packet)) return hit;
  if (const auto functional = functionalVariant(name)) {
    if (const OpInfo* hit = find(*functional)) return hit;
    if (const std::string_view packet = packetOf(*functional); !packet.empty())
      if (const OpInfo* hit = find(packet)) return hit;
  }
  return nullptr;
}

OpInfo infoFromRow(const detail::OpRow& row) {
  OpInfo info;
  info.name = std::string(row.name);
  info.category = row.category;
  info.formula = row.formula;
  info.flopsPerElement = row.flopsPerElement;
  info.attention = row.attention;
  info.fusible =
      (fusibleByDefault(row.category) || (row.traits & detail::kFusible)) && !(row.traits & detail::kNotFusible);
  info.computeSensitive = (row.traits & detail::kComputeSensitive) != 0;
  info.updatesFirstArgument = (row.traits & detail::kUpdatesFirstArgument) != 0;
  return info;
}

// The table as OpInfo entries, indexed. Built in place once: the indexes point into `infos`.
class BuiltInTable {
 public:
  BuiltInTable() {
    const auto rows = detail::builtInOpRows();
    std::unordered_map<std::string_view, const detail::OpRow*> rowByName;
    for (const auto& row : rows) rowByName.emplace(row.name, &row);
    infos.reserve(rows.size());
    for (const auto& row : rows) {
      const detail::OpRow* source = &row;
      if (!row.aliasOf.empty()) {
        auto it = rowByName.find(row.aliasOf);
        // A dangling alias stays Unknown; the unit test keeps the table free of them.
        source = it != rowByName.end() && it->second->aliasOf.empty() ? it->second : nullptr;
      }
      OpInfo info = source ? infoFromRow(*source) : OpInfo{};
      info.name = std::string(row.name);
      infos.push_back(std::move(info));
    }
    for (const auto& info : infos) byName_.emplace(info.name, &info);
    for (const auto& info : infos) {
      const std::string_view packet = packetOf(info.name);
      if (!packet.empty() && byName_.contains(packet)) overloadsByPacket_.emplace(packet, &info);
    }
  }
  BuiltInTable(const BuiltInTable&) = delete;
  BuiltInTable& operator=(const BuiltInTable&) = delete;

  [[nodiscard]] const OpInfo* find(std::string_view name) const {
    auto it = byName_.find(name);
    return it == byName_.end() ? nullptr : it->second;
  }
  [[nodiscard]] const OpInfo* resolve(std::string_view name) const {
    return resolveName(name, [&](std::string_view n) { return find(n); });
  }
  // Overload lines of a packet ("aten.max" -> "aten.max.other"), for packet-wide flags.
  [[nodiscard]] auto overloadsOf(std::string_view packet) const { return overloadsByPacket_.equal_range(packet); }

  std::vector<OpInfo> infos;

 private:
  std::unordered_map<std::string_view, const OpInfo*> byName_;
  std::unordered_multimap<std::string_view, const OpInfo*> overloadsByPacket_;
};

const BuiltInTable& builtInTable() {
  static const BuiltInTable table;
  return table;
}

const OpInfo& unknownOp() {
  static const OpInfo info;
  return info;
}

// Base of a run-time entry for a target with no built-in line.
OpInfo customTemplate(std::string_view name) {
  OpInfo info;
  info.name = std::string(name);
  info.category = OpCategory::Custom;
  info.formula = CostFormula::Opaque;
  return info;
}

OpInfo applyFlags(OpInfo info, const OpFlags& flags) {
  if (flags.like) {
    if (const OpInfo* like = builtInTable().resolve(canonicalOpName(*flags.like))) {
      info.category = like->category;
      info.formula = like->formula;
      info.flopsPerElement = like->flopsPerElement;
      info.attention = like->attention;
      info.fusible = like->fusible;
      info.updatesFirstArgument = like->updatesFirstArgument;
    }
  }
  if (flags.category) info.category = *flags.category;
  if (flags.fusible) info.fusible = *flags.fusible;
  if (flags.computeSensitive) info.computeSensitive = *flags.computeSensitive;
  if (flags.subgraphBoundary) info.subgraphBoundary = *flags.subgraphBoundary;
  if (flags.outputMeta) info.outputMeta = *flags.outputMeta;
  info.builtIn = false;
  return info;
}

void mergeFlags(OpFlags& into, const OpFlags& from) {
  if (from.computeSensitive) into.computeSensitive = from.computeSensitive;
  if (from.subgraphBoundary) into.subgraphBoundary = from.subgraphBoundary;
  if (from.fusible) into.fusible = from.fusible;
  if (from.category) into.category = from.category;
  if (from.like) into.like = from.like;
  if (from.outputMeta) into.outputMeta = from.outputMeta;
}

}  // namespace

std::string_view categoryName(OpCategory category) {
  const auto i = static_cast<size_t>(category);
  return i < kCategoryNames.size() ? kCategoryNames[i] : kCategoryNames[0];
}

std::optional<OpCategory> categoryFromName(std::string_view name) {
  for (size_t i = 0; i < kCategoryNames.size(); ++i)
    if (kCategoryNames[i] == name) return static_cast<OpCategory>(i);
  return std::nullopt;
}

std::string canonicalOpName(std::string_view target) {
  std::string buffer;
  return std::string(canonicalView(target, buffer));
}

// ---------------------------------------------------------------------------------------------
// Registry

OpRegistry::OpRegistry() = default;

OpRegistry& OpRegistry::global() {
  static OpRegistry registry;
  return registry;
}

std::span<const OpInfo> OpRegistry::builtIns() {
  return builtInTable().infos;
}

const OpInfo* OpRegistry::findLocked(std::string_view name) const {
  const BuiltInTable& table = builtInTable();
  return resolveName(name, [&](std::string_view n) -> const OpInfo* {
    if (auto it = overrides_.find(n); it != overrides_.end()) return it->second.get();
    return table.find(n);
  });
}

const OpInfo& OpRegistry::lookup(std::string_view target) const {
  std::string buffer;
  const std::string_view name = canonicalView(target, buffer);
  std::shared_lock lock(mutex_);
  const OpInfo* hit = findLocked(name);
  return hit ? *hit : unknownOp();
}

void OpRegistry::setFlags(std::string_view target, const OpFlags& flags) {
  std::vector<std::pair<std::string, OpFlags>> patches;
  patches.emplace_back(canonicalOpName(target), flags);
  applyPatches(std::move(patches));
}

void OpRegistry::applyPatches(std::vector<std::pair<std::string, OpFlags>> patches) {
  std::unique_lock lock(mutex_);
  for (auto& [key, flags] : patches)
    if (!key.empty()) mergeFlags(patches_[key], flags);
  rebuildOverridesLocked();
}

void OpRegistry::rebuildOverridesLocked() {
  const BuiltInTable& table = builtInTable();
  std::unordered_map<std::string, OpInfo> fresh;
  for (const auto& [key, flags] : patches_) {
    const OpInfo* builtIn = table.resolve(key);
    OpInfo base = builtIn ? *builtIn : customTemplate(key);
    base.name = key;
    // An overload's flags apply on top of its packet's.
    if (const std::string_view packet = packetOf(key); !packet.empty())
      if (auto it = patches_.find(packet); it != patches_.end()) base = applyFlags(std::move(base), it->second);
    fresh[key] = applyFlags(std::move(base), flags);
    // Packet flags also reach the packet's own overload lines ("aten.max" -> "aten.max.other").
    auto [begin, end] = table.overloadsOf(key);
    for (auto it = begin; it != end; ++it)
      if (!patches_.contains(it->second->name)) fresh[it->second->name] = applyFlags(*it->second, flags);
  }
  // Keep unchanged entries (references to them stay current); retire replaced ones.
  for (auto it = overrides_.begin(); it != overrides_.end();) {
    auto f = fresh.find(std::string(it->first));
    if (f != fresh.end() && f->second == *it->second) {
      fresh.erase(f);
      ++it;
    } else {
      retired_.push_back(std::move(it->second));
      it = overrides_.erase(it);
    }
  }
  for (auto& [key, info] : fresh) {
    auto owned = std::make_unique<OpInfo>(std::move(info));
    const std::string_view name = owned->name;
    overrides_.emplace(name, std::move(owned));
  }
}

std::vector<std::string> OpRegistry::flaggedTargets() const {
  std::shared_lock lock(mutex_);
  std::vector<std::string> out;
  out.reserve(patches_.size());
  for (const auto& [key, flags] : patches_) out.push_back(key);
  return out;
}

const OpInfo& lookupOp(std::string_view target) {
  return OpRegistry::global().lookup(target);
}

// ---------------------------------------------------------------------------------------------
// Flags from JSON

namespace {

// Finds the line of each key in document order (ordered_json keeps it), scanning forward once. A
// key not found as written (escapes) gets line 0; after a few such misses, the search stops, so
// that a large file of them cannot make loading quadratic.
class KeyLines {
 public:
  explicit KeyLines(std::string_view text) : text_(text) {}

  uint64_t lineOf(std::string_view key) {
    if (misses_ >= kMaxMisses) return 0;
    const std::string quoted = "\"" + std::string(key) + "\"";
    for (size_t pos = text_.find(quoted, cursor_); pos != std::string_view::npos; pos = text_.find(quoted, pos + 1)) {
      size_t after = pos + quoted.size();
      while (after < text_.size() &&
             (text_[after] == ' ' || text_[after] == '\t' || text_[after] == '\n' || text_[after] == '\r'))
        ++after;
      if (after < text_.size() && text_[after] == ':') {
        line_ += static_cast<uint64_t>(std::count(text_.begin() + cursor_, text_.begin() + pos, '\n'));
        cursor_ = pos;
        return line_;
      }
    }
    ++misses_;
    return 0;  // no line rather than a wrong one
  }

 private:
  static constexpr int kMaxMisses = 32;
  std::string_view text_;
  int misses_ = 0;
  size_t cursor_ = 0;
  uint64_t line_ = 1;
};

uint64_t lineAtByte(std::string_view text, size_t byte) {
  byte = std::min(byte, text.size());
  return 1 + static_cast<uint64_t>(std::count(text.begin(), text.begin() + byte, '\n'));
}

std::optional<OutputMetaRule> parseOutputMetaRule(const nlohmann::ordered_json& value) {
  OutputMetaRule rule;
  if (value.is_null()) {
    rule.kind = OutputMetaRule::Kind::FirstTensorArgs;
    return rule;
  }
  if (value.is_string() && value.get<std::string>() == "recorded") return rule;
  if (value.is_number_integer()) {
    const auto count = value.get<int64_t>();
    if (count < 1 || count > 64) return std::nullopt;
    rule.kind = OutputMetaRule::Kind::FirstTensorArgs;
    rule.count = static_cast<uint32_t>(count);
    return rule;
  }
  if (value.is_array() && !value.empty() && value.size() <= 64) {
    rule.kind = OutputMetaRule::Kind::Arguments;
    for (const auto& item : value) {
      ArgRef ref;
      if (item.is_number_integer() && item.get<int64_t>() >= 0 && item.get<int64_t>() < 4096) {
        ref.position = static_cast<int32_t>(item.get<int64_t>());
      } else if (item.is_string() && !item.get<std::string>().empty()) {
        ref.keyword = item.get<std::string>();
      } else {
        return std::nullopt;
      }
      rule.arguments.push_back(std::move(ref));
    }
    return rule;
  }
  return std::nullopt;
}

}  // namespace

void OpRegistry::loadFlagsJson(std::string_view jsonText, const std::string& sourceName, Diagnostics& diagnostics) {
  nlohmann::ordered_json doc;
  try {
    doc = parseJsonBounded<nlohmann::ordered_json>(jsonText, sourceName);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(ErrorCode::BadInput, std::string("op flags are not valid JSON: ") + e.what(),
                {sourceName, lineAtByte(jsonText, e.byte > 0 ? e.byte - 1 : 0)});
  } catch (const nlohmann::json::exception& e) {  // e.g. a number out of range; no position given
    throw Error(ErrorCode::BadInput, std::string("op flags are not valid JSON: ") + e.what(), {sourceName});
  }
  if (!doc.is_object())
    throw Error(ErrorCode::BadInput, "op flags must be a JSON object of op name -> flags", {sourceName, 1});

  KeyLines lines(jsonText);
  std::vector<std::pair<std::string, OpFlags>> patches;
  for (const auto& item : doc.items()) {
    const std::string& target = item.key();
    const nlohmann::ordered_json& entry = item.value();
    const SourceLocation where{sourceName, lines.lineOf(target)};
    std::string canonical = canonicalOpName(target);
    if (canonical.empty()) {
      diagnostics.warn("op_flags_empty_name", "an op name is empty; entry skipped", where);
      continue;
    }
    if (!entry.is_object()) {
      diagnostics.warn("op_flags_not_object", "flags for '" + target + "' are not an object; entry skipped", where);
      continue;
    }
    OpFlags flags;
    for (const auto& field : entry.items()) {
      const std::string& key = field.key();
      const nlohmann::ordered_json& value = field.value();
      const SourceLocation at{sourceName, lines.lineOf(key)};
      auto badValue = [&](std::string_view expected) {
        diagnostics.warn("op_flags_bad_value",
                         "'" + key + "' of '" + target + "' must be " + std::string(expected) + "; ignored", at);
      };
      if (key == "compute_sensitive" || key == "is_compute_sensitive" || key == "subgraph_boundary" ||
          key == "is_subgraph_boundary" || key == "fusible") {
        if (!value.is_boolean()) {
          badValue("true or false");
          continue;
        }
        const bool b = value.get<bool>();
        if (key.ends_with("compute_sensitive"))
          flags.computeSensitive = b;
        else if (key.ends_with("subgraph_boundary"))
          flags.subgraphBoundary = b;
        else
          flags.fusible = b;
      } else if (key == "category") {
        const auto category = value.is_string() ? categoryFromName(value.get<std::string>()) : std::nullopt;
        if (!category) {
          badValue("a category name (matmul, attention, pointwise, custom, ...)");
          continue;
        }
        flags.category = category;
      } else if (key == "like") {
        if (!value.is_string() || !builtInTable().resolve(canonicalOpName(value.get<std::string>()))) {
          badValue("the name of a known op");
          continue;
        }
        flags.like = value.get<std::string>();
      } else if (key == "infer_output_meta") {
        auto rule = parseOutputMetaRule(value);
        if (!rule) {
          badValue("\"recorded\", a count of 1..64, null, or a list of argument positions and names");
          continue;
        }
        flags.outputMeta = std::move(rule);
      } else {
        diagnostics.warn("op_flags_unknown_key", "unknown key '" + key + "' for '" + target + "'; ignored", at);
      }
    }
    patches.emplace_back(std::move(canonical), std::move(flags));
  }
  applyPatches(std::move(patches));
}

void OpRegistry::loadFlagsFile(const std::filesystem::path& path, Diagnostics& diagnostics) {
  constexpr uint64_t kMaxFlagsFileBytes = uint64_t{64} << 20;
  const std::string text = readFile(path, kMaxFlagsFileBytes);
  loadFlagsJson(text, path.string(), diagnostics);
}

// ---------------------------------------------------------------------------------------------
// Output metadata and cost

namespace {

const Arg* positionalArg(const Node& node, int position) {
  if (position < 0 || static_cast<size_t>(position) >= node.args.size()) return nullptr;
  return &node.args[static_cast<size_t>(position)];
}

const Arg* keywordArg(const Graph& graph, const Node& node, std::string_view keyword) {
  for (const auto& [key, value] : node.kwargs)
    if (graph.str(key) == keyword) return &value;
  return nullptr;
}

const TensorMeta* tensorOf(const Graph& graph, const Arg* arg) {
  if (!arg || arg->kind != Arg::Kind::Node || arg->node >= graph.size()) return nullptr;
  const TensorMeta& meta = graph.node(arg->node).meta;
  return meta.isTensor() ? &meta : nullptr;
}

std::vector<TensorMeta> inferredOutputs(const Graph& graph, const Node& node, const OutputMetaRule& rule) {
  std::vector<TensorMeta> out;
  if (rule.kind == OutputMetaRule::Kind::FirstTensorArgs) {
    for (const auto& arg : node.args) {
      if (out.size() >= rule.count) break;
      if (const TensorMeta* meta = tensorOf(graph, &arg)) out.push_back(*meta);
    }
  } else if (rule.kind == OutputMetaRule::Kind::Arguments) {
    for (const auto& ref : rule.arguments) {
      const Arg* arg = ref.position >= 0 ? positionalArg(node, ref.position) : keywordArg(graph, node, ref.keyword);
      const TensorMeta* meta = tensorOf(graph, arg);
      out.push_back(meta ? *meta : TensorMeta{});
    }
  }
  return out;
}

// Prices one node; records whether every size it used had a hint.
class CostEstimator {
 public:
  CostEstimator(const Graph& graph, NodeId id, const OpInfo& info, const OpRegistry& registry)
      : graph_(graph), id_(id), node_(graph.node(id)), info_(info), outputs_(outputMetas(graph, id, registry)) {}

  OpCost run() {
    using F = CostFormula;
    cost_.bytesRead = defaultBytesRead();
    cost_.bytesWritten = outputBytes();
    switch (info_.formula) {
      case F::None: break;
      case F::Opaque: cost_.flopsKnown = false; break;
      case F::Memory: break;
      case F::Fill:
        cost_.bytesRead = 0;
        cost_.flops = info_.flopsPerElement * largestOutputNumel();
        break;
      case F::Pointwise: cost_.flops = info_.flopsPerElement * largestOutputNumel(); break;
      case F::Reduction: cost_.flops = info_.flopsPerElement * firstInputNumel(); break;
      case F::Gather: priceGather(); break;
      case F::Matmul: priceMatmul(); break;
      case F::MatmulBias: priceMatmulBias(); break;
      case F::Linear: priceLinear(); break;
      case F::GroupedMatmul: priceGroupedMatmul(); break;
      case F::LinearLoss: priceLinearLoss(0, 1, 1, 5); break;
      case F::LinearLossBackward: priceLinearLoss(1, 2, 3, 4); break;
      case F::Attention:
      case F::AttentionBackward: priceAttention(); break;
      case F::Convolution:
      case F::ConvolutionTransposed: priceConvolution(); break;
      case F::ConvolutionBackward: priceConvolutionBackward(); break;
      case F::Collective:
        cost_.flops = info_.flopsPerElement * firstInputNumel();
        cost_.commBytes = std::max(cost_.bytesRead, cost_.bytesWritten);
        break;
    }
    return cost_;
  }

 private:
  // Sizes and bytes in floating point: absurd sizes from damaged input cannot overflow.
  double size(const SymDim& d) {
    if (!d.hasHint) cost_.sizesHinted = false;
    return d.value > 0 ? static_cast<double>(d.value) : 0.0;
  }
  // Dimension i, counted from the end when negative; 0 when the tensor has no such dimension.
  double dim(const TensorMeta& m, int i) {
    const int rank = static_cast<int>(m.sizes.size());
    const int k = i < 0 ? rank + i : i;
    return k >= 0 && k < rank ? size(m.sizes[static_cast<size_t>(k)]) : 0.0;
  }
  double numel(const TensorMeta& m) {
    double n = 1;
    for (const auto& d : m.sizes) n *= size(d);
    return n;
  }
  // Product of dimensions [begin, end) (end counted from the end when negative).
  double product(const TensorMeta& m, int begin, int end) {
    const int rank = static_cast<int>(m.sizes.size());
    const int stop = end < 0 ? rank + end : end;
    double n = 1;
    for (int i = std::max(begin, 0); i < stop && i < rank; ++i) n *= size(m.sizes[static_cast<size_t>(i)]);
    return n;
  }
  // Same rule as TensorMeta::storageBytes.
  double bytes(const TensorMeta& m) {
    if (!m.isTensor()) return 0;
    const double item = dtypeSize(m.dtype);
    if (!m.hasStrides || m.strides.size() != m.sizes.size()) return numel(m) * item;
    double extent = 1;
    for (size_t i = 0; i < m.sizes.size(); ++i) {
      const double s = size(m.sizes[i]);
      if (s <= 0) return 0;
      if (!m.strides[i].hasHint) cost_.sizesHinted = false;
      extent += (s - 1) * std::fabs(static_cast<double>(m.strides[i].value));
    }
    return extent * item;
  }

  const TensorMeta* arg(int position) const { return tensorOf(graph_, positionalArg(node_, position)); }

  double defaultBytesRead(NodeId skip = kNoNode) {
    double total = 0;
    for (NodeId in : graph_.inputs(id_))
      if (in != skip) total += bytes(graph_.node(in).meta);
    return total;
  }
  double outputBytes() {
    double total = 0;
    for (const auto& m : outputs_) total += bytes(m);
    return total;
  }
  double largestOutputNumel() {
    double n = 0;
    for (const auto& m : outputs_)
      if (m.isTensor()) n = std::max(n, numel(m));
    if (outputs_.empty())  // nothing recorded: a broadcast result is at least as large as each input
      for (NodeId in : graph_.inputs(id_))
        if (graph_.node(in).meta.isTensor()) n = std::max(n, numel(graph_.node(in).meta));
    return n;
  }
  double firstInputNumel() {
    for (NodeId in : graph_.inputs(id_))
      if (graph_.node(in).meta.isTensor()) return numel(graph_.node(in).meta);
    return 0;
  }
  void unknownShapes() { cost_.flopsKnown = false; }

  void priceGather() {
    const Arg* table = positionalArg(node_, 0);
    const TensorMeta* tableMeta = tensorOf(graph_, table);
    if (!tableMeta) return;
    cost_.bytesRead = defaultBytesRead(table->node) + std::min(bytes(*tableMeta), cost_.bytesWritten);
  }

  // [..., M, K] @ [..., K, N] with broadcast batch dimensions; 1-D operands as torch.matmul.
  double matmulFlops(const TensorMeta& a, const TensorMeta& b) {
    const int ra = static_cast<int>(a.sizes.size()), rb = static_cast<int>(b.sizes.size());
    if (ra == 0 || rb == 0) return 0;
    const double m = ra >= 2 ? dim(a, -2) : 1, k = dim(a, -1), n = rb >= 2 ? dim(b, -1) : 1;
    const int batchA = std::max(ra - 2, 0), batchB = std::max(rb - 2, 0);
    double batch = 1;
    for (int i = 1; i <= std::max(batchA, batchB); ++i) {
      const double da = i <= batchA ? dim(a, batchA - i) : 1, db = i <= batchB ? dim(b, batchB - i) : 1;
      batch *= std::max(da, db);
    }
    return 2 * batch * m * n * k;
  }
  void priceMatmul() {
    const TensorMeta *a = arg(0), *b = arg(1);
    if (!a || !b) return unknownShapes();
    cost_.flops = matmulFlops(*a, *b);
  }
  void priceMatmulBias() {
    const TensorMeta *bias = arg(0), *a = arg(1), *b = arg(2);
    if (!a || !b) return unknownShapes();
    const double biasAdd = !outputs_.empty() ? largestOutputNumel() : bias ? numel(*bias) : 0;
    cost_.flops = matmulFlops(*a, *b) + biasAdd;
  }
  void priceLinear() {
    const TensorMeta *x = arg(0), *w = arg(1);
    if (!x || !w || x->sizes.empty() || w->sizes.empty()) return unknownShapes();
    const double k = dim(*x, -1), m = product(*x, 0, -1), n = w->sizes.size() >= 2 ? dim(*w, 0) : 1;
    const TensorMeta* bias = arg(2);
    if (!bias) bias = tensorOf(graph_, keywordArg(graph_, node_, "bias"));
    cost_.flops = 2 * m * n * k + (bias ? m * n : 0);
  }
  // x [M, K] and W [N, K] at positions xArg and wArg: logits-sized matmuls and
  // `perLogit` FLOPs for each of the M x N logits.
  void priceLinearLoss(int xArg, int wArg, double matmuls, double perLogit) {
    const TensorMeta *x = arg(xArg), *w = arg(wArg);
    if (!x || !w || x->sizes.size() != 2 || w->sizes.size() != 2) return unknownShapes();
    const double logits = dim(*x, 0) * dim(*w, 0);
    cost_.flops = matmuls * 2 * logits * dim(*x, 1) + perLogit * logits;
  }
  // 2-D x 3-D (ragged M), 3-D x 2-D (ragged N), 2-D x 2-D (ragged K) and 3-D x 3-D (batched):
  // each row of A meets one group of B, so only the 3-D x 3-D case multiplies by G.
  void priceGroupedMatmul() {
    const TensorMeta *a = arg(0), *b = arg(1);
    if (!a || !b || a->sizes.size() < 2 || b->sizes.size() < 2) return unknownShapes();
    const double groups = a->sizes.size() == 3 && b->sizes.size() == 3 ? dim(*a, 0) : 1;
    cost_.flops = 2 * groups * dim(*a, -2) * dim(*a, -1) * dim(*b, -1);
  }

  bool causal() const {
    const Arg* flag = keywordArg(graph_, node_, "is_causal");
    if (!flag) flag = keywordArg(graph_, node_, "custom_mask_type");
    if (!flag) flag = positionalArg(node_, info_.attention.causal);
    if (!flag) return false;
    return (flag->kind == Arg::Kind::Bool && flag->b) || (flag->kind == Arg::Kind::Int && flag->i != 0);
  }
  void priceAttention() {
    const AttentionArgs& layout = info_.attention;
    const TensorMeta *q = arg(layout.query), *k = arg(layout.query + 1), *v = arg(layout.query + 2);
    if (!q || !k || !v || q->sizes.size() < 2 || k->sizes.size() < 2 || v->sizes.empty()) return unknownShapes();
    double batchHeads = 0, sq = 0, sk = 0;
    const double dqk = dim(*q, -1), dv = dim(*v, -1);
    if (layout.maxSeqLenK >= 0 && q->sizes.size() == 3) {
      // Packed variable-length [total, H, D]: every query meets at most max_k keys (an upper bound).
      const Arg* maxK = positionalArg(node_, layout.maxSeqLenK);
      batchHeads = dim(*q, 1);
      sq = dim(*q, 0);
      sk = maxK && maxK->kind == Arg::Kind::Int && maxK->i > 0 ? static_cast<double>(maxK->i) : dim(*k, 0);
    } else if (layout.sequenceFirst) {  // [..., S, H, D]
      batchHeads = product(*q, 0, -3) * dim(*q, -2);
      sq = dim(*q, -3);
      sk = dim(*k, -3);
    } else {  // [..., H, S, D]
      batchHeads = product(*q, 0, -2);
      sq = dim(*q, -2);
      sk = dim(*k, -2);
    }
    const double scores = batchHeads * sq * sk * (causal() ? 0.5 : 1.0);
    cost_.flops =
        info_.formula == CostFormula::AttentionBackward ? 2 * scores * (3 * dqk + 2 * dv) : 2 * scores * (dqk + dv);
  }

  // FLOPs of a convolution from the tensor it slides over: 2 * positions * (weight numel / dim 0),
  // weight [Cout, Cin/groups, k...] (positions = output numel) or, transposed, [Cin, Cout/groups,
  // k...] (positions = input numel).
  double convolutionFlops(const TensorMeta& positions, const TensorMeta& weight) {
    const double rows = dim(weight, 0);
    return rows > 0 ? 2 * numel(positions) * numel(weight) / rows : 0;
  }
  void priceConvolution() {
    const TensorMeta *input = arg(0), *weight = arg(1);
    const Arg* transposedFlag = positionalArg(node_, 6);
    const bool transposed = info_.formula == CostFormula::ConvolutionTransposed ||
                            (transposedFlag && transposedFlag->kind == Arg::Kind::Bool && transposedFlag->b);
    const TensorMeta* positions = transposed ? input : (!outputs_.empty() ? &outputs_.front() : nullptr);
    if (!weight || !positions || !positions->isTensor()) return unknownShapes();
    cost_.flops = convolutionFlops(*positions, *weight);
  }
  void priceConvolutionBackward() {
    const TensorMeta *gradOutput = arg(0), *input = arg(1), *weight = arg(2);
    const Arg* transposedFlag = positionalArg(node_, 7);
    const bool transposed = transposedFlag && transposedFlag->kind == Arg::Kind::Bool && transposedFlag->b;
    const TensorMeta* positions = transposed ? input : gradOutput;
    if (!weight || !positions) return unknownShapes();
    // output_mask: [grad_input, grad_weight, grad_bias]; each of the first two costs one forward.
    double passes = 2;
    if (const Arg* mask = positionalArg(node_, 10); mask && mask->items.size() >= 2) {
      passes = 0;
      for (size_t i = 0; i < 2; ++i) passes += mask->items[i].kind == Arg::Kind::Bool && mask->items[i].b ? 1 : 0;
    }
    cost_.flops = passes * convolutionFlops(*positions, *weight);
  }

  const Graph& graph_;
  NodeId id_;
  const Node& node_;
  const OpInfo& info_;
  std::vector<TensorMeta> outputs_;
  OpCost cost_;
};

}  // namespace

std::vector<TensorMeta> outputMetas(const Graph& graph, NodeId id, const OpRegistry& registry) {
  const Node& node = graph.node(id);
  if (node.meta.isTensor()) return {node.meta};
  // A tuple result: its elements are the getitem nodes reading it.
  constexpr int64_t kMaxTupleIndex = 1 << 16;
  std::vector<TensorMeta> elements;
  for (NodeId user : graph.users(id)) {
    const Node& u = graph.node(user);
    if (registry.lookup(graph.str(u.target)).category != OpCategory::Getitem || u.args.size() < 2) continue;
    const Arg& source = u.args[0];
    const Arg& index = u.args[1];
    if (source.kind != Arg::Kind::Node || source.node != id || index.kind != Arg::Kind::Int || index.i < 0 ||
        index.i >= kMaxTupleIndex || !u.meta.isTensor())
      continue;
    const auto i = static_cast<size_t>(index.i);
    if (elements.size() <= i) elements.resize(i + 1);
    elements[i] = u.meta;
  }
  if (!elements.empty()) return elements;
  if (node.kind == NodeKind::CallFunction || node.kind == NodeKind::CallMethod)
    return inferredOutputs(graph, node, registry.lookup(graph.str(node.target)).outputMeta);
  return {};
}

OpCost estimateCost(const Graph& graph, NodeId node) {
  return estimateCost(graph, node, OpRegistry::global());
}

OpCost estimateCost(const Graph& graph, NodeId id, const OpRegistry& registry) {
  if (!graph.finalized()) throw Error(ErrorCode::Internal, "estimateCost needs a finalized graph");
  if (id >= graph.size()) throw Error(ErrorCode::Internal, "estimateCost: node id out of range");
  const Node& node = graph.node(id);
  switch (node.kind) {
    case NodeKind::Placeholder:
    case NodeKind::GetAttr:
    case NodeKind::Output: return {};
    case NodeKind::CallFunction:
    case NodeKind::CallMethod:
    case NodeKind::CallModule: break;
  }
  const OpInfo& info = registry.lookup(graph.str(node.target));
  if (info.formula == CostFormula::None) return {};  // most nodes are views: skip the output scan
  return CostEstimator(graph, id, info, registry).run();
}

}  // namespace lathe::ir
