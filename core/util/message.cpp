#include "util/message.h"

#include <cstring>

namespace lathe {

bool operator==(const Message& a, const Message& b) {
  const auto same = [](const char* x, const char* y) { return x == y || (x && y && std::strcmp(x, y) == 0); };
  return same(a.pattern.context, b.pattern.context) && same(a.pattern.text, b.pattern.text) && a.value == b.value &&
         a.count == b.count && a.args == b.args;
}

std::string fill(const Message& message, const TranslatePattern& translate) {
  if (!message.translatable()) return message.value;
  const std::string pattern = translate(message.pattern, message.count);
  std::string out;
  out.reserve(pattern.size() + 16 * message.args.size());
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '%' && i + 1 < pattern.size()) {
      const char next = pattern[i + 1];
      if (next >= '1' && next <= '9' && static_cast<size_t>(next - '1') < message.args.size()) {
        out += fill(message.args[static_cast<size_t>(next - '1')], translate);
        ++i;
        continue;
      }
      if (next == 'n' && message.count) {
        out += std::to_string(*message.count);
        ++i;
        continue;
      }
    }
    out += c;
  }
  return out;
}

std::string toEnglish(const Message& message) {
  return fill(message, [](const MessagePattern& pattern, std::optional<int64_t> count) {
    std::string text = pattern.text;
    const std::string plural = count && *count == 1 ? "" : "s";
    for (size_t at = text.find("(s)"); at != std::string::npos; at = text.find("(s)", at + plural.size())) {
      text.replace(at, 3, plural);
    }
    return text;
  });
}

std::vector<std::string> toEnglish(const std::vector<Message>& messages) {
  std::vector<std::string> lines;
  lines.reserve(messages.size());
  for (const Message& message : messages) lines.push_back(toEnglish(message));
  return lines;
}

}  // namespace lathe
