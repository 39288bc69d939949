#include "util/input.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>

#include "util/atomic_write.h"
#include "util/diagnostics.h"

namespace lathe {

namespace {

// The size in the gzip trailer: the uncompressed size modulo 2^32 of the last member. Only a hint
// for reserving (wrong for files over 4 GiB and for several members), never trusted past the caps.
// Opened as InputFile opens (non-blocking, regular files only): the path may have changed since.
uint64_t gzipSizeHint(const std::filesystem::path& path) {
  constexpr off_t kSmallestGzip = 18;  // 10-byte header, empty deflate stream, 8-byte trailer
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat info {};
  unsigned char tail[4] = {};
  const bool found = fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_size >= kSmallestGzip &&
                     pread(fd, tail, sizeof tail, info.st_size - 4) == sizeof tail;
  close(fd);
  if (!found) return 0;
  return uint64_t{tail[0]} | uint64_t{tail[1]} << 8 | uint64_t{tail[2]} << 16 | uint64_t{tail[3]} << 24;
}

}  // namespace

InputFile::InputFile(const std::filesystem::path& path) : path_(path) {
  const auto refuse = [&](const std::string& why) { throw Error(ErrorCode::BadInput, why, {path.string()}); };
  const auto cannotOpen = [&](int error) { refuse("cannot open: " + std::string(std::strerror(error))); };
  // The type is checked before opening (opening a FIFO blocks, opening a device may act on it),
  // and again on the descriptor, opened non-blocking, in case the path changed in between.
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) cannotOpen(errno);
  if (S_ISDIR(info.st_mode)) refuse("is a directory, expected a file");
  if (!S_ISREG(info.st_mode))
    refuse(std::string("cannot open: it is ") + fileTypeName(info.st_mode) + ", not a regular file");
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) cannotOpen(errno);
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    close(fd);
    refuse("cannot open: it changed into something other than a regular file while being opened");
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  fileSize_ = static_cast<uint64_t>(info.st_size);
  gzFile f = gzdopen(fd, "rb");
  if (!f) {
    close(fd);
    cannotOpen(ENOMEM);
  }
  gzbuffer(f, 1 << 20);
  gz_ = f;
}

InputFile::~InputFile() {
  if (gz_) gzclose_r(static_cast<gzFile>(gz_));
}

size_t InputFile::read(char* out, size_t n) {
  if (!gz_ || !damage_.empty()) return 0;
  size_t total = 0;
  while (total < n) {
    const unsigned chunk = static_cast<unsigned>(std::min<size_t>(n - total, 1u << 30));
    const int got = gzread(static_cast<gzFile>(gz_), out + total, chunk);
    if (got < 0) {
      int err = 0;
      const char* msg = gzerror(static_cast<gzFile>(gz_), &err);
      damage_ = msg ? msg : "read error";
      break;
    }
    if (got == 0) {
      // gzread returns 0 both at a clean end and at a truncated gzip member; tell them apart.
      int err = 0;
      const char* msg = gzerror(static_cast<gzFile>(gz_), &err);
      if (err != Z_OK && err != Z_STREAM_END && msg && *msg) damage_ = msg;
      break;
    }
    total += static_cast<size_t>(got);
  }
  return total;
}

uint64_t InputFile::fileOffset() const {
  if (!gz_) return 0;
  const z_off_t off = gzoffset(static_cast<gzFile>(gz_));
  return off < 0 ? 0 : static_cast<uint64_t>(off);
}

bool InputFile::compressed() const {
  return gz_ && gzdirect(static_cast<gzFile>(gz_)) == 0;
}

uint64_t decompressedSizeLimit(uint64_t compressedBytes) {
  uint64_t scaled = 0;
  if (__builtin_mul_overflow(compressedBytes, kMaxDecompressionRatio, &scaled)) return UINT64_MAX;
  return std::max(kDecompressionFloorBytes, scaled);
}

