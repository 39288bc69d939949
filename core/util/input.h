// Reading user files: plain or gzip (detected by content, not by name), streamed in chunks; and
// listing user folders.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "util/progress.h"

namespace lathe {

// A readable byte stream over a plain or gzip-compressed file. Throws Error(BadInput) when the
// file cannot be opened; read errors in the middle (truncated gzip) end the stream and set damaged().
class InputFile {
 public:
  explicit InputFile(const std::filesystem::path& path);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  // Reads up to n bytes; returns 0 at end of stream.
  size_t read(char* out, size_t n);
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  // Size of the file on disk and how far into it reading has got (for progress).
  [[nodiscard]] uint64_t fileSize() const { return fileSize_; }
  [[nodiscard]] uint64_t fileOffset() const;
  // Whether the file is gzip-compressed (else it is read as is).
  [[nodiscard]] bool compressed() const;
  [[nodiscard]] bool damaged() const { return !damage_.empty(); }
  [[nodiscard]] const std::string& damage() const { return damage_; }

 private:
  std::filesystem::path path_;
  void* gz_ = nullptr;  // gzFile
  uint64_t fileSize_ = 0;
  std::string damage_;
};

// readFile refuses gzip output past decompressedSizeLimit(compressed bytes read so far): deflate
// reaches ~1030:1 on repetitive data (a gzip bomb), real artifacts 10-40:1. The floor keeps
// small, very repetitive files readable.
inline constexpr uint64_t kMaxDecompressionRatio = 200;
inline constexpr uint64_t kDecompressionFloorBytes = uint64_t{256} << 20;
[[nodiscard]] uint64_t decompressedSizeLimit(uint64_t compressedBytes);

// Default cap of readFile; readers of one kind of document pass their own, smaller one.
inline constexpr uint64_t kMaxReadFileBytes = uint64_t{16} << 30;

// Whole contents of a (possibly gzip) file, refusing more than maxBytes (decompressed) and gzip
// output past decompressedSizeLimit. Progress reports file bytes read out of the file size and is
// checked for cancellation every few MB.
[[nodiscard]] std::string readFile(const std::filesystem::path& path, uint64_t maxBytes = kMaxReadFileBytes,
                                   const Progress& progress = {});

// Splits a stream into lines ('\n', a trailing '\r' removed). Lines longer than maxLine are cut
// to maxLine bytes and flagged, so one enormous line cannot exhaust memory.
class LineReader {
 public:
  explicit LineReader(InputFile& input, size_t maxLine = size_t{256} << 20);
  // Returns false at end of input. The view stays valid until the next call.
  bool next(std::string_view& line);
  [[nodiscard]] uint64_t lineNumber() const { return lineNumber_; }  // 1-based number of the last line
  [[nodiscard]] bool lastLineTruncated() const { return truncated_; }
  [[nodiscard]] uint64_t bytesConsumed() const { return consumed_; }

 private:
  bool fill();
  InputFile& input_;
  size_t maxLine_;
  std::unique_ptr<char[]> buf_;
  size_t cap_ = 0, begin_ = 0, end_ = 0;
  bool eof_ = false;
  bool truncated_ = false;
  std::string truncatedLine_;
  uint64_t lineNumber_ = 0;
  uint64_t consumed_ = 0;
};

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

}  // namespace lathe
