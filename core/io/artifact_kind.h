// What a user-supplied path holds, decided from its content (names lie: `.log` files may be gzip,
// `.pt2` files are zips, snapshots end in `.pickle` or anything else).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace lathe::io {

enum class ArtifactKind {
  TraceLog,        // TORCH_TRACE structured log (file, .gz, or a directory of rank files)
  ExportArchive,   // torch.export .pt2 (zip)
  MemorySnapshot,  // torch.cuda.memory._dump_snapshot pickle
  Unknown,
};

[[nodiscard]] std::string_view artifactKindName(ArtifactKind kind);

// Sniffs the first bytes (after gunzip); a folder is a trace log when one of its files is. Throws
// Error(BadInput) with the path and the reason when the path cannot be read, or when a folder
// holds no trace log and one of its files could not be read.
[[nodiscard]] ArtifactKind detectArtifactKind(const std::filesystem::path& path);

// Folders are read one level deep (rank files side by side, never recursively), and at most this
// many entries of one: a folder of millions of files is refused rather than walked.
inline constexpr size_t kMaxFolderEntries = 100000;

// One entry of a folder: a regular file (symlinks followed), or, `problem` set, why it is not one
// ("it is a FIFO (named pipe), not a regular file", the errno text of a dangling symlink or a
// loop). Nothing is opened: a FIFO never blocks the listing.
struct FolderEntry {
  std::filesystem::path path;
  std::string problem;
  bool directory = false;  // a subfolder (not read: walks do not recurse)
};
// The entries of `folder`, by name. Error(BadInput) with the folder and the reason (errno text)
// when it cannot be listed or holds more than kMaxFolderEntries entries.
[[nodiscard]] std::vector<FolderEntry> listFolder(const std::filesystem::path& folder);

}  // namespace lathe::io
