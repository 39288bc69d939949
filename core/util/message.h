// A sentence for people, kept as its English pattern and its arguments so that each face says it in
// its language: the CLI, the plan file and the native module print English (toEnglish), the studio
// translates the pattern and fills the same arguments (views::translated).
//
// Patterns are written LATHE_TEXT("context", "...") or, with a count, LATHE_TEXT_N: lupdate collects
// them as it collects QT_TRANSLATE_NOOP / QT_TRANSLATE_N_NOOP (-tr-function-alias), so the studio's
// .ts files hold every pattern the core can say. Placeholders are Qt's: %1..%9 for the arguments,
// %n for the count, and "(s)" after a word whose English plural takes an s ("%n node(s)").
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#define LATHE_TEXT(context, text) ::lathe::MessagePattern{context, text}
#define LATHE_TEXT_N(context, text) ::lathe::MessagePattern{context, text}

namespace lathe {

struct MessagePattern {
  const char* context = nullptr;  // string literals: they outlive every message
  const char* text = nullptr;
};

struct Message {
  MessagePattern pattern;             // none: `value` is shown as it is
  std::string value;                  // a name, a figure, or a sentence read from a file
  std::optional<int64_t> count;       // %n
  std::vector<Message> args;          // %1, %2, ...

  Message() = default;
  // A value shown as it is in every language: node names, formatted figures.
  Message(std::string text) : value(std::move(text)) {}  // NOLINT(google-explicit-constructor): terse call sites
  Message(const char* text) : value(text) {}               // NOLINT(google-explicit-constructor)
  explicit Message(MessagePattern p) : pattern(p) {}  // a sentence with no arguments
  Message(MessagePattern p, std::initializer_list<Message> arguments) : pattern(p), args(arguments) {}
  Message(MessagePattern p, int64_t n, std::initializer_list<Message> arguments = {})
      : pattern(p), count(n), args(arguments) {}

  [[nodiscard]] bool translatable() const { return pattern.text != nullptr; }
  friend bool operator==(const Message& a, const Message& b);
};

// The pattern in the face's language for a count (nullopt: no %n). The result keeps %1..%9; %n may
// be left for fill() to replace.
using TranslatePattern = std::function<std::string(const MessagePattern&, std::optional<int64_t> count)>;

// The message with its pattern translated and its arguments, themselves messages, filled in. Each
// placeholder is replaced once, left to right, so an argument holding "%2" stays as it is.
[[nodiscard]] std::string fill(const Message& message, const TranslatePattern& translate);

// In English: "(s)" dropped for a count of one and read as "s" otherwise.
[[nodiscard]] std::string toEnglish(const Message& message);
[[nodiscard]] std::vector<std::string> toEnglish(const std::vector<Message>& messages);

}  // namespace lathe
