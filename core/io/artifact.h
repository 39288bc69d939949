// One entry point for anything a user opens: detects the kind and runs the matching loader, and
// lists the graphs of any artifact the same way (what `lathe graphs` and the studio's tree show).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "io/artifact_kind.h"
#include "io/graph_listing.h"
#include "io/guards/guards.h"
#include "io/magi/magi_dump.h"
#include "io/pt2/pt2.h"
#include "io/snapshot/memory_snapshot.h"
#include "io/trace/trace_log.h"
#include "ir/graph.h"
#include "util/diagnostics.h"
#include "util/progress.h"

namespace lathe::io {

struct Artifact {
  ArtifactKind kind = ArtifactKind::Unknown;
  std::filesystem::path path;
  // TORCH_TRACE logs; a MagiCompiler dump's compiled functions too, read as a log holds compiles.
  std::optional<TraceLog> trace;
  std::optional<MagiDump> magi;  // a MagiCompiler dump: its models and their compile timelines
  std::optional<Pt2Archive> exported;
  std::optional<MemorySnapshot> snapshot;

  [[nodiscard]] const Diagnostics& diagnostics() const;
  // Every graph, nested subgraphs included (after their parent), in artifact order.
  [[nodiscard]] std::vector<GraphListing> graphs() const;
};

// Throws Error(BadInput) when the path is unreadable or holds nothing Lathe knows.
[[nodiscard]] Artifact loadArtifact(const std::filesystem::path& path, const Progress& progress = {});

// The guard tree a compile logged, parsed from its payload (C++ guard-manager text or the older
// JSON), with line numbers of the log file; nullopt when the compile logged none.
[[nodiscard]] std::optional<GuardTree> compileGuards(const TraceLog& log, const TraceCompile& compile,
                                                     Diagnostics& diagnostics);

}  // namespace lathe::io
