#include "io/artifact_kind.h"

#include <array>
#include <cctype>

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
    case ArtifactKind::Unknown: return "unknown";
  }
  return "unknown";
}

ArtifactKind detectArtifactKind(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
      if (!entry.is_regular_file()) continue;
      if (detectArtifactKind(entry.path()) == ArtifactKind::TraceLog) return ArtifactKind::TraceLog;
    }
    return ArtifactKind::Unknown;
  }
  InputFile in(path);
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
