// What a user-supplied path holds, decided from its content (names lie: `.log` files may be gzip,
// `.pt2` files are zips, snapshots end in `.pickle` or anything else).
#pragma once

#include <filesystem>
#include <string_view>

namespace lathe::io {

enum class ArtifactKind {
  TraceLog,        // TORCH_TRACE structured log (file, .gz, or a directory of rank files)
  ExportArchive,   // torch.export .pt2 (zip)
  MemorySnapshot,  // torch.cuda.memory._dump_snapshot pickle
  MagiDump,        // MagiCompiler magi_depyf folder (timeline_events/, compiled_functions/)
  Unknown,
};

[[nodiscard]] std::string_view artifactKindName(ArtifactKind kind);

// Sniffs the first bytes (after gunzip); a folder is a MagiCompiler dump when it or a folder a few
// levels down holds timeline_events/ or compiled_functions/, else a trace log when one of its files is. Throws
// Error(BadInput) with the path and the reason when the path cannot be read, or when a folder
// holds no trace log and one of its files could not be read.
[[nodiscard]] ArtifactKind detectArtifactKind(const std::filesystem::path& path);

}  // namespace lathe::io
