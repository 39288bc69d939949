#include "util/input.h"

#include <zlib.h>

#include <cstring>

#include "util/diagnostics.h"

namespace lathe {

InputFile::InputFile(const std::filesystem::path& path) : path_(path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error(ErrorCode::BadInput, "is a directory, expected a file", {path.string()});
  fileSize_ = std::filesystem::file_size(path, ec);
  if (ec) throw Error(ErrorCode::BadInput, "cannot open: " + ec.message(), {path.string()});
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw Error(ErrorCode::BadInput, "cannot open: " + std::string(std::strerror(errno)), {path.string()});
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

std::string readFile(const std::filesystem::path& path, uint64_t maxBytes) {
  InputFile in(path);
  std::string out;
  char buf[1 << 16];
  for (;;) {
    const size_t got = in.read(buf, sizeof buf);
    if (got == 0) break;
    if (out.size() + got > maxBytes)
      throw Error(ErrorCode::BadInput, "larger than " + std::to_string(maxBytes) + " bytes", {path.string()});
    out.append(buf, got);
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

}  // namespace lathe
