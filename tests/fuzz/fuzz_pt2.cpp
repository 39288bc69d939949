// libFuzzer target of the .pt2 loader. Zips go through loadPt2FromBuffer; inputs that start like a
// JSON object go straight to parseExportedProgram, so that mutations also reach the graph builder
// (inside a zip most of them would only damage the container). The only exception allowed out is
// Error(BadInput); every graph that comes back must be internally consistent.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "io/pt2/pt2.h"

namespace {

void checkGraph(const lathe::ir::Graph& g) {
  if (!g.finalized()) __builtin_trap();
  for (lathe::ir::NodeId id = 0; id < g.size(); ++id) {
    const lathe::ir::Node& n = g.node(id);
    auto inRange = [&](lathe::ir::NodeId ref) {
      if (ref >= id) __builtin_trap();  // references point backwards: the graph stays a DAG in program order
    };
    for (const auto& a : n.args) lathe::ir::forEachNodeRef(a, inRange);
    for (const auto& [k, a] : n.kwargs) lathe::ir::forEachNodeRef(a, inRange);
    for (lathe::ir::NodeId user : g.users(id))
      if (user <= id || user >= g.size()) __builtin_trap();
  }
  (void)lathe::ir::countGraph(g);
  for (const auto& [name, sub] : g.subgraphs()) checkGraph(*sub);
}

void checkModel(const lathe::io::Pt2Model& m) {
  if (m.graph) checkGraph(*m.graph);
  for (const auto& w : m.weights) (void)w.bytesNeeded();
  for (const auto& c : m.constants) (void)c.bytesNeeded();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  lathe::io::Pt2Limits limits;
  limits.maxJsonBytes = uint64_t{16} << 20;
  limits.maxTotalBytes = uint64_t{64} << 20;
  try {
    if (!bytes.empty() && bytes.front() == '{') {
      lathe::Diagnostics diagnostics;
      checkModel(lathe::io::parseExportedProgram(bytes, "fuzz", "fuzz.json", diagnostics));
    } else {
      const lathe::io::Pt2Archive archive = lathe::io::loadPt2FromBuffer(bytes, "fuzz.pt2", limits);
      for (const auto& m : archive.models) checkModel(m);
    }
  } catch (const lathe::Error& e) {
    if (e.code() != lathe::ErrorCode::BadInput) __builtin_trap();
  }
  return 0;
}
