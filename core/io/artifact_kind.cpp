#include "io/artifact_kind.h"

#include <sys/stat.h>

#include <array>
#include <cctype>
#include <string>
#include <vector>

#include "io/magi/magi_dump.h"
#include "util/diagnostics.h"
#include "util/input.h"

namespace lathe::io {
namespace {

bool looksLikeTraceHeader(std::string_view s) {
  // `V1206 15:18:21.230000 ...`: a glog level letter then MMDD.
  if (s.size() < 6 || std::string_view("VIWEC").find(s[0]) == std::string_view::npos) return false;
  for (int i = 1; i <= 4; ++i)
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  return s[5] == ' ';
}

}  // namespace

std::string_view artifactKindName(ArtifactKind kind) {
  switch (kind) {
    case ArtifactKind::TraceLog: return "torch_trace";
    case ArtifactKind::ExportArchive: return "pt2";
    case ArtifactKind::MemorySnapshot: return "memory_snapshot";
    case ArtifactKind::MagiDump: return "magi_depyf";
    case ArtifactKind::Unknown: return "unknown";
  }
  return "unknown";
}

ArtifactKind detectArtifactKind(const std::filesystem::path& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
    if (isMagiDump(path)) return ArtifactKind::MagiDump;
    std::vector<std::string> unreadable;  // "path: reason" of the entries that could not be sniffed
    for (const FolderEntry& entry : listFolder(path)) {
      if (entry.directory) continue;
      if (!entry.problem.empty()) {
        unreadable.push_back(entry.path.string() + ": " + entry.problem);
        continue;
      }
      try {
        if (detectArtifactKind(entry.path) == ArtifactKind::TraceLog) return ArtifactKind::TraceLog;
      } catch (const Error& e) {
        if (e.code() != ErrorCode::BadInput) throw;
        unreadable.emplace_back(e.what());
      }
    }
    if (!unreadable.empty()) {
      throw Error(
          ErrorCode::BadInput,
          "no TORCH_TRACE log among the files that could be read; " + unreadable.front() +
              (unreadable.size() > 1 ? " (and " + std::to_string(unreadable.size() - 1) + " more unreadable)" : ""),
          {path.string()});
    }
    return ArtifactKind::Unknown;
  }
  InputFile in(path);  // refuses what is missing or not a regular file, with the reason
  std::array<char, 64> head{};
  const size_t n = in.read(head.data(), head.size());
  const std::string_view s(head.data(), n);
  if (s.starts_with("PK\x03\x04") || s.starts_with("PK\x05\x06")) return ArtifactKind::ExportArchive;
  // Pickle protocol 2+ starts with PROTO (0x80) and a protocol number.
  if (n >= 2 && static_cast<unsigned char>(s[0]) == 0x80 && s[1] >= 2 && s[1] <= 5) return ArtifactKind::MemorySnapshot;
  if (looksLikeTraceHeader(s)) return ArtifactKind::TraceLog;
  return ArtifactKind::Unknown;
}

}  // namespace lathe::io
