#include "io/trace/trace_event.h"

namespace lathe::io {

nlohmann::json TraceLogEvent::parseEnvelope() const {
  return nlohmann::json::parse(envelope, nullptr, false);
}

nlohmann::json TraceLogEvent::metadata() const {
  const nlohmann::json parsed = parseEnvelope();
  if (!parsed.is_object()) return {};
  const auto it = parsed.find(kind);
  return it == parsed.end() ? nlohmann::json() : *it;
}

}  // namespace lathe::io
