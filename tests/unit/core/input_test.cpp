#include "util/input.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "temp_dir.h"
#include "util/diagnostics.h"
#include "resident_size.h"

using namespace lathe;
using lathe::testing::TempDir;

namespace {

using lathe::testing::kResidentSizeMeaningful;
using lathe::testing::peakResidentKb;


// Writes `copies` times `chunk` gzip-compressed to `path`.
void writeGzip(const std::filesystem::path& path, const std::string& chunk, size_t copies) {
  gzFile gz = gzopen(path.c_str(), "wb6");
  ASSERT_NE(gz, nullptr);
  for (size_t i = 0; i < copies; ++i)
    ASSERT_EQ(gzwrite(gz, chunk.data(), static_cast<unsigned>(chunk.size())), static_cast<int>(chunk.size()));
  ASSERT_EQ(gzclose(gz), Z_OK);
}

// Text that gzip compresses about 4:1, as real artifacts compress.
std::string loremText(size_t bytes) {
  std::string out;
  uint32_t state = 12345;
  while (out.size() < bytes) {
    state = state * 1103515245u + 12345u;
    out += "word" + std::to_string((state >> 16) % 5000) + ((state >> 8) % 10 == 0 ? "\n" : " ");
  }
  out.resize(bytes);
  return out;
}

// The message of the BadInput error that reading `path` throws; fails the test when it reads.
std::string refusal(const std::filesystem::path& path, uint64_t maxBytes = kMaxReadFileBytes) {
  try {
    (void)readFile(path, maxBytes);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::BadInput) << e.what();
    EXPECT_EQ(e.where().file, path.string());
    return e.what();
  }
  ADD_FAILURE() << "read";
  return {};
}

}  // namespace

TEST(Input, DecompressedSizeLimitIsARatioWithAFloor) {
  EXPECT_EQ(decompressedSizeLimit(0), kDecompressionFloorBytes);
  EXPECT_EQ(decompressedSizeLimit(1 << 20), kDecompressionFloorBytes);  // 200 MiB is under the floor
  EXPECT_EQ(decompressedSizeLimit(uint64_t{10} << 20), uint64_t{2000} << 20);
  EXPECT_EQ(decompressedSizeLimit(UINT64_MAX / 2), UINT64_MAX);  // saturates
}

TEST(Input, PlainAndGzipFilesReadWhole) {
  const TempDir dir;
  const std::string text = loremText(2 << 20);
  EXPECT_EQ(readFile(dir.write("plain.txt", text)), text);
  writeGzip(dir.path() / "text.gz", text, 1);
  EXPECT_EQ(readFile(dir.path() / "text.gz"), text);
  EXPECT_EQ(readFile(dir.write("empty.txt", "")), "");
  // Far more repetitive than any artifact (~1000:1), but under the floor: read.
  writeGzip(dir.path() / "zeros.gz", std::string(1 << 20, '\0'), 8);
  EXPECT_EQ(readFile(dir.path() / "zeros.gz"), std::string(8 << 20, '\0'));
}

// Refuses `path` as a gzip bomb: message, and refused at the floor (256 MiB held once, no copies).
void expectBombRefusedAtTheFloor(const std::filesystem::path& path) {
  const long peakBefore = peakResidentKb();
  const std::string message = refusal(path);
  EXPECT_NE(message.find(": decompresses to more than 268435456 bytes from its first "), std::string::npos) << message;
  EXPECT_TRUE(message.ends_with(" bytes, over 200 times as many (a gzip bomb?); refused")) << message;
  const long grownKb = peakResidentKb() - peakBefore;
  EXPECT_TRUE(grownKb < (300L << 10) || !kResidentSizeMeaningful) << grownKb << " KiB of peak memory grew";
}

TEST(Input, GzipBombIsRefusedOncePastTheRatio) {
  // 300 MiB of zeros gzip to ~300 KB: past both the floor and 200 times the compressed size.
  const TempDir dir;
  const auto path = dir.path() / "bomb.gz";
  writeGzip(path, std::string(1 << 20, '\0'), 300);
  ASSERT_LT(std::filesystem::file_size(path), uint64_t{1} << 20);
  expectBombRefusedAtTheFloor(path);
}

TEST(Input, GzipBombPaddedWithNoiseIsRefusedAtTheFloor) {
  // The same zeros followed by 4 MiB that does not compress: 200 times the whole file would allow
  // ~900 MB, but the zeros are refused as soon as they pass the floor.
  const TempDir dir;
  const auto path = dir.path() / "padded.gz";
  std::string noise(size_t{4} << 20, '\0');
  uint64_t state = 88172645463325252ull;
  for (char& c : noise) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    c = static_cast<char>(state);
  }
  gzFile gz = gzopen(path.c_str(), "wb6");
  ASSERT_NE(gz, nullptr);
  const std::string zeros(size_t{1} << 20, '\0');
  for (int i = 0; i < 300; ++i) ASSERT_EQ(gzwrite(gz, zeros.data(), static_cast<unsigned>(zeros.size())), 1 << 20);
  ASSERT_EQ(gzwrite(gz, noise.data(), static_cast<unsigned>(noise.size())), static_cast<int>(noise.size()));
  ASSERT_EQ(gzclose(gz), Z_OK);
  ASSERT_GT(decompressedSizeLimit(std::filesystem::file_size(path)), uint64_t{304} << 20);
  expectBombRefusedAtTheFloor(path);
}

TEST(Input, EachReaderCapsWhatItReads) {
  const TempDir dir;
  const std::string text = loremText(1 << 20);
  EXPECT_TRUE(refusal(dir.write("big.txt", text), 1000).ends_with(": larger than 1000 bytes"));
  EXPECT_EQ(readFile(dir.path() / "big.txt", text.size()), text);
  writeGzip(dir.path() / "big.gz", text, 1);
  EXPECT_TRUE(refusal(dir.path() / "big.gz", 1000)
                  .ends_with(": decompresses to more than 1000 bytes, the limit for this kind of file; refused"));
}

TEST(Input, TruncatedGzipIsDamaged) {
  const TempDir dir;
  const auto path = dir.path() / "cut.gz";
  writeGzip(path, loremText(1 << 20), 1);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  EXPECT_NE(refusal(path).find("damaged: "), std::string::npos);
}

TEST(Input, ReadingReportsProgressAndCanBeCancelled) {
  const TempDir dir;
  const auto path = dir.path() / "text.gz";
  writeGzip(path, loremText(9 << 20), 1);
  const uint64_t compressed = std::filesystem::file_size(path);
  std::vector<std::pair<uint64_t, uint64_t>> reports;
  Progress progress;
  progress.report = [&](uint64_t done, uint64_t total) { reports.emplace_back(done, total); };
  EXPECT_EQ(readFile(path, kMaxReadFileBytes, progress).size(), size_t{9} << 20);
  ASSERT_GE(reports.size(), 3u);
  for (size_t i = 0; i < reports.size(); ++i) {
    EXPECT_EQ(reports[i].second, compressed);
    EXPECT_LE(reports[i].first, compressed);
    EXPECT_GE(reports[i].first, i > 0 ? reports[i - 1].first : 0);
  }

  std::atomic<bool> cancel{true};
  progress.cancel = &cancel;
  try {
    (void)readFile(path, kMaxReadFileBytes, progress);
    ADD_FAILURE() << "not cancelled";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Cancelled);
  }
}
