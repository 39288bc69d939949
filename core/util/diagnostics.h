// Diagnostics and errors shared by every loader and pass.
//
// Loaders report recoverable damage as diagnostics and keep going; only an unreadable container
// raises lathe::Error. CLI exit codes follow ErrorCode.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace lathe {

struct SourceLocation {
  std::string file;
  uint64_t line = 0;  // 1-based; 0 = unknown

  [[nodiscard]] std::string str() const;
};

enum class Severity : uint8_t { Note, Warning, Error };

struct Diagnostic {
  Severity severity = Severity::Warning;
  std::string code;     // stable machine-readable key, e.g. "md5_mismatch"
  std::string message;  // human-readable sentence
  SourceLocation where;
};

class Diagnostics {
 public:
  void add(Severity severity, std::string code, std::string message, SourceLocation where = {});
  void note(std::string code, std::string message, SourceLocation where = {}) {
    add(Severity::Note, std::move(code), std::move(message), std::move(where));
  }
  void warn(std::string code, std::string message, SourceLocation where = {}) {
    add(Severity::Warning, std::move(code), std::move(message), std::move(where));
  }
  void error(std::string code, std::string message, SourceLocation where = {}) {
    add(Severity::Error, std::move(code), std::move(message), std::move(where));
  }
  void append(const Diagnostics& other);

  [[nodiscard]] const std::vector<Diagnostic>& items() const { return items_; }
  [[nodiscard]] size_t size() const { return items_.size(); }
  [[nodiscard]] bool empty() const { return items_.empty(); }
  [[nodiscard]] size_t count(Severity severity) const;
  [[nodiscard]] size_t countCode(std::string_view code) const;
  // Number of diagnostics dropped after the cap (a damaged 1 GB file must not make 1 GB of messages).
  [[nodiscard]] size_t suppressed() const { return suppressed_; }

  static constexpr size_t kMaxItems = 10000;

 private:
  std::vector<Diagnostic> items_;
  size_t suppressed_ = 0;
};

// Exit codes of the CLI (DESIGN.md): 0 ok, 1 usage, 2 bad input, 3 internal.
enum class ErrorCode : uint8_t { Usage = 1, BadInput = 2, Internal = 3, Cancelled = 4 };

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message, SourceLocation where = {});
  [[nodiscard]] ErrorCode code() const { return code_; }
  [[nodiscard]] const SourceLocation& where() const { return where_; }

 private:
  ErrorCode code_;
  SourceLocation where_;
};

[[nodiscard]] const char* severityName(Severity severity);

}  // namespace lathe
