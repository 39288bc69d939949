// Every sample artifact, loaded through the one entry point users hit (loadArtifact): it loads
// without error-level diagnostics, and every graph in it round-trips through FX text
// (print -> parse gives the same graph).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "io/artifact.h"
#include "io/fx/fx_text.h"

namespace fs = std::filesystem;
using namespace lathe;

namespace {

const fs::path kSamples = LATHE_SAMPLES_DIR;

std::vector<fs::path> graphArtifacts() {
  std::vector<fs::path> out;
  for (const char* dir : {"captures", "tlparse", "pt2", "pt2/hades-pid"})
    for (const auto& entry : fs::directory_iterator(kSamples / dir)) {
      const auto ext = entry.path().extension();
      if (entry.is_directory() || ext == ".gz" || ext == ".log" || ext == ".txt" || ext == ".pt2")
        if (entry.path().filename() != "hades-pid") out.push_back(entry.path());
    }
  std::sort(out.begin(), out.end());
  return out;
}

std::string label(const fs::path& p) { return fs::relative(p, kSamples).string(); }

// Symbol values the graph's sizes were hinted with (FX text prints expressions, not their values:
// a loader gets them from the artifact, e.g. create_symbol events), to read its text back with.
void collectSymbolHints(const ir::Graph& g, std::map<std::string, int64_t, std::less<>>& hints) {
  auto visit = [&](const ir::SymDim& d) {
    if (!d.symbolic() || !d.hasHint) return;
    const std::string_view expr = g.str(d.expr);
    if (std::all_of(expr.begin(), expr.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }))
      hints.emplace(std::string(expr), d.value);
  };
  for (const auto& n : g.nodes()) {
    for (const auto& d : n.meta.sizes) visit(d);
    for (const auto& d : n.meta.strides) visit(d);
  }
  for (const auto& [attr, sub] : g.subgraphs()) collectSymbolHints(*sub, hints);
}

}  // namespace

TEST(Samples, EveryArtifactLoadsAndEveryGraphRoundTripsThroughFxText) {
  const auto artifacts = graphArtifacts();
  ASSERT_GE(artifacts.size(), 35u);
  size_t graphs = 0;
  for (const auto& path : artifacts) {
    SCOPED_TRACE(label(path));
    const io::Artifact artifact = io::loadArtifact(path);
    EXPECT_EQ(artifact.diagnostics().count(Severity::Error), 0u);
    const auto listing = artifact.graphs();
    EXPECT_FALSE(listing.empty());
    for (const auto& g : listing) {
      if (!g.parent.empty()) continue;  // printed and compared as part of their parent
      SCOPED_TRACE(g.id);
      Diagnostics diagnostics;
      const std::string text = io::printFxText(*g.graph);
      std::map<std::string, int64_t, std::less<>> hints;
      collectSymbolHints(*g.graph, hints);
      io::FxParseOptions parse;
      parse.symbols = [&](std::string_view symbol) -> std::optional<int64_t> {
        auto it = hints.find(symbol);
        return it == hints.end() ? std::nullopt : std::optional(it->second);
      };
      const auto reparsed = io::parseFxText(text, parse, diagnostics);
      ASSERT_NE(reparsed, nullptr);
      EXPECT_EQ(diagnostics.count(Severity::Warning), 0u) << diagnostics.items().front().message;
      // A .pt2's roles and synthetic getitems come from its signature and serialized outputs, not
      // from the FX text; trace graphs carry all of it in their text.
      io::GraphCompareOptions compare;
      compare.compareContext = artifact.kind != io::ArtifactKind::ExportArchive;
      std::string why;
      EXPECT_TRUE(io::graphsEqual(*g.graph, *reparsed, &why, compare)) << why;
      ++graphs;
    }
  }
  EXPECT_GE(graphs, 450u);
}

