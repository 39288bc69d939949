// Parsing JSON that users hand us (plan bundles, hardware profiles, op-flag files, `.pt2` programs,
// saved sets, kernel manifests, profiles). nlohmann's parser is iterative, but copying, dumping,
// comparing and our own readers recurse per level, and a document of many small values costs 16
// bytes and more per value: so depth and value count are bounded while parsing, before anything
// else sees the document. Exceeding a bound is Error(BadInput) naming the source and the limit.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "util/diagnostics.h"

namespace lathe {

struct JsonLimits {
  // Containers nested deeper than this are refused. Our own formats nest under 10 levels, a
  // torch.export program under 30.
  uint32_t maxDepth = 256;
  // Values (scalars and containers) in the whole document: 64M values are about 1 GiB of tree.
  uint64_t maxValues = uint64_t{1} << 26;
};

// Parses `text` as one JSON document within `limits`. A bound exceeded throws Error(BadInput)
// "<source>: JSON nested deeper than N levels" / "... more than N values"; text that is not JSON
// throws nlohmann's parse_error as Json::parse does (callers that report the line keep doing so).
template <typename Json = nlohmann::json>
[[nodiscard]] Json parseJsonBounded(std::string_view text, std::string_view source, const JsonLimits& limits = {}) {
  struct TooLarge {
    std::string what;
  };
  uint64_t values = 0;
  const typename Json::parser_callback_t bound = [&](int depth, nlohmann::json::parse_event_t event, Json&) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start || event == Event::array_start) {
      if (static_cast<uint64_t>(depth) >= limits.maxDepth) {
        throw TooLarge{"JSON nested deeper than " + std::to_string(limits.maxDepth) + " levels"};
      }
    }
    if (event == Event::value || event == Event::object_start || event == Event::array_start) {
      if (++values > limits.maxValues) throw TooLarge{"JSON holds more than " + std::to_string(limits.maxValues) + " values"};
    }
    return true;
  };
  try {
    return Json::parse(text.begin(), text.end(), bound);
  } catch (const TooLarge& e) {
    throw Error(ErrorCode::BadInput, std::string(source) + ": " + e.what);
  }
}

}  // namespace lathe
