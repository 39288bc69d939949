// Fuzzes the op registry: the input is loaded as run-time flags JSON, and the same bytes build a
// small graph of built-in, flagged and unknown ops with arbitrary metadata and arguments, which
// is then priced. Nothing may crash, overflow or allocate without bound.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "ir/op_info.h"

namespace {

using namespace lathe::ir;

class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  size_t index(size_t count) {
    const size_t high = byte();
    return ((high << 8) | byte()) % count;
  }
  // Mostly small values, sometimes any 64-bit value (negative and huge sizes included).
  int64_t integer() {
    const uint8_t tag = byte();
    if (tag < 224) return static_cast<int64_t>(tag % 70) - 2;
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | byte();
    return static_cast<int64_t>(v);
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

SymDim dimension(ByteReader& in, Graph& g) {
  SymDim d{in.integer()};
  if (in.byte() % 5 == 0) {
    d.expr = g.intern("s0");
    d.hasHint = in.byte() % 2 == 0;
    if (!d.hasHint) d.value = 0;
  }
  return d;
}

TensorMeta meta(ByteReader& in, Graph& g) {
  TensorMeta m;
  if (in.byte() % 4 == 0) return m;
  m.kind = ValueKind::Tensor;
  m.dtype = static_cast<DType>(in.byte() % 27);
  const size_t rank = in.byte() % 6;
  for (size_t i = 0; i < rank; ++i) m.sizes.push_back(dimension(in, g));
  if (in.byte() % 2 == 0) {
    m.hasStrides = true;
    for (size_t i = 0; i < rank; ++i) m.strides.push_back(dimension(in, g));
  }
  return m;
}

Arg argument(ByteReader& in, int depth = 0) {
  switch (in.byte() % 7) {
    case 0: return Arg::ofNode(in.byte() % 20);  // may point past the graph
    case 1: return Arg::ofInt(in.integer());
    case 2: return Arg::ofBool(in.byte() % 2 == 0);
    case 3: return Arg::ofFloat(static_cast<double>(in.integer()));
    case 4:
    case 5: {
      Arg list;
      list.kind = Arg::Kind::List;
      const size_t n = depth < 2 ? in.byte() % 5 : 0;
      for (size_t i = 0; i < n; ++i) list.items.push_back(argument(in, depth + 1));
      return list;
    }
    default: return Arg::none();
  }
}

std::string target(ByteReader& in, const OpRegistry& registry) {
  const auto builtIns = OpRegistry::builtIns();
  switch (in.byte() % 4) {
    case 0: return "torch.ops." + builtIns[in.index(builtIns.size())].name + ".default";
    case 1: return builtIns[in.index(builtIns.size())].name;
    case 2: {
      const auto flagged = registry.flaggedTargets();
      return flagged.empty() ? "mylib.op" : flagged[in.index(flagged.size())];
    }
    default: return "operator.getitem";
  }
}

void priceGraph(ByteReader& in, const OpRegistry& registry) {
  Graph g;
  const size_t count = 1 + in.byte() % 12;
  for (size_t i = 0; i < count; ++i) {
    Node n;
    n.name = g.intern("n" + std::to_string(i));
    const uint8_t kind = in.byte() % 4;
    n.kind = kind == 0 ? NodeKind::Placeholder : kind == 1 ? NodeKind::CallMethod : NodeKind::CallFunction;
    if (n.kind != NodeKind::Placeholder) {
      n.target = g.intern(target(in, registry));
      const size_t args = in.byte() % 12;
      for (size_t a = 0; a < args; ++a) n.args.push_back(argument(in));
      if (in.byte() % 3 == 0) n.kwargs.emplace_back(g.intern(in.byte() % 2 ? "is_causal" : "bias"), argument(in));
    }
    n.meta = meta(in, g);
    g.addNode(std::move(n));
  }
  g.finalize();
  for (NodeId id = 0; id < g.size(); ++id) {
    (void)estimateCost(g, id, registry);
    (void)outputMetas(g, id, registry);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  OpRegistry registry;
  lathe::Diagnostics diagnostics;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    registry.loadFlagsJson(text, "fuzz.json", diagnostics);
  } catch (const lathe::Error&) {
    // Not a JSON object: rejected as a whole, as documented.
  }
  (void)registry.lookup(text);
  ByteReader reader(data, size);
  priceGraph(reader, registry);
  return 0;
}
