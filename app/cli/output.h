// Output helpers for the CLI: aligned text tables, human-readable sizes, the -o option.
#pragma once

#include "util/format.h"  // formatBytes, formatSeconds, formatEstimate, for every command

#include <CLI/CLI.hpp>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace lathe::cli {

// Collects rows and prints them with columns padded to the widest cell. Numeric-looking columns
// are right-aligned.
class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print(std::ostream& out, const std::string& indent = "") const;
  [[nodiscard]] bool empty() const { return rows_.empty(); }

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// Registers -o,--output PATH on `command`: a path that must not be empty (`-o ""` is a usage
// error, not "write nothing").
CLI::Option* addOutputOption(CLI::App* command, std::string& path, const std::string& description);

// A path the plan-bundle reader takes: a .json file (a folder is a run folder or ranks of a capture).
[[nodiscard]] bool isPlanPath(const std::string& path);

}  // namespace lathe::cli