TEST(Samples, LlamaJointGraphHasTheCapturedPrimalsAndTangents) {
  const io::Artifact artifact = io::loadArtifact(kSamples / "captures/llama3_8b_2l_train.log.gz");
  const auto listing = artifact.graphs();
  const io::GraphListing* joint = io::findGraph(listing, "0/0:aot_joint_graph");
  ASSERT_NE(joint, nullptr);
  const ir::Graph& g = *joint->graph;

  struct Expected {
    std::string name;
    ir::DType dtype;
    std::vector<int64_t> sizes;
  };
  // From the capture's text: Llama-3-8B dims, 2 layers, batch 1, seq 2048.
  const std::vector<int64_t> attn{4096, 4096}, kv{1024, 4096}, up{14336, 4096}, down{4096, 14336}, norm{4096};
  std::vector<Expected> expected{{"primals_1", ir::DType::I64, {1, 2048}},
                                 {"primals_2", ir::DType::BF16, {128256, 4096}},
                                 {"primals_3", ir::DType::BF16, {64}}};
  for (int layer = 0; layer < 2; ++layer) {
    const int base = 4 + 9 * layer;
    for (const auto& [offset, sizes] : std::vector<std::pair<int, std::vector<int64_t>>>{
             {0, norm}, {1, attn}, {2, kv}, {3, kv}, {4, attn}, {5, norm}, {6, up}, {7, up}, {8, down}})
      expected.push_back({"primals_" + std::to_string(base + offset), ir::DType::BF16, sizes});
  }
  expected.push_back({"primals_22", ir::DType::BF16, norm});
  expected.push_back({"primals_23", ir::DType::BF16, {128256, 4096}});
  expected.push_back({"tangents_1", ir::DType::F32, {}});
  expected.push_back({"tangents_2", ir::DType::BF16, {1, 2048, 128256}});

  size_t primals = 0, tangents = 0;
  for (const auto& n : g.nodes())
    if (n.kind == ir::NodeKind::Placeholder) {
      const std::string_view name = g.str(n.name);
      primals += name.starts_with("primals_");
      tangents += name.starts_with("tangents_");
    }
  EXPECT_EQ(primals, 23u);
  EXPECT_EQ(tangents, 2u);
  for (const auto& e : expected) {
    SCOPED_TRACE(e.name);
    const ir::NodeId id = g.find(e.name);
    ASSERT_NE(id, ir::kNoNode);
    const ir::TensorMeta& meta = g.node(id).meta;
    EXPECT_EQ(meta.dtype, e.dtype);
    std::vector<int64_t> sizes;
    for (const auto& d : meta.sizes) sizes.push_back(d.value);
    EXPECT_EQ(sizes, e.sizes);
    // The capture marks inputs only as PlainAOTInput, so primals are user inputs as far as the text says.
    EXPECT_EQ(g.node(id).role, e.name.starts_with("tangents") ? ir::Role::Tangent : ir::Role::UserInput);
  }
}

TEST(Samples, DynamicTrainingCapturesCarrySymbolicSizesWithHints) {
  // llama3_8b_2l_dyntrain recompiles at seq 768 and 1024 with a symbolic sequence length.
  const io::Artifact artifact = io::loadArtifact(kSamples / "captures/llama3_8b_2l_dyntrain.log.gz");
  size_t symbolicDims = 0, hinted = 0;
  std::set<int64_t> hints;
  for (const auto& g : artifact.graphs()) {
    if (g.compileId == "0/0") continue;  // the first compile is static
    for (const auto& n : g.graph->nodes())
      for (const auto& d : n.meta.sizes)
        if (d.symbolic()) {
          ++symbolicDims;
          if (d.hasHint) {
            ++hinted;
            hints.insert(d.value);
          }
        }
  }
  EXPECT_GT(symbolicDims, 1000u);
  EXPECT_EQ(hinted, symbolicDims);  // every symbol of these captures was created with a value
  EXPECT_TRUE(hints.count(768));
}
