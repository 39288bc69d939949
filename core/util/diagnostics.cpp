#include "util/diagnostics.h"

#include <algorithm>

namespace lathe {

std::string SourceLocation::str() const {
  if (file.empty()) return {};
  return line ? file + ":" + std::to_string(line) : file;
}

void Diagnostics::add(Severity severity, std::string code, std::string message, SourceLocation where) {
  if (items_.size() >= kMaxItems) {
    ++suppressed_;
    return;
  }
  items_.push_back({severity, std::move(code), std::move(message), std::move(where)});
}

void Diagnostics::append(const Diagnostics& other) {
  for (const auto& d : other.items_) add(d.severity, d.code, d.message, d.where);
  suppressed_ += other.suppressed_;
}

size_t Diagnostics::count(Severity severity) const {
  return static_cast<size_t>(
      std::count_if(items_.begin(), items_.end(), [&](const Diagnostic& d) { return d.severity == severity; }));
}

size_t Diagnostics::countCode(std::string_view code) const {
  return static_cast<size_t>(
      std::count_if(items_.begin(), items_.end(), [&](const Diagnostic& d) { return d.code == code; }));
}

static std::string withLocation(const std::string& message, const SourceLocation& where) {
  const std::string loc = where.str();
  return loc.empty() ? message : loc + ": " + message;
}

Error::Error(ErrorCode code, const std::string& message, SourceLocation where)
    : std::runtime_error(withLocation(message, where)), code_(code), where_(std::move(where)) {}

const char* severityName(Severity severity) {
  switch (severity) {
    case Severity::Note: return "note";
    case Severity::Warning: return "warning";
    case Severity::Error: return "error";
  }
  return "?";
}

}  // namespace lathe
