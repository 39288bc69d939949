#include "io/artifact.h"

#include "util/diagnostics.h"

namespace lathe::io {
namespace {

void appendWithSubgraphs(std::vector<GraphListing>& out, GraphListing listing) {
  const std::shared_ptr<const ir::Graph> graph = listing.graph;
  const std::string parentId = listing.id;
  GraphListing parent = listing;
  out.push_back(std::move(listing));
  for (const auto& [attr, sub] : graph->subgraphs()) {
    GraphListing child = parent;
    child.id = parentId + "/" + attr;
    child.parent = parentId;
    child.graph = sub;
    appendWithSubgraphs(out, std::move(child));
  }
}

}  // namespace

const Diagnostics& Artifact::diagnostics() const {
  if (trace) return trace->diagnostics;
  if (exported) return exported->diagnostics;
  if (snapshot) return snapshot->diagnostics;
  static const Diagnostics kNone;
  return kNone;
}

std::vector<GraphListing> Artifact::graphs() const {
  std::vector<GraphListing> out;
  if (trace) {
    // The trace loader already lists nested subgraphs as entries of their own.
    for (const auto& g : trace->graphs) out.push_back({g.id, g.compileId, g.kind, g.parent, g.rank, g.graph});
  }
  if (exported) {
    for (const auto& m : exported->models)
      if (m.graph) appendWithSubgraphs(out, {m.name + ":exported_program", m.name, "exported_program", "", -1, m.graph});
  }
  return out;
}

Artifact loadArtifact(const std::filesystem::path& path, const Progress& progress) {
  Artifact artifact;
  artifact.path = path;
  artifact.kind = detectArtifactKind(path);
  switch (artifact.kind) {
    case ArtifactKind::TraceLog: artifact.trace = loadTraceLog(path, progress); break;
    case ArtifactKind::ExportArchive: artifact.exported = loadPt2(path, progress); break;
    case ArtifactKind::MemorySnapshot: artifact.snapshot = loadMemorySnapshot(path, progress); break;
    case ArtifactKind::MagiDump: {
      MagiDumpLoad load = loadMagiDump(path, progress);
      artifact.trace = std::move(load.log);
      artifact.magi = std::move(load.dump);
      break;
    }
    case ArtifactKind::Unknown:
      throw Error(ErrorCode::BadInput,
                  "not an artifact Lathe reads (expected a TORCH_TRACE log, a torch.export .pt2, a CUDA memory "
                  "snapshot pickle or a MagiCompiler magi_depyf dump folder)",
                  {path.string()});
  }
  return artifact;
}

std::optional<GuardTree> compileGuards(const TraceLog& log, const TraceCompile& compile, Diagnostics& diagnostics) {
  if (compile.guardFormat == GuardFormat::None || compile.guardsEvent < 0) return std::nullopt;
  GuardParseOptions options;
  const TraceLogEvent& event = log.events[static_cast<size_t>(compile.guardsEvent)];
  options.file = log.files[event.file].path.string();
  options.firstLine = event.line + 1;
  switch (compile.guardFormat) {
    case GuardFormat::CppTree: return parseCppGuards(log.guards(compile), options, diagnostics);
    case GuardFormat::Json: return parseJsonGuards(log.guards(compile), options, diagnostics);
    case GuardFormat::MagiTree: return parseMagiGuards(log.guards(compile), options, diagnostics);
    case GuardFormat::None: break;
  }
  return std::nullopt;
}

}  // namespace lathe::io
