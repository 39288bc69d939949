#include "io/fx/fx_python.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace lathe::io::fx {
namespace {

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void appendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Reads exactly n hex digits at s[pos]; -1 when they are not there.
int64_t readHex(std::string_view s, size_t pos, size_t n) {
  if (pos + n > s.size()) return -1;
  int64_t v = 0;
  for (size_t i = 0; i < n; ++i) {
    const int d = hexValue(s[pos + i]);
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

}  // namespace

size_t skipStringLiteral(std::string_view s, size_t pos) {
  const char quote = s[pos];
  const char* const end = s.data() + s.size();
  for (const char* p = s.data() + pos + 1; p < end;) {
    const char* q = static_cast<const char*>(std::memchr(p, quote, static_cast<size_t>(end - p)));
    if (!q) return std::string_view::npos;
    size_t backslashes = 0;  // an odd run of backslashes escapes the quote
    for (const char* b = q; b > p && b[-1] == '\\'; --b) ++backslashes;
    if (backslashes % 2 == 0) return static_cast<size_t>(q - s.data()) + 1;
    p = q + 1;
  }
  return std::string_view::npos;
}

bool decodeStringLiteral(std::string_view quoted, std::string& out) {
  out.clear();
  if (quoted.size() < 2 || quoted.front() != quoted.back() || (quoted.front() != '\'' && quoted.front() != '"'))
    return false;
  const std::string_view body = quoted.substr(1, quoted.size() - 2);
  for (size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (c == quoted.front()) return false;  // an unescaped quote ends the literal early
    if (c != '\\') {
      out.push_back(c);
      continue;
    }
    if (++i >= body.size()) return false;
    const char e = body[i];
    switch (e) {
      case '\\': out.push_back('\\'); break;
      case '\'': out.push_back('\''); break;
      case '"': out.push_back('"'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 't': out.push_back('\t'); break;
      case 'a': out.push_back('\a'); break;
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'v': out.push_back('\v'); break;
      case 'x':
      case 'u':
      case 'U': {
        const size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        const int64_t cp = readHex(body, i + 1, n);
        if (cp < 0 || cp > 0x10FFFF) return false;
        appendUtf8(out, static_cast<uint32_t>(cp));
        i += n;
        break;
      }
      default:
        if (e >= '0' && e <= '7') {  // octal, up to three digits
          uint32_t v = 0;
          size_t n = 0;
          while (n < 3 && i + n < body.size() && body[i + n] >= '0' && body[i + n] <= '7')
            v = v * 8 + (body[i + n++] - '0');
          appendUtf8(out, v);
          i += n - 1;
        } else {  // Python keeps unknown escapes as written
          out.push_back('\\');
          out.push_back(e);
        }
    }
  }
  return true;
}

void appendStringRepr(std::string& out, std::string_view s) {
  const bool hasSingle = s.find('\'') != std::string_view::npos;
  const bool hasDouble = s.find('"') != std::string_view::npos;
  const char quote = hasSingle && !hasDouble ? '"' : '\'';
  out.push_back(quote);
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\\' || c == quote) {
      out.push_back('\\');
      out.push_back(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7F) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
    } else {
      out.push_back(c);
    }
  }
  out.push_back(quote);
}

void appendFloatRepr(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "nan";
    return;
  }
  if (std::isinf(v)) {
    out += v > 0 ? "inf" : "-inf";
    return;
  }
  // Shortest round-trip digits in scientific form ("-1.2345e-05"), then laid out the way Python's
  // repr does: positional when -4 < decimal point position <= 16, else with an exponent.
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<size_t>(res.ptr - buf));
  size_t pos = 0;
  if (sci[0] == '-') {
    out.push_back('-');
    pos = 1;
  }
  const size_t ePos = sci.find('e');
  std::string digits;
  for (size_t i = pos; i < ePos; ++i)
    if (sci[i] != '.') digits.push_back(sci[i]);
  int exponent = 0;
  std::from_chars(sci.data() + ePos + (sci[ePos + 1] == '+' ? 2 : 1), sci.data() + sci.size(), exponent);
  const int point = exponent + 1;  // digits before the decimal point
  const int count = static_cast<int>(digits.size());
  if (point > -4 && point <= 16) {
    if (point <= 0) {
      out += "0.";
      out.append(static_cast<size_t>(-point), '0');
      out += digits;
    } else if (point >= count) {
      out += digits;
      out.append(static_cast<size_t>(point - count), '0');
      out += ".0";
    } else {
      out.append(digits, 0, static_cast<size_t>(point));
      out.push_back('.');
      out.append(digits, static_cast<size_t>(point));
    }
    return;
  }
  out.push_back(digits[0]);
  if (count > 1) {
    out.push_back('.');
    out.append(digits, 1);
  }
  out.push_back('e');
  out.push_back(exponent < 0 ? '-' : '+');
  const int magnitude = exponent < 0 ? -exponent : exponent;
  if (magnitude < 10) out.push_back('0');
  out += std::to_string(magnitude);
}

}  // namespace lathe::io::fx
