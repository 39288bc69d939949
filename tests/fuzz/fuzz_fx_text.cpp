// Fuzzes the FX graph text parser and printer (core/io/fx/fx_text.h). Whatever parses must print to a
// text that parses back to an equal graph (the printer's contract), hints included.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "io/fx/fx_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  lathe::io::FxParseOptions options;
  options.file = "fuzz.txt";
  // Every symbol is known, so that symbolic sizes are evaluated too.
  options.symbols = [](std::string_view symbol) -> std::optional<int64_t> {
    return static_cast<int64_t>(symbol.size()) * 64;
  };
  lathe::Diagnostics diagnostics;
  const auto graph = lathe::io::parseFxText(text, options, diagnostics);
  if (!graph) return 0;
  const std::string printed = lathe::io::printFxText(*graph);
  lathe::Diagnostics again;
  const auto reparsed = lathe::io::parseFxText(printed, options, again);
  std::string why;
  if (!reparsed || !lathe::io::graphsEqual(*graph, *reparsed, &why)) {
    std::fprintf(stderr, "print/parse round trip differs: %s\n--- printed:\n%s\n", why.c_str(), printed.c_str());
    std::abort();
  }
  return 0;
}