std::string readFile(const std::filesystem::path& path, uint64_t maxBytes, const Progress& progress) {
  InputFile in(path);
  const bool compressed = in.compressed();
  const auto tooLarge = [&] {
    throw Error(ErrorCode::BadInput,
                compressed ? "decompresses to more than " + std::to_string(maxBytes) +
                                 " bytes, the limit for this kind of file; refused"
                           : "larger than " + std::to_string(maxBytes) + " bytes",
                {path.string()});
  };
  if (!compressed && in.fileSize() > maxBytes) tooLarge();
  // Reserved up front, so that growing the buffer never holds two copies of a large file.
  std::string out;
  out.reserve(compressed ? std::min({gzipSizeHint(path), maxBytes, decompressedSizeLimit(in.fileSize())})
                         : in.fileSize());
  constexpr uint64_t kReportStride = uint64_t{4} << 20;
  uint64_t nextReport = 0;
  char buf[1 << 16];
  for (;;) {
    const size_t got = in.read(buf, sizeof buf);
    if (got == 0) break;
    const uint64_t size = out.size() + got;
    if (size > maxBytes) tooLarge();
    // Against the compressed bytes read so far, not the file's size: a bomb is refused once past
    // the floor, however much data it carries after it.
    if (compressed && size > decompressedSizeLimit(in.fileOffset()))
      throw Error(ErrorCode::BadInput,
                  "decompresses to more than " + std::to_string(out.size()) + " bytes from its first " +
                      std::to_string(in.fileOffset()) + " bytes, over " + std::to_string(kMaxDecompressionRatio) +
                      " times as many (a gzip bomb?); refused",
                  {path.string()});
    out.append(buf, got);
    if (out.size() >= nextReport) {
      progress.update(std::min(in.fileOffset(), in.fileSize()), in.fileSize());
      progress.checkCancelled();
      nextReport = out.size() + kReportStride;
    }
  }
  if (in.damaged()) throw Error(ErrorCode::BadInput, "damaged: " + in.damage(), {path.string()});
  return out;
}

LineReader::LineReader(InputFile& input, size_t maxLine) : input_(input), maxLine_(maxLine) {
  cap_ = std::min<size_t>(size_t{4} << 20, maxLine_ + 1);
  buf_.reset(new char[cap_]);
}

bool LineReader::fill() {
  if (eof_) return false;
  if (begin_ > 0) {  // slide the unread part to the front
    std::memmove(buf_.get(), buf_.get() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == cap_) {
    const size_t limit = maxLine_ + 1;
    if (cap_ >= limit) return false;  // full and no newline: caller truncates
    const size_t newCap = std::min(limit, cap_ * 2);
    std::unique_ptr<char[]> bigger(new char[newCap]);
    std::memcpy(bigger.get(), buf_.get(), end_);
    buf_ = std::move(bigger);
    cap_ = newCap;
  }
  const size_t got = input_.read(buf_.get() + end_, cap_ - end_);
  if (got == 0) eof_ = true;
  end_ += got;
  return got > 0;
}

bool LineReader::next(std::string_view& line) {
  truncated_ = false;
  size_t scanned = 0;  // bytes after begin_ already known to hold no newline
  for (;;) {
    const char* start = buf_.get() + begin_;
    const void* nl = std::memchr(start + scanned, '\n', end_ - begin_ - scanned);
    if (nl) {
      const size_t len = static_cast<size_t>(static_cast<const char*>(nl) - start);
      line = std::string_view(start, len);
      begin_ += len + 1;
      consumed_ += len + 1;
      break;
    }
    if (end_ - begin_ >= maxLine_) {
      // Too long: keep the first maxLine_ bytes and discard the rest of the line.
      truncated_ = true;
      truncatedLine_.assign(start, maxLine_);
      line = truncatedLine_;
      consumed_ += end_ - begin_;
      begin_ = end_ = 0;
      for (;;) {
        const size_t got = input_.read(buf_.get(), cap_);
        if (got == 0) {
          eof_ = true;
          break;
        }
        const void* nl2 = std::memchr(buf_.get(), '\n', got);
        if (nl2) {
          begin_ = static_cast<size_t>(static_cast<const char*>(nl2) - buf_.get()) + 1;
          end_ = got;
          consumed_ += begin_;
          break;
        }
        consumed_ += got;
      }
      break;
    }
    scanned = end_ - begin_;
    if (!fill()) {
      if (end_ == begin_) return false;
      line = std::string_view(buf_.get() + begin_, end_ - begin_);
      consumed_ += end_ - begin_;
      begin_ = end_;
      break;
    }
  }
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  ++lineNumber_;
  return true;
}

std::vector<FolderEntry> listFolder(const std::filesystem::path& folder) {
  std::vector<FolderEntry> entries;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    if (entries.size() == kMaxFolderEntries)
      throw Error(ErrorCode::BadInput,
                  "holds more than " + std::to_string(kMaxFolderEntries) + " entries; not a folder of rank logs",
                  {folder.string()});
    FolderEntry entry{it->path(), {}};
    struct stat info {};
    if (stat(entry.path.c_str(), &info) != 0) {
      entry.problem = std::strerror(errno);
    } else if (!S_ISREG(info.st_mode)) {
      entry.directory = S_ISDIR(info.st_mode);
      entry.problem = std::string("it is ") + fileTypeName(info.st_mode) + ", not a regular file";
    }
    entries.push_back(std::move(entry));
  }
  if (ec) throw Error(ErrorCode::BadInput, "cannot list the folder: " + ec.message(), {folder.string()});
  std::sort(entries.begin(), entries.end(), [](const FolderEntry& a, const FolderEntry& b) { return a.path < b.path; });
  return entries;
}

}  // namespace lathe
