// One entry point for anything a user opens: detects the kind and runs the matching loader, and
// lists the graphs of any artifact the same way (what `lathe graphs` and the studio's tree show).
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/artifact_kind.h"
#include "io/guards/guards.h"
#include "io/pt2/pt2.h"
#include "io/snapshot/memory_snapshot.h"
#include "io/trace/trace_log.h"
#include "ir/graph.h"
#include "util/diagnostics.h"
#include "util/progress.h"

namespace lathe::io {

struct GraphListing {
  std::string id;         // "0/0:aot_joint_graph", "model:exported_program", ".../wrap_body_0"
  std::string compileId;  // "0/0"; for a .pt2 the model name
  std::string kind;       // TORCH_TRACE event or artifact name; "exported_program" for a .pt2
  std::string parent;     // id of the enclosing graph for nested subgraphs
  int32_t rank = -1;
  std::shared_ptr<const ir::Graph> graph;
};

struct Artifact {
  ArtifactKind kind = ArtifactKind::Unknown;
  std::filesystem::path path;
  std::optional<TraceLog> trace;
  std::optional<Pt2Archive> exported;
  std::optional<MemorySnapshot> snapshot;

  [[nodiscard]] const Diagnostics& diagnostics() const;
  // Every graph, nested subgraphs included (after their parent), in artifact order.
  [[nodiscard]] std::vector<GraphListing> graphs() const;
};

// The dynamo_output_graph of the same compile and rank as `graph` (its placeholders name the
// parameters and buffers behind AOT primals), or null.
[[nodiscard]] const ir::Graph* dynamoGraphOf(const std::vector<GraphListing>& graphs, const GraphListing& graph);
// Whether the compile of `graph` went through Inductor (it logged post-grad graphs), so Inductor's
// joint-graph passes ran before torch partitioned its joint graph.
[[nodiscard]] bool compiledByInductor(const std::vector<GraphListing>& graphs, const GraphListing& graph);

// The listing with this id, else the id-th listing when `id` is a number (as `lathe graphs` numbers
// them); null when there is none.
[[nodiscard]] const GraphListing* findGraph(const std::vector<GraphListing>& graphs, std::string_view id);

// Throws Error(BadInput) when the path is unreadable or holds nothing Lathe knows.
[[nodiscard]] Artifact loadArtifact(const std::filesystem::path& path, const Progress& progress = {});

// The guard tree a compile logged, parsed from its payload (C++ guard-manager text or the older
// JSON), with line numbers of the log file; nullopt when the compile logged none.
[[nodiscard]] std::optional<GuardTree> compileGuards(const TraceLog& log, const TraceCompile& compile,
                                                     Diagnostics& diagnostics);

}  // namespace lathe::io
