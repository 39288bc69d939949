#include "output.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>

namespace lathe::cli {
namespace {

bool looksNumeric(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || c == '.' || c == ',' || c == ' ' || c == '-' || c == '%';
  });
}

}  // namespace

void Table::print(std::ostream& out, const std::string& indent) const {
  const size_t columns = header_.size();
  std::vector<size_t> width(columns, 0);
  std::vector<bool> numeric(columns, true);
  for (size_t c = 0; c < columns; ++c) width[c] = header_[c].size();
  for (const auto& row : rows_)
    for (size_t c = 0; c < columns && c < row.size(); ++c) {
      width[c] = std::max(width[c], row[c].size());
      if (!row[c].empty() && !looksNumeric(row[c])) numeric[c] = false;
    }
  auto printRow = [&](const std::vector<std::string>& row) {
    std::string line = indent;
    for (size_t c = 0; c < columns; ++c) {
      const std::string cell = c < row.size() ? row[c] : "";
      const std::string pad(width[c] - std::min(width[c], cell.size()), ' ');
      line += numeric[c] ? pad + cell : cell + (c + 1 < columns ? pad : "");
      if (c + 1 < columns) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  };
  printRow(header_);
  for (const auto& row : rows_) printRow(row);
}

CLI::Option* addOutputOption(CLI::App* command, std::string& path, const std::string& description) {
  return command->add_option("-o,--output", path, description)
      ->check(CLI::Validator(
          [](const std::string& value) {
            return value.empty() ? std::string("an empty path names no file") : std::string();
          },
          "PATH"));
}


bool isPlanPath(const std::string& path) {
  std::error_code ec;
  return path.ends_with(".json") && !std::filesystem::is_directory(path, ec);
}

}  // namespace lathe::cli
