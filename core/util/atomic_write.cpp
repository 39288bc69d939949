#include "util/atomic_write.h"

#include <cstdio>
#include <fstream>
#include <random>
#include <system_error>

#include "util/diagnostics.h"

namespace lathe {

void writeFileAtomic(const std::filesystem::path& path, std::string_view content) {
  std::random_device random;
  const std::filesystem::path temp =
      path.parent_path() / ("." + path.filename().string() + ".tmp" + std::to_string(random() % 1000000));
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (out) out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      std::error_code ignored;
      std::filesystem::remove(temp, ignored);
      throw Error(ErrorCode::BadInput, "cannot write " + path.string());
    }
  }
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);
    throw Error(ErrorCode::BadInput, "cannot write " + path.string() + ": " + ec.message());
  }
}

}  // namespace lathe
